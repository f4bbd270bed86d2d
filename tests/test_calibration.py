"""Calibrated scores (issue 58): the ScoreCalibration stage, its fit on dev gold mentions
and a pipeline saved with it."""
import json

import numpy
import pytest
import spacy

from spacy_biolink.errors import BioLinkError
from spacy_biolink.linker.stages.calibration import (ScoreCalibration,
                                                     expected_calibration_error, fit_platt,
                                                     list_margins)
from spacy_biolink.training.calibrate import (calibrate_pipeline, fit_calibration,
                                              nil_threshold_for, nil_threshold_for_each)

from .conftest import doc_with_ents, invoke_cli, make_linker_nlp

# Gold mentions of the tiny dictionary's concepts: clear names, a misspelling, a short
# form two concepts share (HD), and a concept it lacks (melanoma). (title, abstract,
# [(mention, id)]), each mention found at its first place after the previous one.
DEV_DOCS = [
    ("Type 2 diabetes and breast cancer in HD families.",
     "Selective tooth agenesis and NIDDM were seen; Huntington disease also, and melanoma.",
     [("Type 2 diabetes", "D003924"), ("breast cancer", "D001943"), ("HD", "D006816"),
      ("Selective tooth agenesis", "C567755"), ("NIDDM", "D003924"),
      ("Huntington disease", "D006816"), ("melanoma", "D008545")]),
    ("Juvenile diabetes, breast tumour and diabetes mellitus.",
     "Hirschsprung disease (HD) and HD again.",
     [("Juvenile diabetes", "D003922"), ("breast tumour", "D001943"),
      ("diabetes mellitus", "D003924"), ("Hirschsprung disease", "D006527"),
      ("HD", "D006527"), ("HD", "D006527")]),
]


def _pubtator(docs) -> str:
    out = []
    for pmid, (title, abstract, mentions) in enumerate(docs, 1):
        text = f"{title} {abstract}"
        out += [f"{pmid}|t|{title}", f"{pmid}|a|{abstract}"]
        at = 0
        for mention, concept in mentions:
            start = text.index(mention, at)
            at = start + len(mention)
            out.append(f"{pmid}\t{start}\t{at}\t{mention}\tDisease\t{concept}")
        out.append("")
    return "\n".join(out) + "\n"


DEV = _pubtator(DEV_DOCS)


def test_platt_fit_recovers_known_weights_and_keeps_them_non_negative():
    rng = numpy.random.default_rng(0)
    scores = rng.uniform(0, 1, 4000)
    margins = rng.uniform(0, 0.5, 4000)
    truth = 1 / (1 + numpy.exp(-(4 * scores + 6 * margins - 3)))
    right = rng.uniform(size=4000) < truth
    weights = fit_platt(scores, margins, right)
    assert weights == pytest.approx([4, 6, -3], abs=0.6)
    # A feature that would get a negative weight is left out, not inverted.
    assert fit_platt(scores, margins, ~right)[:2] == [0.0, 0.0]


def test_calibrated_probabilities_are_calibrated_on_their_own_kind_of_data():
    rng = numpy.random.default_rng(1)
    scores = rng.uniform(0, 1, 5000)
    margins = rng.uniform(0, 0.5, 5000)
    tops = numpy.ones(5000)
    right = rng.uniform(size=5000) < 1 / (1 + numpy.exp(-(5 * scores + 4 * margins - 3)))
    stage = ScoreCalibration()
    stage.set_weights(fit_platt(scores, margins, right) * 2)
    assert expected_calibration_error(stage.probabilities(scores, margins, tops), right) < 0.03
    # raw scores are not probabilities: far worse calibrated
    assert expected_calibration_error(scores, right) > 0.05


