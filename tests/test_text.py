import pytest
import spacy
from spacy.tokens import Doc

from spacy_biolink.errors import BioLinkError
from spacy_biolink.text.abbreviations import AbbreviationResolver, expand
from spacy_biolink.text.normalize import MentionNormalizer, read_spelling_map


def test_folding_lowercases_and_turns_punctuation_into_spaces():
    normalizer = MentionNormalizer()
    assert normalizer.name("Wilson's  Disease, Type-2") == "wilson s disease type 2"
    assert normalizer.mention("Non-small-cell LUNG cancer.") == "non small cell lung cancer"


def test_folding_can_be_switched_off():
    normalizer = MentionNormalizer(lowercase=False, remove_punctuation=False)
    assert normalizer.mention("Wilson's  Disease") == "Wilson's Disease"


def test_spelling_map_fixes_whole_mention_tokens_only():
    normalizer = MentionNormalizer(spelling={"Hemmorhage": "haemorrhage", "fist": "first"})
    assert normalizer.mention("cerebral hemmorhage") == "cerebral haemorrhage"
    # Inside a longer token the typo is not a token of its own and stays.
    assert normalizer.mention("fistula") == "fistula"
    # Names are never spelling-corrected: a dictionary has no corpus typos.
    assert normalizer.name("fist") == "fist"


def test_spelling_map_survives_a_round_trip():
    normalizer = MentionNormalizer(spelling={"bactermia": "bacteremia"})
    restored = MentionNormalizer.from_dict(normalizer.to_dict())
    assert restored.mention("Bactermia") == "bacteremia"


def test_spelling_map_reader(tmp_path):
    path = tmp_path / "spell.txt"
    path.write_text("hemmorhage||haemorrhage\n\nfist\tfirst\n", encoding="utf8")
    assert read_spelling_map(path) == {"hemmorhage": "haemorrhage", "fist": "first"}
    path.write_text("ok||fine\nbroken line\n", encoding="utf8")
    with pytest.raises(BioLinkError, match=r"spell.txt:2.*malformed spelling map"):
        read_spelling_map(path)


@pytest.fixture(scope="module")
def nlp():
    return spacy.blank("en")


def test_abbreviation_defined_in_the_doc_is_resolved(nlp):
    doc = nlp("Wilson disease (WD) is a copper disorder. WD patients were treated.")
    long_forms = AbbreviationResolver(nlp.vocab).long_forms(doc)
    assert long_forms == {"WD": "Wilson disease"}
    assert expand("WD", long_forms) == "Wilson disease"
    assert expand("WD patients", long_forms) == "Wilson disease patients"
    # Only whole words: a longer token that contains the short form is not it.
    assert expand("WDX", long_forms) == "WDX"
    # The definition itself is left as written.
    assert expand("Wilson disease (WD)", long_forms) == "Wilson disease (WD)"


def test_abbreviation_used_before_its_definition_is_resolved_too(nlp):
    # A definition holds for the whole document, as in Ab3P-based preprocessing.
    doc = nlp("Patients with DMD were seen. Duchenne muscular dystrophy (DMD) is X-linked.")
    assert AbbreviationResolver(nlp.vocab).long_forms(doc) == {"DMD": "Duchenne muscular dystrophy"}


def test_a_short_form_ended_by_a_colon_or_semicolon_is_defined(nlp):
    # Pharmacology abstracts put the dose after the short form inside the parenthesis.
    doc = nlp("Rats were given diethylnitrosamine (DEN: 10 mg/kg) and later DEN again.")
    assert AbbreviationResolver(nlp.vocab).long_forms(doc) == {"DEN": "diethylnitrosamine"}
    doc = nlp("Rats were given diethylnitrosamine (DEN; 10 mg/kg) and later DEN again.")
    assert AbbreviationResolver(nlp.vocab).long_forms(doc) == {"DEN": "diethylnitrosamine"}
    # A ratio is no definition: its letters spell nothing before it.
    doc = nlp("The mixture (ratio 1:2) was stirred.")
    assert AbbreviationResolver(nlp.vocab).long_forms(doc) == {}


