"""No compile on the first pass (issue 58): every numba kernel is compiled ahead for one
explicit signature and cached on disk, and a loaded pipeline has its kernels loaded
before its first batch."""
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import make_linker_nlp

KERNEL_MODULES = ("spacy_biolink.index.kernels", "spacy_biolink.index.block_kernels",
                  "spacy_biolink.index.word_kernels",
                  "spacy_biolink.linker.stages.learned_reranker_kernels")
ROOT = Path(__file__).resolve().parents[1]


def _dispatchers(module):
    from numba.core.registry import CPUDispatcher

    return {name: value for name, value in vars(module).items()
            if isinstance(value, CPUDispatcher)}


def test_every_package_kernel_module_is_listed():
    """A new numba module must join KERNEL_MODULES, so the checks below cover it."""
    found = set()
    for path in (ROOT / "spacy_biolink").rglob("*.py"):
        text = path.read_text(encoding="utf8")
        if "_jit(" in text or "from numba" in text or "import numba" in text:
            found.add(".".join(path.relative_to(ROOT).with_suffix("").parts))
    assert found <= set(KERNEL_MODULES), found - set(KERNEL_MODULES)


@pytest.mark.parametrize("module_name", KERNEL_MODULES)
def test_kernels_are_compiled_ahead_and_cached(module_name):
    """Each kernel has its signature compiled at import and can never compile on a call
    (numba disables compiling once explicit signatures are given), and it is cached on
    disk (a FunctionCache, not numba's NullCache) so a new process loads it."""
    module = importlib.import_module(module_name)
    from spacy_biolink.index import kernels

    if kernels._WARNED:
        pytest.skip("numba finds no writable cache directory here (kernels.py warned)")
    dispatchers = _dispatchers(module)
    assert dispatchers, f"{module_name} defines no kernel"
    for name, kernel in dispatchers.items():
        if kernel.py_func.__module__ != module_name:
            continue  # imported from another kernel module, checked there
        assert len(kernel.signatures) == 1, f"{name}: not compiled ahead for one signature"
        assert not kernel._can_compile, f"{name}: a call with new types would compile"
        assert type(kernel._cache).__name__ == "FunctionCache", f"{name}: not cached on disk"


CHILD = """
import json, sys
import spacy
nlp = spacy.load(sys.argv[1])
loaded = "spacy_biolink.index.kernels" in sys.modules
from numba.core.registry import CPUDispatcher
from spacy_biolink.index import kernels
found = {n: k for n, k in vars(kernels).items() if isinstance(k, CPUDispatcher)}
before = {n: len(k.overloads) for n, k in found.items()}
doc = nlp.make_doc("Patients with type 2 diabetes and breast cancer.")
doc.ents = [doc.char_span(14, 29, label="Disease"), doc.char_span(34, 47, label="Disease")]
doc = nlp(doc)
print(json.dumps({
    "loaded_by_load": loaded,
    "ids": [e.kb_id_ for e in doc.ents],
    "new_overloads": sum(len(k.overloads) - before[n] for n, k in found.items()),
    "misses": sum(sum(k.stats.cache_misses.values()) for k in found.values()),
    "hits": sum(sum(k.stats.cache_hits.values()) for k in found.values()),
}))
"""


def _child(model_dir: Path, cwd: Path) -> dict:
    env = {**os.environ,
           "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH"))
                                         if p)}
    out = subprocess.run([sys.executable, "-c", CHILD, str(model_dir)], capture_output=True,
                         text=True, cwd=cwd, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_fresh_process_loads_the_kernels_from_cache_at_spacy_load(tiny_dictionary, tmp_path):
    """spacy.load brings the search kernels in (not the first batch), and a process after
    the first reads them from numba's disk cache: no cache miss, nothing compiled on the
    first call."""
    model_dir = tmp_path / "linker"
    make_linker_nlp(tiny_dictionary).to_disk(model_dir)
    importlib.import_module("spacy_biolink.index.kernels")  # fills a stale cache, if any
    res = _child(model_dir, tmp_path)
    assert res["loaded_by_load"], "the kernels were not loaded by spacy.load"
    assert res["ids"] == ["D003924", "D001943"]
    assert res["new_overloads"] == 0
    assert res["misses"] == 0 and res["hits"] > 0, res