def test_margins_and_calibrated_lists_keep_their_order():
    assert list_margins(numpy.array([0.9, 0.6, 0.5])).tolist() == pytest.approx([0.3, -0.3, -0.4])
    assert list_margins(numpy.array([0.7, 0.7])).tolist() == [0.0, 0.0]
    assert list_margins(numpy.array([0.8])).tolist() == [0.8]
    stage = ScoreCalibration()
    stage.set_weights([5.0, 5.0, -3.0, 5.0, 5.0, -4.0])
    # A prior may order a lower score first: the list's order is kept, probabilities fall.
    out = stage.calibrate([(3, 0.8), (1, 0.85), (2, 0.2)])
    assert [c for c, _ in out] == [3, 1, 2]
    probs = [p for _, p in out]
    assert probs == sorted(probs, reverse=True) and all(0 < p < 1 for p in probs)
    assert stage.calibrate([]) == []


def test_nil_threshold_is_the_highest_with_the_asked_precision():
    probs = numpy.array([0.05, 0.1, 0.2, 0.3, 0.6, 0.9])
    right = numpy.array([False, False, True, False, True, True])
    # NIL below 0.2: 2 wrong of 2; below 0.3: 2 of 3; below 0.6: 3 of 4.
    assert nil_threshold_for(probs, right, 0.95) == 0.2
    assert nil_threshold_for(probs, right, 0.7) == 0.6
    assert nil_threshold_for(numpy.array([0.4, 0.5]), numpy.array([True, True]), 0.95) == 0.0


def test_nil_threshold_keeps_the_precision_on_each_corpus():
    """Pooled, a corpus of sure NILs would pay for another's good links made NIL: the
    pubmed fast hybrid's threshold pooled on three dev sets gave BioRED dev NIL
    precision 0.882. Each corpus must keep the precision (or make no NIL)."""
    many = (numpy.array([0.05, 0.1, 0.15, 0.2, 0.25, 0.9]),
            numpy.array([False, False, False, False, False, True]))
    few = (numpy.array([0.22, 0.5, 0.9]), numpy.array([True, True, True]))
    pooled = tuple(numpy.concatenate(parts) for parts in zip(many, few))
    # pooled, NIL below 0.5 is 5 wrong of 6 (0.83): allowed at 0.8 ...
    assert nil_threshold_for(*pooled, 0.8) == 0.5
    # ... but below 0.5 `few` loses its one mention there, a right link: 0.22 keeps
    # `few` out of the NILs and `many` at 4 of 4.
    assert nil_threshold_for_each([many, few], 0.8) == 0.22
    # alone, `many` may make all six NIL (5 wrong of 6): past its highest probability
    assert nil_threshold_for_each([many], 0.8) == nil_threshold_for(*many, 0.8) \
        == numpy.nextafter(0.9, 1.0)
    assert nil_threshold_for_each([few], 0.8) == 0.0


def test_bad_settings_and_states_are_coded_errors(tmp_path):
    with pytest.raises(BioLinkError, match="E560"):
        ScoreCalibration(method="isotonic")
    stage = ScoreCalibration()
    with pytest.raises(BioLinkError, match="E561"):
        stage.state_to_bytes()
    with pytest.raises(BioLinkError, match="E561"):
        stage.set_weights([-1.0, 1.0, 0.0, 1.0, 1.0, 0.0])
    with pytest.raises(BioLinkError, match="E561"):
        stage.set_weights([1.0, 1.0, 0.0])  # the first candidate's weights alone
    with pytest.raises(BioLinkError, match="E561"):
        stage.state_from_bytes(b"not json")
    with pytest.raises(BioLinkError, match="E562"):
        stage.load_trained(tmp_path)


def test_the_registered_stage_is_built_from_config_and_reads_fitted_weights(
        tiny_dictionary, tmp_path):
    block = {"@misc": "spacy-biolink.ScoreCalibration.v1", "method": "platt"}
    nlp = spacy.blank("en")
    nlp.add_pipe("bio_linker", config={"stages": {"calibration": block}})
    pipe = nlp.get_pipe("bio_linker")
    assert isinstance(pipe.stages["calibration"], ScoreCalibration)
    # Unfitted, it would link with no weights: initialize refuses.
    with pytest.raises(BioLinkError, match="E168"):
        pipe.initialize(dictionary=tiny_dictionary)
    fitted = ScoreCalibration()
    fitted.set_weights([6.0, 6.0, -5.0, 6.0, 6.0, -6.0])
    (tmp_path / "calibration.json").write_bytes(fitted.state_to_bytes())
    with pytest.warns(UserWarning, match="W001"):  # the tiny dictionary's shared "HD"
        pipe.initialize(dictionary=tiny_dictionary, stages={"calibration": tmp_path})
    doc = nlp(doc_with_ents(nlp, "Type 2 diabetes.", ["Type 2 diabetes"]))
    (kb_id, prob), = doc.ents[0]._.kb_ents[:1]
    assert kb_id == "D003924"
    # an exact name (cosine 1) clear of the rest: p = sigmoid(6 + 6 * margin - 5)
    assert 0.73 < prob < 1.0


