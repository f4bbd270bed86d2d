"""Assembling a linking pipeline from a config and a dictionary file (init-linker)."""
import copy
import json
import logging
import warnings
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from spacy import util
from spacy.language import Language
from thinc.api import Config

from ..encoders.settings import keeping_config_settings
from ..errors import BioLinkError, Errors, Warnings
from ..io.files import check_output_path, clean_leftovers, save_pipeline
from ..io.util import PathLike
from .settings import chosen_settings

logger = logging.getLogger(__name__)

DEFAULT_PIPELINE_CONFIG = """
[paths]
dictionary = null
spelling_map = null

[system]
seed = 0

[nlp]
lang = "en"
pipeline = ["bio_linker"]

[components]

[components.bio_linker]
factory = "bio_linker"
# the settings chosen on dev (linker/settings.py)
@CHOSEN@
[initialize]

[initialize.components]

[initialize.components.bio_linker]
spelling_map = ${paths.spelling_map}
augment = []
augment_short_forms = true

[initialize.components.bio_linker.dictionary]
@misc = "spacy-biolink.load_dictionary.v4"
path = ${paths.dictionary}
format = null
languages = null
sources = null
suppressed = null
semantic_types = null
synonym_scopes = null
xref_prefixes = null
code_sources = null
""".replace("@CHOSEN@", "".join(f"{key} = {json.dumps(value)}\n"
                                for key, value in chosen_settings().items()))

# init_linker's dictionary filters: keys of the dictionary loader (load_dictionary.v4).
DICTIONARY_FILTERS = ("languages", "sources", "suppressed", "semantic_types",
                      "synonym_scopes", "xref_prefixes", "code_sources", "mesh_branches",
                      "mesh_supplementary")
# Filters that take a list: one value given alone becomes a list of one.
LIST_FILTERS = ("mesh_branches", "mesh_supplementary")
DICTIONARY_LOADER = "spacy-biolink.load_dictionary.v4"


def load_pipeline_config(config_path: Optional[PathLike] = None,
                         overrides: Optional[Dict] = None, *,
                         user_overrides: Optional[Dict] = None) -> Config:
    """The pipeline config, filled with every component default, then overridden.

    Filling first lets dotted overrides reach settings the file leaves to the factory
    defaults (e.g. components.bio_linker.encoder.analyzer with the default config), and
    lets `user_overrides` (the command line's) be checked: a key the filled config does
    not have is a misspelling (E460), not a new setting.
    """
    import configparser

    from catalogue import RegistryError

    from ..io.config_overrides import check_overrides
    from ..io.files import read_config

    if config_path is None:
        config = Config().from_str(DEFAULT_PIPELINE_CONFIG, interpolate=False)
    else:
        config = read_config(config_path, interpolate=False)
    try:
        filled = util.load_model_from_config(config, auto_fill=True, validate=False).config
    except (configparser.Error, RegistryError) as err:
        # an interpolation loop (${paths.x} in paths.x), an unknown registered function
        raise BioLinkError(Errors.E192.format(where=config_path or "the default config",
                                              reason=" ".join(str(err).split()))) from None
    check_overrides(user_overrides or {}, filled)
    return Config().from_str(filled.to_str(), overrides=overrides or {}, interpolate=False)


INDEX_PREFIX = "components.bio_linker.index."
# The index block the trainers write into a dense encoder's encoder.cfg.
TRAINED_FLAT_INDEX = {"@misc": "spacy-biolink.FaissIndex.v1", "kind": "flat"}


def _index_block(base: Dict, overrides: Optional[Dict]) -> Dict:
    """The index block (the encoder's, e.g. flat faiss for a dense encoder, else the
    config's) with the caller's components.bio_linker.index.* overrides on top: an
    approximate index (kind = "hnsw") for speed. Dotted keys reach nested blocks
    (index.dense.kind); naming another function (index.@misc) starts from an empty
    block, since the base's settings belong to the index it replaces."""
    given = {key[len(INDEX_PREFIX):]: value for key, value in (overrides or {}).items()
             if key.startswith(INDEX_PREFIX)}
    block = copy.deepcopy(dict(base))
    if "@misc" in given and given["@misc"] != block.get("@misc"):
        block = {}
    return _with_dotted(block, given)


