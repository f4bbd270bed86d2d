"""An encoder's config settings are the ones it links with, not the ones its weights were
saved with (encoders/settings.py): thinc restores every attr from the saved bytes, so a
hybrid's sparse_weight given in encoder.cfg or at spacy.load used to be reported and
ignored."""
import numpy
import pytest
import spacy
from spacy.util import registry
from thinc.api import Config

from spacy_biolink.errors import BioLinkError

from .conftest import TINY_MEDIC, doc_with_ents
from .test_dan import DIM, tiny_vectors

torch = pytest.importorskip("torch")

TEXT, MENTION = "Patients with type 2 diabetes.", "type 2 diabetes"


@pytest.fixture
def hybrid_dir(tmp_path):
    """A DAN (untrained, its word vectors set) + TF-IDF hybrid saved as the trainers save
    one, at sparse_weight 1.0."""
    from spacy_biolink.encoders.dan import set_word_vectors
    from spacy_biolink.training.dan import TFIDF, hybrid_index_config, save_hybrid

    torch.manual_seed(0)
    (tmp_path / "medic.txt").write_text(TINY_MEDIC, encoding="utf8")
    dense_config = {"@architectures": "spacy-biolink.DanEncoder.v1", "width": DIM,
                    "hidden_width": 8, "dropout": 0.0, "normalize": True}
    dense = registry.resolve({"model": dense_config})["model"]
    set_word_vectors(dense, tiny_vectors())
    tfidf = registry.resolve({"model": TFIDF})["model"]
    save_hybrid(tmp_path, dense, dense_config, tfidf, 1.0, {},
                index_config=hybrid_index_config(DIM), method="test hybrid")
    return tmp_path


def set_in_encoder_cfg(path, key, value):
    config = Config().from_disk(path / "encoder.cfg", interpolate=False)
    config["model"][key] = value
    config.to_disk(path / "encoder.cfg")


def top_score(nlp):
    doc = nlp(doc_with_ents(nlp, TEXT, [MENTION]))
    return doc.ents[0]._.kb_ents[0][1]


def test_encoder_cfg_weight_is_the_one_init_linker_links_with(hybrid_dir):
    """An exact name scores dense_weight + sparse_weight (both cosines are 1): 1 + 2 with
    the edited weight; before the fix the saved 1 + 1."""
    from spacy_biolink.encoders.saved import load_encoder
    from spacy_biolink.linker.pipeline import init_linker

    set_in_encoder_cfg(hybrid_dir / "hybrid", "sparse_weight", 2.0)
    model, _ = load_encoder(hybrid_dir / "hybrid")
    assert model.attrs["sparse_weight"] == 2.0
    with pytest.warns(UserWarning, match="W001"):
        nlp = init_linker(hybrid_dir / "nlp", hybrid_dir / "medic.txt",
                          encoder=hybrid_dir / "hybrid")
    assert nlp.get_pipe("bio_linker").model.attrs["sparse_weight"] == 2.0
    assert top_score(nlp) == pytest.approx(3.0, abs=1e-5)
    reloaded = spacy.load(hybrid_dir / "nlp")
    assert reloaded.get_pipe("bio_linker").model.attrs["sparse_weight"] == 2.0
    assert top_score(reloaded) == pytest.approx(3.0, abs=1e-5)


def test_a_load_time_weight_the_index_was_not_built_with_is_refused(hybrid_dir):
    """spacy.load(..., config=...) with another sparse_weight: the index holds the names'
    rows at the saved weight, so E126 says so instead of linking at the old weight while
    nlp.config shows the new one. The saved weight itself loads."""
    from spacy_biolink.linker.pipeline import init_linker

    with pytest.warns(UserWarning, match="W001"):
        nlp = init_linker(hybrid_dir / "nlp", hybrid_dir / "medic.txt",
                          encoder=hybrid_dir / "hybrid")
    expected = top_score(nlp)
    assert expected == pytest.approx(2.0, abs=1e-5)
    override = {"components": {"bio_linker": {"encoder": {"sparse_weight": 0.5}}}}
    with pytest.raises(BioLinkError, match=r"E126.*sparse_weight = 1\.0 .*hybrid_encoder.*"
                                           r"config says 0\.5.*init-linker.*--encoder DIR "
                                           r"--components\.bio_linker\.encoder\.sparse_weight 0\.5"):
        spacy.load(hybrid_dir / "nlp", config=override)
    same = {"components": {"bio_linker": {"encoder": {"sparse_weight": 1.0}}}}
    assert top_score(spacy.load(hybrid_dir / "nlp", config=same)) == pytest.approx(expected)
    from_bytes = spacy.blank("en")
    with pytest.raises(BioLinkError, match=r"E126.*<bytes> encoder.*config says 0\.5"):
        config = nlp.config.copy()
        config["components"]["bio_linker"]["encoder"]["sparse_weight"] = 0.5
        from_bytes = spacy.util.load_model_from_config(config)
        from_bytes.from_bytes(nlp.to_bytes())



def test_init_linker_encoder_overrides_reach_the_saved_encoders_block(hybrid_dir):
    """What E126 tells a user to run: with --encoder DIR, a components.bio_linker.encoder.*
    setting goes onto DIR's [model] block, nested ones too, and a misspelt one is named
    against that block's settings (not the default TF-IDF encoder's)."""
    from typer.testing import CliRunner

    from spacy_biolink.cli import app

    def run(name, *settings):
        return CliRunner().invoke(app, ["init-linker", str(hybrid_dir / name), "--dictionary",
                                        str(hybrid_dir / "medic.txt"), "--encoder",
                                        str(hybrid_dir / "hybrid"), *settings])

    result = run("half", "--components.bio_linker.encoder.sparse_weight", "0.5",
                 "--components.bio_linker.encoder.dense.normalize", "false")
    assert result.exit_code == 0, result.output
    nlp = spacy.load(hybrid_dir / "half")
    encoder = nlp.get_pipe("bio_linker").model
    assert encoder.attrs["sparse_weight"] == 0.5
    assert encoder.layers[0].attrs["normalize"] is False
    assert nlp.config["components"]["bio_linker"]["encoder"]["sparse_weight"] == 0.5
    result = run("typo", "--components.bio_linker.encoder.sparse_wieght", "0.5")
    assert result.exit_code != 0 and not (hybrid_dir / "typo").exists()
    assert "E460" in result.output and "sparse_weight" in result.output
    assert "dense_weight" in result.output and "analyzer" not in result.output
