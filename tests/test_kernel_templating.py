"""Templating and the kernel's own tools, through a real ipykernel (what a notebook user gets).

The kernel starts with a PATH that lacks its interpreter's ``bin`` folder, as when
a Jupyter from another environment starts it.
"""

from __future__ import annotations

import os
import sys

import pytest

from kernel_client import KERNEL_TOKEN_VAR, Kernel, loaded
from processes import assert_none_left

pytestmark = pytest.mark.kernel

HOSTILE = ["$(touch {m})", "`touch {m}`", "'; touch {m}; '", '"; touch {m}; "', "a b\nc", "\\", "*", "-rf", ""]


@pytest.fixture(scope="module")
def kernel():
    bare_path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep)
                                if p != os.path.dirname(sys.executable))
    yield from loaded(Kernel(extra_env={"PATH": bare_path}), "%load_ext execmagic")


@pytest.fixture(autouse=True)
def nothing_left_by_the_kernel(kernel):
    yield
    assert_none_left(KERNEL_TOKEN_VAR, kernel.token, exclude=(kernel.pid,), watchdogs=False)


def test_hostile_values_stay_values_in_every_quoting(kernel, tmp_path):
    marker = tmp_path / "pwned"
    values = [v.format(m=marker) for v in HOSTILE]
    assert kernel.execute(f"values = {values!r}").status == "ok"
    lines = []
    for i, _ in enumerate(values):
        lines.append(f"printf '<%s>' {{values[{i}]}} \"{{values[{i}]}}\" '{{values[{i}]}}'; echo")
    ex = kernel.execute("%%exec --param values\n" + "\n".join(lines))
    assert ex.status == "ok", ex.reply
    expected = "".join(f"<{v}><{v}><{v}>\n" for v in values)
    assert ex.stream_text() == expected
    # without --param, the notebook's variables fill where the shell expands $VAR: still values there
    ex = kernel.execute("%%exec\n" + "\n".join(f"printf '<%s>' {{values[{i}]}} \"{{values[{i}]}}\"; echo"
                                                for i, _ in enumerate(values)))
    assert ex.stream_text() == "".join(f"<{v}><{v}>\n" for v in values)
    ex = kernel.execute("%%exec python --param values\nfor v in {values}:\n    print(repr(v), repr('{values[0]}'))")
    assert ex.stream_text() == "".join(f"{v!r} {values[0]!r}\n" for v in values)
    assert not marker.exists()


def test_one_line_errors_and_the_kernel_answers_next(kernel):
    ex = kernel.execute("nul = 'a\\0b'\n%exec echo {nul}")
    assert ex.status == "error" and ex.reply["content"]["ename"] == "UsageError"
    shown = ex.stream_text("stderr")  # IPython prints a UsageError as one line, no traceback
    assert shown.startswith("UsageError: ") and "NUL byte" in shown and shown.count("\n") == 1, shown
    assert kernel.execute("%exec echo still here").stream_text() == "still here\n"


def test_pip_and_python_are_the_kernels_own(kernel):
    ex = kernel.execute("%exec pip --version")
    assert ex.status == "ok", ex.reply
    assert os.path.join(sys.prefix, "lib") in ex.stream_text()
    assert "pip is the kernel's own" in str(ex.of_type("display_data"))
    ex = kernel.execute("import sys\n%exec {sys.executable} -c 'import sys; print(sys.prefix)'")
    assert ex.stream_text() == sys.prefix + "\n"


def test_a_syntax_error_shows_the_users_line(kernel):
    ex = kernel.execute("%%exec --no-raise\necho one\nfi")
    assert "bash: -c: line 2: syntax error near unexpected token `fi'" in ex.stream_text("stderr")
    assert "trap" not in ex.stream_text("stderr")


# -- a notebook variable goes where $VAR would go: never into code that was not meant as a template ---------
def _summary(ex) -> str:
    """The summary's text (its notes included), as the notebook shows it."""
    return "".join(m["content"]["data"].get("text/plain", "") for m in ex.of_type("display_data"))


def test_an_f_string_loop_keeps_its_own_variable(kernel):
    assert kernel.execute("i = 42").status == "ok"
    ex = kernel.execute('%%exec python\nfor i in range(3): print(f"item {i}")')
    assert ex.status == "ok", ex.reply
    assert ex.stream_text() == "item 0\nitem 1\nitem 2\n"
    assert "filled" not in _summary(ex) and "note" not in _summary(ex)


def test_a_notebook_variable_bare_in_python_code_is_told_why_it_failed(kernel):
    """``{n}`` in a python cell's code is not filled (it would be Python's set); the NameError then comes with
    a note that says so and what fills it."""
    assert kernel.execute("n = 5").status == "ok"
    ex = kernel.execute("%%exec python --no-raise\nprint({n})")
    assert "NameError" in ex.stream_text("stderr")
    assert ("{n} in Python code is left as written: notebook variables fill only where a shell would expand $VAR,"
            " never in a python or node cell's code; --param n fills it there too") in _summary(ex), _summary(ex)
    filled = kernel.execute("%%exec python --param n\nprint({n} + 1)")
    assert filled.stream_text() == "6\n" and "left as written" not in _summary(filled)


