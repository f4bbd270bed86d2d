"""displaCy pages of linked entities: each entity shows its label and its concept id,
and the id links to the concept's page in its knowledge base.

spaCy's own `kb_url_template` option takes one URL for all ids, and links whatever
kb_id_ holds. Ours also handles what a disease dictionary gives: ids of several
sources ("D003924" is MeSH, "OMIM:613097" is OMIM), composite mentions whose kb_id_
joins one id per part ("D001943|D010051": a link each) and NIL (shown, not linked).
Hovering over an id shows the top candidates with their scores.
"""
from html import escape
import re
from string import Formatter
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union
from urllib.parse import quote

from spacy import displacy
from spacy.language import Language
from spacy.tokens import Doc, Span

from ..errors import BioLinkError, Errors
from ..kb.lookup import canonical_name_reader
from ..linker.extensions import install_extensions

MESH_URL = "https://meshb.nlm.nih.gov/record/ui?ui={}"
OMIM_URL = "https://omim.org/entry/{}"
DEFAULT_KB_URL_TEMPLATE = MESH_URL
# MEDIC ids: bare MeSH ids and "OMIM:" ones; the id after "PREFIX:" fills the {} of a
# prefixed template.
MEDIC_KB_URL_TEMPLATES = {"OMIM": OMIM_URL, "": MESH_URL}
META_KEY = "biolink"
META_TEMPLATE_KEY = "kb_url_template"

# The NCBI-disease / BC5CDR mention types, so a page of them is not all one grey
LABEL_COLORS = {"SpecificDisease": "#ffb3a7", "DiseaseClass": "#ffd59e",
                "CompositeMention": "#c5b3ff", "Modifier": "#b3e0ff",
                "Disease": "#ffb3a7", "Chemical": "#b8f0b8"}

KbUrlTemplate = Union[str, Mapping[str, str]]

# displaCy's entity box, kept whole on one line: its default breaks a long entity
# between lines, leaving half a box at each end
_ENT_TEMPLATE = """
<mark class="entity" style="background: {bg}; padding: 0.45em 0.6em; margin: 0 0.25em; line-height: 1; border-radius: 0.35em; display: inline-block; max-width: 100%">
    {text}
    <span style="font-size: 0.8em; font-weight: bold; line-height: 1; border-radius: 0.35em; vertical-align: middle; margin-left: 0.5rem">{label}{kb_link}</span>
</mark>
"""
_LINK_STYLE = "text-decoration: underline dotted; color: #1a0dab; font-weight: normal"
_NIL_STYLE = "color: #777; font-weight: normal; font-style: italic"
_NAME_STYLE = "color: #333; font-weight: normal; font-style: normal"


class KbUrls:
    """Concept id -> URL, from one template or from a prefix -> template dict.

    With a dict, "OMIM:613097" uses the "OMIM" template filled with "613097"; an id with
    no prefix in the dict (including bare ids such as "D003924") uses the "" template
    filled with the whole id, or gets no link when there is no "" entry.
    """

    def __init__(self, template: KbUrlTemplate = DEFAULT_KB_URL_TEMPLATE, *,
                 source: str = "kb_url_template"):
        """source: where the template came from (a pipeline's meta.json, --kb-url-template),
        named in the error when it is refused."""
        if isinstance(template, str):
            templates = {"": template}
        elif isinstance(template, Mapping):
            templates = dict(template)
        else:
            raise BioLinkError(Errors.E755.format(
                value=template, reason=f"{source} is not a string or a dict"))
        for prefix, url in templates.items():
            reason = _template_problem(prefix, url)
            if reason is not None:
                raise BioLinkError(Errors.E755.format(
                    value=template, reason=f"{source}: the template for prefix {prefix!r} {reason}"))
        self.templates = templates

    def __call__(self, concept_id: str) -> Optional[str]:
        """The web page URL of `concept_id`, from the template for its prefix (or the default
        template), or None when no template applies."""
        prefix, sep, local = concept_id.partition(":")
        if sep and prefix in self.templates and prefix:
            return self.templates[prefix].format(quote(local, safe=""))
        if "" in self.templates:
            return self.templates[""].format(quote(concept_id, safe=""))
        return None


# The page is opened in a browser: a template from a received model's meta.json must not
# be able to make a link run script (javascript:, data:) or leave the web (file:).
_WEB_URL = re.compile(r"https?://[^\s\x00-\x1f\x7f]+\Z", re.IGNORECASE)


def _template_problem(prefix, url) -> Optional[str]:
    """Why a (prefix, URL template) pair cannot be used, or None when it can."""
    if not isinstance(prefix, str) or not isinstance(url, str):
        return "is not a string"
    if not _WEB_URL.match(url):
        return ("is not an http:// or https:// URL without spaces (other schemes, such as "
                "javascript: or file:, are never linked)")
    try:
        fields = [(name, spec, conv) for _, name, spec, conv in Formatter().parse(url)
                  if name is not None]
    except ValueError as err:
        return f"has stray braces ({err}); write a literal brace as {{{{ or }}}}"
    if fields != [("", "", None)]:
        return f"must hold exactly one {{}} with nothing inside (found {len(fields)} field(s))"
    return None