def _with_dotted(block: Dict, given: Dict) -> Dict:
    """`block` with each dotted key of `given` (dense.kind) set in its nested blocks."""
    for dotted, value in given.items():
        *parents, leaf = dotted.split(".")
        node = block
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return block


ENCODER_PREFIX = "components.bio_linker.encoder."


def _encoder_block(block: Dict, overrides: Optional[Dict]) -> Dict:
    """A saved encoder's [model] block with the caller's components.bio_linker.encoder.*
    overrides on top (e.g. a hybrid's sparse_weight), each checked against that block,
    its defaults filled in, rather than against the default TF-IDF encoder's (E460)."""
    from ..io.config_overrides import check_overrides

    given = {key: value for key, value in (overrides or {}).items()
             if key.startswith(ENCODER_PREFIX)}
    if not given:
        return block
    filled = util.registry.fill({"model": block}, validate=False)["model"]
    check_overrides(given, {"components": {"bio_linker": {"encoder": filled}}})
    return _with_dotted(copy.deepcopy(dict(block)),
                        {key[len(ENCODER_PREFIX):]: value for key, value in given.items()})


def _check_filter_keys(filters: Optional[Dict]) -> None:
    """E050 for a key of `filters` that is not one of the readers' filters."""
    for key, value in (filters or {}).items():
        if key not in DICTIONARY_FILTERS:
            raise BioLinkError(Errors.E050.format(key=key, value=value,
                                                  what=f"one of {', '.join(DICTIONARY_FILTERS)}"))


def dictionary_block(base: Dict, *, format: Optional[str] = None,
                     filters: Optional[Dict] = None, on_bad_line: str = "error",
                     extend: Sequence[PathLike] = (), extend_format: Optional[str] = None,
                     extend_filters: Optional[Dict] = None) -> Dict:
    """The dictionary loader block init-linker writes ([initialize.components.bio_linker.
    dictionary]): the current loader (load_dictionary.v4) with the settings of the
    config's own block `base` (whichever loader version it names: every older loader's
    keys are v4's), then `format`, the readers' `filters` and `on_bad_line` where given.
    With `extend`, that loader is the base of an extended_dictionary.v1 block whose
    extensions read each path of `extend` the same way."""
    def loader(settings: Dict, given: Optional[Dict], fmt: Optional[str]) -> Dict:
        block = {"@misc": DICTIONARY_LOADER, **{key: value for key, value in settings.items()
                                                if key != "@misc"}}
        if fmt is not None or "format" not in block:
            block["format"] = fmt
        if on_bad_line != "error":
            block["on_bad_line"] = on_bad_line
        for key, value in (given or {}).items():
            if value is not None and key in LIST_FILTERS:
                value = [value] if isinstance(value, str) else list(value)
            if value is not None:
                block[key] = value
        return block

    block = loader(dict(base), filters, format)
    if not extend:
        return block
    # --on-bad-line is the run's rule for every dictionary it reads
    extensions = {f"extension_{number}": loader({"path": str(path)}, extend_filters,
                                                extend_format)
                  for number, path in enumerate(extend, 1)}
    return {"@misc": "spacy-biolink.extended_dictionary.v1", "base": block,
            "extensions": extensions}


