"""bio_linker's preprocessing stages, end to end through the pipe: abbreviations,
composite mentions, normalization, the spelling map and dictionary augmentation."""
import json

import pytest
import spacy

from spacy_biolink import load_dictionary
from spacy_biolink.errors import BioLinkError
from spacy_biolink.evaluation import evaluate_gold_mentions
from spacy_biolink.linker.pipeline import init_linker

from .conftest import TINY_MEDIC, doc_with_ents, invoke_cli, make_linker_nlp

STAGES_MEDIC = TINY_MEDIC + """\
D010051||Ovarian Neoplasms|ovarian cancer|ovary tumor
C538341||Hereditary Breast and Ovarian Cancer Syndrome|hereditary breast and ovarian cancer
D006130||Growth Disorders|growth retardation
"""


@pytest.fixture
def stages_dictionary(tmp_path):
    path = tmp_path / "medic.txt"
    path.write_text(STAGES_MEDIC, encoding="utf8")
    return load_dictionary(path)


@pytest.fixture
def stages_nlp(stages_dictionary):
    return make_linker_nlp(stages_dictionary)


def test_composite_mention_links_each_part(stages_nlp):
    doc = stages_nlp(doc_with_ents(stages_nlp, "Risk of breast and ovarian cancer.",
                                   ["breast and ovarian cancer"]))
    ent = doc.ents[0]
    assert ent.kb_id_ == "D001943|D010051"
    assert [text for text, _ in ent._.kb_parts] == ["breast cancer", "ovarian cancer"]
    assert [ents[0][0] for _, ents in ent._.kb_parts] == ["D001943", "D010051"]
    # kb_ents holds the concept each part names, best score first per part.
    assert [c for c, _ in ent._.kb_ents] == ["D001943", "D010051"]


def test_composite_that_is_a_dictionary_name_stays_whole(stages_nlp):
    text = "Families with hereditary breast and ovarian cancer."
    ent = stages_nlp(doc_with_ents(stages_nlp, text, ["hereditary breast and ovarian cancer"])).ents[0]
    assert ent.kb_id_ == "C538341"
    assert ent._.kb_parts == [(ent.text, ent._.kb_ents)]


def test_composite_whose_parts_name_one_concept_stays_whole(tmp_path):
    # Training mentions made the parts names of the syndrome; the whole is not a name.
    path = tmp_path / "medic.txt"
    path.write_text(TINY_MEDIC + "D061325||Hereditary Breast and Ovarian Cancer Syndrome|"
                    "hereditary breast cancer|hereditary ovarian cancer\n", encoding="utf8")
    nlp = make_linker_nlp(load_dictionary(path))
    text = "Families with hereditary breast and ovarian cancer."
    ent = nlp(doc_with_ents(nlp, text, ["hereditary breast and ovarian cancer"])).ents[0]
    assert ent.kb_id_ == "D061325"
    assert len(ent._.kb_parts) == 1


def test_composite_splitting_can_be_switched_off(stages_dictionary):
    nlp = make_linker_nlp(stages_dictionary, split_composites=False)
    ent = nlp(doc_with_ents(nlp, "Risk of breast and ovarian cancer.",
                            ["breast and ovarian cancer"])).ents[0]
    assert "|" not in ent.kb_id_
    assert len(ent._.kb_parts) == 1


def test_abbreviation_is_linked_through_its_long_form(stages_nlp):
    # "HD" alone is a name of two concepts; the document says which one it means here.
    text = "Huntington disease (HD) is inherited. Many HD patients carry it."
    doc = doc_with_ents(stages_nlp, text, [(text.index("HD patients"), text.index("HD patients") + 2)])
    assert stages_nlp(doc).ents[0].kb_id_ == "D006816"
    text = "Hirschsprung disease (HD) is congenital. Many HD patients need surgery."
    doc = doc_with_ents(stages_nlp, text, [(text.index("HD patients"), text.index("HD patients") + 2)])
    assert stages_nlp(doc).ents[0].kb_id_ == "D006527"


