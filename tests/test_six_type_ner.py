"""The six-type NER's corpora (issue 56): six-type labels, missing-value marking of the
types a corpus does not annotate, the scorer, and the gazetteer's new term sources."""
import gzip
from pathlib import Path

import pytest
import spacy
from spacy.tokens import DocBin
from spacy.training import Example

from spacy_biolink.corpora.partial import (UnknownTerms, convert_six_types, mention_terms,
                                           parse_six_types, score_six_types, six_type_docs)
from spacy_biolink.corpora.pubtator import read_pubtator
from spacy_biolink.corpora.types import six_type_label
from spacy_biolink.errors import BioLinkError
from spacy_biolink.ner.gazetteer import gazetteer_terms, hgnc_symbols

ROOT = Path(__file__).resolve().parents[1]

# A gene-only corpus (GNormPlus-like): BRCA1 is annotated; "breast cancer" (a disease) and
# "mice" (a species) are not, and "kinase domain" is a DomainMotif, none of the six types.
GENE_ONLY = (
    "111|t|BRCA1 loss causes breast cancer in mice\n"
    "111|a|The kinase domain of BRCA1 binds.\n"
    "111\t0\t5\tBRCA1\tGene\t672\n"
    "111\t44\t57\tkinase domain\tDomainMotif\n"
    "111\t61\t66\tBRCA1\tGene\t672\n"
    "\n"
)
# Another corpus's training split, whose mention texts say what a disease and a species are
OTHER_TRAIN = (
    "222|t|Breast cancer in mice and men\n"
    "222|a|Nothing else.\n"
    "222\t0\t13\tBreast cancer\tDiseaseOrPhenotypicFeature\tD001943\n"
    "222\t17\t21\tmice\tOrganismTaxon\t10090\n"
    "\n"
)


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf8")
    return path


def _tags(doc):
    return [(t.text, t.ent_iob_ or "-") for t in doc]


def test_family_names_are_genes_and_domain_motifs_none_of_the_six():
    assert six_type_label("FamilyName") == "Gene"
    assert six_type_label("DomainMotif") is None
    assert six_type_label("DNAMutation") == "Variant"


def test_a_mention_line_without_ids_is_a_mention_with_no_id(tmp_path):
    """GNormPlus's FamilyName lines have five fields: no id column."""
    docs = list(read_pubtator(_write(tmp_path / "g.txt", GENE_ONLY)))
    motif = [m for m in docs[0].mentions if m.type == "DomainMotif"]
    assert [(m.text, m.ids) for m in motif] == [("kinase domain", [])]


def test_partial_marks_unannotated_types_missing_and_keeps_the_rest_outside(tmp_path):
    nlp = spacy.blank("en")
    gene_only = _write(tmp_path / "g.txt", GENE_ONLY)
    other = _write(tmp_path / "o.txt", OTHER_TRAIN)
    unknown = UnknownTerms(nlp, mention_terms([other]))
    doc = next(six_type_docs(nlp, gene_only, partial=True, annotates={"Gene"},
                             unknown=unknown))
    tags = dict(_tags(doc)[:8])
    assert tags["BRCA1"] == "B" and tags["loss"] == "O" and tags["causes"] == "O"
    # a disease and a species: unknown in a corpus that annotates neither
    assert tags["breast"] == "-" and tags["cancer"] == "-" and tags["mice"] == "-"
    # the DomainMotif mention: none of the six types, unknown too, never an entity
    assert [(t.text, t.ent_iob_ or "-") for t in doc[-6:-3]] == \
        [("kinase", "-"), ("domain", "-"), ("of", "O")]
    assert [(e.text, e.label_) for e in doc.ents] == [("BRCA1", "Gene"), ("BRCA1", "Gene")]
    # the NER sees missing values there: no move is wrong on them
    aligned = Example(nlp.make_doc(doc.text), doc).get_aligned_ner()
    assert aligned[:7] == ["U-Gene", "O", "O", None, None, "O", None]


def test_naive_merge_teaches_outside_everywhere(tmp_path):
    """Without --partial (the naive merge, the baseline), every token outside a six-type
    mention is O, the DomainMotif too."""
    nlp = spacy.blank("en")
    doc = next(six_type_docs(nlp, _write(tmp_path / "g.txt", GENE_ONLY)))
    assert all(iob in ("B", "I", "O") for _, iob in _tags(doc))
    assert [e.label_ for e in doc.ents] == ["Gene", "Gene"]
    assert doc.spans["mentions"].attrs["types"] == ["Gene", "DomainMotif", "Gene"]