def test_calibrate_pipeline_saves_a_pipeline_whose_scores_are_probabilities(
        tiny_dictionary, tmp_path):
    dev = tmp_path / "dev.txt"
    dev.write_text(DEV, encoding="utf8")
    make_linker_nlp(tiny_dictionary).to_disk(tmp_path / "raw")
    report = calibrate_pipeline(tmp_path / "raw", tmp_path / "calibrated", [(dev, None)],
                                nil_precision=0.95)
    assert report["pooled"]["n"] == 13  # melanoma stays: not in the dictionary, NIL is right
    assert report["corpora"][str(dev)]["not_in_dictionary"] == 1
    nlp = spacy.load(tmp_path / "calibrated")
    pipe = nlp.get_pipe("bio_linker")
    assert list(pipe.stages) == ["calibration"]
    assert pipe.cfg["threshold"] == report["threshold"]
    saved = json.loads((tmp_path / "calibrated" / "bio_linker" / "stages" / "calibration")
                       .read_text(encoding="utf8"))
    assert saved["weights"] == report["weights"]
    doc = nlp(doc_with_ents(nlp, "Type 2 diabetes and breast tumour.",
                            ["Type 2 diabetes", "breast tumour"]))
    assert [e.kb_id_ for e in doc.ents] == ["D003924", "D001943"]
    for ent in doc.ents:
        probs = [p for _, p in ent._.kb_ents]
        assert all(0.0 < p < 1.0 for p in probs) and probs == sorted(probs, reverse=True)
    # to_bytes / from_bytes keep the weights
    again = spacy.load(tmp_path / "calibrated")
    again.from_bytes(nlp.to_bytes())
    assert again.get_pipe("bio_linker").stages["calibration"].weights == report["weights"]
    # A refit of the calibrated pipeline reads the scores before the stage, not after.
    refit, _, _ = fit_calibration(nlp, [(dev, None)])
    assert refit.weights == pytest.approx(report["weights"])


def test_the_calibrate_command_writes_a_calibrated_copy(tiny_dictionary, tmp_path):
    dev = tmp_path / "dev.txt"
    dev.write_text(DEV, encoding="utf8")
    make_linker_nlp(tiny_dictionary).to_disk(tmp_path / "raw")
    out = invoke_cli("calibrate", tmp_path / "raw", tmp_path / "calibrated", "--corpus", dev,
                     "--types", "Disease")
    assert "Saved the calibrated pipeline" in out.stdout and "dev.txt" in out.stdout
    assert "calibration" in spacy.load(tmp_path / "calibrated").get_pipe("bio_linker").stages
    same = invoke_cli("calibrate", tmp_path / "raw", tmp_path / "raw", "--corpus", dev,
                      check=False)
    assert same.returncode == 1 and "E030" in same.stdout + same.stderr


