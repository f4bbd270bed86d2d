"""evaluate, evaluate-e2e, report, and the seed papers' evaluations (eval-synonyms,
eval-relatedness, score-pairs, eval-pairs)."""
import json
from pathlib import Path
from typing import Dict, List, Optional

import typer

from ..errors import BioLinkError, Errors
from ..io.files import atomic_file, check_output_path
from .app import (MAX_COUNT, MAX_SEED, app, check_range, corpus_filters,
                  fail_cleanly, msg, parse_ks, write_output)


@app.command("evaluate")
@fail_cleanly
def evaluate_cli(
    model_dir: Path = typer.Argument(..., help="Saved pipeline with bio_linker"),
    corpus: Path = typer.Argument(..., help="PubTator corpus (.gz ok)"),
    types: Optional[str] = typer.Option(None, "--types", help="Comma-separated mention types"),
    pmids: Optional[Path] = typer.Option(None, "--pmids", help="File of PMIDs to keep, one a line"),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write metrics JSON here"),
    ks: str = typer.Option("1,2,3,5,10", "--ks", help="Comma-separated k of acc@k (1 and 5 are printed)"),
    errors: Optional[Path] = typer.Option(None, "--errors", help="Write the mentions wrong at acc@1 here (JSONL)"),
    linker: Optional[str] = typer.Option(None, "--linker", help="The linker to evaluate, by "
                                         "pipe name (needed when the pipeline has several)"),
):
    """Gold-mention acc@1 / acc@5 of a saved pipeline's linker on a PubTator corpus (with
    --linker NAME, that linker's, on the mentions whose type is one of its labels)."""
    from ..evaluation import evaluate_gold_mentions, format_table
    from ..linker.pipeline import load_linker_pipeline

    k_values = parse_ks(ks)
    for path, what in ((output, "the metrics"), (errors, "the wrong mentions")):
        if path is not None:
            check_output_path(path, what=what)
    type_set, pmid_set = corpus_filters(types, pmids)
    nlp = load_linker_pipeline(model_dir)
    wrong: Optional[List[Dict]] = [] if errors is not None else None
    result = evaluate_gold_mentions(nlp, corpus, types=type_set, pmids=pmid_set, ks=k_values,
                                    progress=True, errors=wrong, linker=linker, path=model_dir)
    result["model"] = str(model_dir)
    if not result["n_evaluated"]:
        # acc@1 0.0 would read as a linker that is always wrong
        why = ", ".join(f"{n} {reason.replace('_', ' ')}" for reason, n in
                        result.get("skipped", {}).items() if n) or "no mention at all"
        filters = [f"--types {types}"] * bool(types) + [f"--pmids {pmids}"] * bool(pmids)
        if filters:
            why += " after " + " and ".join(filters)
        raise BioLinkError(Errors.E461.format(corpus=corpus, why=why,
                                              n_mentions=result.get("n_mentions", 0)))
    print(format_table(result))
    if errors is not None:
        with atomic_file(errors) as fileh:
            fileh.writelines(json.dumps(record) + "\n" for record in wrong)
        msg.good(f"Wrote {len(wrong)} mentions wrong at acc@1 to {errors}")
    if output is not None:
        write_output(output, result)


@app.command("evaluate-e2e")
@fail_cleanly
def evaluate_end_to_end_cli(
    model_dir: Path = typer.Argument(..., help="Saved pipeline: NER (or any span source) + bio_linker"),
    gold: Path = typer.Argument(..., help="DocBin from `convert` (gold ents with kb_id_), "
                                "or a BioC XML/JSON corpus (.gz ok)"),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write metrics JSON here"),
    linker: Optional[str] = typer.Option(None, "--linker", help="Score only this linker's "
                                         "spans (default: every linker's)"),
):
    """End-to-end NER and linking P/R/F1 on raw text: a predicted span counts only with
    the right boundaries (and, for linking, the right concept)."""
    from ..evaluation import evaluate_end_to_end, format_end_to_end_table
    from ..linker.pipeline import load_linker_pipeline

    if output is not None:
        check_output_path(output, what="the metrics")
    nlp = load_linker_pipeline(model_dir)
    gold_docs = gold
    if gold.is_file() and gold.suffix != ".spacy":
        from ..corpora.bioc import bioc_format, bioc_gold_docs
        from ..corpora.types import CORPUS_TYPE_LABELS

        # A BioC corpus is converted here with the pipeline's tokenizer, its types labelled
        # with the six types the linkers' labels name (BioRED's DiseaseOrPhenotypicFeature
        # is Disease); the corpus types stay beside them for --types.
        if bioc_format(gold) is not None:
            gold_docs = bioc_gold_docs(nlp, gold, labels=dict(CORPUS_TYPE_LABELS))
    result = evaluate_end_to_end(nlp, gold_docs, linker=linker, path=model_dir)
    result["model"] = str(model_dir)
    print(format_end_to_end_table(result))
    if output is not None:
        write_output(output, result)


