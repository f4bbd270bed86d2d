"""Every public function and method has a docstring, and the package ships py.typed.

Public: module-level functions and methods of public classes (nested classes too) whose
name has no leading underscore, plus __call__; __init__ is left out (the class docstring
documents construction). Functions defined inside functions are not API and are skipped.
"""
import ast
from pathlib import Path

import spacy_biolink

PACKAGE = Path(spacy_biolink.__file__).parent


def _undocumented(node: ast.AST, path: str, prefix: str = ""):
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if child.name == "__init__" or (child.name.startswith("_")
                                            and child.name != "__call__"):
                continue
            if not ast.get_docstring(child):
                yield f"{path}:{child.lineno} {prefix}{child.name}"
        elif isinstance(child, ast.ClassDef) and not child.name.startswith("_"):
            yield from _undocumented(child, path, f"{prefix}{child.name}.")


def test_public_api_has_docstrings():
    missing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        tree = ast.parse(path.read_text(encoding="utf8"), filename=str(path))
        missing.extend(_undocumented(tree, f"spacy_biolink/{rel}"))
    assert not missing, (f"{len(missing)} public functions/methods without a docstring:\n"
                         + "\n".join(missing))


def test_undocumented_function_is_reported():
    tree = ast.parse("def f():\n    return 1\n\nclass C:\n    def g(self):\n        pass\n"
                     "    def _h(self):\n        pass\n    def __call__(self):\n        '''Doc.'''\n")
    assert list(_undocumented(tree, "m.py")) == ["m.py:1 f", "m.py:5 C.g"]


def test_py_typed_is_shipped():
    assert (PACKAGE / "py.typed").is_file()
    setup_cfg = (PACKAGE.parent / "setup.cfg").read_text(encoding="utf8")
    package_data = setup_cfg.split("[options.package_data]", 1)[1].split("\n[", 1)[0]
    assert "py.typed" in package_data
