"""displaCy pages of linked entities: ids as links to their knowledge base, NIL unlinked."""
import json
import re

import pytest
from typer.testing import CliRunner

from spacy_biolink import load_dictionary
from spacy_biolink.cli import app
from spacy_biolink.errors import BioLinkError
from spacy_biolink.runners.visualize import MEDIC_KB_URL_TEMPLATES, MESH_URL, KbUrls, render_linked

from .conftest import TINY_MEDIC, doc_with_ents, make_linker_nlp

TEXT = "Type 2 diabetes, STHAG6, a zzqx vvkw and Type 1 and type 2 diabetes."


@pytest.fixture
def linked_doc(tmp_path):
    # MEDIC files some concepts under their OMIM id: such ids link elsewhere than MeSH's
    path = tmp_path / "medic.txt"
    path.write_text(TINY_MEDIC.replace("C567755|613097|", "OMIM:613097||"), encoding="utf8")
    nlp = make_linker_nlp(load_dictionary(path), threshold=0.5)
    doc = doc_with_ents(nlp, TEXT, ["Type 2 diabetes", "STHAG6", "zzqx vvkw",
                                    "Type 1 and type 2 diabetes"])
    return nlp.get_pipe("bio_linker")(doc)


def links(html):
    return re.findall(r'<a [^>]*href="([^"]*)"[^>]*>([^<]*)</a>', html)


def test_linked_entities_link_their_ids_and_nil_has_no_link(linked_doc):
    assert [e.kb_id_ for e in linked_doc.ents] == ["D003924", "OMIM:613097", "NIL",
                                                  "D003922|D003924"]
    html = render_linked(linked_doc, page=False)
    assert links(html) == [
        ("https://meshb.nlm.nih.gov/record/ui?ui=D003924", "D003924"),
        ("https://meshb.nlm.nih.gov/record/ui?ui=OMIM%3A613097", "OMIM:613097"),
        ("https://meshb.nlm.nih.gov/record/ui?ui=D003922", "D003922"),
        ("https://meshb.nlm.nih.gov/record/ui?ui=D003924", "D003924")]
    # NIL is shown beside its label, as text
    assert re.search(r">NIL</span>", html) and "Disease" in html
    assert "<html" not in html and "<html" in render_linked([linked_doc])


def test_prefix_templates_send_each_source_to_its_site(linked_doc):
    html = render_linked([linked_doc], kb_url_template=MEDIC_KB_URL_TEMPLATES, page=False)
    assert ("https://omim.org/entry/613097", "OMIM:613097") in links(html)
    assert ("https://meshb.nlm.nih.gov/record/ui?ui=D003924", "D003924") in links(html)
    # without a "" entry, ids of other sources are shown unlinked
    html = render_linked([linked_doc], kb_url_template={"OMIM": "https://omim.org/entry/{}"},
                         page=False)
    assert [text for _, text in links(html)] == ["OMIM:613097"]


def test_kb_urls_rejects_templates_without_a_slot():
    assert KbUrls("https://x/{}")("A B") == "https://x/A%20B"
    for bad in ("https://example.org/", {"OMIM": "no slot"}, 5):
        with pytest.raises(BioLinkError, match="E755"):
            KbUrls(bad)


def test_markup_in_text_is_escaped(tiny_dictionary):
    nlp = make_linker_nlp(tiny_dictionary)
    doc = nlp.get_pipe("bio_linker")(doc_with_ents(nlp, "<b>NIDDM</b> & co", ["NIDDM"],
                                                   label="<i>"))
    html = render_linked(doc, page=False)
    assert "<b>" not in html and "<i>" not in html and "&lt;b&gt;" in html


def test_visualize_cli_writes_a_page(tiny_dictionary, tmp_path):
    nlp = make_linker_nlp(tiny_dictionary)
    nlp.meta["biolink"] = {"kb_url_template": {"": "https://kb.example/{}"}}
    nlp.to_disk(tmp_path / "model")
    lines = [{"id": "first", "text": "NIDDM here.", "entities": [[0, 5, "Disease"]]},
             {"id": "second", "text": "Then HD.", "entities": [[5, 7, "Disease"]]}]
    (tmp_path / "in.jsonl").write_text("\n".join(map(json.dumps, lines)), encoding="utf8")
    runner = CliRunner()
    result = runner.invoke(app, ["visualize", str(tmp_path / "model"), str(tmp_path / "in.jsonl"),
                                 "--output", str(tmp_path / "page.html"), "--doc", "1"])
    assert result.exit_code == 0, result.output
    page = (tmp_path / "page.html").read_text(encoding="utf8")
    assert "second" in page and "first" not in page
    # the pipeline's own template (meta) is used when no --kb-url-template is given
    assert links(page)[0][0].startswith("https://kb.example/")

    with pytest.warns(UserWarning, match="W750"):  # a linker alone finds no entities
        result = runner.invoke(app, ["visualize", str(tmp_path / "model"), "--text", "No entities.",
                                     "--output", str(tmp_path / "text.html"),
                                     "--kb-url-template", "https://other/{}"])
    assert result.exit_code == 0, result.output
    assert "No entities." in (tmp_path / "text.html").read_text(encoding="utf8")

    result = runner.invoke(app, ["visualize", str(tmp_path / "model"), str(tmp_path / "in.jsonl"),
                                 "--output", str(tmp_path / "bad.html"), "--doc", "5"])
    assert result.exit_code == 1 and "E756" in result.output
    assert not (tmp_path / "bad.html").exists()


@pytest.mark.parametrize("bad", [
    "javascript:alert(document.cookie)//{}", "JavaScript:x({})", "data:text/html,{}",
    "file:///etc/{}", " https://x/{}", {"OMIM": "javascript:alert(1)//{}", "": MESH_URL}])
def test_kb_urls_link_only_http_and_https(bad):
    with pytest.raises(BioLinkError, match=r"E755.*http:// or https://"):
        KbUrls(bad)


@pytest.mark.parametrize("bad", ["https://x/{}/{id}", "https://x/{", "https://x/}{}",
                                 "https://x/{0}", "https://x/{}{}"])
def test_kb_urls_with_stray_braces_give_an_error_not_a_key_error(bad):
    with pytest.raises(BioLinkError, match="E755"):
        KbUrls(bad)
    assert KbUrls("https://x/{{literal}}/{}")("D1") == "https://x/{literal}/D1"


@pytest.mark.parametrize("template", ["javascript:alert(1)//{}", "https://x/{}/{id}"])
def test_visualize_refuses_a_received_models_bad_template(tiny_dictionary, tmp_path, template):
    nlp = make_linker_nlp(tiny_dictionary)
    nlp.meta["biolink"] = {"kb_url_template": template}
    nlp.to_disk(tmp_path / "model")
    result = CliRunner().invoke(app, ["visualize", str(tmp_path / "model"), "--text", "NIDDM.",
                                      "--output", str(tmp_path / "page.html")])
    assert result.exit_code == 1
    assert "E755" in result.output and "meta.json" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert not (tmp_path / "page.html").exists()
    # the same template on the command line is refused before the model is loaded
    result = CliRunner().invoke(app, ["visualize", str(tmp_path / "missing"), "--text", "NIDDM.",
                                      "--output", str(tmp_path / "page.html"),
                                      "--kb-url-template", template])
    assert result.exit_code == 1 and "E755" in result.output and "--kb-url-template" in result.output
