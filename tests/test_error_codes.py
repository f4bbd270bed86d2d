"""Every message in errors.py keeps its own code: a code written twice in a class body
silently replaces the first message (two branches once both took E690 and E691)."""
import re
from collections import Counter
from pathlib import Path

import spacy_biolink.errors as errors

SOURCE = Path(errors.__file__).read_text(encoding="utf8")


def test_no_code_is_defined_twice():
    codes = re.findall(r"^    ([EW]\d+) = ", SOURCE, re.MULTILINE)
    assert len(codes) > 200
    assert [code for code, n in Counter(codes).items() if n > 1] == []


def test_each_message_names_its_own_code():
    for cls in (errors.Errors, errors.Warnings):
        for name in dir(cls):
            if re.fullmatch(r"[EW]\d+", name):
                message = getattr(cls, name)
                assert isinstance(message, str) and message.startswith(f"[{name}]"), name
