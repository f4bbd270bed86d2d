"""Composite mentions: one span that names several concepts through a coordination.

"breast and ovarian cancer" stands for "breast cancer" and "ovarian cancer"; the
conjuncts share a head ("cancer"), a prefix ("cancer of the breast and ovaries"), or
both. A mention is read as

    PREFIX  CONJUNCT (, CONJUNCT)* and|or|and/or CONJUNCT  SUFFIX

and each part is PREFIX + CONJUNCT + SUFFIX. The conjunction and commas fix where one
conjunct ends and the next begins; the rules below only decide how far the shared
PREFIX and SUFFIX reach. A mention without a coordination, or with one the rules
cannot read (two conjunctions, a conjunction at an edge), comes back whole.

The function looks at the text alone. Some coordinations name one concept ("hereditary
breast and ovarian cancer", "glucose/galactose malabsorption"), which no rule on the
text can tell apart from a composite; the caller decides whether to keep the whole
mention, e.g. by comparing how well the whole and the parts match its dictionary.
"""
import re
from typing import AbstractSet, List, Optional, Sequence, Tuple

_CONJUNCTIONS = {"and", "or", "and/or", "or/and", "&", "nor"}
_COMMA = ","

# Coordinations that are themselves one name, or part of one ("head and neck cancer").
_FIXED_PHRASES = [
    ("head", "and", "neck"),
    ("nausea", "and", "vomiting"),
    ("one", "or", "more"),
    ("two", "or", "more"),
]

# "cancer of the breast and ovaries": everything up to the preposition is shared.
_PREPOSITIONS = {"of", "in", "on", "to"}
# Kept in the shared prefix after a preposition ("of the"), dropped from a conjunct
# that repeats it ("the ICA and the venous sinus").
_DETERMINERS = {"the", "a", "an"}
# Words that only announce or quantify a conjunct: "both ... and", "some other cancers".
_CORRELATIVES = {"both", "either", "neither", "some", "any"}

# Qualifiers that apply to a whole coordination when they lead it ("hereditary breast
# and ovarian cancer", "impaired renal and liver function"); other leading words are
# taken to belong to the first conjunct ("central nervous system and cardiac toxicity").
_QUALIFIERS = {
    "acute", "chronic", "subacute", "hereditary", "familial", "sporadic", "congenital",
    "acquired", "primary", "secondary", "idiopathic", "severe", "mild", "moderate",
    "progressive", "recurrent", "end-stage", "early-onset", "late-onset", "adult-onset",
    "juvenile", "adult", "childhood", "infantile", "neonatal", "bilateral", "unilateral",
    "multifocal", "multi-centric", "multicentric", "syndromic", "human", "male", "female",
    "benign", "malignant", "metastatic", "advanced", "invasive", "sex-linked", "x-linked",
    "autosomal", "dominant", "recessive", "partial", "complete", "total", "subtotal",
    "classic", "classical", "typical", "atypical", "rare", "common", "focal", "diffuse",
    "generalized", "generalised", "localized", "localised", "systemic", "transient",
    "persistent", "fatal", "lethal", "intraoperative", "postoperative", "preoperative",
}
_NEGATION_PREFIXES = ("non-", "non", "un")
# Most English adjectives that modify a disease head end like this ("systolic",
# "renal", "inherited", "nervous"); a noun before the conjunction ("pain and ...")
# usually closes a complete conjunct instead.
_ADJECTIVE_ENDINGS = ("al", "ic", "ous", "ive", "ed", "ary", "ar", "ile", "oid", "ful")

# Word beginnings a suspended hyphen can stand for ("hyper- or hypotension").
_WORD_PREFIXES = sorted({
    "hyper", "hypo", "tachy", "brady", "dys", "pre", "post", "intra", "extra", "inter",
    "sub", "supra", "infra", "trans", "anti", "pro", "poly", "oligo", "micro", "macro",
    "mono", "bi", "uni", "multi", "hemi", "peri", "endo", "exo", "epi", "para", "pan",
    "pseudo", "neo", "non", "ante", "retro", "ultra", "over", "under", "hetero", "homo",
}, key=len, reverse=True)

# Variant labels that coordinate without a head of their own: "type I and II",
# "C6 and C7", "spinocerebellar ataxias 1 and 2", "Rg1 and Rb1 ginsenosides".
_IDENTIFIER = re.compile(r"[A-Za-z]{0,5}\d+[A-Za-z]?|[IVX]{1,4}|[A-Za-z]")
# Both sides long upper-case acronyms: usually one entity or synonyms ("HIV/AIDS").
_ACRONYM = re.compile(r"[A-Z]{2,}")
_SLASH_SIDE = re.compile(r"[^\W\d_](?:[^\W\d_]|['-])*")

