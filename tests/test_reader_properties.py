"""Property-based tests (hypothesis) of every dictionary reader and the PubTator reader:
arbitrary bytes and arbitrary well-formed files raise nothing but BioLinkError, and no
concept (or mention) comes back with a byte-order mark or a control character in an id or
a name (issue 19)."""
import gzip
import json
import unicodedata
import warnings

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from spacy_biolink.corpora.pubtator import read_pubtator
from spacy_biolink.errors import BioLinkError
from spacy_biolink.kb.readers.dictionaries import READERS, infer_format, load_dictionary

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
FORMATS = sorted(READERS)


def clean(text: str) -> bool:
    return not any(c == "\ufeff" or unicodedata.category(c) == "Cc" for c in text)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("properties")


def write(workdir, name: str, data: bytes, compress: bool) -> object:
    path = workdir / (name + (".gz" if compress else ""))
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


def read_concepts(fmt, path):
    """The reader's concepts, or None when it refused the file with a BioLinkError."""
    try:
        return list(READERS[fmt](path))
    except BioLinkError:
        return None


def assert_clean(concepts):
    for concept in concepts or []:
        for value in concept.ids + concept.names:
            assert clean(value), (concept, value)


# -------------------------------------------------------------- arbitrary bytes

@SETTINGS
@given(data=st.binary(max_size=400), fmt=st.sampled_from(FORMATS), compress=st.booleans(),
       bom=st.booleans())
def test_dictionary_readers_on_arbitrary_bytes(workdir, data, fmt, compress, bom):
    path = write(workdir, "bytes.txt", b"\xef\xbb\xbf" * bom + data, compress)
    assert_clean(read_concepts(fmt, path))
    try:
        inferred = infer_format(path)
        assert inferred in READERS
        dictionary = load_dictionary(path)
    except BioLinkError:
        return
    assert all(clean(i) for i in dictionary.concept_ids)
    assert all(clean(n) for n in dictionary.names)


@SETTINGS
@given(data=st.binary(max_size=400), compress=st.booleans())
def test_pubtator_reader_on_arbitrary_bytes(workdir, data, compress):
    path = write(workdir, "bytes.PubTator", data, compress)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            docs = list(read_pubtator(path))
        except BioLinkError:
            return
    for doc in docs:
        assert clean(doc.pmid)
        for mention in doc.mentions:
            assert all(clean(v) for v in (mention.text, mention.type, mention.raw_ids,
                                          *mention.part_texts))


# -------------------------------------------------------------- well-formed files

# Any character but the line break; the separators of each format are left out of the
# fields they would split (a `|` inside a MEDIC name is a second name by definition).
def field(exclude: str = ""):
    return st.text(st.characters(blacklist_characters="\n" + exclude,
                                 blacklist_categories=("Cs",)), min_size=1, max_size=12)


records = st.lists(st.tuples(st.lists(field("|\t"), min_size=1, max_size=3),
                             st.lists(field("|\t"), min_size=1, max_size=3)),
                   min_size=1, max_size=6)


def render(fmt: str, concepts) -> str:
    lines = []
    if fmt == "ctd":
        lines.append("# CTD diseases")
    for ids, names in concepts:
        if fmt == "medic":
            lines.append("|".join(ids) + "||" + "|".join(names))
        elif fmt == "biosyn":
            lines.append("|".join(ids) + "||" + names[0])
        elif fmt == "tsv":
            lines.append(names[0] + "\t" + "|".join(ids))
        elif fmt == "ctd":
            lines.append("\t".join([names[0], ids[0], "|".join(ids[1:]), "", "", "", "",
                                    "|".join(names[1:]), ""]))
        else:
            lines.append(json.dumps({"concept_id": ids[0], "canonical_name": names[0],
                                     "aliases": names[1:]}))
    return "\n".join(lines) + "\n"


@SETTINGS
@given(concepts=records, fmt=st.sampled_from(FORMATS), compress=st.booleans(),
       bom=st.booleans(), crlf=st.booleans())
def test_dictionary_readers_on_well_formed_files(workdir, concepts, fmt, compress, bom, crlf):
    text = render(fmt, concepts)
    if crlf:
        text = text.replace("\n", "\r\n")
    path = write(workdir, f"well_formed.{fmt}", ("\ufeff" * bom + text).encode("utf8"), compress)
    read = read_concepts(fmt, path)
    assert_clean(read)
    every_field_clean = all(clean(v) for ids, names in concepts for v in ids + names)
    usable = all(any(i.strip() for i in ids) and names[0].strip() for ids, names in concepts)
    if every_field_clean and usable and fmt in ("medic", "tsv", "jsonl"):
        # Clean content is read as written: no BOM, "\r" or separator leaks into a name.
        assert read is not None, text
        assert [list(c.names) for c in read] == [
            [n for n in names if n.strip()] if fmt != "tsv" else [names[0]]
            for ids, names in concepts]


pubtator_docs = st.lists(st.tuples(st.integers(0, 10**6), field("|"), field(),
                                   st.lists(st.tuples(st.integers(0, 30), st.integers(1, 8),
                                                      field("\t"), field("\t")), max_size=3)),
                         min_size=1, max_size=3)


@SETTINGS
@given(docs=pubtator_docs, compress=st.booleans(), bom=st.booleans())
def test_pubtator_reader_on_well_formed_files(workdir, docs, compress, bom):
    blocks = []
    for pmid, title, abstract, mentions in docs:
        text = f"{title} {abstract}"
        lines = [f"{pmid}|t|{title}", f"{pmid}|a|{abstract}"]
        for start, length, kind, ids in mentions:
            end = min(start + length, len(text))
            if start < end:
                lines.append(f"{pmid}\t{start}\t{end}\t{text[start:end]}\t{kind}\t{ids}")
        blocks.append("\n".join(lines) + "\n\n")
    path = write(workdir, "well_formed.PubTator", ("\ufeff" * bom + "".join(blocks)).encode("utf8"),
                 compress)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            read = list(read_pubtator(path))
        except BioLinkError:
            return
    for doc in read:
        assert clean(doc.pmid)
        for mention in doc.mentions:
            assert all(clean(v) for v in (mention.text, mention.type, mention.raw_ids))


@SETTINGS
@given(text=st.text(st.sampled_from(["a", "\n", "\r", "\ufeff", "\xe9", "\u20ac", "\U0001f600"])
                   | st.characters(blacklist_categories=("Cs",)), max_size=60),
       block_size=st.integers(1, 9), compress=st.booleans())
def test_lines_do_not_depend_on_the_block_size(workdir, text, block_size, compress):
    """iter_lines reads blocks: a line, a "\\r\\n" or a multi-byte character cut between two
    blocks reads as if the file were read whole."""
    from unittest import mock

    from spacy_biolink.io import files

    expected = text.replace("\r\n", "\n").split("\n") if text else []
    if text.replace("\r\n", "\n").endswith("\n"):
        expected.pop()
    expected = [line[1:] if line.startswith("\ufeff") else line for line in expected]
    path = write(workdir, "blocks.txt", text.encode("utf8"), compress)
    with mock.patch.object(files, "_BLOCK_SIZE", block_size):
        assert [line for _, line in files.iter_lines(path)] == expected
