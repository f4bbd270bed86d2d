"""Try bad inputs and outputs as a user would, and count the outcomes (issue 19).

    PYTHONPATH=$PWD python benchmarks/exploration/probe_bad_inputs.py [--verbose]

Each case runs one CLI command in-process (typer's CliRunner) or one reader call, and is
sorted into: clear (non-zero exit, a coded [E###] message, no traceback), wrong error (a
clear error for an input that is fine), traceback (a
raw exception, or click's bare "Aborted!"), silently wrong (exit 0 with a wrong result),
lost data (something that existed before is gone), right (a case whose right answer is
a result, not an error, and which gave it). Run it against another checkout with
PYTHONPATH=/that/checkout to compare before and after.
"""
import gzip
import json
import os
import shutil
import stat
import sys
import tempfile
import traceback
from collections import Counter
from pathlib import Path

from typer.testing import CliRunner

from spacy_biolink.cli import app

MEDIC = ("D003924||Diabetes Mellitus, Type 2|Type 2 diabetes|NIDDM\n"
         "D001943||Breast Neoplasms|breast cancer|breast tumor\n"
         "D006816||Huntington Disease|Huntington's chorea|HD\n")
CORPUS = ("1|t|Type 2 diabetes and breast cancer.\n"
          "1|a|NIDDM patients.\n"
          "1\t0\t15\tType 2 diabetes\tDisease\tD003924\n"
          "1\t20\t33\tbreast cancer\tDisease\tD001943\n\n")
LATIN1 = "D003924||Diab\xe8te sucr\xe9|diab\xe8te\n".encode("latin1")
runner = CliRunner()


def cli(*args):
    return runner.invoke(app, [str(a) for a in args])


def classify_error(result) -> str:
    """For a case whose right answer is an error."""
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        return "traceback"
    if "Aborted" in result.output or "Traceback" in result.output:
        return "traceback"
    if result.exit_code == 0:
        return "silently wrong"
    return "clear" if "[E" in result.output else "traceback"


