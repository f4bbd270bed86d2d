import subprocess
import sys

import pytest
import spacy
from spacy.tokens import DocBin
from spacy.training import Corpus

from spacy_biolink.corpora import convert_pubtator, corpus_kb_id, pubtator_to_docs, read_pubtator
from spacy_biolink.errors import BioLinkError

from .conftest import invoke_cli

# Doc 100: a composite with part strings (line 3), "diabetes" nested in "Type 2
# diabetes" (lines 4-5), "NIDDM" cutting the token "NIDDMs" (line 6), a CUI-less
# mention (line 7) and a relation line. Doc 200: a `+` id and a MESH: prefix.
CORPUS = """\
100|t|Ocular and auditory toxicity in diabetes.
100|a|Type 2 diabetes and NIDDMs; an unknown syndrome.
100\t0\t28\tOcular and auditory toxicity\tDisease\tD014786|D006311\tOcular toxicity|auditory toxicity
100\t32\t40\tdiabetes\tDisease\tD003920
100\t42\t57\tType 2 diabetes\tDisease\tD003924
100\t49\t57\tdiabetes\tDisease\tD003920
100\t62\t67\tNIDDM\tDisease\tD003924
100\t73\t89\tunknown syndrome\tDisease\t-1
100\tCID\tD008750\tD007022

200|t|Naloxone reverses breast cancer.
200|a|
200\t0\t8\tNaloxone\tChemical\tD009270+606882
200\t18\t31\tbreast cancer\tDisease\tMESH:D001943
"""

SPANS_100 = [("Ocular and auditory toxicity", "D014786|D006311"), ("diabetes", "D003920"),
             ("Type 2 diabetes", "D003924"), ("diabetes", "D003920"), ("NIDDMs", "D003924"),
             ("unknown syndrome", "")]


def write(tmp_path, text, name="corpus.PubTator"):
    path = tmp_path / name
    path.write_text(text, encoding="utf8")
    return path


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "spacy_biolink", *map(str, args)],
                          capture_output=True, text=True)


@pytest.mark.parametrize("raw,kb_id", [
    ("D014786|D006311", "D014786|D006311"),
    ("MESH:D001943", "D001943"),
    ("D009270+606882", "D009270+OMIM:606882"),
    (" D015862", "D015862"),
    ("-1", ""),
    ("D003920|-1", "D003920|-1"),
])
def test_kb_id_keeps_the_corpus_separators(raw, kb_id):
    assert corpus_kb_id(raw) == kb_id


def test_docs_hold_all_mentions_in_spans_and_a_flat_subset_in_ents(tmp_path):
    nlp = spacy.blank("en")
    docs = list(pubtator_to_docs(nlp, read_pubtator(write(tmp_path, CORPUS))))
    doc = docs[0]
    assert doc.user_data["pmid"] == "100"
    assert doc.text == "Ocular and auditory toxicity in diabetes. Type 2 diabetes and NIDDMs; an unknown syndrome."
    group = doc.spans["mentions"]
    assert [(s.text, s.kb_id_) for s in group] == SPANS_100
    assert group.attrs["part_texts"] == [["Ocular toxicity", "auditory toxicity"], [], [], [], [], []]
    assert [e.text for e in doc.ents] == ["Ocular and auditory toxicity", "diabetes", "Type 2 diabetes",
                                          "NIDDMs", "unknown syndrome"]
    assert [(e.label_, e.kb_id_) for e in docs[1].ents] == [("Chemical", "D009270+OMIM:606882"),
                                                            ("Disease", "D001943")]