def encoder_blocks(encoder: PathLike, linker: Dict, overrides: Optional[Dict]) -> Dict:
    """What a trained encoder directory (`train --output DIR`) fills in
    [components.bio_linker]: its [model] block as the encoder and its index block (with
    the caller's encoder and index overrides on top), the folding it was trained with, and
    the settings chosen on TF-IDF cosines (prior_weight, corpus_margin, threshold) set to
    0 where the caller did not give them: its scores have their own scale."""
    from ..encoders.saved import read_encoder_config, read_encoder_normalizer

    given = set(overrides or {})
    model_config, encoder_index, _ = read_encoder_config(encoder)
    index_config = linker["index"] if encoder_index is None else encoder_index
    if encoder_index is not None and dict(encoder_index) == TRAINED_FLAT_INDEX and \
            not any(key.startswith(INDEX_PREFIX) for key in given):
        # The exact index the trainers save searches every name (8 queries/s at 8M
        # names, BENCHMARKS.md): AutoFaissIndex.v1 is that same flat search below
        # 1,000,000 names and IVF-SQ8 above. An index setting of the caller's keeps
        # the encoder's own block (index.kind = "hnsw" applies to it).
        index_config = {"@misc": "spacy-biolink.AutoFaissIndex.v1"}
    # Query with the folding the encoder was trained on, unless told otherwise.
    prefix = "components.bio_linker.normalizer."
    normalizer = {**linker["normalizer"],
                  **{key: value for key, value in read_encoder_normalizer(encoder).items()
                     if prefix + key not in given}}
    # The annotation prior's weight, the corpus margin and the NIL threshold were chosen
    # on TF-IDF cosines; a trained encoder's dev scores were taken without them, and
    # benchmarks/nil_threshold.py picks a threshold on dev for this encoder.
    untuned = {key: 0.0 for key in ("prior_weight", "corpus_margin", "threshold")
               if f"components.bio_linker.{key}" not in given}
    return {"encoder": _encoder_block(model_config, overrides),
            "index": _index_block(index_config, overrides), "normalizer": normalizer,
            **untuned}


def stage_blocks(*, verifier: Optional[PathLike] = None, verifier_mode: str = "nil",
                 verifier_threshold: Optional[float] = None,
                 reranker: Optional[PathLike] = None) -> Tuple[Dict, Dict[str, str]]:
    """The [components.bio_linker.stages.*] blocks of trained stages (their settings and
    [model] block, checked as a received model's) and the trained directories
    [initialize.components.bio_linker.stages] reads their weights from, so config.cfg
    says what the linker runs."""
    from ..io.safe_models import check_model_config

    blocks: Dict[str, Dict] = {}
    trained: Dict[str, str] = {}
    if verifier is not None:
        from .stages.verifier import trained_settings

        model_config, stage = trained_settings(verifier, mode=verifier_mode,
                                               threshold=verifier_threshold)
        blocks["verifier"] = {"@misc": "spacy-biolink.SiameseVerifierStage.v1", **stage,
                              "model": model_config}
        trained["verifier"] = str(verifier)
    if reranker is not None:
        from .stages.learned_reranker import is_learned_reranker_dir, stage_block

        if is_learned_reranker_dir(reranker):
            blocks["reranker"] = stage_block(reranker)
        else:
            from .stages.reranker import trained_settings as reranker_settings

            model_config, stage = reranker_settings(reranker)
            blocks["reranker"] = {"@misc": "spacy-biolink.CrossEncoderRerankerStage.v1",
                                  **stage, "model": model_config}
        trained["reranker"] = str(reranker)
    for name, path in trained.items():
        if "model" in blocks[name]:
            role = "verifier" if name == "verifier" else "reranker"
            check_model_config(blocks[name]["model"], role=role, where=f"{path} [model]")
    return blocks, trained