def test_abbreviation_resolution_can_be_switched_off(stages_dictionary):
    nlp = make_linker_nlp(stages_dictionary, resolve_abbreviations=False)
    text = "Hirschsprung disease (HD) is congenital. Many HD patients need surgery."
    doc = nlp(doc_with_ents(nlp, text, [(text.index("HD patients"), text.index("HD patients") + 2)]))
    # Without the document's definition the two "HD" concepts tie, lower index first.
    assert doc.ents[0].kb_id_ == "D006816"
    assert doc.ents[0]._.kb_ents[0][1] == doc.ents[0]._.kb_ents[1][1]


def test_normalization_ignores_case_and_punctuation(stages_nlp):
    ent = stages_nlp(doc_with_ents(stages_nlp, "HUNTINGTON'S CHOREA.", ["HUNTINGTON'S CHOREA"])).ents[0]
    assert ent._.kb_ents[0] == ("D006816", 1.0)


def test_spelling_map_and_augmentation_through_initialize_and_save(stages_dictionary, tmp_path):
    spelling = tmp_path / "typos.txt"
    spelling.write_text("retardaton||retardation\n", encoding="utf8")
    corpus = tmp_path / "train.txt"
    corpus.write_text(
        "1|t|Sugar sickness in a family.\n"
        "1|a|Sugar sickness again.\n"
        "1\t0\t14\tSugar sickness\tDisease\tD003924\n"
        "1\t28\t42\tSugar sickness\tDisease\tD003924\n"
        "\n", encoding="utf8")
    nlp = spacy.blank("en")
    nlp.add_pipe("bio_linker")
    with pytest.warns(UserWarning, match="W001"):
        nlp.get_pipe("bio_linker").initialize(dictionary=stages_dictionary, spelling_map=spelling,
                                              augment=[corpus])
    nlp.to_disk(tmp_path / "nlp")
    loaded = spacy.load(tmp_path / "nlp")
    for pipeline in (nlp, loaded):
        doc = pipeline(doc_with_ents(pipeline, "growth retardaton and sugar sickness",
                                     ["growth retardaton", "sugar sickness"]))
        assert [e._.kb_ents[0] for e in doc.ents] == [("D006130", 1.0), ("D003924", 1.0)]


AUGMENT_CORPUS = (
    "1|t|WD and HD in twins.\n"
    "1|a|Wilson disease (WD) and Huntington disease (HD) were seen, with sugar sickness.\n"
    "1\t0\t2\tWD\tDisease\tD001943\n"
    "1\t84\t98\tsugar sickness\tDisease\tD003924\n"
    "1\t0\t9\tWD and HD\tDisease\tD001943|D006816\n"
    "1\t0\t9\tWD and HD\tDisease\tD001943+D006816\n"
    "1\t7\t9\tHD\tDisease\t-1\n"
    "1\t7\t9\tHD\tDisease\tD999999\n"
    "\n")


def test_augmentation_resolves_and_splits_like_linking(stages_dictionary, tmp_path):
    corpus = tmp_path / "train.txt"
    corpus.write_text(AUGMENT_CORPUS, encoding="utf8")
    from spacy_biolink.linker.augment import augment_dictionary

    nlp = make_linker_nlp(stages_dictionary)
    augmented, stats = augment_dictionary(stages_dictionary, [corpus], nlp.get_pipe("bio_linker").linker,
                                          nlp.make_doc, short_forms=False)
    breast = augmented.concept_index("D001943")
    huntington = augmented.concept_index("D006816")
    # The abbreviation is added as its long form, the composite as its two parts.
    assert "Wilson disease" in augmented.names_of(breast)
    assert "WD" not in augmented.names_of(breast)
    assert "Huntington disease" in augmented.names_of(huntington)
    assert "sugar sickness" in augmented.names_of(augmented.concept_index("D003924"))
    assert (stats.mentions, stats.no_id, stats.combined, stats.unknown_id) == (6, 1, 1, 1)
    assert stats.added == 4
    # By default the resolved short form also joins, for documents that use it undefined.
    with_short, stats = augment_dictionary(stages_dictionary, [corpus], nlp.get_pipe("bio_linker").linker,
                                           nlp.make_doc)
    assert "WD" in with_short.names_of(with_short.concept_index("D001943"))
    assert stats.added == 5


