"""merge-corpora: several PubTator corpora as one training file."""
from spacy_biolink.corpora.pubtator import read_pubtator

from .conftest import invoke_cli

FIRST = ("1|t|Renal failure and aspirin.\n"
         "1\t0\t13\tRenal failure\tDisease\tD051437\n"
         "1\t18\t25\taspirin\tChemical\tD001241\n\n"
         "2|t|Held out gout.\n2\t9\t13\tgout\tDisease\tD006073\n\n")
# BioRED's own type names, and a PMID the first corpus has too
SECOND = ("1|t|Renal failure and aspirin.\n"
          "1\t0\t13\tRenal failure\tDiseaseOrPhenotypicFeature\tD007674\n\n"
          "3|t|Asthma.\n3\t0\t6\tAsthma\tDiseaseOrPhenotypicFeature\tD001249\n\n")


def test_merge_keeps_one_type_leaves_held_out_out_and_renames_a_shared_pmid(tmp_path):
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    first.write_text(FIRST, encoding="utf8")
    second.write_text(SECOND, encoding="utf8")
    held_out = tmp_path / "held_out.txt"
    held_out.write_text("2\n", encoding="utf8")
    out = tmp_path / "merged.txt"
    run = invoke_cli("merge-corpora", out, first, second, "--type", "Disease",
                     "--exclude-pmids", held_out)
    assert "3 documents, 3 Disease mentions; 1 held-out documents left out, 1 repeated" \
        in run.stdout
    docs = list(read_pubtator(out))
    assert [d.pmid for d in docs] == ["1", "91", "3"]
    assert [[(m.text, m.raw_ids) for m in d.mentions] for d in docs] == [
        [("Renal failure", "D051437")], [("Renal failure", "D007674")], [("Asthma", "D001249")]]
    # an existing output is replaced only with --force; an unknown type is refused
    again = invoke_cli("merge-corpora", out, first, check=False)
    assert again.returncode != 0 and "--force" in again.stdout + again.stderr
    assert len(list(read_pubtator(out))) == 3
    wrong = invoke_cli("merge-corpora", tmp_path / "x.txt", first, "--type", "Diseases",
                       check=False)
    assert wrong.returncode != 0 and "six types" in wrong.stdout + wrong.stderr
    assert not (tmp_path / "x.txt").exists()
    # a file that is not PubTator is refused where it goes wrong, nothing written
    (tmp_path / "notes.txt").write_text("hello world\n", encoding="utf8")
    refused = invoke_cli("merge-corpora", tmp_path / "y.txt", first, tmp_path / "notes.txt",
                         check=False)
    assert refused.returncode != 0 and "E301" in refused.stdout + refused.stderr
    assert "notes.txt:1" in refused.stdout + refused.stderr
    assert not (tmp_path / "y.txt").exists()


def test_merge_keeps_a_split_and_leaves_out_several_held_out_files(tmp_path):
    """--pmids keeps one split of a corpus (the documents a trainer never sees, for
    calibration); --exclude-pmids repeats, each file's documents left out."""
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    first.write_text(FIRST, encoding="utf8")
    second.write_text(SECOND, encoding="utf8")
    (tmp_path / "split.txt").write_text("1\n3\n", encoding="utf8")
    (tmp_path / "dev.txt").write_text("3\n", encoding="utf8")
    (tmp_path / "test.txt").write_text("2\n", encoding="utf8")
    split = tmp_path / "split_out.txt"
    run = invoke_cli("merge-corpora", split, second, "--pmids", tmp_path / "split.txt",
                     "--exclude-pmids", tmp_path / "dev.txt")
    assert "1 documents" in run.stdout and "1 held-out documents left out" in run.stdout
    assert [d.pmid for d in read_pubtator(split)] == ["1"]
    both = tmp_path / "both.txt"
    invoke_cli("merge-corpora", both, first, second, "--exclude-pmids", tmp_path / "dev.txt",
               "--exclude-pmids", tmp_path / "test.txt")
    assert [d.pmid for d in read_pubtator(both)] == ["1", "91"]
