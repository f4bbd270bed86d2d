"""Chemistry-aware folding (text/chemistry.py, data/chemistry.txt) and the chemical
linker that uses it (spacy-biolink.ChemicalNormalizer.v1)."""
import pytest
import spacy
from spacy.util import registry

from spacy_biolink.errors import BioLinkError
from spacy_biolink.kb.dictionary import Concept, ConceptDictionary
from spacy_biolink.text.chemistry import (CHEMISTRY_GROUPS, DEFAULT_GROUPS, ChemistryRules,
                                          read_chemistry_table, written_forms)
from spacy_biolink.text.normalize import MentionNormalizer

from .conftest import doc_with_ents, make_linker_nlp


@pytest.mark.parametrize("group,text,canonical", [
    ("ions", "Zn2+", "zinc"),
    ("ions", "Zn(2+)", "zinc"),
    ("ions", "Zn++", "zinc"),
    ("ions", "Ca++", "calcium"),
    ("ions", "Ca (2+)", "calcium"),
    ("ions", "Fe(III)", "iron"),
    ("ions", "zinc ion", "zinc"),
    ("ions", "calcium ions", "calcium"),
    ("ions", "Cl-", "chloride"),
    ("ions", "I(-)", "iodide"),
    ("ions", "NH4+", "ammonium"),
    ("ions", "SO4(2-)", "sulfate"),
    ("elements", "Na", "sodium"),
    ("elements", "Pb", "lead"),
    ("amino_acids", "Arg", "arginine"),
    ("amino_acids", "GLU", "glutamic acid"),
    ("amino_acid_letters", "R", "arginine"),
    ("formulas", "H2O2", "hydrogen peroxide"),
    ("formulas", "NaCl", "sodium chloride"),
    ("formulas", "NH3", "ammonia"),
    ("formulas", "CaCl(2)", "calcium chloride"),
    ("formulas", "H(2)O(2)", "hydrogen peroxide"),
    ("formulas", "(3)H", "tritium"),
    ("salts", "lidocaine hydrochloride", "lidocaine"),
    ("salts", "doxorubicin HCl", "doxorubicin"),
    ("salts", "paroxetine hydrochloride hemihydrate", "paroxetine"),
    ("salts", "ceftriaxone sodium monohydrate", "ceftriaxone sodium"),
    ("stereo", "L-arginine", "arginine"),
    ("stereo", "D-glucose", "glucose"),
    ("stereo", "(+)-catechin", "catechin"),
    ("stereo", "(S)-ketamine", "ketamine"),
    ("stereo", "trans-resveratrol", "resveratrol"),
    ("stereo", "cis-DL-threonine", "threonine"),
    ("locants", "1,2-dichloroethane", "dichloroethane"),
    ("locants", "N,N-dimethylformamide", "dimethylformamide"),
    ("acids", "kainic acid", "kainate"),
    ("acids", "acetylsalicylic acid", "acetylsalicylate"),
    ("acids", "nitrous acid", "nitrite"),
])
def test_each_group_folds_its_forms_and_only_its_own(group, text, canonical):
    assert ChemistryRules([group])(text) == canonical
    others = [g for g in CHEMISTRY_GROUPS if g != group and not
              (group == "ions" and g == "elements") and not
              (group == "amino_acid_letters" and g == "elements")]
    assert ChemistryRules(others)(text) != canonical or text == canonical


@pytest.mark.parametrize("text", [
    "Zinc", "sodium chloride", "L-", "(S)", "morphine", "Ca2+ channel blocker", "1,2",
    "ion", "NO synthase", "Tyr kinase"])
def test_what_no_rule_matches_is_left_alone(text):
    assert ChemistryRules(list(CHEMISTRY_GROUPS))(text) == text


def test_unknown_groups_and_bad_table_lines_are_refused(tmp_path):
    with pytest.raises(BioLinkError, match="E580.*charges"):
        ChemistryRules(["ions", "charges"])
    with pytest.raises(BioLinkError, match="E580"):
        MentionNormalizer(chemistry="ions")
    bad = tmp_path / "chemistry.txt"
    bad.write_text("# comment\nelement\tNa\tsodium\nformula\tH2O\n", encoding="utf8")
    with pytest.raises(BioLinkError, match=r"E581.*chemistry.txt:3.*needs a CANONICAL"):
        ChemistryRules(["formulas"], path=bad)
    bad.write_text("isotope\t3H\ttritium\n", encoding="utf8")
    with pytest.raises(BioLinkError, match=r"E581.*:1.*unknown group 'isotope'"):
        read_chemistry_table(bad)


def test_the_package_table_is_read_and_every_default_group_is_known():
    tables = read_chemistry_table()
    assert tables["element"]["Zn"] == "zinc" and tables["amino_acid"]["Arg"] == "arginine"
    assert tables["salt"]["hydrochloride"] == ""
    assert set(DEFAULT_GROUPS) <= set(CHEMISTRY_GROUPS)


