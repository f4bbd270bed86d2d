import gzip

import pytest

from spacy_biolink.errors import BioLinkError
from spacy_biolink.corpora import read_pubtator

CORPUS = """\
100|t|Ocular and auditory toxicity in diabetes.
100|a|Wilson disease (WD) is rare.
100\t0\t28\tOcular and auditory toxicity\tDisease\tD014786|D006311\tOcular toxicity|auditory toxicity
100\t32\t40\tdiabetes\tDisease\tMESH:D003920
100\t42\t56\tWilson disease\tDisease\t 606882
100\t58\t60\tWD\tSpecificDisease\t-1
100\tCID\tD008750\tD007022

200|t|Naloxone only.
200|a|
200\t0\t8\tNaloxone\tChemical\tD009270
"""


def write(tmp_path, text, name="corpus.txt"):
    path = tmp_path / name
    path.write_text(text, encoding="utf8")
    return path


def test_reads_documents_mentions_and_ids(tmp_path):
    docs = list(read_pubtator(write(tmp_path, CORPUS)))
    assert [d.pmid for d in docs] == ["100", "200"]
    first = docs[0]
    assert first.text.startswith("Ocular and auditory toxicity in diabetes. Wilson")
    assert [m.ids for m in first.mentions] == [["D014786", "D006311"], ["D003920"], ["OMIM:606882"], []]
    assert first.mentions[0].part_texts == ["Ocular toxicity", "auditory toxicity"]
    assert all(first.text[m.start:m.end] == m.text for m in first.mentions)
    assert docs[1].text == "Naloxone only."


def test_type_and_pmid_filters(tmp_path):
    path = write(tmp_path, CORPUS)
    docs = list(read_pubtator(path, types={"Chemical"}))
    assert [len(d.mentions) for d in docs] == [0, 1]
    assert [d.pmid for d in read_pubtator(path, pmids={"200"})] == ["200"]


def test_gzipped_corpus(tmp_path):
    path = tmp_path / "c.PubTator.gz"
    with gzip.open(path, "wt", encoding="utf8") as f:
        f.write(CORPUS)
    assert sum(len(d.mentions) for d in read_pubtator(path)) == 5


@pytest.mark.parametrize("bad_line,reason", [
    ("100\t0\tx\tOcular\tDisease\tD1", "integers"),
    ("100\t0\t6\tOcular", "fields"),
    ("100\t9\t3\tOcular\tDisease\tD1", "non-empty range"),
    ("999\t0\t6\tOcular\tDisease\tD1", "outside that document"),
])
def test_malformed_line_is_an_error_with_line_number(tmp_path, bad_line, reason):
    lines = CORPUS.splitlines()
    lines.insert(3, bad_line)
    path = write(tmp_path, "\n".join(lines) + "\n")
    with pytest.raises(BioLinkError, match=reason) as err:
        list(read_pubtator(path))
    assert f"{path}:4:" in str(err.value)


def test_offsets_that_do_not_match_are_reported_not_shifted(tmp_path):
    path = write(tmp_path, CORPUS.replace("100\t32\t40\tdiabetes", "100\t33\t41\tdiabetes"))
    with pytest.warns(UserWarning, match="W002.*diabetes"):
        docs = list(read_pubtator(path))
    mismatched = docs[0].offset_mismatches
    assert [(m.text, m.start) for m in mismatched] == [("diabetes", 33)]


def test_missing_corpus_file(tmp_path):
    with pytest.raises(BioLinkError, match="E302"):
        list(read_pubtator(tmp_path / "missing.txt"))


def test_ncbi_disease_counts(shared_data):
    base = shared_data / "ncbi_disease"
    counts = {name: sum(len(d.mentions) for d in read_pubtator(base / name))
              for name in ["NCBItrainset_corpus.txt.gz", "NCBIdevelopset_corpus.txt", "NCBItestset_corpus.txt"]}
    assert list(counts.values()) == [5145, 787, 960]


def test_same_pmid_twice_with_different_content_is_an_error(tmp_path):
    # Issue 59: a repeated PMID was taken twice with no word.
    second = CORPUS.split("\n\n")[0].replace("rare.", "rarer.")
    path = write(tmp_path, CORPUS + "\n" + second + "\n")
    with pytest.raises(BioLinkError,
                       match=r"E311.*document 100 appears twice \(lines 1 and 13\)") as err:
        list(read_pubtator(path))
    assert str(path) in str(err.value)


def test_same_pmid_twice_identical_is_kept_with_a_warning(tmp_path):
    # The shipped NCBI-disease training set holds PMID 8528200 twice, identically, and its
    # published mention count includes both copies.
    path = write(tmp_path, CORPUS + "\n" + CORPUS.split("\n\n")[0] + "\n")
    with pytest.warns(UserWarning, match=r"W311.*document 100 appears twice \(lines 1 and 13\)"):
        docs = list(read_pubtator(path))
    assert [d.pmid for d in docs] == ["100", "200", "100"]


def test_title_line_twice_in_one_block_is_an_error(tmp_path):
    path = write(tmp_path, "100|t|One.\n100|a|Two.\n100|t|Three.\n")
    with pytest.raises(BioLinkError, match=r"E311.*lines 1 and 3"):
        list(read_pubtator(path))


def test_abstract_before_title_is_an_error(tmp_path):
    path = write(tmp_path, "100|a|Wilson disease (WD) is rare.\n100|t|Ocular toxicity.\n"
                           "100\t0\t6\tOcular\tDisease\tD1\n")
    with pytest.raises(BioLinkError, match="E312") as err:
        list(read_pubtator(path))
    assert f"{path}:1:" in str(err.value)


@pytest.mark.parametrize("start,end", [(32, 47), (41, 48), (40, 42)])
def test_mention_across_title_and_abstract_is_an_error(tmp_path, start, end):
    # Title "Ocular and auditory toxicity in diabetes." is 41 characters: 41 is the space.
    text = ("Ocular and auditory toxicity in diabetes. Wilson disease (WD) is rare.")[start:end]
    path = write(tmp_path, CORPUS.replace("100\t58\t60\tWD\tSpecificDisease\t-1",
                                          f"100\t{start}\t{end}\t{text}\tDisease\t-1"))
    with pytest.raises(BioLinkError, match="E313") as err:
        list(read_pubtator(path))
    message = str(err.value)
    assert f"{path}:6:" in message and f"{start}-{end}" in message and repr(text) in message


def test_shipped_ncbi_training_set_repeats_one_document_identically(shared_data):
    # What the new checks (E311-E313) found in the corpora the project ships: only the
    # identical copy of PMID 8528200 in NCBI-disease's training set (W311).
    base = shared_data / "ncbi_disease"
    with pytest.warns(UserWarning, match="W311.*8528200"):
        list(read_pubtator(base / "NCBItrainset_corpus.txt.gz"))