def test_a_corpus_annotating_the_type_keeps_its_negatives(tmp_path):
    """In a corpus that annotates diseases, a disease term it left unannotated is a
    negative: only the types a corpus never annotates are unknown."""
    nlp = spacy.blank("en")
    unknown = UnknownTerms(nlp, mention_terms([_write(tmp_path / "o.txt", OTHER_TRAIN)]))
    doc = next(six_type_docs(nlp, _write(tmp_path / "g.txt", GENE_ONLY), partial=True,
                             annotates={"Gene", "Disease"}, unknown=unknown))
    tags = dict(_tags(doc)[:8])
    assert tags["breast"] == "O" and tags["mice"] == "-"


def test_a_term_over_an_annotated_entity_leaves_it_alone(tmp_path):
    nlp = spacy.blank("en")
    unknown = UnknownTerms(nlp, {"Chemical": ["BRCA1 loss"]})
    doc = next(six_type_docs(nlp, _write(tmp_path / "g.txt", GENE_ONLY), partial=True,
                             annotates={"Gene"}, unknown=unknown))
    assert _tags(doc)[:2] == [("BRCA1", "B"), ("loss", "O")]


def test_missing_values_survive_the_docbin(tmp_path):
    nlp = spacy.blank("en")
    unknown = UnknownTerms(nlp, mention_terms([_write(tmp_path / "o.txt", OTHER_TRAIN)]))
    out = tmp_path / "g.spacy"
    stats, marked = convert_six_types(_write(tmp_path / "g.txt", GENE_ONLY), out, nlp,
                                      partial=True, annotates={"Gene"}, unknown=unknown)
    assert stats.docs == 1 and marked.missing_by_type == {"Disease": 2, "Species": 1,
                                                          "DomainMotif": 2}
    doc = next(DocBin().from_disk(out).get_docs(nlp.vocab))
    assert [t.text for t in doc if t.ent_iob == 0] == ["breast", "cancer", "mice", "kinase",
                                                       "domain"]


def test_sample_keeps_a_fixed_number_of_documents(tmp_path):
    text = "".join(OTHER_TRAIN.replace("222", str(n)) for n in range(300, 310))
    nlp = spacy.blank("en")
    first = [d.user_data["pmid"] for d in six_type_docs(nlp, _write(tmp_path / "o.txt", text),
                                                        sample=3)]
    again = [d.user_data["pmid"] for d in six_type_docs(nlp, tmp_path / "o.txt", sample=3)]
    assert len(first) == 3 and first == again


def test_six_type_names_are_checked():
    assert parse_six_types("Gene, CellLine") == {"Gene", "CellLine"}
    assert parse_six_types(None) is None
    with pytest.raises(BioLinkError, match=r"E540.*'Genes'.*Gene, Disease"):
        parse_six_types("Genes,Disease")


def test_scores_count_only_the_corpus_types(tmp_path):
    nlp = spacy.blank("en")
    gold = list(six_type_docs(nlp, _write(tmp_path / "o.txt", OTHER_TRAIN)))
    pred = nlp.make_doc(gold[0].text)
    # the right disease, a species one token too long, a gene (a type not scored here)
    pred.ents = [pred.char_span(0, 13, "Disease"), pred.char_span(17, 25, "Species"),
                 pred.char_span(26, 29, "Gene")]
    both = score_six_types(gold, [pred], ["Disease", "Species"])
    assert both["ner"]["n_pred"] == 2 and both["ner"]["n_correct"] == 1
    assert both["per_type"]["Disease"]["f"] == 1.0 and both["per_type"]["Species"]["r"] == 0.0
    assert "Gene" not in both["per_type"]
    every = score_six_types(gold, [pred])
    assert every["ner"]["n_pred"] == 3 and every["per_type"]["Gene"]["p"] == 0.0


def test_convert_cli_six_types_partial(tmp_path):
    from .conftest import invoke_cli

    gene_only = _write(tmp_path / "g.txt", GENE_ONLY)
    other = _write(tmp_path / "o.txt", OTHER_TRAIN)
    result = invoke_cli("convert", gene_only, tmp_path / "g.spacy", "--six-types", "--partial",
                        "--annotates", "Gene", "--unknown-terms-from", other)
    assert "Disease 2" in result.stdout and "Species 1" in result.stdout
    refused = invoke_cli("convert", gene_only, tmp_path / "x.spacy", "--partial", check=False)
    assert refused.returncode == 1 and "E542" in refused.stdout + refused.stderr
    assert not (tmp_path / "x.spacy").exists()
    refused = invoke_cli("convert", gene_only, tmp_path / "x.spacy", "--six-types", "--types",
                         "Gene", check=False)
    assert refused.returncode == 1 and "E544" in refused.stdout + refused.stderr