def test_normalizer_applies_the_rules_to_names_and_mentions_and_saves_them():
    normalizer = registry.misc.get("spacy-biolink.ChemicalNormalizer.v1")()
    assert normalizer.strip_plurals is False
    assert normalizer.name("Zinc") == normalizer.mention("Zn(2+)") == "zinc"
    assert normalizer.mention("L-Arginine hydrochloride") == "arginine"
    again = MentionNormalizer.from_dict(normalizer.to_dict())
    assert again.chemistry == normalizer.chemistry
    assert again.mention("Ca++") == "calcium"
    # a pipeline saved before the setting existed folds as it did
    old = {k: v for k, v in normalizer.to_dict().items() if k != "chemistry"}
    assert MentionNormalizer.from_dict(old).mention("Ca++") == "ca"


CHEMICAL_NORMALIZER = {"@misc": "spacy-biolink.ChemicalNormalizer.v1"}


def _chemicals() -> ConceptDictionary:
    return ConceptDictionary.from_concepts([
        Concept(["D015032"], ["Zinc"], type="D"),
        Concept(["D012964"], ["Sodium"], type="D"),
        Concept(["D001120"], ["Arginine", "L-Arginine"], type="D"),
        Concept(["D006861"], ["Hydrogen Peroxide", "Perhydrol"], type="D"),
        Concept(["D008012"], ["Lidocaine", "Lignocaine"], type="D"),
        Concept(["D007608"], ["Kainic Acid"], type="D"),
        Concept(["C000001"], ["zinc finger peptide"], type="D"),
    ])


@pytest.mark.parametrize("mention,gold", [
    ("Zn2+", "D015032"), ("zinc ions", "D015032"), ("Na", "D012964"), ("Na+", "D012964"),
    ("Arg", "D001120"), ("H2O2", "D006861"), ("lidocaine hydrochloride", "D008012"),
    ("kainate", "D007608")])
def test_a_chemical_linker_links_the_forms_a_mesh_name_never_has(mention, gold, tmp_path):
    nlp = make_linker_nlp(_chemicals(), normalizer=CHEMICAL_NORMALIZER, threshold=0.5)
    doc = nlp(doc_with_ents(nlp, f"We added {mention} here.", [mention], label="Chemical"))
    assert doc.ents[0].kb_id_ == gold
    # the rules are part of the saved pipeline, so a loaded one folds alike
    nlp.to_disk(tmp_path / "linker")
    loaded = spacy.load(tmp_path / "linker")
    doc = loaded(doc_with_ents(loaded, f"We added {mention} here.", [mention],
                               label="Chemical"))
    assert doc.ents[0].kb_id_ == gold


def test_without_the_rules_the_same_linker_misses_them():
    nlp = make_linker_nlp(_chemicals(), threshold=0.5)
    doc = nlp(doc_with_ents(nlp, "We added Zn2+ here.", ["Zn2+"], label="Chemical"))
    assert doc.ents[0].kb_id_ != "D015032"


def test_written_forms_are_what_the_rules_fold_onto_the_names_and_fold_back():
    names = ["Quetiapine Fumarate", "Zinc", "Hydrogen Peroxide", "Calcium Chloride",
             "Chloride", "Imatinib Mesylate", "Imatinib"]
    forms = written_forms(names)
    assert "Quetiapine" in forms and "Zn2+" in forms and "Zn(2+)" in forms
    assert "H2O2" in forms and "H(2)O(2)" in forms and "CaCl(2)" in forms and "Cl-" in forms
    # a name the list already holds, in any case, is not a new form
    assert "Imatinib" not in forms and len({f.lower() for f in forms}) == len(forms)
    # every form is one the linker's folding brings back to a name of the list
    rules = ChemistryRules()
    folded_names = {rules(n).lower() for n in names}
    assert all(rules(f).lower() in folded_names for f in forms), forms


@pytest.mark.parametrize("name", ["PDB hydrochloride", "benzyl hydrate", "ferrous fumarate",
                                  "Hydratase, Fumarate", "L 685,818 hydrochloride",
                                  "Lead acetate hydrate"])
def test_written_forms_leave_out_what_is_no_chemical_in_running_text(name):
    # an acronym that names a disease or gene as often, a radical, an adjective, MeSH's
    # inverted "Fumarate Hydratase", a number, two words
    assert written_forms([name]) == []


def test_written_forms_come_from_the_table_given(tmp_path):
    table = tmp_path / "chemistry.txt"
    table.write_text("salt\tfumarate\t\nelement\tZn\tzinc\n", encoding="utf8")
    forms = written_forms(["Zinc", "Quetiapine Fumarate", "Hydrogen Peroxide"], path=table)
    assert forms == ["Quetiapine", "Zn+", "Zn(+)", "Zn2+", "Zn(2+)", "Zn3+", "Zn(3+)"]