def test_convert_round_trip_and_stats(tmp_path, caplog):
    output = tmp_path / "out" / "corpus.spacy"
    with caplog.at_level("WARNING", logger="spacy_biolink"):
        stats = convert_pubtator(write(tmp_path, CORPUS), output)
    assert stats.to_dict() == {
        "docs": 2, "mentions": 8, "ents": 7, "without_id": 1, "misaligned": 1,
        "overlapping_dropped": 1, "unplaceable": 0, "text_mismatches": 0,
        "examples_misaligned": ["100 line 7: 'NIDDM' at 62-67, widened to 'NIDDMs'"],
        "examples_unplaceable": []}
    assert "1 mention(s) did not fall on token boundaries" in caplog.text

    nlp = spacy.blank("en")
    expected = list(pubtator_to_docs(nlp, read_pubtator(tmp_path / "corpus.PubTator")))
    loaded = list(DocBin().from_disk(output).get_docs(nlp.vocab))
    assert [d.user_data["pmid"] for d in loaded] == ["100", "200"]
    for got, want in zip(loaded, expected):
        assert got.text == want.text
        for key in ("ents", "spans"):
            got_spans = got.ents if key == "ents" else got.spans["mentions"]
            want_spans = want.ents if key == "ents" else want.spans["mentions"]
            assert ([(s.start_char, s.end_char, s.label_, s.kb_id_) for s in got_spans]
                    == [(s.start_char, s.end_char, s.label_, s.kb_id_) for s in want_spans])
        assert got.spans["mentions"].attrs == want.spans["mentions"].attrs
    assert [p.name for p in output.parent.iterdir()] == ["corpus.spacy"]


def test_types_and_pmids_filters(tmp_path):
    path = write(tmp_path, CORPUS)
    stats = convert_pubtator(path, tmp_path / "chem.spacy", types={"Chemical"})
    assert (stats.docs, stats.mentions, stats.ents) == (2, 1, 1)
    stats = convert_pubtator(path, tmp_path / "one.spacy", pmids={"200"})
    assert (stats.docs, stats.mentions) == (1, 2)


def test_spacy_corpus_reader_reads_the_output_for_ner_training(tmp_path):
    output = tmp_path / "train.spacy"
    convert_pubtator(write(tmp_path, CORPUS), output)
    nlp = spacy.blank("en")
    examples = list(Corpus(output)(nlp))
    assert [len(eg.reference.ents) for eg in examples] == [5, 2]
    assert examples[0].reference.user_data["pmid"] == "100"
    nlp.add_pipe("ner")
    optimizer = nlp.initialize(lambda: examples)
    losses = nlp.update(examples, sgd=optimizer)
    assert losses["ner"] > 0
    assert set(nlp.get_pipe("ner").labels) == {"Disease", "Chemical"}


def test_malformed_input_writes_nothing(tmp_path):
    lines = CORPUS.splitlines()
    lines.insert(12, "200\t0\tx\tNaloxone\tChemical\tD009270")
    path = write(tmp_path, "\n".join(lines) + "\n")
    output = tmp_path / "out.spacy"
    output.write_bytes(b"previous")
    with pytest.raises(BioLinkError, match="integers") as err:
        convert_pubtator(path, output)
    assert f"{path}:13:" in str(err.value)
    assert output.read_bytes() == b"previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.PubTator", "out.spacy"]


def test_output_must_be_a_spacy_file(tmp_path):
    with pytest.raises(BioLinkError, match="E304"):
        convert_pubtator(write(tmp_path, CORPUS), tmp_path / "corpus.docbin")


def test_convert_cli(tmp_path):
    path = write(tmp_path, CORPUS)
    (tmp_path / "pmids.txt").write_text("100\n", encoding="utf8")
    result = invoke_cli("convert", path, tmp_path / "out.spacy", "--types", "Disease,Modifier",
                     "--pmids", tmp_path / "pmids.txt")
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    for label, value in [("docs", 1), ("mentions", 6), ("ents", 5), ("misaligned", 1),
                         ("overlapping", 1)]:
        assert any(line.split()[0] == label and line.split()[-1] == str(value)
                   for line in out.splitlines() if line.strip()), out
    docs = list(DocBin().from_disk(tmp_path / "out.spacy").get_docs(spacy.blank("en").vocab))
    assert [len(d.spans["mentions"]) for d in docs] == [6]


def test_convert_cli_fails_cleanly_on_malformed_input(tmp_path):
    path = write(tmp_path, CORPUS.replace("100\t32\t40", "100\t32"))
    result = run_cli("convert", path, tmp_path / "out.spacy")
    assert result.returncode == 1
    assert f"{path}:4:" in result.stdout and "E301" in result.stdout
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "out.spacy").exists()