def test_cli_augment_and_evaluate_both_rules(tmp_path):
    dictionary = tmp_path / "medic.txt"
    dictionary.write_text(STAGES_MEDIC, encoding="utf8")
    train, dev = tmp_path / "train.txt", tmp_path / "dev.txt"
    train.write_text("1|t|Sugar sickness.\n1\t0\t14\tSugar sickness\tDisease\tD003924\n\n",
                     encoding="utf8")
    dev.write_text("2|t|Sweet urine.\n2\t0\t11\tSweet urine\tDisease\tD003924\n\n",
                   encoding="utf8")
    corpus = tmp_path / "test.txt"
    corpus.write_text(
        "7|t|Breast and ovarian cancer, breast cancer and breast tumor.\n"
        "7|a|Also growth, sugar sickness and sweet urine.\n"
        # split into one part per id: right under both rules
        "7\t0\t25\tBreast and ovarian cancer\tDisease\tD001943|D010051\n"
        # both parts name the same gold concept: only the lenient rule accepts it
        "7\t27\t57\tbreast cancer and breast tumor\tDisease\tD001943|D010051\n"
        # three ids, two parts: kept whole (strict: wrong)
        "7\t0\t25\tBreast and ovarian cancer\tDisease\tD001943|D010051|D006130\n"
        "7\t64\t70\tgrowth\tDisease\t-1\n"
        # known only from the augmenting corpora
        "7\t72\t86\tsugar sickness\tDisease\tD003924\n"
        "7\t91\t102\tsweet urine\tDisease\tD003924\n"
        "\n", encoding="utf8")
    out = tmp_path / "linker"
    invoke_cli("init-linker", out, "--dictionary", dictionary, "--augment", train,
               "--augment", dev)
    metrics = tmp_path / "metrics.json"
    wrong = tmp_path / "wrong.jsonl"
    run = invoke_cli("evaluate", out, corpus, "--output", metrics, "--errors", wrong)
    result = json.loads(metrics.read_text())
    assert result["n_evaluated"] == 5 and result["skipped"]["no_id"] == 1
    assert result["composites"] == {"n": 3, "split": 2, "kept_whole": 1}
    assert result["strict"]["acc@1"] == pytest.approx(3 / 5)
    assert result["lenient"]["acc@1"] == pytest.approx(4 / 5)
    assert result["acc@1"] == result["lenient"]["acc@1"]
    assert "strict acc@1" in run.stdout
    # One mention is wrong at acc@1 under the lenient rule: the three-id composite.
    records = [json.loads(line) for line in wrong.read_text().splitlines()]
    assert [r["gold"] for r in records] == ["D001943|D010051|D006130"]


def test_augment_new_concepts_makes_unknown_ids_of_the_named_types_linkable(tmp_path, caplog):
    """--augment-new-concepts Chemical: a Chemical mention whose id the dictionary lacks
    becomes a concept named by its mentions (its most frequent text the canonical name);
    a Disease mention's unknown id stays skipped; without the option nothing is added."""
    dictionary = tmp_path / "chemicals.tsv"
    dictionary.write_text("aspirin\tD001241\ncisplatin\tD002945\n", encoding="utf8")
    train = tmp_path / "train.txt"
    train.write_text(
        "1|t|retired drug and old syndrome.\n"
        "1\t0\t12\tretired drug\tChemical\tC000001\n"
        "1\t17\t29\told syndrome\tDisease\tD999999\n\n"
        "2|t|retired drug, retired compound.\n"
        "2\t0\t12\tretired drug\tChemical\tC000001\n"
        "2\t14\t30\tretired compound\tChemical\tC000001\n\n", encoding="utf8")
    plain, extended = tmp_path / "plain", tmp_path / "extended"
    invoke_cli("init-linker", plain, "--dictionary", dictionary, "--format", "tsv",
               "--augment", train)
    with caplog.at_level("INFO"):
        invoke_cli("init-linker", extended, "--dictionary", dictionary, "--format", "tsv",
                   "--augment", train, "--augment-new-concepts", "Chemical")
    assert "1 ids the dictionary lacks became concepts" in caplog.text
    before = spacy.load(plain).get_pipe("bio_linker").dictionary
    nlp = spacy.load(extended)
    after = nlp.get_pipe("bio_linker").dictionary
    assert (before.n_concepts, after.n_concepts) == (2, 3)
    assert after.concept_index("D999999") is None
    new = after.concept_index("C000001")
    # its mentions' texts are its names; "retired drug" was given twice, "retired compound" once
    assert sorted(after.names_of(new)) == ["retired compound", "retired drug"]
    assert after.canonical_name(new) == "retired drug"
    # the setting is in the saved config, so initializing again gives the same concepts
    assert nlp.config["initialize"]["components"]["bio_linker"]["augment_new_concepts"] == ["Chemical"]
    doc = nlp(doc_with_ents(nlp, "A retired compound.", [(2, 18)], label="Chemical"))
    assert doc.ents[0].kb_id_ == "C000001"
    # a type no augmenting mention has (a typo) adds nothing, and says so
    with pytest.warns(UserWarning, match=r"W021.*\['Chemcial'\].*\['Chemical', 'Disease'\]"):
        invoke_cli("init-linker", tmp_path / "typo", "--dictionary", dictionary, "--format",
                   "tsv", "--augment", train, "--augment-new-concepts", "Chemcial")
    refused = invoke_cli("init-linker", tmp_path / "nothing", "--dictionary", dictionary,
                         "--augment-new-concepts", "Chemical", check=False)
    assert refused.returncode != 0 and "--augment" in refused.stdout + refused.stderr
    assert not (tmp_path / "nothing").exists()