def kb_url_template_of(nlp: Language, default: Optional[KbUrlTemplate] = None,
                       source: str = "the pipeline's meta.json") -> KbUrlTemplate:
    """The pipeline's own template (nlp.meta["biolink"]["kb_url_template"]) when it has one,
    checked: a received pipeline's meta.json may hold anything."""
    biolink = nlp.meta.get(META_KEY, {})
    template = biolink.get(META_TEMPLATE_KEY) if isinstance(biolink, Mapping) else None
    if template is not None:
        KbUrls(template, source=f"{source} {META_KEY}.{META_TEMPLATE_KEY}")
        return template
    return default if default is not None else DEFAULT_KB_URL_TEMPLATE


def render_linked(docs: Union[Doc, Iterable[Doc]], *,
                  kb_url_template: KbUrlTemplate = DEFAULT_KB_URL_TEMPLATE,
                  nil_id: str = "NIL", page: bool = True, colors: Optional[Dict[str, str]] = None,
                  max_candidates: int = 5, kb: Optional[Mapping] = None,
                  linkers: Optional[Sequence[Tuple[str, object]]] = None) -> str:
    """HTML of the docs' entities (displaCy "ent" style) with their kb_ids as links.

    kb_url_template: a URL with {} for the id, or {prefix: URL} (see KbUrls); ids of
        MEDIC: MEDIC_KB_URL_TEMPLATES. page: a whole HTML page, else markup to embed.
    kb: bio_linker's `kb` (concept lookup): each id is shown with its canonical name,
        and the candidates on hover too.
    linkers: (name, pipe) of the pipeline's linkers (linker.find.linker_pipes): each
        entity then gets the `kb` and `nil_id` of the linker that linked it, and with
        several linkers its hover names that linker. `kb` and `nil_id` are then unused.
    """
    install_extensions()
    if isinstance(docs, Doc):
        docs = [docs]
    urls = KbUrls(kb_url_template)
    lookups = None
    if linkers is not None:
        lookups = {name: (pipe.kb, pipe.cfg.get("nil_id", "NIL")) for name, pipe in linkers}
    parsed = [_parse_doc(doc, urls, nil_id, max_candidates, kb, linkers, lookups)
              for doc in docs]
    options = {"colors": dict(LABEL_COLORS, **(colors or {})), "template": _ENT_TEMPLATE}
    return displacy.render(parsed, style="ent", manual=True, page=page, options=options)


def _parse_doc(doc: Doc, urls: KbUrls, nil_id: str, max_candidates: int,
               kb: Optional[Mapping] = None, linkers=None, lookups=None) -> dict:
    owners: Dict[Tuple[int, int, int], Optional[str]] = {}
    if linkers is not None:
        from ..linker.find import linked_spans

        owners = {(span.start, span.end, span.label): owner
                  for span, key, owner in linked_spans(doc, linkers) if key is None}
    ents = []
    for ent in doc.ents:
        ent_kb, ent_nil, named = kb, nil_id, None
        owner = owners.get((ent.start, ent.end, ent.label))
        if owner is not None:
            ent_kb, ent_nil = lookups[owner]
            named = owner if len(lookups) > 1 else None
        # displaCy pastes params into its template as they are: kb_link is our markup
        ents.append({"start": ent.start_char, "end": ent.end_char, "label": escape(ent.label_),
                     "params": {"kb_link": _kb_link(ent, urls, ent_nil, max_candidates, ent_kb,
                                                    linker=named)}})
    title = doc.user_data.get("title")
    if title is None and doc.user_data.get("pmid"):
        title = f"PMID {doc.user_data['pmid']}"
    return {"text": doc.text, "ents": ents, "title": escape(str(title)) if title else None}


def _kb_link(ent: Span, urls: KbUrls, nil_id: str, max_candidates: int,
             kb: Optional[Mapping] = None, linker: Optional[str] = None) -> str:
    if not ent.kb_id_:
        return ""

    name_of = canonical_name_reader(kb) if kb is not None else None

    def name(concept_id: str) -> str:
        return name_of(concept_id) if name_of is not None and concept_id in kb else ""

    hover = "; ".join(" ".join(filter(None, [concept, name(concept), f"{score:.2f}"]))
                      for concept, score in ent._.kb_ents[:max_candidates])
    if linker is not None:
        hover = f"{linker}: {hover}"
    links: List[str] = []
    for concept_id in ent.kb_id_.split("|"):
        url = None if concept_id == nil_id else urls(concept_id)
        # The name sits beside the link, not in it: the id stays the link's whole text.
        beside = (f' <span style="{_NAME_STYLE}">{escape(name(concept_id))}</span>'
                  if name(concept_id) else "")
        if url is None:
            links.append(f'<span style="{_NIL_STYLE}">{escape(concept_id)}</span>{beside}')
        else:
            links.append(f'<a style="{_LINK_STYLE}" href="{escape(url)}" target="_blank" '
                         f'title="{escape(hover)}">{escape(concept_id)}</a>{beside}')
    # displaCy's own kb link starts with a space to sit apart from the label
    return " " + '<span style="font-weight: normal"> | </span>'.join(links)
