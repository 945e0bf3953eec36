"""The magics' parsers and help pages are built when first asked for, not at ``%load_ext``, and are what
IPython's own ``@magic_arguments`` builds: the same ``%exec?`` page, the same parser, the same method."""

from __future__ import annotations

import copy
import inspect
import pickle
import subprocess
import sys
import threading
import types

import pytest
from IPython.core.magic_arguments import construct_parser

from execmagic.magics.helpfmt import LazyArguments, magic_arguments
from execmagic.magics.reference import MAGICS

#: In a fresh interpreter (the test process built every parser long ago): argparse's options counted
#: while the extension loads; then a first ``%spawn`` line (one with a mistake: no engine, no process) builds
#: its parser and formats no page, and a page is formatted when asked for.
PROBE = """
import argparse, threading
added, pages = [], []
add, page = argparse.ArgumentParser.add_argument, argparse.ArgumentParser.format_help
def counted(self, *a, **k):  # on this thread: the import-ahead thread may build %exec's parser meanwhile
    if threading.current_thread() is threading.main_thread():
        added.append(a)
    return add(self, *a, **k)
argparse.ArgumentParser.add_argument = counted
argparse.ArgumentParser.format_help = lambda self: (pages.append(self.prog), page(self))[1]
from IPython.core.interactiveshell import InteractiveShell
ip = InteractiveShell.instance()
ip.run_line_magic("load_ext", "execmagic")
assert (added, pages) == ([], []), (len(added), pages)
from IPython.core.error import UsageError
try:
    ip.run_line_magic("spawn", "--timeout")
except UsageError as exc:
    assert "needs a value" in str(exc), exc
assert pages == [] and added, pages
assert ip.magics_manager.magics["line"]["exec"].__doc__.startswith("::")
assert pages == ["exec"], pages
print("ok")
"""


def test_the_load_builds_no_parser_and_a_run_formats_no_help_page():
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.endswith("ok\n"), done.stderr


def _as_ipython_builds_it(method):
    """The help page IPython's own ``@magic_arguments`` would have set: its ``construct_parser`` run on
    a copy of the function as written, carrying the same decorators' records."""
    func = inspect.unwrap(method)
    twin = types.FunctionType(func.__code__, func.__globals__, func.__name__, func.__defaults__, func.__closure__)
    twin.__dict__.update({key: value for key, value in func.__dict__.items() if key != "argcmd_kwds"})
    twin.argcmd_kwds = dict(getattr(func, "argcmd_kwds", {}))
    twin.__doc__ = func.__doc__
    parser = construct_parser(twin)
    return parser, twin.__doc__


@pytest.mark.parametrize(("kind", "name"), MAGICS)
def test_each_help_page_and_parser_are_ipythons(ip, kind, name):
    method = ip.magics_manager.magics[kind][name]
    parser, page = _as_ipython_builds_it(method)
    assert method.__doc__ == page
    assert method.parser.format_usage() == parser.format_usage()
    assert [(a.option_strings, a.dest, a.nargs, a.default, a.choices) for a in method.parser._actions] == \
           [(a.option_strings, a.dest, a.nargs, a.default, a.choices) for a in parser._actions]
    assert method.parser is method.parser  # built once


@pytest.mark.parametrize(("kind", "name"), MAGICS)
def test_each_magic_is_still_a_method_for_ipython_and_inspect(ip, kind, name):
    method = ip.magics_manager.magics[kind][name]
    func = inspect.unwrap(method)
    assert inspect.ismethod(method) and inspect.isfunction(func)
    assert inspect.getfile(method) == func.__code__.co_filename  # a debugger's, a documentation tool's view
    assert str(inspect.signature(method)) == str(inspect.signature(types.MethodType(func, method.__self__)))
    assert method.__name__ == func.__name__ and method.__qualname__ == func.__qualname__
    assert getattr(method, "_ipython_magic_no_var_expand", False)
    assert inspect.getsource(method) == inspect.getsource(func)
    info = ip.object_inspect(("%%" if kind == "cell" else "%") + name)
    assert info["type_name"] == "Magic function" and info["docstring"] == inspect.cleandoc(method.__doc__)


@pytest.mark.parametrize(("kind", "name"), MAGICS)
def test_each_magic_is_pickled_copied_and_shown_as_the_function_it_stands_for(ip, kind, name):
    """A function is pickled by its name, copied as itself and shown by its name: so is a magic method."""
    func = ip.magics_manager.magics[kind][name].__func__
    assert pickle.loads(pickle.dumps(func)) is func
    assert copy.copy(func) is func and copy.deepcopy(func) is func
    assert repr(func) == repr(func.__wrapped__)


def test_a_call_reaches_the_function_with_its_instance():
    calls = []

    class Holder:
        @magic_arguments(name="probe")
        def probe(self, line):
            """Probe."""
            calls.append((self, line))
            return line.upper()

    holder = Holder()
    assert holder.probe("x") == "X" and calls == [(holder, "x")]
    assert isinstance(Holder.__dict__["probe"], LazyArguments) and Holder.probe is Holder.__dict__["probe"]


def test_threads_asking_at_once_get_one_parser():
    from IPython.core.magic_arguments import argument

    class Holder:
        @magic_arguments(name="probe")
        @argument("--flag", action="store_true", help="a flag")
        def probe(self, line):
            """Probe."""

    start = threading.Barrier(8)
    parsers = []

    def ask():
        start.wait()
        parsers.append(Holder().probe.parser)

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(parsers) == 8 and all(parser is parsers[0] for parser in parsers)
    assert "--flag" in Holder.probe.__doc__


@pytest.mark.parametrize(("kind", "name"), MAGICS)
def test_a_line_without_options_reads_as_argparse_reads_it_each_time_anew(ip, kind, name):
    """A line with no words is answered from what the parser gave once: the same values as argparse's own,
    in a namespace and lists of its own each time (a magic may change what it got)."""
    from execmagic.magics.options import parse_line

    parser = ip.magics_manager.magics[kind][name].parser
    expected = vars(parser.parse_args([]))
    first, _ = parse_line("", parser)
    assert vars(first) == expected
    for value in vars(first).values():
        if isinstance(value, list):
            value.append("changed")
    first.extra = 1
    second, _ = parse_line("", parser)
    assert vars(second) == expected and second is not first