def test_sed_jq_and_awk_programs_in_single_quotes_run_as_written(kernel):
    assert kernel.execute("p = '/data/raw'\nname = 'alice'\nn = 5").status == "ok"
    ex = kernel.execute("%%exec\nprintf 'a\\nb\\n' | sed -n '{p}'\n"
                        "echo '{\"name\": \"bob\"}' | jq -c '{name}'\n"
                        "echo line | awk '{n}'\necho done")
    assert ex.status == "ok", ex.reply
    assert ex.stream_text() == 'a\nb\n{"name":"bob"}\ndone\n'
    # a notebook that relied on the old fill is told the rule and what restores it
    summary = _summary(ex)
    assert "{p}, {name}, {n} in single quotes are left as written" in summary, summary
    assert "--param p --param name --param n" in summary
    # where the shell would expand $VAR, they fill, and the summary says with what
    ex = kernel.execute('%exec echo {p} "{name}"-{n}')
    assert ex.stream_text() == "/data/raw alice-5\n"
    assert "filled {p} = '/data/raw' (notebook variable); {name} = 'alice' (notebook variable)" in _summary(ex)


def test_a_typo_gets_a_note_with_the_likely_name(kernel):
    assert kernel.execute("n_rows = 10").status == "ok"
    ex = kernel.execute("%exec echo {n_row} rows")
    assert ex.stream_text() == "{n_row} rows\n"
    assert "{n_row} names no variable and was left as written; did you mean {n_rows}?" in _summary(ex)
    ex = kernel.execute("%exec --dry-run --param limit=3 head -n {limt} data.csv")
    assert "# note: {limt} names no variable and was left as written; did you mean {limit}?" in ex.stream_text()


def test_a_form_that_is_not_filled_is_said_not_run(kernel):
    ex = kernel.execute("x = 'v'\n%exec echo {x!r} {x.upper()}")
    assert ex.status == "error" and ex.reply["content"]["ename"] == "UsageError"
    assert "{x!r} is a form that is not filled" in ex.stream_text("stderr")
    # awk's program and find's {} are no templates, and say nothing
    ex = kernel.execute("print = 1\n%exec echo a b | awk '{print $1}'; find /etc/hostname -exec echo {} \\;")
    assert ex.stream_text() == "a\n/etc/hostname\n"
    assert "note" not in _summary(ex)
    assert kernel.execute("del print").status == "ok"


def test_double_braces_are_left_alone_where_nothing_fills(kernel):
    assert kernel.execute("x = 3").status == "ok"
    ex = kernel.execute("%exec echo '{{.State.Running}}' {{x}}")
    assert ex.stream_text() == "{{.State.Running}} {x}\n"
    ex = kernel.execute('%%exec python\nx = 7\nprint(f"{{x}}", f"{x}")')
    assert ex.stream_text() == "{x} 7\n"


def test_a_bare_param_keeps_the_type_of_the_notebooks_value(kernel):
    assert kernel.execute("xs = [1, 2, 3]\nlimit = 2").status == "ok"
    ex = kernel.execute("%%exec python --param xs --param limit\nprint(sum({xs}), type({xs}).__name__, {xs}[:{limit}])")
    assert ex.status == "ok", ex.reply
    assert ex.stream_text() == "6 list [1, 2]\n"
    assert "filled {xs} = [1, 2, 3] (--param)" in _summary(ex)
    # K=V is text, as typed: a number the cell means as a number is a notebook variable passed by name
    ex = kernel.execute("%%exec python --param n=5\nprint(repr({n}))")
    assert ex.stream_text() == "'5'\n"
    ex = kernel.execute("%exec --param nothing_here echo")
    assert ex.status == "error" and "the notebook has no variable 'nothing_here'" in ex.stream_text("stderr")


def test_dry_run_lists_every_fill_and_hides_secrets(kernel):
    assert kernel.execute("workdir = '/tmp/w'\napi_token = 'hunter2-secret'").status == "ok"
    ex = kernel.execute("%exec --dry-run cd {workdir} && curl -H {api_token} '{workdir}'")
    shown = ex.stream_text()
    assert "# filled: {workdir} = '/tmp/w' (notebook variable)" in shown
    assert "# filled: {api_token} = [REDACTED] (notebook variable)" in shown
    assert "hunter2" not in shown


def test_spawn_keeps_a_notebook_variable_out_of_single_quotes(kernel):
    """``%spawn`` has no shell, but its line is split as a shell splits it: ``'…'`` is left as written."""
    assert kernel.execute("n = 5\nv = 'x y'").status == "ok"
    ex = kernel.execute("%spawn printf '<%s>' '{n}' {n} \"{n}\" '{{n}}' 'a{v}b'")
    assert ex.stream_text().rstrip("\n") == "<{n}><5><5><{{n}}><a{v}b>"
    ex = kernel.execute("%spawn --param n printf '<%s>' '{n}' '{{n}}' \"{v}\"")
    assert ex.stream_text().rstrip("\n") == "<5><{n}><x y>"
