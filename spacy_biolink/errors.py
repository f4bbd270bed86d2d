"""Every user-facing message in one place, with a code, like spaCy's Errors.

Each message says what went wrong, what was passed, and what to do.
"""


class ErrorsWithCodes(type):
    def __getattribute__(self, code):
        msg = super().__getattribute__(code)
        if code.startswith("__"):
            return msg
        return "[{code}] {msg}".format(code=code, msg=msg)


class BioLinkError(ValueError):
    """Raised for bad input that a user can fix (a file, a config value, a model dir)."""


class Errors(metaclass=ErrorsWithCodes):
    # Dictionary reading
    E001 = ("{path}:{line}: malformed {fmt} dictionary line: {reason}. The line was: "
            "{text!r}. Fix or remove that line, or pass the right --format "
            "(medic, biosyn, tsv, jsonl).")
    E002 = ("Dictionary file not found: {path}. Pass an existing file with --dictionary "
            "or the `path` of the dictionary loader.")
    E003 = ("Cannot infer the dictionary format of {path} from its name or first line "
            "({first!r}). Pass --format medic|biosyn|tsv|jsonl.")
    E004 = ("Unknown dictionary format {fmt!r} for {path}. Use one of: {formats}.")
    E005 = ("The dictionary {source} is empty: it holds no concept with a name. A linker "
            "needs at least one named concept; check the file and its --format.")

    # Component
    E101 = ("bio_linker has no dictionary yet. Call nlp.initialize() with "
            "[initialize.components.bio_linker.dictionary] set (e.g. "
            "@misc = \"spacy-biolink.load_dictionary.v1\"), or "
            "nlp.get_pipe(\"bio_linker\").initialize(dictionary=...) before linking.")
    E102 = ("bio_linker: `{key}` must be {what}, got {value!r}.")
    E104 = ("The saved bio_linker at {path} is incomplete or damaged: {reason}. Save the "
            "pipeline again with nlp.to_disk(), or rebuild it with "
            "`python -m spacy_biolink init-linker`.")
    E105 = ("bio_linker.initialize: `dictionary` must be a ConceptDictionary or a "
            "callable returning one, got {type}.")
    E106 = ("{path}:{line}: malformed spelling map line {text!r}: expected `wrong||right` "
            "(or `wrong<TAB>right`). Fix or remove that line.")

    # Encoders and indexes
    E201 = ("The {name} encoder has not been fitted: initialize the pipeline (or call "
            "model.initialize(X=names)) before encoding.")
    E202 = ("Unknown TF-IDF analyzer {value!r}: use 'char', 'char_wb' or 'word'.")
    E203 = ("Invalid ngram_range {value!r}: give [min_n, max_n] with 1 <= min_n <= max_n.")
    E204 = ("Index kind {kind!r} is unknown: use one of {kinds}.")
    E205 = ("The {index} index was given query vectors of width {got}, but it holds vectors "
            "of width {expected}: the encoder and the index are out of step. Rebuild the "
            "index (initialize the pipeline again).")
    E206 = ("The {index} index needs {needs} vectors, but the encoder produced {got}. "
            "Pick an index that matches the encoder (SparseIndex for TF-IDF, FaissIndex "
            "for dense encoders).")
    E207 = ("The {index} index has not been built: initialize the pipeline first.")

    # Corpora
    E301 = ("{path}:{line}: malformed PubTator line: {reason}. The line was: {text!r}. "
            "Each mention line is PMID<TAB>start<TAB>end<TAB>text<TAB>type<TAB>ids; "
            "fix the line or remove it.")
    E302 = ("Corpus file not found: {path}.")
    E303 = ("{path}:{line}: mention {mention!r} at {start}-{end} of document {pmid} does not "
            "match the text there ({found!r}). The offsets are wrong for this text; "
            "the mention is reported, not shifted.")
    E304 = ("The DocBin output {path} must end in .spacy: spaCy's corpus readers skip other "
            "files, so training would find no examples.")
    E305 = ("Gold corpus for end-to-end evaluation not found: {path}. Pass a .spacy file "
            "written by `python -m spacy_biolink convert`, or a list of Docs.")

    # CLI
    E401 = ("Not a saved pipeline directory: {path} ({reason}). Pass the OUTPUT_DIR "
            "written by init-linker or nlp.to_disk().")
    E402 = ("The pipeline at {path} has no bio_linker component (pipes: {pipes}). Add one "
            "with nlp.add_pipe(\"bio_linker\") or build it with init-linker.")
    E403 = ("Output directory {path} exists and is not empty. Pass --force to replace it.")
    E404 = ("report: expected NAME=FILE with an existing metrics JSON file, got {pair!r}. "
            "Example: tfidf=metrics/tfidf_test.json")
    # Trained encoders and training
    E501 = ("Not a trained encoder directory: {path} ({reason}). Pass the --output directory "
            "of `python -m spacy_biolink train`, which holds encoder.cfg and model.")
    E502 = ("Training config {path}: {reason}. See configs/ for complete examples.")
    E503 = ("Training config {path}: [paths] {key} is not set. Pass it on the command line, "
            "e.g. --paths.{key} FILE.")
    E504 = ("{path}: no training mention could be paired with a concept of the dictionary "
            "({stats}). Check that the corpus ids (e.g. MeSH D012345, OMIM:123) are ids of "
            "the dictionary.")

    # Word vectors (E600-E649: word vectors, BNE, CCA+DAN)
    E601 = ("Not a word-vector directory: {path} has no {name}. Pass the OUTPUT of "
            "`python -m spacy_biolink train-vectors`.")
    E602 = ("Word-vector directory {path} is damaged: {words} words but {rows} vectors. "
            "Train the vectors again.")
    E603 = ("Unknown word-vector algorithm {value!r}. Use one of: {options}.")
    E604 = ("No text to train word vectors on: pass PubTator corpora (--corpus) and/or a "
            "dictionary (--dictionary) with at least one word.")


class Warnings(metaclass=ErrorsWithCodes):
    W001 = ("{n} dictionary name(s) belong to more than one concept (e.g. {name!r}: {ids}). "
            "A mention matching such a name gets all its concepts with equal scores, the "
            "one corpus annotations (--augment) gave that name most often first, then in "
            "dictionary order; merge or drop the duplicates if that is not wanted.")
    W002 = ("{n} mention(s) in {path} do not match the text at their offsets (first: "
            "{example}). They are kept with their offsets as given.")