def test_augment_new_concepts_makes_a_replaced_id_an_alternative_id(tmp_path, caplog):
    """An unknown id whose mentions name one concept of the dictionary (an older corpus's
    supplementary record that MeSH made a descriptor) becomes that concept's alternative
    id, not a rival concept with the same name: the link reports the current id, the
    mention's other texts become its names, and a gold mention with the old id still
    counts as right. Mentions naming two concepts keep their id a concept of its own."""
    dictionary = tmp_path / "chemicals.tsv"
    dictionary.write_text("Cidofovir\tD000077404\nsalt\tD012492\nsalt\tD012965\n",
                          encoding="utf8")
    train = tmp_path / "train.txt"
    train.write_text(
        "1|t|cidofovir (HPMPC) and salt.\n"
        "1\t0\t9\tcidofovir\tChemical\tC059262\n"
        "1\t11\t16\tHPMPC\tChemical\tC059262\n"
        "1\t22\t26\tsalt\tChemical\tC000002\n\n", encoding="utf8")
    model = tmp_path / "linker"
    with caplog.at_level("INFO"):
        invoke_cli("init-linker", model, "--dictionary", dictionary, "--format", "tsv",
                   "--augment", train, "--augment-new-concepts", "Chemical",
                   "--augment-replaced-ids")
    assert "1 ids the dictionary lacks became concepts" in caplog.text
    assert "1 ids the dictionary lacks became alternative ids" in caplog.text
    nlp = spacy.load(model)
    kb = nlp.get_pipe("bio_linker").dictionary
    current = kb.concept_index("D000077404")
    assert kb.n_concepts == 4 and kb.concept_index("C059262") == current
    assert kb.ids_of(current) == ("D000077404", "C059262")
    assert sorted(kb.names_of(current)) == ["Cidofovir", "HPMPC", "cidofovir"]
    assert kb.concept_index("C000002") not in (None, kb.concept_index("D012492"))
    doc = nlp(doc_with_ents(nlp, "Given cidofovir.", [(6, 15)], label="Chemical"))
    assert doc.ents[0].kb_id_ == "D000077404"
    test = tmp_path / "test.txt"
    test.write_text("2|t|HPMPC given.\n2\t0\t5\tHPMPC\tChemical\tC059262\n\n",
                    encoding="utf8")
    scores = tmp_path / "scores.json"
    invoke_cli("evaluate", model, test, "--output", scores)
    assert json.loads(scores.read_text())["acc@1"] == 1.0
    # the setting is in the saved config; off (genes: a mouse Il6 is not human IL6), the
    # old id stays a rival concept; without the types it decides nothing and is refused
    assert nlp.config["initialize"]["components"]["bio_linker"]["augment_replaced_ids"] is True
    invoke_cli("init-linker", tmp_path / "off", "--dictionary", dictionary, "--format", "tsv",
               "--augment", train, "--augment-new-concepts", "Chemical")
    off = spacy.load(tmp_path / "off").get_pipe("bio_linker").dictionary
    assert off.n_concepts == 5 and off.concept_index("C059262") != off.concept_index("D000077404")
    refused = invoke_cli("init-linker", tmp_path / "alone", "--dictionary", dictionary,
                         "--format", "tsv", "--augment", train, "--augment-replaced-ids",
                         check=False)
    assert refused.returncode != 0 and "--augment-new-concepts" in refused.stdout + refused.stderr
    assert not (tmp_path / "alone").exists()
    nlp = spacy.blank("en")
    with pytest.raises(BioLinkError, match="E169"):
        nlp.add_pipe("bio_linker").initialize(nlp=nlp, augment=[train],
                                              augment_replaced_ids=True)


