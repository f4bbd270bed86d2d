import pytest
from spacy.language import Language
from spacy.tokens import Span

from spacy_biolink.corpora import convert_pubtator, pubtator_to_docs, read_pubtator
from spacy_biolink.errors import BioLinkError
from spacy_biolink.evaluation import evaluate_end_to_end, format_end_to_end_table

from .conftest import make_linker_nlp

# Seven gold mentions. STHAG6 is annotated with the OMIM id that TINY_MEDIC lists as
# an alternative id of C567755; HD is annotated as Hirschsprung disease, while TINY_MEDIC
# gives "HD" to Huntington disease first (the linker's tie order); the composite needs
# two concepts; "atypical diabetes" has none (and is linked anyway).
CORPUS = """\
1|t|Type 2 diabetes and breast cancer.
1|a|NIDDM patients; STHAG6 carriers; HD; Huntington and Hirschsprung disease; an atypical diabetes.
1\t0\t15\tType 2 diabetes\tDisease\tD003924
1\t20\t33\tbreast cancer\tDisease\tD001943
1\t35\t40\tNIDDM\tDisease\tD003924
1\t51\t57\tSTHAG6\tModifier\tOMIM:613097
1\t68\t70\tHD\tDisease\tD006527
1\t72\t107\tHuntington and Hirschsprung disease\tCompositeMention\tD006816|D006527\tHuntington disease|Hirschsprung disease
1\t112\t129\tatypical diabetes\tDisease\t-1
1\tCID\tD003924\tD001943

"""

# No pattern for the composite, so that the scores below do not depend on whether
# bio_linker splits composites; the composite tests set its kb_id themselves.
PATTERNS = ["Type 2 diabetes", "breast cancer", "NIDDM", "STHAG6", "HD", "atypical diabetes"]
COMPOSITE = "Huntington and Hirschsprung disease"


@Language.factory("test_set_composite_kb_id", default_config={"kb_id": ""})
def make_composite_kb_id_setter(nlp, name, kb_id):
    """Gives the composite a fixed kb_id, standing in for a linker that splits composites."""
    def set_kb_id(doc):
        doc.ents = [Span(doc, e.start, e.end, label=e.label_,
                         kb_id=kb_id if e.text == COMPOSITE else e.kb_id_) for e in doc.ents]
        return doc
    return set_kb_id


@pytest.fixture
def gold_path(tmp_path):
    path = tmp_path / "gold.PubTator"
    path.write_text(CORPUS, encoding="utf8")
    output = tmp_path / "gold.spacy"
    convert_pubtator(path, output)
    return output


def pipeline(dictionary, patterns=PATTERNS):
    nlp = make_linker_nlp(dictionary)
    ruler = nlp.add_pipe("entity_ruler", before="bio_linker")
    ruler.add_patterns([{"label": "Modifier" if p == "STHAG6" else "Disease", "pattern": p}
                        for p in patterns])
    return nlp


def scores(result, level):
    r = result[level]
    return r["n_gold"], r["n_pred"], r["n_correct"], pytest.approx((r["p"], r["r"], r["f"]))


def test_scores_by_hand(tiny_dictionary, gold_path):
    nlp = pipeline(tiny_dictionary)
    assert [e.kb_id_ for e in nlp(CORPUS.splitlines()[0][4:]).ents] == ["D003924", "D001943"]
    result = evaluate_end_to_end(nlp, gold_path)
    assert scores(result, "ner") == (7, 6, 6, (1.0, 6 / 7, 12 / 13))
    # Linked right: Type 2 diabetes, breast cancer, NIDDM, STHAG6 (through its
    # alternative id). Wrong: HD (Huntington's). Not counted: atypical diabetes.
    assert scores(result, "linking") == (6, 5, 4, (0.8, 4 / 6, 8 / 11))
    assert result["n_docs"] == 1
    assert result["n_gold_mentions"] == 7
    assert result["n_gold_without_id"] == 1
    assert result["n_gold_composite"] == 1
    assert result["n_pred_on_gold_without_id"] == 1


def test_wrong_span(tiny_dictionary, gold_path):
    patterns = ["diabetes"] + PATTERNS[1:]
    result = evaluate_end_to_end(pipeline(tiny_dictionary, patterns), gold_path)
    assert scores(result, "ner") == (7, 6, 5, (5 / 6, 5 / 7, 10 / 13))
    # "diabetes" is linked, but at offsets no gold mention has.
    assert scores(result, "linking") == (6, 5, 3, (0.6, 0.5, 6 / 11))


def test_right_span_wrong_id(tiny_dictionary, gold_path):
    nlp = pipeline(tiny_dictionary, ["Type 2 diabetes", "HD"])
    assert [e.kb_id_ for e in nlp("HD").ents] == ["D006816"]
    result = evaluate_end_to_end(nlp, gold_path)
    assert scores(result, "ner") == (7, 2, 2, (1.0, 2 / 7, 4 / 9))
    assert scores(result, "linking") == (6, 2, 1, (0.5, 1 / 6, 0.25))


@pytest.mark.parametrize("kb_id,right", [
    ("D006527|D006816", True),
    ("D006816", False),
    ("D006816|D006527|D003924", False),
])
def test_composite_needs_the_same_set_of_concepts(tiny_dictionary, gold_path, kb_id, right):
    nlp = pipeline(tiny_dictionary, PATTERNS + [COMPOSITE])
    nlp.add_pipe("test_set_composite_kb_id", config={"kb_id": kb_id})
    result = evaluate_end_to_end(nlp, gold_path)
    assert result["linking"]["n_correct"] == 4 + right


def test_labels_count_only_when_asked(tiny_dictionary, gold_path):
    nlp = pipeline(tiny_dictionary, PATTERNS + [COMPOSITE])
    assert scores(evaluate_end_to_end(nlp, gold_path), "ner")[:3] == (7, 7, 7)
    result = evaluate_end_to_end(nlp, gold_path, match_labels=True)
    # The ruler calls the composite "Disease"; the corpus "CompositeMention".
    assert scores(result, "ner") == (7, 7, 6, (6 / 7, 6 / 7, 6 / 7))
    result = evaluate_end_to_end(nlp, gold_path, types={"Modifier"})
    assert scores(result, "ner") == (1, 1, 1, (1.0, 1.0, 1.0))
    assert scores(result, "linking") == (1, 1, 1, (1.0, 1.0, 1.0))


def test_gold_docs_instead_of_a_path_and_the_table(tiny_dictionary, tmp_path):
    path = tmp_path / "gold.PubTator"
    path.write_text(CORPUS, encoding="utf8")
    nlp = pipeline(tiny_dictionary)
    docs = list(pubtator_to_docs(nlp, read_pubtator(path)))
    result = evaluate_end_to_end(nlp, docs, batch_size=1)
    assert scores(result, "linking") == (6, 5, 4, (0.8, 4 / 6, 8 / 11))
    table = format_end_to_end_table(result)
    assert table.splitlines()[0].split("|")[1:-1] == [
        " level   ", " P      ", " R      ", " F1     ", " gold ", " pred ", " correct "]
    assert "| linking | 0.8000 | 0.6667 | 0.7273 | 6    | 5    | 4       |" in table
    assert "1 without an id" in table


def test_missing_gold_file(linker_nlp, tmp_path):
    with pytest.raises(BioLinkError, match="E305"):
        evaluate_end_to_end(linker_nlp, tmp_path / "missing.spacy")
