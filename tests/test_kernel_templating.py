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
    ex = kernel.execute("%%exec\n" + "\n".join(lines))
    assert ex.status == "ok", ex.reply
    expected = "".join(f"<{v}><{v}><{v}>\n" for v in values)
    assert ex.stream_text() == expected
    ex = kernel.execute("%%exec python\nfor v in {values}:\n    print(repr(v), repr('{values[0]}'))")
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