# Every split needs a conjunction word, a slash or a bracket.
_MAY_SPLIT = re.compile(r"(?i)(?<!\S)(?:and|or|nor|&),?(?!\S)|[/(\[]")
_TRAILING_ASIDE = re.compile(r"([^()]*\S)\s*\(([^()]+)\)")
_OPENING = "(["
_CLOSING = ")]"


def split_composite(text: str) -> List[str]:
    """The concept mentions a composite mention stands for, or [text] when it is not one."""
    if not _MAY_SPLIT.search(text):
        return [text]  # most mentions; the full reading below costs more than linking them
    chunks = _chunks(text)
    if any(chunk != _COMMA and not any(ch.isalnum() for ch in chunk) for chunk in chunks):
        # Stray quotes or dashes: the structure of the text is not one we can read.
        return [text]
    conjunctions = [i for i, chunk in enumerate(chunks) if chunk.lower() in _CONJUNCTIONS]
    if len(conjunctions) == 1:
        at = conjunctions[0]
        parts = _split_coordination(chunks[:at], chunks[at + 1:])
    elif not conjunctions:
        parts = _split_trailing_aside(text) or _split_slash(chunks)
    else:
        parts = None
    return parts if parts and len(parts) > 1 else [text]


def _chunks(text: str) -> List[str]:
    """Whitespace tokens, with a bracketed aside kept on the word it follows
    ("septal (VSD)"), list commas as tokens of their own, fixed phrases as one chunk."""
    chunks: List[str] = []
    depth = 0
    for token in text.split():
        inside = depth > 0
        depth = max(0, depth + sum(token.count(c) for c in _OPENING)
                    - sum(token.count(c) for c in _CLOSING))
        list_comma = depth == 0 and token.endswith(_COMMA)
        word = token[:-1] if list_comma else token
        if word:
            joins_previous = inside or (word[0] in _OPENING and chunks
                                        and chunks[-1] != _COMMA
                                        and chunks[-1].lower() not in _CONJUNCTIONS)
            if joins_previous:
                chunks[-1] = f"{chunks[-1]} {word}"
            else:
                chunks.append(word)
        if list_comma:
            chunks.append(_COMMA)
    return _join_fixed_phrases(chunks)


def _join_fixed_phrases(chunks: List[str]) -> List[str]:
    joined: List[str] = []
    i = 0
    while i < len(chunks):
        for phrase in _FIXED_PHRASES:
            window = chunks[i:i + len(phrase)]
            if tuple(c.lower() for c in window) == phrase:
                joined.append(" ".join(window))
                i += len(phrase)
                break
        else:
            joined.append(chunks[i])
            i += 1
    return joined


def _split_coordination(left: List[str], right: List[str]) -> Optional[List[str]]:
    groups = [g for g in _split_on_commas(left) if g]
    right = _without_correlatives([c for c in right if c != _COMMA])
    if not groups or not right:
        return None
    first, middle = _without_correlatives(groups[0]), groups[1:]

    preposition = _preposition_at(first)
    right_preposition = _preposition_at(right)
    if preposition == 0:
        return None
    if preposition is not None and right_preposition is None:
        prefix, first_conjunct = _prefix_through(first, preposition)
        if not first_conjunct:
            return None
        if _is_adjective(first_conjunct[-1]) and len(right) > 1 and not middle:
            # "demyelination in the central and peripheral nervous system"
            last_conjunct, suffix = right[:-1], right[-1:]
        else:
            last_conjunct, suffix = right, []
        conjuncts = [first_conjunct] + middle + [last_conjunct]
        return _assemble(prefix, conjuncts, suffix)
    if preposition is not None:
        # Two complete phrases: "loss of X and gain of Y".
        return _assemble([], groups + [right], [], drop_determiners=False)
    if right_preposition is not None:
        if right_preposition == 0:
            return None
        head_end = right_preposition
        if _is_adjective(first[-1]) and head_end > 1:
            # "inherited and sporadic forms of the cancer": the head precedes the phrase.
            head_end -= 1
        last_conjunct, suffix = right[:head_end], right[head_end:]
        prefix, first_conjunct = _shared_qualifiers(first, last_conjunct)
        return _assemble(prefix, [first_conjunct] + middle + [last_conjunct], suffix)

    if (_is_identifier(first[-1]) and _is_identifier(right[0])
            and all(len(g) == 1 and _is_identifier(g[0]) for g in middle)):
        # "type I and II diabetes", "C6 and C7 deficiencies"
        return _assemble(first[:-1], [first[-1:]] + middle + [right[:1]], right[1:])
    if len(right) == 1:
        # The conjuncts are heads sharing the words before them: "cardiac dilation and
        # dysfunction". With a list, the words before may just as well be the first
        # item alone ("renal failure, anemia and edema"), so only qualifiers are shared.
        if middle:
            prefix, first_conjunct = _shared_qualifiers(first, right)
        else:
            prefix, first_conjunct = first[:-1], first[-1:]
        return _assemble(prefix, [first_conjunct] + middle + [right], [])
    prefix, first_conjunct = _shared_qualifiers(first, right)
    last_of_left = (middle[-1] if middle else first)[-1]
    if (_head_word(last_of_left).lower() == _head_word(right[-1]).lower()
            or (middle and all(len(c) >= len(right) for c in [first_conjunct] + middle))):
        # Complete phrases, each with its own head: "acute renal failure and hepatic
        # failure", "impaired word fluency, psychomotor speed and working memory".
        return _assemble(prefix, [first_conjunct] + middle + [right], [])

    last_conjunct, suffix = _modifier_and_head(first, right)
    prefix, first_conjunct = _shared_qualifiers(first, last_conjunct)
    return _assemble(prefix, [first_conjunct] + middle + [last_conjunct], suffix)