def test_augment_exclude_pmids_leaves_held_out_documents_out(tmp_path, caplog):
    """--augment-exclude-pmids: a training corpus's document that is also a dev or test
    document (BioRED shares abstracts with BC5CDR) adds no names; a PMID file and a
    corpus (its documents' PMIDs) both say which; without --augment it is refused."""
    dictionary = tmp_path / "chemicals.tsv"
    dictionary.write_text("aspirin\tD001241\ncisplatin\tD002945\n", encoding="utf8")
    train = tmp_path / "train.txt"
    train.write_text(
        "1|t|ASA given.\n1\t0\t3\tASA\tChemical\tD001241\n\n"
        "2|t|CDDP given.\n2\t0\t4\tCDDP\tChemical\tD002945\n\n", encoding="utf8")
    test = tmp_path / "test.txt"
    test.write_text("2|t|CDDP again.\n2\t0\t4\tCDDP\tChemical\tD002945\n\n", encoding="utf8")
    pmids = tmp_path / "held_out.txt"
    pmids.write_text("2\n", encoding="utf8")
    names = {}
    for held_out in (None, pmids, test):
        out = tmp_path / f"linker_{held_out.name if held_out else 'all'}"
        extra = ["--augment-exclude-pmids", held_out] if held_out else []
        with caplog.at_level("INFO"):
            invoke_cli("init-linker", out, "--dictionary", dictionary, "--format", "tsv",
                       "--augment", train, *extra)
        linker = spacy.load(out).get_pipe("bio_linker")
        names[held_out] = sorted(linker.dictionary.names_of(
            linker.dictionary.concept_index("D002945")))
    assert names[None] == ["CDDP", "cisplatin"]
    assert names[pmids] == names[test] == ["cisplatin"]
    assert "1 held-out documents left out" in caplog.text
    refused = invoke_cli("init-linker", tmp_path / "nothing", "--dictionary", dictionary,
                         "--augment-exclude-pmids", pmids, check=False)
    assert refused.returncode != 0 and "--augment" in refused.stdout + refused.stderr
    assert not (tmp_path / "nothing").exists()


def test_evaluation_follows_the_linker_settings(stages_dictionary, tmp_path):
    corpus = tmp_path / "test.txt"
    corpus.write_text(
        "7|t|Breast and ovarian cancer.\n"
        "7\t0\t25\tBreast and ovarian cancer\tDisease\tD001943|D010051\n"
        "\n", encoding="utf8")
    whole = make_linker_nlp(stages_dictionary, split_composites=False)
    result = evaluate_gold_mentions(whole, corpus)
    assert result["composites"] == {"n": 1, "split": 0, "kept_whole": 1}
    assert result["strict"]["acc@1"] == 0.0
    assert result["linker"]["split_composites"] is False


def test_init_linker_writes_the_stages_on_by_default(tmp_path):
    dictionary = tmp_path / "medic.txt"
    dictionary.write_text(STAGES_MEDIC, encoding="utf8")
    with pytest.warns(UserWarning, match="W001"):
        nlp = init_linker(tmp_path / "out", dictionary)
    cfg = nlp.config["components"]["bio_linker"]
    assert cfg["resolve_abbreviations"] and cfg["split_composites"]
    assert cfg["normalizer"]["lowercase"] and cfg["normalizer"]["remove_punctuation"]


def test_n_process_2_keeps_composite_parts(stages_nlp, tmp_path):
    stages_nlp.to_disk(tmp_path / "nlp")
    nlp = spacy.load(tmp_path / "nlp")
    texts = [("Risk of breast and ovarian cancer.", ["breast and ovarian cancer"]),
             ("Huntington disease (HD) runs in families; HD is rare.", ["Huntington disease"])] * 3

    def parts(doc):
        return [(e.kb_id_, e._.kb_ents, e._.kb_parts) for e in doc.ents]

    expected = [parts(nlp(doc_with_ents(nlp, t, e))) for t, e in texts]
    docs = [doc_with_ents(nlp, t, e) for t, e in texts]
    assert [parts(d) for d in nlp.pipe(docs, n_process=2, batch_size=2)] == expected