def init_linker(output_dir: Optional[PathLike], dictionary: PathLike, *,
                format: Optional[str] = None, config_path: Optional[PathLike] = None,
                augment: Sequence[PathLike] = (), spelling_map: Optional[PathLike] = None,
                encoder: Optional[PathLike] = None, overrides: Optional[Dict] = None,
                force: bool = False, verifier: Optional[PathLike] = None,
                verifier_mode: str = "nil", verifier_threshold: Optional[float] = None,
                dictionary_filters: Optional[Dict] = None,
                reranker: Optional[PathLike] = None, on_bad_line: str = "error",
                extend: Sequence[PathLike] = (), extend_format: Optional[str] = None,
                extend_filters: Optional[Dict] = None,
                augment_new_concepts: Sequence[str] = (), augment_replaced_ids: bool = False,
                augment_exclude_pmids: Optional[PathLike] = None) -> Language:
    """Build a pipeline with bio_linker over `dictionary` and save it to `output_dir`.

    augment: PubTator corpora whose gold mentions join the dictionary (train, or
        train + dev when the test set is what will be evaluated).
    augment_new_concepts: corpus mention types (e.g. ["Chemical"]) of `augment` whose
        ids the dictionary lacks become concepts of their own, named by their mentions
        (linker/augment.py), instead of being skipped.
    augment_replaced_ids: with augment_new_concepts, such an id whose mentions name one
        concept of the dictionary becomes its alternative id (an id the vocabulary
        replaced) instead of a concept of its own.
    augment_exclude_pmids: a file of PMIDs, or a corpus, whose documents `augment`'s
        corpora leave out (the documents the linker will be measured on).
    spelling_map: a `wrong||right` file of mention typos (NCBI-disease ships one).
    encoder: a trained encoder directory (`python -m spacy_biolink train --output DIR`);
        its architecture and index blocks replace the config's, its weights are loaded.
    verifier, reranker: a trained verifier (`train configs/siamese.cfg`) or reranker
        (`train configs/reranker.cfg`) directory, added as the stage of that name: its
        [model] block and settings go into [components.bio_linker.stages.NAME], its
        weights are read at initialize. With a reranker the linker's scores become its
        calibrated probabilities, so the threshold is 0 (no NIL, said in the log) unless
        components.bio_linker.threshold is given.

    on_bad_line: "skip" leaves malformed dictionary lines out (counted, the first few
        named, W953) instead of stopping at the first, in `dictionary` and in each of
        `extend`.

    dictionary_filters: the readers' filters (languages, sources, suppressed,
        semantic_types, synonym_scopes, xref_prefixes, mesh_branches, mesh_supplementary;
        see load_dictionary); None values keep the config's setting, or the reader's
        default.

    extend: dictionaries whose concepts extend `dictionary`'s, read as `extend_format`
        (inferred when None) with `extend_filters` (load_dictionary.v4's, e.g.
        {"mesh_branches": ["C", "F03"]}): a concept sharing an id with one of
        `dictionary`'s adds its names to it, one sharing none joins (kb/extend.py). The
        loader becomes spacy-biolink.extended_dictionary.v1 around the one built above.

    The directory appears complete or not at all: it is written beside its target and
    renamed into place.
    """
    from .stages.verifier import MODES

    if verifier_mode not in MODES:  # before anything is read, with or without --verifier
        raise BioLinkError(Errors.E704.format(value=verifier_mode, options=", ".join(MODES)))
    from ..kb.readers.lines import BadLines

    BadLines(dictionary, on_bad_line)  # a bad value is refused before anything is read
    if output_dir is not None:
        output_dir = check_output_path(output_dir, kind="dir", what="the pipeline",
                                       force=force)
        report_leftover_temp_dirs(output_dir)
    settings = {"paths.dictionary": str(dictionary),
                "initialize.components.bio_linker.dictionary.format": format}
    if augment:
        settings["initialize.components.bio_linker.augment"] = [str(p) for p in augment]
    if spelling_map is not None:
        settings["paths.spelling_map"] = str(spelling_map)
    _check_filter_keys(dictionary_filters)
    _check_filter_keys(extend_filters)
    settings.update(overrides or {})
    # Index overrides are applied by _index_block, over the encoder's index block where
    # it brings one: they may name sections the config lacks (index.dense.kind). With
    # --encoder DIR, encoder overrides go onto DIR's [model] block (_encoder_block).
    set_apart = (INDEX_PREFIX,) + ((ENCODER_PREFIX,) if encoder is not None else ())
    settings = {key: value for key, value in settings.items() if not key.startswith(set_apart)}
    config = load_pipeline_config(
        config_path, settings,
        user_overrides={k: v for k, v in (overrides or {}).items() if not k.startswith(set_apart)})
    linker = config["components"]["bio_linker"]
    initialize = config["initialize"]["components"]["bio_linker"]
    initialize["dictionary"] = dictionary_block(
        initialize["dictionary"], format=format, filters=dictionary_filters,
        on_bad_line=on_bad_line, extend=extend, extend_format=extend_format,
        extend_filters=extend_filters)
    if augment_new_concepts:
        initialize["augment_new_concepts"] = list(augment_new_concepts)
    if augment_replaced_ids:
        initialize["augment_replaced_ids"] = True
    if augment_exclude_pmids is not None:
        initialize["augment_exclude_pmids"] = str(augment_exclude_pmids)
    given = set(overrides or {})
    torch_free = None
    if encoder is not None:
        from ..encoders.fast_numpy import torch_free_block

        linker.update(encoder_blocks(encoder, linker, overrides))
        # A trained fast encoder links without torch: its numpy twin, weights copied below.
        torch_free = torch_free_block(linker["encoder"])
        if torch_free is not None:
            linker["encoder"] = torch_free
    else:
        linker["index"] = _index_block(linker["index"], overrides)
    stages, trained_stages = stage_blocks(verifier=verifier, verifier_mode=verifier_mode,
                                          verifier_threshold=verifier_threshold,
                                          reranker=reranker)
    linker["stages"].update(stages)
    if trained_stages:
        initialize["stages"] = trained_stages
    if reranker is not None and "components.bio_linker.threshold" not in given:
        # The config's threshold was chosen for the retriever's scores, not for the
        # reranker's probabilities.
        logger.warning("init-linker: threshold %s was chosen for the retriever's scores, not "
                       "for the reranker's probabilities: set to 0 (no NIL by score). Give "
                       "--components.bio_linker.threshold to choose one.", linker["threshold"])
        linker["threshold"] = 0.0
    nlp = util.load_model_from_config(config, auto_fill=True, validate=True)
    if encoder is not None:
        from ..encoders.saved import MODEL_FILE

        try:
            # The config's encoder settings (DIR/encoder.cfg's) are the ones used: the
            # index is built after, from them.
            model = nlp.get_pipe("bio_linker").model
            if torch_free is not None:
                from ..encoders.fast_numpy import copy_weights
                from ..encoders.saved import load_encoder

                copy_weights(load_encoder(encoder)[0], model)
            else:
                with keeping_config_settings(model, where=str(Path(encoder) / MODEL_FILE)):
                    model.from_bytes((Path(encoder) / MODEL_FILE).read_bytes())
        except BioLinkError:
            raise
        except (ValueError, KeyError, OSError) as err:
            raise BioLinkError(Errors.E501.format(path=encoder, reason=f"model: {err}")) from None
    nlp.initialize()
    if output_dir is not None:
        save_pipeline(nlp, output_dir)
    return nlp