@app.command("report")
@fail_cleanly
def report_cli(
    metrics: List[str] = typer.Argument(..., help="NAME=metrics.json from `evaluate` (one per linker)"),
    end_to_end: List[str] = typer.Option([], "--end-to-end", help="NAME=e2e.json from `evaluate-e2e`"),
    output: Path = typer.Option(..., "--output", "-o", help="Markdown table to write"),
    plot: Optional[Path] = typer.Option(None, "--plot", help="acc@k plot (PNG) to write"),
):
    """One Markdown table comparing linkers, printed and written; optionally an acc@k plot."""
    from ..evaluation.report import check_metrics, comparison_table, plot_acc_at_k
    from ..io.files import read_json

    check_output_path(output, what="the table", example="comparison.md")
    if plot is not None:
        check_output_path(plot, what="the plot", example="acc_at_k.png")

    def read(pairs: List[str], command: str):
        out = {}
        for pair in pairs:
            name, sep, path = pair.partition("=")
            if not sep or not Path(path).exists():
                raise BioLinkError(Errors.E404.format(pair=pair))
            out[name] = check_metrics(read_json(path, "Metrics file", expected=f"the metrics "
                                                f"object written by `{command}`", type=dict),
                                      path, command)
        return out

    table = comparison_table(read(metrics, "evaluate"), read(end_to_end, "evaluate-e2e"))
    print(table)
    write_output(output, table + "\n")
    if plot is not None:
        if plot_acc_at_k(read(metrics, "evaluate"), plot) is None:
            msg.warn("matplotlib is not installed: no plot (pip install matplotlib)")
        else:
            msg.good(f"Wrote {plot}")


@app.command("eval-synonyms")
@fail_cleanly
def eval_synonyms_cli(
    encoder: str = typer.Argument(..., help="Trained encoder directory, or a baseline: "
                                            "sgw (mean word vector), sgw-cca, tfidf"),
    dictionary: Path = typer.Option(..., "--dictionary", "-d", help="Dictionary file (.gz ok)"),
    vectors: Optional[Path] = typer.Option(None, "--vectors", help="Word vectors (for sgw, sgw-cca)"),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write metrics JSON here"),
    seed: Optional[int] = typer.Option(None, "--seed", help="Split seed; default: the split "
                                       "ENCODER was trained on, else 1"),
    split: Optional[Path] = typer.Option(None, "--split", help="A split.json to use instead"),
    zero_shot_concepts: float = typer.Option(1000, "--zero-shot-concepts",
                                             help="Count (or share if < 1) of zero-shot concepts"),
    test_rounds: int = typer.Option(1, "--test-rounds"),
    validation_rounds: int = typer.Option(1, "--validation-rounds"),
    train_queries: int = typer.Option(2000, "--train-queries",
                                      help="Training names sampled as queries (0: none)"),
    save_split: Optional[Path] = typer.Option(None, "--save-split", help="Write the split here"),
):
    """Synonym retrieval (mAP) and concept mapping (Acc, MRR) on held-out names of training
    concepts (test) and on zero-shot concepts, as in CCA+DAN (Fivez et al., 2021)."""
    import time

    from ..evaluation.synonym_retrieval import (encoder_for_evaluation,
                                                evaluate_synonym_retrieval, resolve_split)
    from ..kb.readers import load_dictionary

    # Both bounds, inf and nan too: each was taken, and failed or ran for ever deep inside.
    check_range("--test-rounds", test_rounds, 1, 1000)
    check_range("--validation-rounds", validation_rounds, 0, 1000)
    check_range("--train-queries", train_queries, 0, MAX_COUNT)
    check_range("--seed", seed, 0, MAX_SEED)
    check_range("--zero-shot-concepts", zero_shot_concepts, 0, MAX_COUNT, integer=False)
    for path, what in ((output, "the metrics"), (save_split, "the split")):
        if path is not None:
            check_output_path(path, what=what)
    started = time.perf_counter()
    synonym_split = resolve_split(load_dictionary(dictionary), encoder=encoder, split_path=split,
                                  seed=seed, zero_shot_concepts=zero_shot_concepts,
                                  test_rounds=test_rounds, validation_rounds=validation_rounds)
    if save_split is not None:
        synonym_split.to_disk(save_split)
    encode, _, described = encoder_for_evaluation(encoder, vectors_path=vectors,
                                                  split=synonym_split)
    query_sets = ["test", "zero_shot", "validation"] + (["train"] if train_queries else [])
    scores = evaluate_synonym_retrieval(encode, synonym_split, query_sets=query_sets,
                                        max_train_queries=train_queries)
    result = {**described, "dictionary": str(dictionary), "split": synonym_split.describe(),
              **scores, "seconds": round(time.perf_counter() - started, 1)}
    if described.get("trained_split") not in (None, result["split"]["fingerprint"]):
        msg.warn(f"{encoder} was trained on split {described['trained_split']}, not on this "
                 f"one ({result['split']['fingerprint']}): its test names may have been trained on.")
    msg.table([(name, f"{s['mAP']:.4f}", f"{s['Acc']:.4f}", f"{s['MRR']:.4f}", s["queries"])
               for name, s in scores.items()], header=("", "mAP", "Acc", "MRR", "queries"))
    if output is not None:
        write_output(output, result)