PRIOR_MEDIC = """\
D007676||Kidney Failure, Chronic|chronic kidney failure
D051437||Renal Insufficiency|chronic kidney failures syndrome
"""


def _prior_linker(tmp_path, **config):
    path = tmp_path / "prior_medic.txt"
    path.write_text(PRIOR_MEDIC, encoding="utf8")
    nlp = make_linker_nlp(load_dictionary(path), **config)
    linker = nlp.get_pipe("bio_linker")
    # Annotators named D051437 five times, with texts far from the query.
    linker.add_names([("renal insufficiency", "D051437")] * 5)
    return linker.linker


def test_annotation_prior_reranks_near_ties_toward_annotated_concepts(tmp_path):
    query = "chronic kidney failure"
    plain = _prior_linker(tmp_path).link_texts([query], 2)[query]
    assert plain[0][0] != plain[1][0]
    first = _prior_linker(tmp_path).dictionary.primary_id
    assert first(plain[0][0]) == "D007676"
    # 0.2 * ln(6) = 0.36 outweighs the exact match's lead.
    ranked = _prior_linker(tmp_path, prior_weight=0.2).link_texts([query], 2)[query]
    assert [first(c) for c, _ in ranked] == ["D051437", "D007676"]
    assert ranked[0][1] > ranked[1][1]
    # With only the dictionary's own names searched, no corpus count counts.
    only_o = _prior_linker(tmp_path, prior_weight=0.2, index_sources="O")
    assert first(only_o.link_texts([query], 2)[query][0][0]) == "D007676"


def test_prior_weight_must_be_a_non_negative_number(tmp_path):
    with pytest.raises(BioLinkError, match="prior_weight"):
        _prior_linker(tmp_path, prior_weight=-1)


def test_evaluate_writes_the_mentions_it_got_wrong(stages_dictionary, tmp_path):
    corpus = tmp_path / "test.txt"
    corpus.write_text(
        "7|t|Breast cancer and juvenile diabetes.\n"
        "7\t0\t13\tBreast cancer\tDisease\tD001943\n"
        "7\t18\t35\tjuvenile diabetes\tDisease\tD003924\n"
        "\n", encoding="utf8")
    errors = []
    result = evaluate_gold_mentions(make_linker_nlp(stages_dictionary), corpus, errors=errors)
    assert result["acc@1"] == 0.5
    assert len(errors) == 1
    wrong = errors[0]
    assert (wrong["pmid"], wrong["text"], wrong["gold"]) == ("7", "juvenile diabetes", "D003924")
    assert wrong["parts"][0]["top"][0]["ids"] == ["D003922"]


def test_linking_policy_links_without_a_pipe_as_the_pipe_does(stages_dictionary, stages_nlp):
    # The policy is a plain object: an encoder and an index, names encoded and searched,
    # no spaCy pipeline. It must answer exactly as bio_linker does, composites included.
    from spacy.util import registry

    from spacy_biolink.linker.policy import LinkingPolicy, Mention

    # Built from the pipe's own [components.bio_linker] blocks, so the two differ only in
    # what is around them.
    block = stages_nlp.config["components"]["bio_linker"]
    resolved = registry.resolve({part: block[part] for part in ("encoder", "index", "normalizer")})
    policy = LinkingPolicy(resolved["encoder"], resolved["index"],
                           normalizer=resolved["normalizer"])
    assert not policy.is_initialized
    policy.index_names(stages_dictionary, fit_encoder=True)
    assert policy.is_initialized

    text = "Risk of breast and ovarian cancer (BOC) and of hereditary breast and ovarian cancer."
    doc = doc_with_ents(stages_nlp, text, ["breast and ovarian cancer",
                                           "hereditary breast and ovarian cancer"])
    links = policy.link([Mention.from_span(e) for e in doc.ents])
    assert [policy.annotations(m)[0] for m in links] == ["D001943|D010051", "C538341"]
    assert links == stages_nlp.get_pipe("bio_linker").predict([doc])[0]