def report_leftover_temp_dirs(output_dir: PathLike) -> List[Path]:
    """Remove what killed runs of this host left beside `output_dir`, then warn about
    the temp directories that remain (atomic_directory's .NAME.*.tmp, of live runs, other
    hosts or older versions): they may be large. Those are not deleted, since another run
    may be writing one now. Returns them."""
    output_dir = Path(output_dir)
    clean_leftovers(output_dir)
    leftovers = sorted(output_dir.parent.glob(f".{output_dir.name}.*.tmp"))
    if leftovers:
        warnings.warn(Warnings.W011.format(n=len(leftovers), path=output_dir,
                                           paths=", ".join(str(p) for p in leftovers)))
    return leftovers


# What spacy.load raises on a damaged or replaced file (msgpack's ExtraData is a
# ValueError; numpy's "no data left" an EOFError; a replaced meta.json a KeyError).
_LOAD_ERRORS = (ValueError, TypeError, KeyError, IndexError, AttributeError, EOFError,
                OSError, UnicodeDecodeError)


def load_linker_pipeline(path: PathLike, config: Optional[Dict] = None) -> Language:
    """spacy.load (with `config` overrides, if any) with an error that says what is wrong
    with a bad model directory: a damaged spaCy-owned file (config.cfg, meta.json,
    tokenizer, a file of vocab/) is named (E190), an invalid config explained (E192),
    anything else that stops the load reported with its reason (E191). A save killed
    between its two renames (only where the system cannot swap directories atomically)
    left the old pipeline as .NAME.old: it is loaded, with a warning."""
    import configparser

    import spacy
    from catalogue import RegistryError
    from confection import ConfigValidationError

    path = Path(path)
    backup = path.with_name(f".{path.name}.old")
    if not path.exists() and path.name and (backup / "config.cfg").is_file():
        warnings.warn(Warnings.W010.format(path=path, backup=backup))
        path = backup
    if not path.is_dir():
        raise BioLinkError(Errors.E401.format(path=path, reason="no such directory"))
    if not (path / "config.cfg").is_file():
        raise BioLinkError(Errors.E401.format(path=path, reason="no config.cfg"))
    check_pipeline_config(path / "config.cfg")
    from ..io.safe_models import check_saved_transformers

    check_saved_transformers(path)
    try:
        return spacy.load(path, config=config or {})
    except BioLinkError:
        raise
    except (configparser.Error, RegistryError, ConfigValidationError) as err:
        raise BioLinkError(Errors.E192.format(where=path / "config.cfg",
                                              reason=" ".join(str(err).split()))) from None
    except ImportError as err:
        # An edited [nlp.tokenizer] (spacy.ja.JapaneseTokenizer without SudachiPy)
        reason = " ".join(f"{type(err).__name__}: {err}".split())
        tokenizer = _configured_tokenizer(path / "config.cfg")
        if tokenizer is None:
            raise BioLinkError(Errors.E191.format(path=path, reason=reason)) from None
        package = err.name or _pip_install_hint(str(err))
        raise BioLinkError(Errors.E198.format(
            config=path / "config.cfg", reason=reason,
            what=f"[nlp.tokenizer] @tokenizers = {tokenizer!r}",
            install=f" (`pip install {package}`)" if package else "")) from None
    except _LOAD_ERRORS as err:
        damaged = find_damaged_pipeline_file(path)
        if damaged is not None:
            raise BioLinkError(Errors.E190.format(path=path, file=damaged[0],
                                                  reason=damaged[1])) from None
        reason = " ".join(f"{type(err).__name__}: {err}".split())
        foreign = _foreign_component_at_fault(path, err)
        if foreign is not None:
            name, factory, what = foreign
            if len(reason) > 300:  # spaCy's E002 lists every factory
                reason = reason[:reason.find(". ") + 1 or 300]
            raise BioLinkError(Errors.E197.format(
                path=path, name=name, factory=factory, what=what, reason=reason,
                file=path / name)) from None
        raise BioLinkError(Errors.E191.format(path=path, reason=reason)) from None