@app.command("eval-relatedness")
@fail_cleanly
def eval_relatedness_cli(
    encoder: str = typer.Argument(..., help="Trained encoder directory, or sgw (mean word vector)"),
    data_dir: Path = typer.Option(..., "--data-dir", help="Directory with UMNSRS_*.csv / MayoSRS.txt"),
    vectors: Optional[Path] = typer.Option(None, "--vectors", help="Word vectors (for sgw)"),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write metrics JSON here"),
):
    """Spearman rho of encoder cosines against UMNSRS / MayoSRS judgements."""
    from ..errors import Errors
    from ..evaluation.relatedness import evaluate_relatedness
    from ..evaluation.synonym_retrieval import encoder_for_evaluation

    if output is not None:
        check_output_path(output, what="the metrics")
    if encoder in ("sgw-cca", "tfidf"):
        raise BioLinkError(Errors.E631.format(value=encoder, command="eval-relatedness",
                                              options="sgw"))
    encode, covered, described = encoder_for_evaluation(encoder, vectors_path=vectors)
    scores = evaluate_relatedness(encode, data_dir, covered=covered)
    msg.table([(name, "-" if s["spearman"] is None else f"{s['spearman']:.4f}",
                f"{s['covered']}/{s['pairs']}") for name, s in scores.items()],
              header=("", "Spearman", "covered"))
    if output is not None:
        write_output(output, {**described, "data_dir": str(data_dir), **scores})


@app.command("score-pairs")
@fail_cleanly
def score_pairs_cli(
    verifier_dir: Path = typer.Argument(..., help="Trained verifier (train configs/siamese.cfg)"),
    pairs_path: Path = typer.Argument(..., help="TSV: name1<TAB>name2 per line (.gz ok)"),
    output: Path = typer.Option(..., "--output", "-o",
                                help="TSV to write: name1<TAB>name2<TAB>probability"),
):
    """Probability that each pair of names are synonyms (for dictionary curation)."""
    from ..io.pair_files import read_pair_file, write_scored_pairs
    from ..linker.stages.verifier import CandidateVerifier

    check_output_path(output, what="the scored pairs", example="scored.tsv")
    pairs, _ = read_pair_file(pairs_path)
    verifier = CandidateVerifier.from_trained(verifier_dir)
    probs = verifier.score_pairs(pairs)
    write_scored_pairs(output, pairs, probs)
    msg.good(f"Scored {len(pairs)} pairs into {output} ({int((probs >= verifier.threshold).sum())} "
             f"at or above the verifier threshold {verifier.threshold:.3f})")


@app.command("eval-pairs")
@fail_cleanly
def eval_pairs_cli(
    verifier_dir: Path = typer.Argument(..., help="Trained verifier (train configs/siamese.cfg)"),
    dictionary: Path = typer.Option(..., "--dictionary", "-d",
                                    help="The dictionary it was trained on"),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write metrics JSON here"),
):
    """Precision, recall, F1 and AUC of a verifier on the pairs of its held-out concepts, beside
    the TF-IDF character-trigram cosine of the same pairs (the string-similarity baseline)."""
    from ..evaluation.pair_scores import evaluate_saved_verifier
    from ..kb.readers import load_dictionary

    if output is not None:
        check_output_path(output, what="the metrics")

    result = evaluate_saved_verifier(verifier_dir, load_dictionary(dictionary))
    rows = []
    for split in ("dev", "test"):
        for name in ("0.5", "dev", "saved"):
            s = result[split][f"at_{name}"]
            rows.append((split, "verifier", f"{name} ({s['threshold']:.3f})",
                         f"{s['precision']:.4f}", f"{s['recall']:.4f}", f"{s['f1']:.4f}",
                         f"{result[split]['auc']:.4f}"))
    for split in ("dev", "test"):  # the string-similarity baseline on the same pairs
        base = result["baselines"]["tfidf_cosine"][split]
        s = base["at_dev"]
        rows.append((split, "TF-IDF cosine", f"dev ({s['threshold']:.3f})",
                     f"{s['precision']:.4f}", f"{s['recall']:.4f}", f"{s['f1']:.4f}",
                     f"{base['auc']:.4f}"))
    msg.table(rows, header=("pairs", "scorer", "threshold", "P", "R", "F1", "AUC"))
    if output is not None:
        write_output(output, result)