def test_ncbi_disease_dev_keeps_every_mention(shared_data, tmp_path):
    output = tmp_path / "dev.spacy"
    stats = convert_pubtator(shared_data / "ncbi_disease" / "NCBIdevelopset_corpus.txt", output)
    assert (stats.docs, stats.mentions, stats.unplaceable) == (100, 787, 0)
    docs = list(DocBin().from_disk(output).get_docs(spacy.blank("en").vocab))
    assert sum(len(d.spans["mentions"]) for d in docs) == 787
    assert len({d.user_data["pmid"] for d in docs}) == 100


NCBI_STYLE = (
    "1|t|BRCA1 and breast cancer\n"
    "1|a|Ovarian cancer families.\n"
    "1\t10\t23\tbreast cancer\tSpecificDisease\tD001943\n"
    "1\t24\t38\tOvarian cancer\tModifier\tD010051\n\n"
)


def test_convert_labels_ncbi_types_as_the_ner_predicts(tmp_path):
    """NCBI-disease's types become `Disease`, the label configs/ner.cfg's NER predicts, so
    `spacy evaluate` (here nlp.evaluate) scores NER above 0; the corpus types stay in the
    span group and evaluate-e2e's `types` still selects by them; labels=None keeps them."""
    from spacy.training import Example

    from spacy_biolink.corpora.docbin import convert_pubtator
    from spacy_biolink.evaluation.end_to_end import _gold_spans_with_types

    corpus = tmp_path / "tiny.PubTator"
    corpus.write_text(NCBI_STYLE, encoding="utf8")
    nlp = spacy.blank("en")
    convert_pubtator(corpus, tmp_path / "gold.spacy")
    convert_pubtator(corpus, tmp_path / "typed.spacy", labels=None)
    gold = list(DocBin().from_disk(tmp_path / "gold.spacy").get_docs(nlp.vocab))
    typed = list(DocBin().from_disk(tmp_path / "typed.spacy").get_docs(nlp.vocab))
    assert [e.label_ for e in gold[0].ents] == ["Disease", "Disease"]
    assert [e.label_ for e in typed[0].ents] == ["SpecificDisease", "Modifier"]
    assert [t for _, t in _gold_spans_with_types(gold[0], "mentions")] == \
        ["SpecificDisease", "Modifier"]
    ruler = nlp.add_pipe("entity_ruler")
    ruler.add_patterns([{"label": "Disease", "pattern": p}
                        for p in ("breast cancer", "Ovarian cancer")])
    examples = [Example(nlp.make_doc(d.text), d) for d in gold]
    assert nlp.evaluate(examples)["ents_f"] == 1.0
    typed_examples = [Example(nlp.make_doc(d.text), d) for d in typed]
    assert nlp.evaluate(typed_examples)["ents_f"] == 0.0  # what users met before


def test_convert_cli_keep_types(tmp_path):
    """`convert --keep-types` keeps NCBI's own mention types as entity labels (for an NER
    trained to tell them apart); without it they become `Disease`. Both keep the corpus
    types in the span group."""
    corpus = write(tmp_path, NCBI_STYLE, name="tiny.PubTator")
    for flags, name in (([], "default.spacy"), (["--keep-types"], "typed.spacy")):
        result = invoke_cli("convert", corpus, tmp_path / name, *flags)
        assert result.returncode == 0, result.stdout + result.stderr
    vocab = spacy.blank("en").vocab
    default, = DocBin().from_disk(tmp_path / "default.spacy").get_docs(vocab)
    typed, = DocBin().from_disk(tmp_path / "typed.spacy").get_docs(vocab)
    assert [e.label_ for e in default.ents] == ["Disease", "Disease"]
    assert [e.label_ for e in typed.ents] == ["SpecificDisease", "Modifier"]
    assert [s.label_ for s in typed.spans["mentions"]] == ["SpecificDisease", "Modifier"]
    for doc in (default, typed):
        assert doc.spans["mentions"].attrs["types"] == ["SpecificDisease", "Modifier"]