def main(verbose: bool = False) -> Counter:
    tally: Counter = Counter()
    rows = []
    root = Path(tempfile.mkdtemp())
    old_umask = os.umask(0o022)
    try:
        def write(name, data, gz=False):
            path = root / name
            if gz:
                with gzip.open(path, "wb") as fileh:
                    fileh.write(data if isinstance(data, bytes) else data.encode("utf8"))
            else:
                path.write_bytes(data if isinstance(data, bytes) else data.encode("utf8"))
            return path

        def record(name, outcome, detail=""):
            tally[outcome] += 1
            rows.append((outcome, name, detail))

        def expect_error(name, *args):
            result = cli(*args)
            outcome = classify_error(result)
            detail = (repr(result.exception) if outcome == "traceback" and result.exception
                      else result.output.strip().splitlines()[-1:] if result.output.strip() else "")
            record(name, outcome, str(detail)[:160])
            return result

        def expect_python_error(name, func):
            from spacy_biolink.errors import BioLinkError
            try:
                value = func()
            except BioLinkError:
                record(name, "clear")
                return
            except Exception as err:  # noqa: BLE001 - sorting every failure is the point
                record(name, "traceback", repr(err)[:160])
                return
            record(name, "silently wrong", repr(value)[:160])

        medic = write("medic.txt", MEDIC)
        corpus = write("corpus.PubTator", CORPUS)
        model = root / "model"
        result = cli("init-linker", model, "--dictionary", medic)
        assert result.exit_code == 0, result.output
        a_file = write("a_file.txt", "x")
        truncated = write("trunc.txt.gz", gzip.compress(MEDIC.encode() * 50)[:-30])
        corrupt = write("corrupt.txt.gz", b"\x1f\x8b\x08\x00" + os.urandom(200))
        plain_gz = write("plain.txt.gz", MEDIC)
        latin = write("latin.txt", LATIN1)
        a_dir = root / "a_dir"
        a_dir.mkdir()
        missing = root / "missing.txt"
        unwritable = a_file / "out.json"  # a file where a directory is expected

        # Dictionaries through init-linker
        for label, path in [("missing", missing), ("directory", a_dir), ("latin-1", latin),
                            ("truncated gz", truncated), ("corrupt gz", corrupt),
                            ("plain file named .gz", plain_gz),
                            ("binary", write("bin.txt", os.urandom(300))),
                            ("empty", write("empty.txt", b""))]:
            expect_error(f"init-linker dictionary: {label}", "init-linker", root / "m_out",
                         "--dictionary", path, "--force")
        # Dictionary readers, every format
        from spacy_biolink.kb.readers import load_dictionary
        samples = {"medic": "D1||Alpha|Beta\n", "biosyn": "D1||Alpha\n",
                   "tsv": "Alpha\tD1\n", "jsonl": '{"concept_id": "D1", "canonical_name": "Alpha"}\n',
                   "ctd": "# CTD\nAlpha\tMESH:D1\t\t\t\t\t\tBeta\n"}
        for fmt, text in samples.items():
            bom = write(f"bom_{fmt}.txt", "\ufeff" + text)
            try:
                d = load_dictionary(bom, format=fmt)
                ok = all("\ufeff" not in i for i in d.concept_ids) and \
                    all("\ufeff" not in n for n in d.names)
                record(f"{fmt} dictionary with a BOM", "right" if ok else "silently wrong",
                       "" if ok else repr(list(d.concept_ids)[:2]))
            except Exception as err:  # noqa: BLE001
                from spacy_biolink.errors import BioLinkError
                record(f"{fmt} dictionary with a BOM",
                       "wrong error" if isinstance(err, BioLinkError) else "traceback", repr(err)[:160])
            expect_python_error(f"{fmt} dictionary latin-1", lambda fmt=fmt, text=text: load_dictionary(
                write(f"l1_{fmt}.txt", text.replace("Alpha", "Alph\xe9").encode("latin1")), format=fmt))
            for char, cname in [("\x00", "NUL"), ("\x1b", "ESC"), ("\r", "CR")]:
                expect_python_error(f"{fmt} dictionary with {cname} in a name",
                                    lambda fmt=fmt, text=text, char=char: load_dictionary(
                                        write(f"c_{fmt}.txt", text.replace("Alpha", f"Al{char}pha")),
                                        format=fmt))
            expect_python_error(f"{fmt} dictionary truncated gz",
                                lambda fmt=fmt, text=text: load_dictionary(
                                    write(f"t_{fmt}.txt.gz", gzip.compress(text.encode() * 100)[:-20]),
                                    format=fmt))
        expect_python_error("jsonl dictionary with \\u0000 escape", lambda: load_dictionary(
            write("esc.jsonl", '{"concept_id": "D1", "canonical_name": "Al\\u0000pha"}\n')))
        expect_python_error("infer format of a directory", lambda: load_dictionary(a_dir))

        # PubTator through evaluate and convert
        for label, path in [("missing", missing), ("directory", a_dir),
                            ("latin-1", write("c_latin.PubTator", CORPUS.replace("NIDDM", "NIDD\xc9").encode("latin1"))),
                            ("truncated gz", write("c.PubTator.gz", gzip.compress(CORPUS.encode() * 30)[:-25])),
                            ("plain file named .gz", write("c_plain.PubTator.gz", CORPUS)),
                            ("NUL in a mention", write("c_nul.PubTator", CORPUS.replace("\tbreast cancer\t", "\tbreast\x00cancer\t")))]:
            expect_error(f"evaluate corpus: {label}", "evaluate", model, path)
            expect_error(f"convert corpus: {label}", "convert", path, root / "c_out.spacy")
        bom_corpus = write("c_bom.PubTator", "\ufeff" + CORPUS)
        from spacy_biolink.corpora.pubtator import read_pubtator
        docs = list(read_pubtator(bom_corpus))
        ok = [(d.pmid, d.title, len(d.mentions)) for d in docs] == [
            ("1", "Type 2 diabetes and breast cancer.", 2)]
        record("PubTator corpus with a BOM", "right" if ok else "silently wrong",
               repr([(d.pmid, d.title) for d in docs]))
        result = cli("evaluate", model, corpus, "--output", root / "bom_m.json")

        # --pmids
        expect_error("evaluate --pmids latin-1", "evaluate", model, corpus, "--pmids",
                     write("p_l1.txt", b"1\n\xe9\n"))
        expect_error("evaluate --pmids directory", "evaluate", model, corpus, "--pmids", a_dir)
        result = cli("evaluate", model, corpus, "--pmids", write("p_bom.txt", "\ufeff1\n"),
                     "--output", root / "pm.json")
        ok = result.exit_code == 0 and json.loads((root / "pm.json").read_text())["n_evaluated"] == 2
        record("evaluate --pmids with a BOM", "right" if ok else classify_error(result),
               result.output.strip()[-120:])

        # Spelling maps
        for label, path in [("latin-1", write("s_l1.txt", b"diab\xe8te||diabetes\n")),
                            ("directory", a_dir), ("truncated gz", truncated)]:
            expect_error(f"init-linker --spelling-map {label}", "init-linker", root / "m_out",
                         "--dictionary", medic, "--spelling-map", path, "--force")

        # Configs
        expect_error("init-linker --config missing", "init-linker", root / "m_out",
                     "--dictionary", medic, "--config", missing, "--force")
        expect_error("init-linker --config directory", "init-linker", root / "m_out",
                     "--dictionary", medic, "--config", a_dir, "--force")
        expect_error("init-linker --config latin-1", "init-linker", root / "m_out",
                     "--dictionary", medic, "--config", write("l1.cfg", b"[nlp]\nlang = \"\xe9n\"\n"),
                     "--force")
        expect_error("train config latin-1", "train", write("t_l1.cfg", b"[training]\nx = \"\xe9\"\n"),
                     "--output", root / "t_out")
        expect_error("train config directory", "train", a_dir, "--output", root / "t_out")
        expect_error("init-linker misspelled override", "init-linker", root / "m_out",
                     "--dictionary", medic, "--components.bio_linker.tresh", "0.5", "--force")
        expect_error("train misspelled override", "train", "configs/dan.cfg", "--output",
                     root / "t_out2", "--training.max_epoch", "3")

        # Link inputs
        for label, path in [("latin-1", write("in_l1.txt", b"diab\xe8te\n")),
                            ("truncated gz", write("in.txt.gz", gzip.compress(b"diabetes\n" * 300)[:-20])),
                            ("plain file named .gz", write("in_plain.txt.gz", "diabetes\n")),
                            ("directory", a_dir)]:
            expect_error(f"link input: {label}", "link", path, "--model", model, "--output",
                         root / "linked.jsonl")
        result = cli("link", write("in_bom.jsonl", '\ufeff{"text": "diabetes"}\n'), "--model", model,
                     "--output", root / "linked_bom.jsonl")
        record("link .jsonl input with a BOM", "right" if result.exit_code == 0 else "wrong error",
               result.output.strip()[-120:])

        # Report metrics JSON
        expect_error("report: invalid JSON", "report", f"a={write('m_bad.json', '{')}", "--output",
                     root / "r.md")
        latin_json = write("m_l1.json", b'{"x": "\xe9"}')
        expect_error("report: latin-1 JSON", "report", f"a={latin_json}",
                     "--output", root / "r.md")
        expect_error("report: metrics JSON a list", "report", f"a={write('m_list.json', '[1]')}",
                     "--output", root / "r.md")
        expect_error("report: metrics is a directory", "report", f"a={a_dir}", "--output", root / "r.md")

        # Relatedness, pairs, split, word vectors
        rel = root / "rel"
        rel.mkdir()
        (rel / "MayoSRS.txt").write_bytes(b"diab\xe8te\tcancer\t3.0\n")
        from spacy_biolink.evaluation.relatedness import read_pairs
        expect_python_error("relatedness file latin-1", lambda: read_pairs(rel / "MayoSRS.txt"))
        from spacy_biolink.io.pair_files import read_pair_file
        expect_python_error("pair file latin-1", lambda: read_pair_file(write("pairs.tsv", b"a\xe9\tb\n")))
        expect_python_error("pair file truncated gz", lambda: read_pair_file(truncated))
        expect_python_error("pair file directory", lambda: read_pair_file(a_dir))
        from spacy_biolink.evaluation.synonym_retrieval import SynonymSplit
        expect_python_error("split file directory", lambda: SynonymSplit.from_disk(a_dir))
        try:
            from spacy_biolink.encoders.wordvectors import WordVectors
            vec = root / "vec"
            vec.mkdir()
            (vec / "words.txt").write_bytes(b"diab\xe8te\n")
            import numpy
            numpy.save(vec / "vectors.npy", numpy.zeros((1, 4), numpy.float32))
            expect_python_error("word vectors latin-1 words.txt", lambda: WordVectors.from_disk(vec))
        except ImportError:
            pass

        # Outputs: checked before the work?
        expect_error("evaluate --output unwritable", "evaluate", model, corpus, "--output", unwritable)
        expect_error("evaluate --output is a directory", "evaluate", model, corpus, "--output", a_dir)
        expect_error("evaluate --errors unwritable", "evaluate", model, corpus, "--errors", unwritable)
        expect_error("convert output unwritable", "convert", corpus, a_file / "x.spacy")
        expect_error("link output is a directory", "link", write("in.txt", "diabetes\n"), "--model",
                     model, "--output", a_dir)
        expect_error("visualize output unwritable", "visualize", model, "--text", "diabetes",
                     "--output", unwritable)
        expect_error("report output is a directory", "report", f"a={root / 'bom_m.json'}",
                     "--output", a_dir)
        expect_error("init-linker output under a file", "init-linker", a_file / "m", "--dictionary",
                     medic)
        expect_error("init-linker output is a file", "init-linker", a_file, "--dictionary", medic)
        expect_error("eval-synonyms output unwritable", "eval-synonyms", "tfidf", "--dictionary",
                     medic, "--output", unwritable, "--zero-shot-concepts", "1")

        # Lost data: train-vectors over an unrelated directory
        precious = root / "precious"
        precious.mkdir()
        (precious / "thesis.tex").write_text("years of work")
        result = cli("train-vectors", precious, "--dictionary", medic, "--dim", "4", "--epochs", "1")
        if (precious / "thesis.tex").is_file():
            record("train-vectors over an existing directory", classify_error(result))
        else:
            record("train-vectors over an existing directory", "lost data")

        # Nothing to score
        result = cli("evaluate", model, corpus, "--types", "Nope")
        record("evaluate with nothing to score", "silently wrong" if result.exit_code == 0
               else classify_error(result))

        # Permissions from the umask
        result = cli("init-linker", root / "perm_model", "--dictionary", medic)
        modes = {oct(stat.S_IMODE(p.stat().st_mode)) for p in (root / "perm_model").rglob("*")
                 if p.is_file()}
        dir_mode = oct(stat.S_IMODE((root / "perm_model").stat().st_mode))
        record("init-linker output permissions under umask 022",
               "right" if modes == {"0o644"} and dir_mode == "0o755" else "silently wrong",
               f"files {sorted(modes)}, dir {dir_mode}")
        result = cli("evaluate", model, corpus, "--output", root / "perm.json")
        mode = oct(stat.S_IMODE((root / "perm.json").stat().st_mode))
        record("evaluate --output permissions under umask 022",
               "right" if mode == "0o644" else "silently wrong", mode)
    except Exception:  # noqa: BLE001
        traceback.print_exc()
    finally:
        os.umask(old_umask)
        shutil.rmtree(root, ignore_errors=True)
    for outcome, name, detail in rows:
        if verbose or outcome not in ("clear", "right"):
            print(f"{outcome:15s} {name}  {detail}")
    print(f"{sum(tally.values())} cases: " + ", ".join(f"{n} {k}" for k, n in tally.most_common()))
    return tally


if __name__ == "__main__":
    main(verbose="--verbose" in sys.argv)