# The factories of spacy-biolink's own components: a load failing in any other is not ours.
_OWN_FACTORIES = ("bio_linker", "bio_drop_nil", "bio_propagate", "bio_gazetteer",
                  "bio_term_ruler")


def _pipeline_config(config_path: Path) -> Optional[Dict]:
    try:
        return util.load_config(config_path, interpolate=False)
    except Exception:  # noqa: BLE001 - an unreadable config was reported by spacy.load
        return None


def _configured_tokenizer(config_path: Path) -> Optional[str]:
    """The @tokenizers the config names, when it is not spaCy's default one."""
    config = _pipeline_config(config_path) or {}
    name = ((config.get("nlp") or {}).get("tokenizer") or {}).get("@tokenizers")
    return None if name in (None, "spacy.Tokenizer.v1") else str(name)


def _pip_install_hint(message: str) -> str:
    """The packages of a `pip install ...` an ImportError's message names, if any."""
    import re

    found = re.search(r"pip install ([\w\-\[\]. ]+?)`", message)
    return found.group(1).strip() if found else ""


def _foreign_component_at_fault(path: Path, err: BaseException
                                ) -> Optional[Tuple[str, str, str]]:
    """(name, factory, what failed) when the load failed in a component whose factory
    is not spacy-biolink's: reading its saved state (the component spaCy's from_disk was
    reading when `err` was raised), or creating it (no installed package registers its
    factory). None otherwise."""
    config = _pipeline_config(path / "config.cfg")
    if config is None:
        return None
    blocks = config.get("components") or {}
    factories = {name: str(block.get("factory")) for name, block in blocks.items()
                 if isinstance(block, dict) and "factory" in block}
    reading = None
    tb = err.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_name == "from_disk" and code.co_filename.endswith(
                str(Path("spacy") / "util.py")):
            reading = tb.tb_frame.f_locals.get("key")
            break
        tb = tb.tb_next
    if reading in factories and factories[reading] not in _OWN_FACTORIES:
        return reading, factories[reading], f"cannot read its saved state in {path / reading}"
    try:
        lang = util.get_lang_class(str(config["nlp"]["lang"]))
    except Exception:  # noqa: BLE001 - a bad lang was reported by spacy.load
        return None
    for name, factory in factories.items():
        if factory not in _OWN_FACTORIES and not lang.has_factory(factory):
            return name, factory, "names a factory that no installed package registers"
    return None