# A config whose gazetteer tags Chemical by a dictionary named in [paths], as
# configs/ner_pubmed.cfg tags it by MeSH
GAZETTEER_CONFIG = """
[paths]
chemicals = null

[nlp]
lang = "en"
pipeline = ["bio_gazetteer","ner"]

[components]

[components.bio_gazetteer]
factory = "bio_gazetteer"

[components.ner]
factory = "ner"

[initialize]

[initialize.components]

[initialize.components.bio_gazetteer]

[initialize.components.bio_gazetteer.terms]
@misc = "spacy-biolink.gazetteer_terms.v1"

[initialize.components.bio_gazetteer.terms.sources]

[initialize.components.bio_gazetteer.terms.sources.Chemical]
path = ${paths.chemicals}
format = "tsv"
"""


def test_convert_cli_marks_the_gazetteers_names_missing_where_the_corpus_never_annotates_them(
        tmp_path):
    """A gene-only corpus's "cisplatin" is no negative for Chemical: the NER config's
    gazetteer names it (--unknown-terms-gazetteer); a Chemical-annotating corpus keeps it."""
    from .conftest import invoke_cli

    text = ("333|t|BRCA1 and cisplatin\n333|a|Cisplatin binds BRCA1.\n"
            "333\t0\t5\tBRCA1\tGene\t672\n333\t36\t41\tBRCA1\tGene\t672\n\n")
    corpus = _write(tmp_path / "genes.txt", text)
    config = _write(tmp_path / "ner.cfg", GAZETTEER_CONFIG)
    chemicals = _write(tmp_path / "chemicals.tsv", "cisplatin\tD002945\n")
    nlp = spacy.blank("en")

    def tags(path):
        return [_tags(d) for d in DocBin().from_disk(path).get_docs(nlp.vocab)][0]

    invoke_cli("convert", corpus, tmp_path / "plain.spacy", "--config", config, "--six-types",
               "--partial", "--annotates", "Gene")
    assert tags(tmp_path / "plain.spacy") == [("BRCA1", "B"), ("and", "O"), ("cisplatin", "O"),
                                              ("Cisplatin", "O"), ("binds", "O"), ("BRCA1", "B"),
                                              (".", "O")]
    result = invoke_cli("convert", corpus, tmp_path / "gaz.spacy", "--config", config,
                        "--six-types", "--partial", "--annotates", "Gene",
                        "--unknown-terms-gazetteer", "Chemical", "--paths.chemicals", chemicals)
    assert "Chemical 2" in result.stdout
    assert tags(tmp_path / "gaz.spacy") == [("BRCA1", "B"), ("and", "O"), ("cisplatin", "-"),
                                            ("Cisplatin", "-"), ("binds", "O"), ("BRCA1", "B"),
                                            (".", "O")]
    # a corpus that annotates chemicals keeps its negatives
    invoke_cli("convert", corpus, tmp_path / "chem.spacy", "--config", config, "--six-types",
               "--partial", "--annotates", "Gene,Chemical", "--unknown-terms-gazetteer",
               "Chemical", "--paths.chemicals", chemicals)
    assert ("cisplatin", "O") in tags(tmp_path / "chem.spacy")
    for args, code in (
            (["--paths.chemicals", chemicals], "E769"),  # overrides without the option
            (["--unknown-terms-gazetteer", "Chemical"], "E769"),  # no --config
            (["--config", config, "--unknown-terms-gazetteer", "Chemicals"], "E540"),
            (["--config", config, "--unknown-terms-gazetteer", "Chemical",
              "--paths.chemical", chemicals], "E460"),
            (["--config", config, "--unknown-terms-gazetteer", "Chemical",
              "--paths.chemicals"], "E770"),  # an override without its value
            (["--config", _write(tmp_path / "bare.cfg", '[nlp]\nlang = "en"\n'),
              "--unknown-terms-gazetteer", "Chemical"], "E768")):
        refused = invoke_cli("convert", corpus, tmp_path / "x.spacy", "--six-types", "--partial",
                             "--annotates", "Gene", *args, check=False)
        assert refused.returncode == 1 and code in refused.stdout + refused.stderr, (args, code)
        assert not (tmp_path / "x.spacy").exists()


HGNC_HEADER = ("HGNC ID\tApproved symbol\tApproved name\tStatus\tAlias symbols\t"
               "NCBI Gene ID(supplied by NCBI)\tPrevious symbols\n")