def test_ncbi_and_biored_dev_calibration_is_reliable(shared_data):
    """On real dev gold mentions (a TF-IDF linker over the shipped MEDIC sample is too
    small; this one is MEDIC 2012 whole, no corpus names): calibrated probabilities are
    within a few points of the accuracy they claim, where raw cosines are not."""
    from spacy_biolink import load_dictionary

    dictionary = load_dictionary(shared_data / "medic" / "medic_06Jul2012.txt.gz")
    nlp = spacy.blank("en")
    nlp.add_pipe("bio_linker")
    with pytest.warns(UserWarning, match="W001"):  # MEDIC's names shared by concepts
        nlp.get_pipe("bio_linker").initialize(dictionary=dictionary)
    corpora = [(shared_data / "ncbi_disease" / "NCBIdevelopset_corpus.txt", None),
               (shared_data / "biored" / "Dev.PubTator.gz", ["Disease"])]
    stage, threshold, report = fit_calibration(nlp, corpora)
    assert report["pooled"]["ece"] < 0.05
    for corpus in report["corpora"].values():
        assert corpus["ece_other_candidates"] < 0.05
    assert 0.0 < threshold < 0.5
    biored = report["corpora"][str(corpora[1][0])]
    assert biored["nil_precision"] is None or biored["nil_precision"] >= 0.9


def test_fit_with_calibrates_a_train_dev_linker_on_the_linker_without_dev(
        tiny_medic_path, tmp_path):
    """`calibrate --fit-with`: the packaged linker holds the dev mentions among its names,
    so each finds itself there; the fit runs on the same linker without them (dev is new
    text to it) and the weights land in the packaged one's copy. A fit linker with other
    settings is refused: its scores would be on another scale."""
    dev = tmp_path / "dev.txt"
    dev.write_text(DEV, encoding="utf8")
    invoke_cli("init-linker", tmp_path / "fit", "--dictionary", tiny_medic_path)
    invoke_cli("init-linker", tmp_path / "raw", "--dictionary", tiny_medic_path,
               "--augment", dev)
    out = invoke_cli("calibrate", tmp_path / "raw", tmp_path / "calibrated", "--corpus", dev,
                     "--fit-with", tmp_path / "fit")
    assert "Saved the calibrated pipeline" in out.stdout
    fit_alone = calibrate_pipeline(tmp_path / "fit", tmp_path / "fit_calibrated", [(dev, None)])
    in_sample = calibrate_pipeline(tmp_path / "raw", tmp_path / "raw_calibrated", [(dev, None)])
    saved = json.loads((tmp_path / "calibrated" / "bio_linker" / "stages" / "calibration")
                       .read_text(encoding="utf8"))
    assert saved["weights"] == pytest.approx(fit_alone["weights"])
    assert saved["report"]["fitted_with"] == str(tmp_path / "fit")
    # In sample, every dev mention is its own name: right at full score, nothing to learn
    # from, a calibration that is not the new-text one.
    assert in_sample["weights"] != pytest.approx(fit_alone["weights"])
    nlp = spacy.load(tmp_path / "calibrated")
    assert nlp.get_pipe("bio_linker").cfg["threshold"] == fit_alone["threshold"]
    # "Selective tooth agenesis", a dev mention, is a name of the calibrated linker only.
    doc = nlp(doc_with_ents(nlp, "Selective tooth agenesis.", ["Selective tooth agenesis"]))
    assert doc.ents[0].kb_id_ == "C567755"
    invoke_cli("init-linker", tmp_path / "other", "--dictionary", tiny_medic_path,
               "--components.bio_linker.k", "3")
    refused = invoke_cli("calibrate", tmp_path / "raw", tmp_path / "refused", "--corpus", dev,
                         "--fit-with", tmp_path / "other", check=False)
    assert refused.returncode == 1 and "E564" in refused.stdout + refused.stderr
    assert "k" in refused.stdout + refused.stderr and not (tmp_path / "refused").exists()