# The files spaCy itself writes into a pipeline directory, each with how it is read.
_SPACY_FILES = (("config.cfg", "config"), ("meta.json", "meta"), ("tokenizer", "msgpack"),
                ("vocab/strings.json", "strings"), ("vocab/vectors.cfg", "json_object"),
                ("vocab/lookups.bin", "msgpack"), ("vocab/key2row", "msgpack"),
                ("vocab/vectors", "npy"))


def find_damaged_pipeline_file(path: PathLike) -> Optional[Tuple[Path, str]]:
    """(file, what is wrong) for the first of spaCy's own files in the pipeline at `path`
    that cannot be read as spaCy reads it, or None when they all can."""
    import numpy
    import srsly

    for name, kind in _SPACY_FILES:
        file = Path(path) / name
        if not file.exists():
            continue
        try:
            if kind == "config":
                Config().from_str(file.read_bytes().decode("utf8"), interpolate=False)
                continue
            if kind == "npy":
                numpy.load(file, allow_pickle=False)
                continue
            data = file.read_bytes()
            if not data:
                return file, "it is empty"
            value = srsly.msgpack_loads(data) if kind == "msgpack" else srsly.json_loads(data)
        except UnicodeDecodeError:
            return file, "not UTF-8 text"
        except Exception as err:  # noqa: BLE001 - each reader has its own errors
            return file, " ".join(f"{type(err).__name__}: {err}".split()) or type(err).__name__
        expected = {"meta": dict, "json_object": dict, "strings": list}.get(kind)
        if expected is not None and not isinstance(value, expected):
            return file, f"a JSON {type(value).__name__} where a JSON " \
                         f"{'object' if expected is dict else 'array'} belongs"
        if kind == "meta" and not isinstance(value.get("lang"), str):
            return file, "no \"lang\" setting"
    return None


def check_pipeline_config(config_path: PathLike) -> None:
    """Refuse a pipeline config whose bio_linker names an architecture that is not one of
    spacy-biolink's (safe_models.py), with its registered name. spacy.load alone refuses
    it too, but can only name the layer it built."""
    from ..io.safe_models import check_model_config

    try:
        config = util.load_config(config_path, interpolate=False)
    except Exception:  # a config spaCy cannot read: spacy.load says why
        return
    for name, block in config.get("components", {}).items():
        if not isinstance(block, dict) or block.get("factory") != "bio_linker":
            continue
        if "encoder" in block:
            check_model_config(block["encoder"], role="encoder",
                               where=f"{config_path} [components.{name}.encoder]")
        for stage_name, stage in (block.get("stages") or {}).items():
            if isinstance(stage, dict) and isinstance(stage.get("model"), dict):
                role = "reranker" if "Reranker" in str(stage.get("@misc")) else "verifier"
                check_model_config(stage["model"], role=role,
                                   where=f"{config_path} [components.{name}.stages.{stage_name}.model]")
