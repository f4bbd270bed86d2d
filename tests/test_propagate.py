"""bio_propagate: the NER's entities carried to their abbreviations and recurrences."""
import spacy
from spacy.tokens import Doc, Span

from .test_ner_evidence import tagged_doc


def _ents(doc):
    return [(e.text, e.start_char, e.label_) for e in doc.ents]


def test_a_defined_short_form_takes_its_long_forms_label_everywhere():
    nlp = spacy.blank("en")
    propagate = nlp.add_pipe("bio_propagate")
    assert not propagate.repeats  # the default: abbreviations only
    text = "Nitroglycerin (NTG) causes headache. After NTG, headache and NTG-induced pain."
    doc = propagate(tagged_doc(nlp, text, [("Nitroglycerin", "Chemical"), ("headache", "Disease")]))
    assert _ents(doc) == [("Nitroglycerin", 0, "Chemical"), ("NTG", 15, "Chemical"),
                          ("headache", 27, "Disease"), ("NTG", 43, "Chemical"),
                          ("NTG", 61, "Chemical")]


def test_a_short_form_tagged_under_another_label_takes_the_long_forms():
    nlp = spacy.blank("en")
    propagate = nlp.add_pipe("bio_propagate")
    text = "Cyclophosphamide (CP) was given. CP caused cystitis."
    doc = tagged_doc(nlp, text, [("Cyclophosphamide", "Chemical"), ("cystitis", "Disease")])
    later_cp = doc.char_span(33, 35, label="Disease")
    doc.ents = sorted(list(doc.ents) + [later_cp], key=lambda e: e.start)
    assert _ents(propagate(doc)) == [("Cyclophosphamide", 0, "Chemical"), ("CP", 18, "Chemical"),
                                     ("CP", 33, "Chemical"), ("cystitis", 43, "Disease")]


def test_a_long_form_ending_in_an_entity_counts_only_when_the_entity_is_most_of_it():
    nlp = spacy.blank("en")
    propagate = nlp.add_pipe("bio_propagate")
    # "nitroprusside" is 13 of "sodium nitroprusside"'s 20 characters: SNP is the drug.
    doc = propagate(tagged_doc(nlp, "Sodium nitroprusside (SNP) lowers pressure. SNP works.",
                            [("nitroprusside", "Chemical")]))
    assert [e.text for e in doc.ents] == ["nitroprusside", "SNP", "SNP"]
    # "antagonist" is 10 of 35: the short form is no drug because its long form ends in one.
    doc = propagate(tagged_doc(nlp, "A dual adenosine receptor antagonist (DARA) helps. DARA.",
                            [("antagonist", "Chemical")]))
    assert [e.text for e in doc.ents] == ["antagonist"]


def test_repeats_tag_an_entitys_untagged_recurrences_on_token_boundaries():
    nlp = spacy.blank("en")
    propagate = nlp.add_pipe("bio_propagate", config={"repeats": True, "abbreviations": False})
    text = ("Quetiapine overdose. Quetiapine levels rose; quetiapines and Quetiapine-like "
            "drugs; quetiapine overdose in a man. Quetiapine.")
    doc = tagged_doc(nlp, text, [("Quetiapine", "Chemical"), ("quetiapine overdose", "Disease")])
    assert _ents(propagate(doc)) == [
        ("Quetiapine", 0, "Chemical"), ("Quetiapine", 21, "Chemical"),
        ("Quetiapine", 61, "Chemical"),  # "quetiapines" is another word
        ("quetiapine overdose", 84, "Disease"), ("Quetiapine", text.rindex("Q"), "Chemical")]
    # a recurrence that is not a token of its own is left alone
    doc = Doc(nlp.vocab, words=["lead", "and", "lead+x", "lead"])
    doc.ents = [Span(doc, 0, 1, label="Chemical")]
    assert [(e.start, e.end) for e in propagate(doc).ents] == [(0, 1), (3, 4)]
    # tokens the NER left unannotated (missing, not outside) stay so
    doc = Doc(nlp.vocab, words=["lead", "in", "water", ",", "lead"],
              ents=["B-Chemical", None, "O", None, None])
    assert [t.ent_iob_ for t in propagate(doc)] == ["B", "", "O", "", "B"]
    # shorter than min_repeat_chars: not repeated
    doc = Doc(nlp.vocab, words=["Pb", "and", "Pb"])
    doc.ents = [Span(doc, 0, 1, label="Chemical")]
    assert len(propagate(doc).ents) == 1


def test_the_pipe_round_trips_with_its_config(tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("bio_propagate", config={"repeats": True, "min_repeat_chars": 5})
    nlp.to_disk(tmp_path / "p")
    loaded = spacy.load(tmp_path / "p")
    pipe = loaded.get_pipe("bio_propagate")
    assert (pipe.abbreviations, pipe.repeats, pipe.min_repeat_chars) == (True, True, 5)
    pipe = spacy.load(tmp_path / "p", config={"components": {"bio_propagate": {
        "min_repeat_chars": 2}}}).get_pipe("bio_propagate")
    assert pipe.min_repeat_chars == 2
    assert loaded("no entities here").ents == ()