def test_unseen_corpus_is_fitted_on_the_linker_as_shipped(tiny_medic_path, tmp_path):
    """`calibrate --unseen-corpus`: a dev corpus the packaged linker's names do not hold
    gives its rows from that linker itself (the linker as shipped), the others from
    --fit-with's; one the packaged linker was augmented with is refused (E565)."""
    from spacy_biolink.training.calibrate import fit_rows, mention_rows

    seen, unseen = tmp_path / "seen.txt", tmp_path / "unseen.txt"
    seen.write_text(_pubtator(DEV_DOCS[:1]), encoding="utf8")
    unseen.write_text(_pubtator(DEV_DOCS[1:]), encoding="utf8")
    invoke_cli("init-linker", tmp_path / "fit", "--dictionary", tiny_medic_path)
    invoke_cli("init-linker", tmp_path / "raw", "--dictionary", tiny_medic_path,
               "--augment", seen)
    invoke_cli("calibrate", tmp_path / "raw", tmp_path / "calibrated", "--corpus", seen,
               "--unseen-corpus", unseen, "--fit-with", tmp_path / "fit")
    saved = json.loads((tmp_path / "calibrated" / "bio_linker" / "stages" / "calibration")
                       .read_text(encoding="utf8"))
    raw, fit = spacy.load(tmp_path / "raw"), spacy.load(tmp_path / "fit")
    _, threshold, expected = fit_rows({str(seen): mention_rows(fit, seen),
                                       str(unseen): mention_rows(raw, unseen)})
    _, _, all_fit = fit_rows({str(seen): mention_rows(fit, seen),
                              str(unseen): mention_rows(fit, unseen)})
    assert saved["weights"] == pytest.approx(expected["weights"])
    assert saved["weights"] != pytest.approx(all_fit["weights"])
    assert saved["report"]["fitted_on_the_model"] == [str(unseen)]
    assert spacy.load(tmp_path / "calibrated").get_pipe("bio_linker").cfg["threshold"] \
        == threshold
    refused = invoke_cli("calibrate", tmp_path / "raw", tmp_path / "refused", "--corpus",
                         unseen, "--unseen-corpus", seen, "--fit-with", tmp_path / "fit",
                         check=False)
    assert refused.returncode == 1 and "E565" in refused.stdout + refused.stderr
    assert "--augment" in refused.stdout + refused.stderr
    assert not (tmp_path / "refused").exists()
    twice = invoke_cli("calibrate", tmp_path / "raw", tmp_path / "refused", "--corpus", seen,
                       "--unseen-corpus", seen, check=False)
    assert twice.returncode == 1 and "given twice" in twice.stdout + twice.stderr


def test_exclude_pmids_leaves_documents_out_of_the_fit(tiny_dictionary, tmp_path):
    """`calibrate --exclude-pmids`: the documents measured elsewhere stay out of the fit
    (here the second dev document, six mentions of thirteen)."""
    dev = tmp_path / "dev.txt"
    dev.write_text(DEV, encoding="utf8")
    (tmp_path / "held_out.txt").write_text("2\n", encoding="utf8")
    make_linker_nlp(tiny_dictionary).to_disk(tmp_path / "raw")
    invoke_cli("calibrate", tmp_path / "raw", tmp_path / "calibrated", "--corpus", dev,
               "--exclude-pmids", tmp_path / "held_out.txt")
    saved = json.loads((tmp_path / "calibrated" / "bio_linker" / "stages" / "calibration")
                       .read_text(encoding="utf8"))
    assert saved["report"]["pooled"]["n"] == 7
    _, _, everything = fit_calibration(spacy.load(tmp_path / "raw"), [(dev, None)])
    assert everything["pooled"]["n"] == 13


def test_a_batch_is_calibrated_as_its_lists_one_by_one():
    """apply_to_mentions scores a batch's lists in one pass: each list comes out as alone,
    empty lists, ties, lists of one and lists not in score order among them."""
    stage = ScoreCalibration()
    stage.set_weights([5.0, 3.0, -2.0, 4.0, 1.0, -3.0])
    lists = [[("A", 0.9), ("B", 0.7)], [], [("C", 0.5)], [("D", 0.6), ("E", 0.6), ("F", 0.2)],
             [("G", 0.3), ("H", 0.8)]]
    batch = stage.calibrate_lists(lists)
    assert batch == [stage.calibrate_lists([one])[0] for one in lists]
    assert batch[1] == [] and [c for c, _ in batch[4]] == ["G", "H"]
    assert batch[4][1][1] <= batch[4][0][1]  # order kept: H no likelier than G before it
    links = [[("x", lists[0]), ("y", lists[2])], [("z", lists[1])]]
    assert stage.apply_to_mentions(None, [], links) == [[("x", batch[0]), ("y", batch[2])],
                                                        [("z", batch[1])]]