def test_a_short_form_followed_by_a_comma_and_a_measurement_is_defined(nlp):
    # BioRED dev 27860185: "10% oxygen" after the comma is no second short form.
    doc = nlp("Rats were exposed to chronic hypoxia (CH, 10% oxygen) for two weeks; CH rats.")
    assert AbbreviationResolver(nlp.vocab).long_forms(doc) == {"CH": "chronic hypoxia"}
    # One-word items are a list of short forms, and define none of them.
    doc = nlp("Spinocerebellar ataxias 1 and 2 (SCA1, SCA2) were seen.")
    assert AbbreviationResolver(nlp.vocab).long_forms(doc) == {}


def test_no_definition_means_nothing_to_resolve(nlp):
    doc = nlp("Patients with DMD were seen.")
    assert AbbreviationResolver(nlp.vocab).long_forms(doc) == {}
    assert expand("DMD", {}) == "DMD"


def test_a_docs_definitions_are_found_once_for_every_resolver(nlp, monkeypatch):
    """bio_propagate and each linker of a pipeline ask for the same doc's definitions:
    detection runs once per doc, each caller gets its own copy, and the doc's entry goes
    with the doc; definitions an upstream pipe sets later are read, not the cached ones."""
    import gc

    from spacy_biolink.text import abbreviations

    calls = []
    detect = AbbreviationResolver._detect
    monkeypatch.setattr(AbbreviationResolver, "_detect",
                        lambda self, *args: calls.append(1) or detect(self, *args))
    doc = nlp("Wilson disease (WD) is rare. WD again.")
    first, second = AbbreviationResolver(nlp.vocab), AbbreviationResolver(nlp.vocab)
    found = first.long_forms(doc)
    found["WD"] = "changed by a caller"
    assert second.long_forms(doc) == first.long_forms(doc) == {"WD": "Wilson disease"}
    assert len(calls) == 1
    assert first.long_forms(nlp("Wilson disease (WD) again.")) == {"WD": "Wilson disease"}
    assert len(calls) == 2  # another doc, same text: found again
    n_cached = len(abbreviations._FOUND)
    del doc
    gc.collect()
    assert len(abbreviations._FOUND) < n_cached
    # an upstream abbreviation pipe that annotates the doc afterwards is read
    Doc.set_extension("abbreviations", default=[], force=True)
    try:
        doc = nlp("Wilson disease (WD) is rare.")
        assert first.long_forms(doc) == {"WD": "Wilson disease"}
        doc._.abbreviations = [{"short_text": "Cu", "long_text": "copper"}]
        assert second.long_forms(doc) == {"Cu": "copper", "WD": "Wilson disease"}
    finally:
        Doc.remove_extension("abbreviations")


def test_definitions_from_scispacys_pipe_are_reused():
    # scispaCy declares no entry points: its factory exists once the module is imported.
    pytest.importorskip("scispacy.abbreviation")
    nlp = spacy.blank("en")
    nlp.add_pipe("abbreviation_detector")
    doc = nlp("Wilson disease (WD) is rare. WD again.")
    resolver = AbbreviationResolver(nlp.vocab)
    resolver._get_detector = None  # must not be needed: the pipe already found them
    assert resolver.long_forms(doc) == {"WD": "Wilson disease"}


def test_longer_short_forms_win(nlp):
    long_forms = {"HD": "Huntington disease", "HDL": "high density lipoprotein"}
    assert expand("HDL and HD", long_forms) == "high density lipoprotein and Huntington disease"


def test_numbered_short_forms_name_one_part_of_a_coordinated_long_form(nlp):
    doc = nlp("Patients with spinocerebellar ataxias 1 and 2 (SCA1, n = 11; SCA2, n = 10) "
              "were seen. In SCA2, saccades were slow.")
    long_forms = AbbreviationResolver(nlp.vocab).long_forms(doc)
    assert long_forms["SCA1"] == "spinocerebellar ataxias 1"
    # SCA2 is never defined; it is the sibling the second part's label spells.
    assert long_forms["SCA2"] == "spinocerebellar ataxias 2"


