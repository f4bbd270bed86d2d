"""bio_variants: sequence variants found by their notations, kept where the variant rule
table normalizes them, after the NER and without overriding what it saw otherwise."""
import pytest
import spacy
from spacy.tokens import Doc, Span

from spacy_biolink.errors import BioLinkError
from spacy_biolink.linker.stages.variants import VariantRules

TEXT = ("BRAF V600E and EGFR L858R were found; rs1966265 and c.28T>C (p.W10R) too. "
        "IVS8 -2A>G, 677C>T, -1082(G/A), Arg72Pro, Arg 1306 Trp, E873stop, 999del5, "
        "c.1811_1812delAT, 157delMTTTVP and G20210A.")


# The pipelines' tokenizer: spaCy's English one keeps "G20210A." whole, and a variant
# must start and end on token boundaries.
BIO_TOKENIZER = {"nlp": {"tokenizer": {"@tokenizers": "spacy-biolink.BioTokenizer.v1"}}}


def _ents(doc):
    return [(e.text, e.label_) for e in doc.ents]


def test_the_written_notations_become_variant_entities_the_rule_table_normalizes():
    nlp = spacy.blank("en", config=BIO_TOKENIZER)
    nlp.add_pipe("bio_variants")
    found = [text for text, label in _ents(nlp(TEXT)) if label == "Variant"]
    assert found == ["V600E", "L858R", "rs1966265", "c.28T>C", "p.W10R", "IVS8 -2A>G", "677C>T",
                     "-1082(G/A)", "Arg72Pro", "Arg 1306 Trp", "E873stop", "999del5",
                     "c.1811_1812delAT", "157delMTTTVP", "G20210A"]
    rules = VariantRules.from_file()
    assert [rules.normalize(text) for text in found[:4]] == [
        "p|SUB|V|600|E", "p|SUB|L|858|R", "rs1966265", "c|SUB|T|28|C"]


def test_genes_cell_lines_and_words_that_look_like_notations_are_left_alone():
    nlp = spacy.blank("en", config=BIO_TOKENIZER)
    nlp.add_pipe("bio_variants")
    text = ("E2F1 and E2F bind; T98G cells, A549, HbA1c, CD4+ T cells, SH2B3, IL-6, "
            "p.ex., 20 mg/kg, 95% CI and a G/A ratio.")
    assert _ents(nlp(text)) == []


def test_the_ners_own_reading_of_the_text_stands():
    nlp = spacy.blank("en")
    finder = nlp.add_pipe("bio_variants")
    doc = nlp.make_doc("T47D cells with BRAF V600E and the 677 C>T change in 677C>T carriers.")
    # the NER: a cell line on the same span, a gene reaching past a variant, the pieces
    # of two variants
    doc.ents = [Span(doc, 0, 1, "CellLine"), Span(doc, 3, 5, "Gene"), Span(doc, 8, 11, "Variant"),
                Span(doc, 13, 14, "Gene")]
    assert [t.text for t in doc[8:11]] == ["C", ">", "T"] and doc[13].text == "677C"
    assert _ents(finder(doc)) == [("T47D", "CellLine"), ("BRAF V600E", "Gene"),
                                  ("677 C>T", "Variant"), ("677C>T", "Variant")]


def test_tokens_the_ner_left_unannotated_stay_so():
    nlp = spacy.blank("en")
    finder = nlp.add_pipe("bio_variants")
    doc = Doc(nlp.vocab, words=["The", "V600E", "mutation", "in", "melanoma"],
              ents=["O", "O", "O", "", ""])
    doc = finder(doc)
    assert _ents(doc) == [("V600E", "Variant")]
    assert [t.ent_iob_ for t in doc] == ["O", "B", "O", "", ""]


def test_the_rule_table_travels_with_the_pipeline_and_config_values_are_used(tmp_path):
    rules = tmp_path / "rules.tsv"
    rules.write_text("# dbSNP ids only\n(?i:rs)\\s?(?P<n>\\d+)\trs{n}\n", encoding="utf8")
    nlp = spacy.blank("en")
    nlp.add_pipe("bio_variants", config={"rules": str(rules), "label": "Mutation"})
    text = "rs113488022 (V600E) in BRAF."
    assert _ents(nlp(text)) == [("rs113488022", "Mutation")]
    nlp.to_disk(tmp_path / "pipeline")
    rules.unlink()
    loaded = spacy.load(tmp_path / "pipeline")
    assert _ents(loaded(text)) == [("rs113488022", "Mutation")]
    relabelled = spacy.load(tmp_path / "pipeline",
                            config={"components": {"bio_variants": {"label": "SequenceVariant"}}})
    assert _ents(relabelled(text)) == [("rs113488022", "SequenceVariant")]
    # the shipped table, saved with a pipeline that named none
    shipped = spacy.blank("en")
    shipped.add_pipe("bio_variants")
    shipped.to_disk(tmp_path / "shipped")
    assert (tmp_path / "shipped" / "bio_variants" / "variant_rules.tsv").read_text(
        encoding="utf8") == VariantRules.from_file().text
    assert _ents(spacy.load(tmp_path / "shipped")(text)) == [("rs113488022", "Variant"),
                                                              ("V600E", "Variant")]


def test_bad_settings_say_what_was_wrong(tmp_path):
    nlp = spacy.blank("en")
    with pytest.raises(BioLinkError, match="E767.*label"):
        nlp.add_pipe("bio_variants", config={"label": " "})
    finder = nlp.add_pipe("bio_variants", config={"rules": str(tmp_path / "missing.tsv")})
    with pytest.raises(BioLinkError, match="E767.*missing.tsv.*no such file"):
        finder(nlp.make_doc("V600E"))
    bad = tmp_path / "bad.tsv"
    bad.write_text("only one column\n", encoding="utf8")
    with pytest.raises(BioLinkError, match=r"E342.*bad.tsv:1"):
        spacy.blank("en").add_pipe("bio_variants", config={"rules": str(bad)})
