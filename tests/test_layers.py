"""Imports point down, and there are no circles (issue 55).

The rooms of spacy_biolink (its subpackages) are layered in .importlinter at the repo
root: errors | data < io < text < kb < corpora | encoders | index < linker < ner |
evaluation < training < runners < cli < legacy | __main__ (`|`: side by side, neither
importing the other). import-linter checks that contract and that no package's
children import one another in a loop; grimp, which import-linter is built on, checks
that no module-level import cycle exists. Both see imports inside functions and under
TYPE_CHECKING, so an import cannot be hidden from them by moving it into a function.
"""
import configparser
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Set

import grimp  # import-linter's graph builder; both are in the `test` extra, never skipped
import pytest

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / ".importlinter"
PACKAGE = "spacy_biolink"


def _layers() -> List[grimp.Layer]:
    """The layers of .importlinter's layers contract, top first, as grimp Layers."""
    config = configparser.ConfigParser()
    config.read(CONFIG, encoding="utf8")
    lines = config["importlinter:contract:layers"]["layers"].strip().splitlines()
    return [grimp.Layer(*(part.strip() for part in line.split("|")), independent=True)
            for line in lines if line.strip()]


def _graph():
    return grimp.build_graph(PACKAGE, include_external_packages=False, cache_dir=None)


def _illegal(graph) -> List[str]:
    """Each room that reaches a room above it (or an independent sibling), with the
    imports that do it: "io -> cli: io.files -> cli.app"."""
    found = graph.find_illegal_dependencies_for_layers(layers=_layers(), containers={PACKAGE})
    out = []
    for dep in found:
        routes = sorted(" -> ".join([",".join(sorted(route.heads)), *route.middle,
                                     ",".join(sorted(route.tails))]) for route in dep.routes)
        out.append(f"{dep.importer} -> {dep.imported}: " + "; ".join(routes))
    return sorted(out)


def _cycles(graph) -> List[List[str]]:
    """The module-level import cycles (strongly connected components of more than one
    module, or a module importing itself), each sorted."""
    modules = sorted(graph.modules)
    edges: Dict[str, List[str]] = {m: sorted(graph.find_modules_directly_imported_by(m))
                                   for m in modules}
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    on_stack: Set[str] = set()
    stack: List[str] = []
    cycles: List[List[str]] = []
    counter = 0
    for root in modules:  # Tarjan's algorithm, iterative (the graph is deep)
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            recurse = False
            for j in range(i, len(edges[node])):
                nxt = edges[node][j]
                if nxt not in index:
                    work.append((node, j + 1))
                    work.append((nxt, 0))
                    recurse = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if recurse:
                continue
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in edges[node]:
                    cycles.append(sorted(component))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return cycles


def test_import_linter_contracts_are_kept():
    """lint-imports .importlinter: the layers and the no-cycles contracts. In a process of
    its own: import-linter configures logging, which would silence the loggers of every
    test after it."""
    result = subprocess.run(
        [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; "
         "sys.exit(lint_imports_command())", "--config", str(CONFIG), "--no-cache"],
        capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: 2 kept, 0 broken." in result.stdout


def test_every_import_points_down():
    """The same layers, checked with grimp directly (a second reader of .importlinter)."""
    assert _illegal(_graph()) == []


def test_no_module_imports_itself_through_others():
    graph = _graph()
    cycles = _cycles(graph)
    described = ["\n".join(f"  {a} -> {b}" for a in cycle for b in
                           sorted(graph.find_modules_directly_imported_by(a)) if b in cycle)
                 for cycle in cycles]
    assert cycles == [], "import cycles:\n" + "\n\n".join(described)


@pytest.mark.parametrize("importer,imported", [
    ("spacy_biolink.io.files", "spacy_biolink.cli.app"),  # the lowest room imports the top
    ("spacy_biolink.encoders.dan", "spacy_biolink.training.wordvectors"),
    ("spacy_biolink.kb.dictionary", "spacy_biolink.linker.policy"),
    ("spacy_biolink.index.sparse", "spacy_biolink.encoders.tfidf"),  # independent siblings
    ("spacy_biolink.evaluation.scorer", "spacy_biolink.ner.propagate"),
])
def test_an_upward_import_is_caught(importer, imported):
    """The checks have teeth: one import added against the layers breaks them."""
    graph = _graph()
    assert _illegal(graph) == []
    graph.add_import(importer=importer, imported=imported)
    assert _illegal(graph)


def test_a_cycle_is_caught():
    graph = _graph()
    assert _cycles(graph) == []
    graph.add_import(importer="spacy_biolink.index.sparse", imported="spacy_biolink.index.faiss")
    assert _cycles(graph) == [["spacy_biolink.index.faiss", "spacy_biolink.index.sparse"]]