def test_a_short_form_whose_label_picks_no_part_keeps_the_whole_long_form(nlp):
    doc = nlp("Breast and ovarian cancer (BOC) was common. BOC again.")
    assert AbbreviationResolver(nlp.vocab).long_forms(doc) == {"BOC": "Breast and ovarian cancer"}


def test_spelling_variants_fold_british_to_american_spelling():
    fold = MentionNormalizer(spelling_variants=True).name
    assert fold("Haemorrhagic angio-oedema") == "hemorrhagic angio edema"
    assert fold("Leucopenia") == "leukopenia"
    assert fold("tumour") == "tumor"
    assert fold("Sulphonamide") == "sulfonamide"
    # "-our" only after three letters: four, hour and your are words of their own.
    assert fold("four hours") == "four hours"
    assert MentionNormalizer().name("haemorrhage") == "haemorrhage"


def test_plural_stripping_is_the_same_for_names_and_mentions():
    normalizer = MentionNormalizer(strip_plurals=True)
    assert normalizer.name("Hemorrhagic strokes") == normalizer.mention("hemorrhagic stroke")
    # Not a plural: -ss, -us, -is, and short words.
    assert normalizer.name("abscess virus arthritis gas") == "abscess virus arthritis gas"
    both = MentionNormalizer(strip_plurals=True, spelling_variants=True)
    assert both.name("tumours") == "tumor"


def test_folding_options_survive_a_round_trip_and_default_off_for_old_saves():
    normalizer = MentionNormalizer(spelling_variants=True, strip_plurals=True)
    restored = MentionNormalizer.from_dict(normalizer.to_dict())
    assert restored.name("Leucopenias") == "leukopenia"
    # A pipeline saved before these options was indexed without them.
    old = MentionNormalizer.from_dict({"lowercase": True, "remove_punctuation": True,
                                       "spelling": {}})
    assert old.name("Leucopenias") == "leucopenias"


# Sentences where scispaCy's rules decide something: a long form inside the brackets, a
# hyphenated word joined by spaces but mapped back by its own whitespace, a short form
# starting with a digit or too long, unbalanced brackets, a short form at the doc start,
# two definitions of one short form, a short form with no long form before it.
PARITY_SENTENCES = [
    "Wilson disease (WD) is a copper disorder. WD patients were treated.",
    "Duchenne muscular dystrophy (DMD) is X-linked, like Becker muscular dystrophy (BMD).",
    "X-linked dilated cardiomyopathy (XLDCM) and T-cell prolymphocytic leukaemia (T-PLL).",
    "Retinoschisis gene. BACKGROUND  X-linked retinoschisis (XLRS) is a disease.",
    "Patients with WD (Wilson disease of the liver) were seen.",
    "(HD) was seen in Huntington disease (HD) and in high density (HD) cases.",
    "Cowden disease (CD; OMIM 158350) and ataxia telangiectasia (A-T) (ref. 12).",
    "The 5-fluorouracil (5-FU) dose and adenomatous polyposis coli (APCABCDEFGH) gene.",
    "Myotonic dystrophy type 1 (DM1) and ((unbalanced) brackets (UB) here.",
    "Nothing defined (xyz) here, nor (a) here, nor in (ALLCAPS).",
]


@pytest.mark.filterwarnings("ignore:.*W036")  # scispaCy's Matcher, on docs with no definition
@pytest.mark.parametrize("text", PARITY_SENTENCES)
def test_our_schwartz_hearst_matches_scispacys(nlp, text):
    abbreviation = pytest.importorskip("scispacy.abbreviation")
    from spacy_biolink.text.schwartz_hearst import definition_candidates, find_long_form

    doc = nlp(text)
    insides = [(o + 1, c) for c in range(len(doc)) for o in range(c - 1, -1, -1)
               if doc[o].text == "(" and doc[c].text == ")" and c > o + 1]
    ours = list(definition_candidates(doc, insides))
    theirs = abbreviation.filter_matches([(0, s, e) for s, e in insides], doc)
    assert [(lf.start, lf.end, sf.start, sf.end) for lf, sf in ours] == \
        [(lf.start, lf.end, sf.start, sf.end) for lf, sf in theirs]
    for long_candidate, short in ours:
        long = find_long_form(long_candidate, short)
        expected = abbreviation.find_abbreviation(long_candidate, short)[1]
        assert (long.start, long.end) == (expected.start, expected.end) if expected else \
            long is None
    # And the whole detection equals what scispaCy's own pipe defines.
    detector = abbreviation.AbbreviationDetector(nlp)
    detected = detector(nlp(text))
    expected = {}
    for short in detected._.abbreviations:
        expected.setdefault(short.text, short._.long_form.text)
    assert AbbreviationResolver(nlp.vocab)._detect(doc) == expected