def _prefix_through(first: List[str], preposition: int) -> Tuple[List[str], List[str]]:
    """Split "cancer of (both) the renal pelvis" into the shared "cancer of the" and
    the first conjunct, dropping a correlative "both"."""
    prefix = first[:preposition + 1]
    rest = first[preposition + 1:]
    while len(rest) > 1 and rest[0].lower() in _DETERMINERS | _CORRELATIVES:
        if rest[0].lower() in _DETERMINERS:
            prefix.append(rest[0])
        rest = rest[1:]
    return prefix, rest


def _modifier_and_head(first: List[str], right: List[str]) -> Tuple[List[str], List[str]]:
    """Where the last conjunct ends and the shared head begins, when modifiers are
    coordinated before a head: "breast and ovarian | cancer"."""
    if all(_is_qualifier(c) for c in first):
        # "complete or partial | LCAT deficiency", "syndromic and non-syndromic | hearing loss"
        end = 0
        while end < len(right) - 1 and _is_qualifier(right[end]):
            end += 1
        if end:
            return right[:end], right[end:]
    # A capitalised word after the conjunction is a name or label that belongs to the
    # conjunct ("Duchenne and Becker | muscular dystrophy", "type I and type II |
    # diabetes"); otherwise the head is the last word ("ovarian and fallopian tube |
    # cancers", "cardiovascular and central nervous system | toxicity").
    end = len(right) - 1
    capitalised = [i for i, chunk in enumerate(right[:-1]) if chunk[:1].isupper()]
    if capitalised:
        end = capitalised[-1] + 1
    return right[:end], right[end:]


def _shared_qualifiers(first: List[str],
                       last_conjunct: Sequence[str]) -> Tuple[List[str], List[str]]:
    """The leading qualifiers of the first conjunct that every conjunct takes, unless
    the last conjunct brings its own ("subtotal C6 and complete C6 deficiency")."""
    if last_conjunct and _is_qualifier(last_conjunct[0]):
        return [], first
    end = 0
    while end < len(first) - 1 and _is_qualifier(first[end]):
        end += 1
    return first[:end], first[end:]


def _assemble(prefix: Sequence[str], conjuncts: Sequence[Sequence[str]],
              suffix: Sequence[str], *, drop_determiners: bool = True) -> Optional[List[str]]:
    if drop_determiners:
        conjuncts = [_without_determiners(c) for c in conjuncts]
    if any(not c for c in conjuncts):
        return None
    last = conjuncts[-1]
    parts = []
    for conjunct in conjuncts:
        words, own_suffix = list(conjunct), list(suffix)
        suspended_hyphen = len(words) == 1 and len(words[0]) > 1 and words[0].endswith("-")
        if conjunct is not last and suspended_hyphen:
            words, own_suffix = _complete_fragment(words[0][:-1], last, own_suffix)
        parts.append(" ".join(list(prefix) + words + own_suffix))
    return parts


