"""One pipeline from a trained NER and a saved linker: entities found, then linked.

bio_linker links spans already in doc.ents, so on raw text it needs an NER before it.
The two are trained apart (`spacy train configs/ner.cfg`, `init-linker`), and joined here
by sourcing the linker, weights, dictionary and index, into the NER pipeline.
"""
import logging

from spacy.language import Language

from ..errors import BioLinkError, Errors
from ..io.files import atomic_directory, check_output_path
from ..runners.local import entity_setting_pipes
from .pipeline import load_linker_pipeline, report_leftover_temp_dirs
from ..io.util import PathLike

logger = logging.getLogger(__name__)

LINKER = "bio_linker"


def assemble_pipeline(ner_dir: PathLike, linker_dir: PathLike, output_dir: PathLike, *,
                      force: bool = False) -> Language:
    """Save NER_DIR's pipeline with LINKER_DIR's bio_linker added after it to OUTPUT_DIR.

    The output appears complete or not at all; an existing non-empty OUTPUT_DIR is only
    replaced with force=True. A bio_linker already in the NER pipeline is replaced.
    """
    output_dir = check_output_path(output_dir, kind="dir", what="the joined pipeline",
                                   force=force)
    report_leftover_temp_dirs(output_dir)
    nlp = load_linker_pipeline(ner_dir)
    if not entity_setting_pipes(nlp):
        raise BioLinkError(Errors.E758.format(path=ner_dir, pipes=nlp.pipe_names))
    linker_nlp = load_linker_pipeline(linker_dir)
    if LINKER not in linker_nlp.pipe_names:
        raise BioLinkError(Errors.E402.format(path=linker_dir, pipes=linker_nlp.pipe_names))
    if LINKER in nlp.pipe_names:
        logger.info("%s already has a %s: replacing it with %s's", ner_dir, LINKER, linker_dir)
        nlp.remove_pipe(LINKER)
    nlp.add_pipe(LINKER, source=linker_nlp)
    # Settings the linker's pipeline keeps in its meta (e.g. kb_url_template) travel with it
    if "biolink" in linker_nlp.meta:
        nlp.meta["biolink"] = dict(linker_nlp.meta["biolink"])
    with atomic_directory(output_dir, force=True) as tmp:
        nlp.to_disk(tmp)
    logger.info("Saved %s (pipes: %s) to %s", ner_dir, nlp.pipe_names, output_dir)
    return nlp