def test_detection_needs_no_scispacy(nlp, monkeypatch):
    import sys

    # A failing import stands in for an environment without scispaCy (numpy 2).
    monkeypatch.setitem(sys.modules, "scispacy", None)
    monkeypatch.setitem(sys.modules, "scispacy.abbreviation", None)
    doc = nlp("Wilson disease (WD) is a copper disorder. WD patients were treated.")
    assert AbbreviationResolver(nlp.vocab).long_forms(doc) == {"WD": "Wilson disease"}


@pytest.mark.parametrize("options", [{}, {"spelling_variants": True, "strip_plurals": True},
                                     {"lowercase": False, "remove_punctuation": False,
                                      "strip_plurals": True, "spelling_variants": True}])
def test_token_cache_folds_as_the_whole_text_does(options):
    import random

    rnd = random.Random(0)
    alphabet = "aAeoOuUsSiI lLcr-'.,()ΣσςΑΒİßﬁ\t\u00a0\u2003x1ΟΔ"
    texts = ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 25)))
             for _ in range(3000)]
    texts += ["Haemorrhages of the LEUCOCYTES", "tumours", "ΟΔΟΣ ΟΔΟΣ", "non-small-cell",
              "  ", "", "four hours", "Wilson's disease"]
    normalizer = MentionNormalizer(**options)
    for text in texts + texts:  # the second time from the cache
        assert normalizer.fold(text) == normalizer._fold_token(text), text


def test_token_cache_follows_changed_settings():
    normalizer = MentionNormalizer(strip_plurals=False)
    assert normalizer.name("strokes") == "strokes"
    normalizer.strip_plurals = True
    assert normalizer.name("strokes") == "stroke"


def test_unbounded_cache_keeps_every_token_then_empties(monkeypatch):
    import spacy_biolink.text.normalize as normalize

    monkeypatch.setattr(normalize, "TOKEN_CACHE_SIZE", 3)
    normalizer = MentionNormalizer(strip_plurals=True)
    names = ["Strokes", "heart attacks", "tumours of bone", "seizures"]
    bounded = [normalizer.name(n) for n in names]
    assert len(normalizer._token_cache) <= 3  # emptied whenever full
    calls = []
    fold_token = normalizer._fold_token
    with normalizer.unbounded_cache():
        normalizer._token_cache.fold = lambda token: calls.append(token) or fold_token(token)
        assert [normalizer.name(n) for n in names] == bounded
        assert [normalizer.name(n) for n in names] == bounded  # the build's second pass
        # Each of the 7 tokens folded at most once ("seizures" was still cached).
        assert len(normalizer._token_cache) == 7 and len(calls) == 6
    assert len(normalizer._token_cache) == 0 and normalizer._token_cache.limit == 3


@pytest.mark.parametrize("text", ["", " ", "Wilson disease (WD) and WD.", "a  b\n\nc ",
                                  "\tx\u00a0y  ", "T-cell prolymphocytic leukaemia (T-PLL);\r\n"])
def test_doc_text_from_the_token_arrays_is_doc_text(text):
    from spacy_biolink.text.abbreviations import doc_text

    from spacy.attrs import ORTH, SPACY

    doc = spacy.blank("en").make_doc(text)
    assert doc_text(doc) == doc.text
    # The abbreviation step hands in the token array it read for its bracket count.
    assert doc_text(doc, doc.to_array([ORTH, SPACY])) == doc.text