def _complete_fragment(stem: str, last_conjunct: Sequence[str],
                       suffix: List[str]) -> Tuple[List[str], List[str]]:
    """A suspended hyphen borrows the rest of its word from the last conjunct or the
    head: "hyper- or hypotension", "pre- and postoperative bleeding",
    "RCC- and von Hippel-Lindau disease-associated tumors"."""
    following = last_conjunct[0]
    if stem.lower() in _WORD_PREFIXES:
        for word_prefix in _WORD_PREFIXES:
            if following.lower().startswith(word_prefix) and len(following) > len(word_prefix):
                return [stem + following[len(word_prefix):]] + list(last_conjunct[1:]), suffix
    if suffix and "-" in suffix[0][1:]:
        return [stem + suffix[0][suffix[0].rindex("-"):]], suffix[1:]
    if "-" in last_conjunct[-1][1:]:
        return [stem + last_conjunct[-1][last_conjunct[-1].rindex("-"):]], suffix
    return [stem], suffix


def _split_trailing_aside(text: str) -> Optional[List[str]]:
    """"complement deficiencies (C2 and C7)": the aside names the members."""
    match = _TRAILING_ASIDE.fullmatch(text.strip())
    if not match:
        return None
    members = split_composite(match.group(2))
    if len(members) < 2:
        return None
    return [f"{match.group(1)} {member}" for member in members]


def _split_slash(chunks: List[str]) -> Optional[List[str]]:
    """"pre A/B suf" -> "pre A suf", "pre B suf", for one slashed word of letters."""
    slashed = [i for i, chunk in enumerate(chunks) if "/" in chunk and " " not in chunk]
    if len(slashed) != 1:
        return None
    at = slashed[0]
    sides = chunks[at].split("/")
    if not all(_is_slash_side(side) for side in sides):
        return None
    if all(_ACRONYM.fullmatch(side) for side in sides):
        return None
    return [_text(chunks[:at] + [side] + chunks[at + 1:]) for side in sides]


def _is_slash_side(side: str) -> bool:
    # Digits mean a ratio, karyotype or chemical name ("ataxia 3/Machado-Joseph",
    # "A2A/A1"); a lone lower-case Latin letter an abbreviation ("w/o"), unlike a
    # Greek one ("α/β thalassemia").
    return bool(_SLASH_SIDE.fullmatch(side)) and (
        len(side) > 1 or side.isupper() or not side.isascii())


def _text(chunks: Sequence[str]) -> str:
    text = ""
    for chunk in chunks:
        text += chunk if chunk == _COMMA or not text else " " + chunk
    return text


def _split_on_commas(chunks: Sequence[str]) -> List[List[str]]:
    groups: List[List[str]] = [[]]
    for chunk in chunks:
        if chunk == _COMMA:
            groups.append([])
        else:
            groups[-1].append(chunk)
    return groups


def _without_correlatives(chunks: Sequence[str]) -> List[str]:
    return _without_leading(chunks, _CORRELATIVES)


def _without_determiners(chunks: Sequence[str]) -> List[str]:
    return _without_leading(chunks, _DETERMINERS | _CORRELATIVES)


def _without_leading(chunks: Sequence[str], words: AbstractSet[str]) -> List[str]:
    # The last chunk always stays: in "a, b and c" the "a" is the conjunct itself.
    start = 0
    while start < len(chunks) - 1 and chunks[start].lower() in words:
        start += 1
    return list(chunks[start:])


def _preposition_at(chunks: Sequence[str]) -> Optional[int]:
    return next((i for i, chunk in enumerate(chunks) if chunk.lower() in _PREPOSITIONS), None)


def _head_word(chunk: str) -> str:
    """The word a chunk is about: "septal" for "septal (VSD)"."""
    return chunk.split()[0]


def _is_identifier(chunk: str) -> bool:
    return bool(_IDENTIFIER.fullmatch(chunk))


def _is_qualifier(chunk: str) -> bool:
    word = chunk.lower()
    if word in _QUALIFIERS or word == "non":
        return True
    if len(word) >= 6 and word.isalpha() and word.endswith("ed"):
        # A participle qualifies the whole coordination: "impaired renal and liver function".
        return True
    return any(word.startswith(p) and word[len(p):] in _QUALIFIERS for p in _NEGATION_PREFIXES)


def _is_adjective(chunk: str) -> bool:
    word = _head_word(chunk).lower().rsplit("-", 1)[-1]
    return (_is_qualifier(chunk)
            or (len(word) >= 5 and word.isalpha() and word.endswith(_ADJECTIVE_ENDINGS)))
