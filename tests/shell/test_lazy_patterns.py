"""Module-level patterns are compiled on first use (``shell/patterns.py``): the same answers as ``re.compile``'s,
compiled once, and not by importing the modules the first command needs."""

from __future__ import annotations

import re
import subprocess
import sys
import threading

from execmagic.shell.patterns import LazyPattern, compile_often, lazy_pattern

_TEXTS = ["", "a", "abc-12 x=y", "ghp_" + "a" * 36, "x\ny\nz", "é ü", "((1))"]
_PATTERNS = [(r"[a-z]+", 0), (r"(?P<name>[a-z]+)=(?P<value>\w+)", 0), (r"^y$", re.MULTILINE), (r"X", re.IGNORECASE),
             (r"gh[pousr]_[A-Za-z0-9]{30,}", 0), (r"\(\((\d)\)\)", 0)]


def _found(match: re.Match[str] | None) -> object:
    return None if match is None else (match.span(), match.groups())


def test_a_lazy_pattern_answers_as_the_compiled_one():
    for pattern, flags in _PATTERNS:
        compiled, lazy = re.compile(pattern, flags), lazy_pattern(pattern, flags)
        assert lazy.pattern == compiled.pattern
        for text in _TEXTS:
            assert _found(lazy.search(text)) == _found(compiled.search(text))
            assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in compiled.finditer(text)]
            assert lazy.findall(text) == compiled.findall(text)
            assert lazy.sub("-", text) == compiled.sub("-", text)
            assert lazy.subn("-", text) == compiled.subn("-", text)
            assert lazy.split(text) == compiled.split(text)
            assert _found(lazy.match(text)) == _found(compiled.match(text))
            assert _found(lazy.fullmatch(text)) == _found(compiled.fullmatch(text))
        assert (lazy.flags, lazy.groups, lazy.groupindex) == (compiled.flags, compiled.groups, compiled.groupindex)


def test_bytes_patterns_too():
    lazy = lazy_pattern(rb"\\([\\\"$`])", re.S)
    assert lazy.sub(rb"\1", rb'a\"b\$c') == b'a"b$c'


def test_it_is_compiled_once_on_first_use_and_its_text_is_there_before():
    lazy = lazy_pattern(r"a+b")
    assert isinstance(lazy, LazyPattern)
    assert "_compiled" not in vars(lazy) and lazy.pattern == "a+b"  # its text read: not compiled
    assert lazy.search("xaab") is not None
    compiled = vars(lazy)["_compiled"]
    assert lazy.match("ab") is not None and lazy.compiled() is compiled
    assert vars(lazy)["search"] == compiled.search  # the method itself, found without __getattr__


def test_threads_using_it_first_at_once_get_the_same_answers():
    lazy = lazy_pattern(r"(\w+)@(\w+)\.com")
    start = threading.Barrier(8)
    found: list[object] = []

    def use() -> None:
        start.wait()
        found.append(lazy.findall("a@b.com c@d.com"))

    threads = [threading.Thread(target=use) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert found == [[("a", "b"), ("c", "d")]] * 8


def test_once_compiled_it_takes_its_place_among_its_module_s_globals():
    module: dict[str, object] = {}
    exec("from execmagic.shell.patterns import lazy_pattern\nX = lazy_pattern('a+b')\nY = X\n"
         "def find(text):\n    return X.search(text).span()\n", module)
    stand_in = module["X"]
    assert isinstance(stand_in, LazyPattern)
    assert module["find"]("xaab") == (1, 4)  # type: ignore[operator]
    assert module["X"] is module["Y"] is re.compile("a+b")  # (re's cache: the same object)
    assert stand_in.search("ab") is not None  # a name imported before still works


def test_compile_often_compiles_those_marked():
    often, rare = lazy_pattern(r"often\d", often=True), lazy_pattern(r"rare\d")
    compile_often()
    assert "_compiled" in vars(often) and "_compiled" not in vars(rare)


#: In a fresh interpreter: the first command's modules imported, which of the large patterns are compiled.
_FRESH = """
import execmagic.magics
from execmagic.magics import FIRST_RUN_MODULES
import importlib
from execmagic.shell.patterns import LazyPattern
for name in FIRST_RUN_MODULES:
    importlib.import_module(name)
check, inline_secrets, secrets = (importlib.import_module(f"execmagic.guard.{name}")
                                  for name in ("check", "inline_secrets", "secrets"))
print(sorted(name for name, value in [("_NAME_SEP", secrets._NAME_SEP), ("_OPTIONS", inline_secrets._OPTIONS),
                                      ("_UNSPELLED", check._UNSPELLED), ("_TRIGGERS", check._TRIGGERS)]
             if not isinstance(value, LazyPattern)))
from execmagic.shell.patterns import LazyPattern, compile_often
compile_often()
print(sorted(name for name, value in [("_NAME_SEP", secrets._NAME_SEP), ("_OPTIONS", inline_secrets._OPTIONS),
                                      ("_UNSPELLED", check._UNSPELLED), ("_TRIGGERS", check._TRIGGERS)]
             if not isinstance(value, LazyPattern)))
"""


def test_importing_what_the_first_command_needs_compiles_no_large_pattern():
    done = subprocess.run([sys.executable, "-c", _FRESH], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    imported, ahead = done.stdout.splitlines()[-2:]
    assert imported == "[]"
    assert ahead == "['_NAME_SEP', '_OPTIONS', '_TRIGGERS']"  # what most commands use; not the rarer one
