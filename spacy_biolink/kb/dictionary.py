"""ConceptDictionary: the one owner of concept ids and names.

Concepts carry one or more ids (MEDIC's `C567755|613097` is one concept with two ids),
names, and optionally a type and a definition. Names are stored once each (a name shared
by two concepts maps to both), and the index refers to them by integer position.

Everything is held in flat arrays (a UTF-8 blob plus offsets per string table, a CSR map
from names to concepts) so a 10M-name dictionary loads as a handful of memory-mapped
.npy files without building 10M Python strings.
"""
import logging
from array import array
from collections import Counter, defaultdict
from itertools import islice
from typing import (Collection, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence,
                    Tuple)

import numpy
import srsly

from ..errors import BioLinkError, Errors
from ..io.util import gc_paused, read_arrays, write_arrays

ID_SEPARATOR = "|"
logger = logging.getLogger(__name__)

# Where a (name, concept) pair came from, as bits of name_concept_sources: the
# dictionary file (Triplet-Search's O), or corpus mentions and add_names (its D).
SOURCE_ONTOLOGY = 1
SOURCE_DATA = 2

# StringTable iterates this many strings per slice of its blob.
ITER_CHUNK = 65536


# Past this many entries, a concept's ids or a name's concepts are checked for repeats
# through a set: a list scan made 100,000 lines sharing one name quadratic (14 s / 50,000).
_SCAN_LIMIT = 16


def _add_unique(lists: List, k: int, values: Iterable) -> None:
    """Append to lists[k] each of `values` it does not hold yet, in linear time overall:
    a long list is kept beside a set of its items (an (list, set) pair after _SCAN_LIMIT)."""
    entry = lists[k]
    if isinstance(entry, tuple):
        items, seen = entry
    elif len(entry) + len(values) <= _SCAN_LIMIT:
        entry.extend(v for v in values if v not in entry)
        return
    else:
        items, seen = entry, set(entry)
    for value in values:
        if value not in seen:
            seen.add(value)
            items.append(value)
    lists[k] = items if len(items) <= _SCAN_LIMIT else (items, seen)


class StringTable(Sequence):
    """An immutable list of strings stored as one UTF-8 blob and int64 offsets."""

    def __init__(self, blob: numpy.ndarray, offsets: numpy.ndarray):
        self.blob = blob
        self.offsets = offsets

    @classmethod
    def from_strings(cls, strings: Iterable[str]) -> "StringTable":
        """Pack `strings` into one UTF-8 blob with offsets; the table keeps no Python strings."""
        # A chunk at a time: 10M names as bytes objects would be ~0.7 GB at once.
        strings = iter(strings)
        blobs, lengths = [], array("q", [0])
        while True:
            encoded = [s.encode("utf8") for s in islice(strings, ITER_CHUNK)]
            if not encoded:
                break
            lengths.extend(map(len, encoded))
            blobs.append(b"".join(encoded))
        offsets = numpy.cumsum(numpy.frombuffer(lengths, dtype=numpy.int64))
        blob = numpy.frombuffer(b"".join(blobs), dtype=numpy.uint8)
        return cls(blob, offsets)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, i):
        if isinstance(i, slice):
            start, stop, step = i.indices(len(self))
            if step == 1:
                return self._decode(start, max(start, stop))
            return [self[j] for j in range(start, stop, step)]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        start, end = self.offsets[i], self.offsets[i + 1]
        return self.blob[start:end].tobytes().decode("utf8")

    def __iter__(self) -> Iterator[str]:
        # A chunk at a time: the whole blob as bytes and every offset as a Python int
        # would be ~1 GB at 10M names.
        for first in range(0, len(self), ITER_CHUNK):
            yield from self._decode(first, min(first + ITER_CHUNK, len(self)))

    def _decode(self, first: int, last: int) -> List[str]:
        """Strings first..last-1, decoded from one slice of the blob (a slice is how the
        encoder reads a packed table of names: one batch of Python strings at a time)."""
        offsets = self.offsets[first:last + 1].tolist()
        if len(offsets) < 2:
            return []
        data = self.blob[offsets[0]:offsets[-1]].tobytes()
        base = offsets[0]
        return [data[start - base:end - base].decode("utf8")
                for start, end in zip(offsets, offsets[1:])]