def test_hgnc_symbols_reads_symbols_names_and_aliases(tmp_path):
    path = tmp_path / "hgnc.tsv.gz"
    with gzip.open(path, "wt") as fileh:
        fileh.write(HGNC_HEADER)
        fileh.write("HGNC:1100\tBRCA1\tBRCA1 DNA repair associated\tApproved\t"
                    "RNF53, BRCC1\t672\t\n")
        fileh.write("HGNC:1\tCAT\tcatalase\tApproved\tMY\t847\tOLD1\n")
        fileh.write("HGNC:2\tGONE\tgone gene\tEntry Withdrawn\t\t\t\n")
    names = hgnc_symbols(path)
    assert names == ["BRCA1", "BRCA1 DNA repair associated", "RNF53", "BRCC1", "CAT",
                     "catalase", "OLD1"]  # "my", an English word, is left out; GONE too
    assert gazetteer_terms({"Gene": {"path": str(path), "format": "hgnc-symbols"}})["Gene"] \
        == names


def test_hgnc_symbols_refuses_another_table(tmp_path):
    path = _write(tmp_path / "x.tsv", "id\tname\n1\tfoo\n")
    with pytest.raises(BioLinkError, match=r"E543.*x\.tsv:1.*Approved symbol"):
        hgnc_symbols(path)


def test_gazetteer_terms_from_training_mentions(tmp_path):
    other = _write(tmp_path / "o.txt", OTHER_TRAIN)
    terms = gazetteer_terms({"Species": {"format": "pubtator-mentions", "paths": [str(other)]}})
    assert terms == {"Species": ["mice"]}


def test_ner_pubmed_config_learns_six_types_from_partial_docs(tmp_path):
    """configs/ner_pubmed.cfg trains on a tiny partial DocBin (no vectors, tiny term
    sources) and tags with its gazetteer's six types."""
    from spacy.cli.train import train
    from spacy_biolink.corpora.docbin import tokenizer_nlp_from_config

    config = ROOT / "configs" / "ner_pubmed.cfg"
    nlp = tokenizer_nlp_from_config(config)
    gene_only = _write(tmp_path / "g.txt", GENE_ONLY)
    other = _write(tmp_path / "o.txt", OTHER_TRAIN)
    unknown = UnknownTerms(nlp, mention_terms([other]))
    convert_six_types(gene_only, tmp_path / "train.spacy", nlp, partial=True,
                      annotates={"Gene"}, unknown=unknown)
    convert_six_types(other, tmp_path / "dev.spacy", nlp)
    medic = _write(tmp_path / "medic.txt", "D001943||breast cancer|Breast Neoplasms\n")
    hgnc = tmp_path / "hgnc.tsv"
    hgnc.write_text(HGNC_HEADER + "HGNC:1100\tBRCA1\tBRCA1 DNA repair\tApproved\t\t672\t\n")
    overrides = {"paths.train": str(tmp_path / "train.spacy"),
                 "paths.dev": str(tmp_path / "dev.spacy"), "paths.vectors": None,
                 "paths.medic": str(medic), "paths.mesh": str(medic), "paths.hgnc": str(hgnc),
                 "paths.biored_train": str(other), "paths.linnaeus_train": str(other),
                 "paths.s800_train": str(other), "paths.bioid_train": str(other),
                 "paths.species_names": str(ROOT / "spacy_biolink" / "data" / "species_names.tsv"),
                 "components.tok2vec.model.embed.include_static_vectors": False,
                 "initialize.components.bio_gazetteer.terms.sources.Chemical.format": "medic",
                 "initialize.components.bio_gazetteer.terms.sources.Chemical.mesh_branches":
                     None,
                 "initialize.components.bio_gazetteer.terms.sources.Disease_mesh.format": "medic",
                 "initialize.components.bio_gazetteer.terms.sources.Disease_mesh.mesh_branches":
                     None,
                 "training.max_steps": 2, "training.eval_frequency": 2}
    train(config, tmp_path / "out", overrides=overrides)
    trained = spacy.load(tmp_path / "out" / "model-last")
    doc = trained("BRCA1 in breast cancer of mice")
    assert [t.tag_ for t in doc] == ["B-Gene", "O", "B-Chemical|Disease", "I-Chemical|Disease",
                                     "O", "B-Species"]
    # no training mention names SARS-CoV-2: the species linker's names (decision 0020) do
    doc = trained("SARS-CoV-2 RNA")
    assert [(t.text, t.tag_) for t in doc] == [
        ("SARS", "B-Species"), ("-", "I-Species"), ("CoV", "I-Species"), ("-", "I-Species"),
        ("2", "I-Species"), ("RNA", "O")]
    assert set(trained.get_pipe("ner").labels) <= {"Gene", "Disease", "Chemical", "Species",
                                                   "Variant", "CellLine"}