class Concept:
    """One concept as readers produce it, before it enters a ConceptDictionary."""

    __slots__ = ("ids", "names", "type", "definition")

    def __init__(self, ids: Sequence[str], names: Sequence[str], type: str = "",
                 definition: str = ""):
        self.ids = tuple(ids)
        self.names = tuple(names)
        self.type = type
        self.definition = definition

    def __repr__(self) -> str:
        return f"Concept(ids={self.ids!r}, names={self.names!r})"


class ConceptDictionary:
    """Concepts (ids, names, type, definition) and the name -> concepts map."""

    def __init__(self, concept_ids: StringTable, names: StringTable,
                 name_concepts_indptr: numpy.ndarray, name_concepts: numpy.ndarray,
                 types: Optional[StringTable] = None,
                 definitions: Optional[StringTable] = None,
                 name_concept_counts: Optional[numpy.ndarray] = None,
                 name_concept_sources: Optional[numpy.ndarray] = None):
        self.concept_ids = concept_ids  # "primary|alt|alt" per concept
        self.names = names
        self.name_concepts_indptr = name_concepts_indptr
        self.name_concepts = name_concepts
        self.types = types
        self.definitions = definitions
        # Beside name_concepts: how often corpus annotations gave that name that concept
        # (see with_names). It only breaks exact score ties, e.g. "BPAD", a MEDIC name of
        # three concepts of which the training data always means one.
        self.name_concept_counts = (name_concept_counts if name_concept_counts is not None
                                    else numpy.zeros(len(name_concepts), numpy.int32))
        # Also beside name_concepts: SOURCE_ONTOLOGY and/or SOURCE_DATA bits per pair. A
        # pair that is both is in both sets; without the array every pair is ontology.
        self.name_concept_sources = (
            name_concept_sources if name_concept_sources is not None
            else numpy.full(len(name_concepts), SOURCE_ONTOLOGY, numpy.uint8))
        # Each concept's canonical name (the reader's first name for it), set by
        # load_dictionary; None: names_of(c)[0] stands in (see canonical_name).
        self.canonical_names: Optional[StringTable] = None
        # Built on first use, as arrays (no Python object per name or concept): the
        # sorted hashes of every id with their concepts (concept_index), and the
        # concept -> names CSR map (names_of).
        self._id_lookup: Optional[Tuple[numpy.ndarray, numpy.ndarray]] = None
        self._names_by_concept: Optional[Tuple[numpy.ndarray, numpy.ndarray]] = None

    # Building ---------------------------------------------------------------

    @classmethod
    def from_concepts(cls, concepts: Iterable[Concept], *, source: str = "<concepts>"
                      ) -> "ConceptDictionary":
        """Build from concepts; lines that repeat a primary id are merged into one concept."""
        # The cyclic garbage collector would walk the millions of lists built here again and
        # again (a third of the time at 3M names); none of them is in a cycle.
        with gc_paused():
            return cls._from_concepts(concepts, source=source)

    @classmethod
    def _from_concepts(cls, concepts: Iterable[Concept], *, source: str) -> "ConceptDictionary":
        concept_index: Dict[str, int] = {}
        all_ids: List[List[str]] = []
        types: List[str] = []
        definitions: List[str] = []
        name_index: Dict[str, int] = {}
        # A name's concept as a plain int, a list only for names shared by several
        # concepts: at 10M names the per-name lists were ~1 GB of the build's peak.
        name_to_concepts: List = []
        # Each concept's first name (a name index; -1 until it has one): its canonical name
        # without a string kept per line, so a line repeated a million times costs nothing.
        first_names = array("q")
        merged_lines = 0
        for concept in concepts:
            ids = [i for i in (x.strip() for x in concept.ids) if i]
            if not ids:
                continue
            primary = ids[0]
            c = concept_index.get(primary)
            if c is None:
                c = concept_index[primary] = len(all_ids)
                all_ids.append(ids)
                types.append(concept.type or "")
                definitions.append(concept.definition or "")
                first_names.append(-1)
            else:
                merged_lines += 1
                _add_unique(all_ids, c, ids)
                types[c] = types[c] or concept.type or ""
                definitions[c] = definitions[c] or concept.definition or ""
            for name in concept.names:
                name = name.strip()
                if not name:
                    continue
                n = name_index.get(name)
                if n is None:
                    n = name_index[name] = len(name_to_concepts)
                    name_to_concepts.append(c)
                else:
                    owners = name_to_concepts[n]
                    if isinstance(owners, int):
                        if owners != c:
                            name_to_concepts[n] = [owners, c]
                    else:
                        _add_unique(name_to_concepts, n, (c,))
                if first_names[c] < 0:
                    first_names[c] = n
        for lists in (all_ids, name_to_concepts):  # drop _add_unique's sets
            for k, entry in enumerate(lists):
                if isinstance(entry, tuple):
                    lists[k] = entry[0]
        # A concept with no name can never be retrieved; keep it out of the index but
        # fail loudly when nothing at all is left.
        if not name_to_concepts:
            raise BioLinkError(Errors.E005.format(source=source))
        indptr = numpy.zeros(len(name_to_concepts) + 1, dtype=numpy.int64)
        numpy.cumsum(numpy.fromiter((1 if isinstance(cs, int) else len(cs)
                                     for cs in name_to_concepts), dtype=numpy.int64,
                                    count=len(name_to_concepts)), out=indptr[1:])
        flat = numpy.fromiter((c for cs in name_to_concepts
                               for c in ((cs,) if isinstance(cs, int) else cs)),
                              dtype=numpy.int32, count=int(indptr[-1]))
        if merged_lines:
            logger.info("%s: %d lines repeated the id of a concept read before; merged into "
                        "it (names and ids already there are not stored again)",
                        source, merged_lines)
        dictionary = cls(
            StringTable.from_strings(ID_SEPARATOR.join(ids) for ids in all_ids),
            StringTable.from_strings(name_index.keys()),
            indptr, flat,
            StringTable.from_strings(types) if any(types) else None,
            StringTable.from_strings(definitions) if any(definitions) else None,
        )
        dictionary._first_names = numpy.frombuffer(first_names, dtype=numpy.int64)
        return dictionary

    def first_names_table(self) -> Optional["StringTable"]:
        """Each concept's first name as read by from_concepts (the canonical name
        load_dictionary keeps), gathered from `names` without a Python string per
        concept; None for a dictionary not built by from_concepts."""
        first = getattr(self, "_first_names", None)
        if first is None:
            return None
        starts = numpy.where(first >= 0, self.names.offsets[:-1][numpy.maximum(first, 0)], 0)
        ends = numpy.where(first >= 0, self.names.offsets[1:][numpy.maximum(first, 0)], 0)
        lengths = ends - starts
        offsets = numpy.zeros(len(first) + 1, dtype=numpy.int64)
        numpy.cumsum(lengths, out=offsets[1:])
        # Byte positions of every gathered name: each start repeated over its length.
        positions = (numpy.repeat(starts - offsets[:-1], lengths)
                     + numpy.arange(int(offsets[-1]), dtype=numpy.int64))
        blob = numpy.asarray(self.names.blob)[positions] if len(positions) else \
            numpy.zeros(0, dtype=numpy.uint8)
        return StringTable(numpy.ascontiguousarray(blob, dtype=numpy.uint8), offsets)

    def with_names(self, extra: Iterable[Tuple[str, str]], *, source: str = "<names>",
                   new_concept_ids: Collection[str] = (),
                   alternative_ids: Optional[Mapping[str, str]] = None
                   ) -> Tuple["ConceptDictionary", List[Tuple[str, str]]]:
        """Return a dictionary with (name, concept_id) pairs added, and the pairs whose id
        is unknown (they are not added: a name without a concept cannot be linked).

        Each pair counts as one annotation in name_concept_counts, and is marked
        SOURCE_DATA in name_concept_sources (beside SOURCE_ONTOLOGY when the dictionary
        already gave that name that concept).
        new_concept_ids: unknown ids that become concepts of their own instead, after the
            dictionary's, named by their pairs alone (every name SOURCE_DATA; the canonical
            name is the one given most often, the first of those on a tie).
        alternative_ids: unknown id -> a known id: the unknown id becomes an alternative
            id of the known one's concept, and its pairs names of that concept (an id a
            newer vocabulary replaced: MeSH makes supplementary records descriptors).
        """
        concepts = list(self.iter_concepts())
        n_known = len(concepts)
        allowed_new = set(new_concept_ids)
        added: Dict[str, int] = {}
        # Keyed by name text: name indices change when names are added.
        counts: Dict[Tuple[str, int], int] = defaultdict(int)
        counted = numpy.flatnonzero(self.name_concept_counts)
        owners = numpy.searchsorted(self.name_concepts_indptr, counted, side="right") - 1
        for pos, n in zip(counted.tolist(), owners.tolist()):
            counts[(self.names[n], int(self.name_concepts[pos]))] += int(self.name_concept_counts[pos])
        # Only pairs that are not plain ontology pairs are listed; the rest keep that.
        sources: Dict[Tuple[str, int], int] = {}
        marked = numpy.flatnonzero(self.name_concept_sources != SOURCE_ONTOLOGY)
        owners = numpy.searchsorted(self.name_concepts_indptr, marked, side="right") - 1
        for pos, n in zip(marked.tolist(), owners.tolist()):
            sources[(self.names[n], int(self.name_concepts[pos]))] = int(self.name_concept_sources[pos])
        unknown = []
        renamed = alternative_ids or {}
        for name, concept_id in extra:
            c = self.concept_index(concept_id)
            if c is None and concept_id in renamed:
                c = self.concept_index(renamed[concept_id])
                if c is not None and concept_id not in concepts[c].ids:
                    concepts[c].ids = concepts[c].ids + (concept_id,)
            if c is None and concept_id in allowed_new:
                c = added.get(concept_id)
                if c is None:
                    c = added[concept_id] = len(concepts)
                    concepts.append(Concept([concept_id], ()))
            if c is None:
                unknown.append((name, concept_id))
            else:
                key = (name.strip(), c)
                if key not in sources:
                    # New to this dictionary, or (so far) a plain ontology pair of it.
                    sources[key] = SOURCE_ONTOLOGY if key[0] in concepts[c].names else 0
                sources[key] |= SOURCE_DATA
                concepts[c].names = concepts[c].names + (name,)
                counts[key] += 1
        augmented = ConceptDictionary.from_concepts(concepts, source=source)
        augmented.name_concept_counts = augmented._pair_array(counts, numpy.int32, 0)
        augmented.name_concept_sources = augmented._pair_array(sources, numpy.uint8,
                                                               SOURCE_ONTOLOGY)
        augmented.canonical_names = self.canonical_names  # same concepts, same order
        if added and self.canonical_names is not None:
            given = [Counter(concepts[c].names).most_common(1)[0][0]
                     for c in range(n_known, len(concepts))]
            augmented.canonical_names = StringTable.from_strings(
                [*self.canonical_names, *(name.strip() for name in given)])
        return augmented, unknown

    def _pair_array(self, values: Dict[Tuple[str, int], int], dtype, default) -> numpy.ndarray:
        """An array beside name_concepts from (name text, concept index) -> value."""
        out = numpy.full(len(self.name_concepts), default, dtype=dtype)
        by_name: Dict[str, List[Tuple[int, int]]] = defaultdict(list)
        for (name, c), value in values.items():
            by_name[name].append((c, value))
        for n, name in enumerate(self.names):
            for c, value in by_name.get(name, ()):
                start = self.name_concepts_indptr[n]
                owners = self.name_concepts[start:self.name_concepts_indptr[n + 1]]
                out[start + int(numpy.flatnonzero(owners == c)[0])] = value
        return out

    def select_names(self, sources: int) -> Tuple["ConceptDictionary", numpy.ndarray]:
        """This dictionary cut down to the (name, concept) pairs whose source bits meet
        `sources` (SOURCE_ONTOLOGY, SOURCE_DATA or both), and the positions of its names
        among this one's (so rows of this dictionary's name vectors can be reused).

        Concept indices stay the same, so the result answers in this dictionary's
        concepts. Corpus annotation counts are kept only when SOURCE_DATA is selected:
        without it nothing of the corpus shows. Returns self when every pair is kept.
        """
        kept = (self.name_concept_sources & sources) != 0
        if kept.all() and (sources & SOURCE_DATA or not self.name_concept_counts.any()):
            return self, numpy.arange(self.n_names)
        owners = numpy.repeat(numpy.arange(self.n_names), numpy.diff(self.name_concepts_indptr))
        per_name = numpy.bincount(owners[kept], minlength=self.n_names)
        rows = numpy.flatnonzero(per_name)
        indptr = numpy.zeros(len(rows) + 1, dtype=numpy.int64)
        numpy.cumsum(per_name[rows], out=indptr[1:])
        counts = (self.name_concept_counts[kept] if sources & SOURCE_DATA
                  else numpy.zeros(int(kept.sum()), numpy.int32))
        selected = ConceptDictionary(
            self.concept_ids, StringTable.from_strings(self.names[int(n)] for n in rows),
            indptr, self.name_concepts[kept], self.types, self.definitions, counts,
            self.name_concept_sources[kept])
        selected.canonical_names = self.canonical_names
        return selected, rows

    # Access -----------------------------------------------------------------

    @property
    def n_concepts(self) -> int:
        """Number of concepts; concept indices run from 0 to n_concepts - 1."""
        return len(self.concept_ids)

    @property
    def n_names(self) -> int:
        """Number of distinct names (a name shared by several concepts counts once);
        the index's name ids are positions in `names`."""
        return len(self.names)

    def __len__(self) -> int:
        return self.n_concepts

    def primary_id(self, concept: int) -> str:
        """The concept's first id, the one a link reports."""
        return self.concept_ids[concept].split(ID_SEPARATOR, 1)[0]

    def ids_of(self, concept: int) -> Tuple[str, ...]:
        """All of the concept's ids, primary first (MEDIC's `C567755|613097` gives two)."""
        return tuple(self.concept_ids[concept].split(ID_SEPARATOR))

    def concepts_of_name(self, name_index: int) -> numpy.ndarray:
        """Indices of the concepts that hold name `name_index` (several for an ambiguous
        name). A view into the name -> concept arrays, not a copy: do not modify it."""
        start, end = self.name_concepts_indptr[name_index], self.name_concepts_indptr[name_index + 1]
        return self.name_concepts[start:end]

    def concept_index(self, concept_id: str) -> Optional[int]:
        """The concept holding `concept_id` as its primary or an alternative id (the first
        such concept). The first call hashes every id once into a sorted array."""
        if self._id_lookup is None:
            hashes, owners = array("q"), array("q")
            for c, ids in enumerate(self.concept_ids):
                for i in ids.split(ID_SEPARATOR):
                    hashes.append(hash(i))
                    owners.append(c)
            hashes = numpy.frombuffer(hashes, dtype=numpy.int64)
            owners = numpy.frombuffer(owners, dtype=numpy.int64)
            order = numpy.lexsort((owners, hashes))  # equal hashes: lower concept first
            self._id_lookup = (hashes[order], owners[order])
        concept_id = concept_id.strip()
        hashes, owners = self._id_lookup
        key = hash(concept_id)
        lo = int(numpy.searchsorted(hashes, key, side="left"))
        hi = int(numpy.searchsorted(hashes, key, side="right"))
        for c in owners[lo:hi].tolist():  # a hash collision is checked against the ids
            if concept_id in self.ids_of(c):
                return c
        return None

    def names_of(self, concept: int) -> List[str]:
        """The concept's names, in name-id order. The first call builds the concept -> names
        map (two arrays) in one pass over all names."""
        if self._names_by_concept is None:
            owners = numpy.repeat(numpy.arange(self.n_names), numpy.diff(self.name_concepts_indptr))
            order = numpy.argsort(self.name_concepts, kind="stable")  # name order kept
            indptr = numpy.zeros(self.n_concepts + 1, dtype=numpy.int64)
            numpy.cumsum(numpy.bincount(self.name_concepts, minlength=self.n_concepts),
                         out=indptr[1:])
            self._names_by_concept = (indptr, owners[order])
        indptr, names = self._names_by_concept
        if not 0 <= concept < self.n_concepts:
            return []
        return [self.names[n] for n in names[indptr[concept]:indptr[concept + 1]].tolist()]

    def canonical_name(self, concept: int) -> str:
        """The concept's canonical name: the first name its reader gave (UMLS: the
        preferred string; OBO: the term's name). Dictionaries built without
        load_dictionary fall back to its earliest-listed name."""
        if self.canonical_names is not None:
            return self.canonical_names[concept]
        names = self.names_of(concept)
        return names[0] if names else ""

    def types_of(self, concept: int) -> Tuple[str, ...]:
        """The concept's types (UMLS TUIs, or what the dictionary file gave), stored
        joined by "|" in the `types` table."""
        if self.types is None:
            return ()
        return tuple(t for t in self.types[concept].split(ID_SEPARATOR) if t)

    def iter_concepts(self) -> Iterator[Concept]:
        """Each concept as a Concept (ids, names, type, definition), in index order. It builds
        Python strings for every name, so use it for export, not on a hot path."""
        for c in range(self.n_concepts):
            yield Concept(self.ids_of(c), self.names_of(c),
                          self.types[c] if self.types is not None else "",
                          self.definitions[c] if self.definitions is not None else "")

    def shared_name_positions(self) -> numpy.ndarray:
        """The positions of the names that belong to more than one concept."""
        return numpy.flatnonzero(numpy.diff(self.name_concepts_indptr) > 1)

    def shared_names(self) -> List[Tuple[str, List[str]]]:
        """Names that belong to more than one concept, with those concepts' ids."""
        return self.shared_names_at(self.shared_name_positions())

    def shared_names_at(self, positions: Iterable[int]) -> List[Tuple[str, List[str]]]:
        """(name, its concepts' ids) for the names at `positions`."""
        return [(self.names[int(n)], [self.primary_id(int(c)) for c in self.concepts_of_name(int(n))])
                for n in positions]

    # Serialization ----------------------------------------------------------

    _TABLES = ("concept_ids", "names", "types", "definitions")
    # Per-concept tables that are optional and set apart from the constructor.
    _EXTRA_TABLES = ("canonical_names",)

    def to_state(self) -> Tuple[dict, Dict[str, numpy.ndarray]]:
        """(meta, arrays) for to_disk and to_bytes: the flat arrays, not copied, and the
        sizes that from_state checks against."""
        arrays = {"name_concepts.indptr": self.name_concepts_indptr,
                  "name_concepts": self.name_concepts,
                  "name_concept_counts": self.name_concept_counts,
                  "name_concept_sources": self.name_concept_sources}
        for stem in self._TABLES + self._EXTRA_TABLES:
            table = getattr(self, stem)
            if table is not None:
                arrays[f"{stem}.blob"] = table.blob
                arrays[f"{stem}.offsets"] = table.offsets
        return {"n_concepts": self.n_concepts, "n_names": self.n_names}, arrays

    @classmethod
    def from_state(cls, meta: dict, arrays: Dict[str, numpy.ndarray], *, where: str = "<bytes>"
                   ) -> "ConceptDictionary":
        """Rebuild a dictionary from to_state's output. Raises BioLinkError E104 (naming
        `where`) when arrays are missing or their sizes disagree."""
        try:
            tables = {stem: StringTable(arrays[f"{stem}.blob"], arrays[f"{stem}.offsets"])
                      if f"{stem}.blob" in arrays else None for stem in cls._TABLES}
            dictionary = cls(tables["concept_ids"], tables["names"],
                             arrays["name_concepts.indptr"], arrays["name_concepts"],
                             tables["types"], tables["definitions"],
                             arrays["name_concept_counts"],
                             # Saved before sources were kept: all ontology.
                             arrays.get("name_concept_sources"))
            for stem in cls._EXTRA_TABLES:
                if f"{stem}.blob" in arrays:
                    tables[stem] = StringTable(arrays[f"{stem}.blob"], arrays[f"{stem}.offsets"])
                    setattr(dictionary, stem, tables[stem])
            problems = [stem for stem, t in tables.items()
                        if t is not None and (len(t.offsets) == 0 or t.offsets[-1] != len(t.blob))]
            problems += [stem for stem in cls._EXTRA_TABLES
                         if tables.get(stem) is not None and len(tables[stem]) != dictionary.n_concepts]
            if (dictionary.n_concepts != meta["n_concepts"] or dictionary.n_names != meta["n_names"]
                    or len(dictionary.name_concepts_indptr) != dictionary.n_names + 1
                    or dictionary.name_concepts_indptr[-1] != len(dictionary.name_concepts)
                    or len(dictionary.name_concept_counts) != len(dictionary.name_concepts)
                    or len(dictionary.name_concept_sources) != len(dictionary.name_concepts)):
                problems.append("name/concept tables")
        except (KeyError, TypeError, AttributeError) as err:
            raise BioLinkError(Errors.E104.format(path=where, reason=f"dictionary lacks {err}")) from None
        if problems:
            raise BioLinkError(Errors.E104.format(
                path=where, reason=f"dictionary tables disagree in size ({', '.join(problems)})"))
        return dictionary

    def to_disk(self, path, exclude=tuple()) -> None:
        """Save as .npy files and meta.json in the directory `path` (no pickle). `exclude`
        exists for spaCy's serialization API and is ignored."""
        meta, arrays = self.to_state()
        write_arrays(path, arrays, meta)

    @classmethod
    def from_disk(cls, path, exclude=tuple()) -> "ConceptDictionary":
        """Load what to_disk saved, every array memory-mapped (read-only): a 10M-name
        dictionary loads without reading it, and processes that load one pipeline share its
        pages. A missing or damaged directory raises BioLinkError E104."""
        try:
            meta, arrays = read_arrays(path, mmap=True)
        except (OSError, ValueError, KeyError) as err:
            raise BioLinkError(Errors.E104.format(path=path, reason=f"dictionary: {err}")) from None
        return cls.from_state(meta, arrays, where=str(path))

    def to_bytes(self) -> bytes:
        """The whole dictionary as msgpack bytes, for spaCy's to_bytes."""
        meta, arrays = self.to_state()
        return srsly.msgpack_dumps({"meta": meta, "arrays": arrays})

    @classmethod
    def from_bytes(cls, data: bytes) -> "ConceptDictionary":
        """Inverse of to_bytes. Tables whose sizes disagree raise BioLinkError E104."""
        msg = srsly.msgpack_loads(data)
        return cls.from_state(msg["meta"], msg["arrays"])

    def __repr__(self) -> str:
        return f"<ConceptDictionary: {self.n_concepts} concepts, {self.n_names} names>"
