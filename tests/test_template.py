"""Templating table (design §3.3): env first, then params; quoting by default."""

import pytest

from execmagic.engine.errors import TemplateError
from execmagic.engine.template import expand_argv, expand_env, expand_params, expand_value

ENV = {"HOME": "/home/u", "EMPTY": "", "PY": "/usr/bin/python3"}


@pytest.mark.parametrize(
    "text, expected",
    [
        ("${HOME}/data", "/home/u/data"),
        ("${PYTHON:-python3}", "python3"),
        ("${PY:-python3}", "/usr/bin/python3"),
        ("${EMPTY:-fallback}", "fallback"),
        ("${MISSING}", ""),
        ("$HOME stays", "$HOME stays"),
        ("no templates", "no templates"),
        ("${A:-x}-${HOME}", "x-/home/u"),
    ],
)
def test_env_expansion(text, expected):
    assert expand_env(text, ENV) == expected


@pytest.mark.parametrize("text", ["${unclosed", "${1BAD}", "${A B}"])
def test_env_malformed(text):
    with pytest.raises(TemplateError):
        expand_env(text, ENV)


PARAMS = {"name": "world", "evil": "x; rm -rf ~", "files": ["a b", "c"], "n": 3, "print": "NO"}


@pytest.mark.parametrize(
    "text, expected",
    [
        ("echo {name}", "echo world"),
        ("echo {evil}", "echo 'x; rm -rf ~'"),
        ("echo {evil!raw}", "echo x; rm -rf ~"),
        ("ls {files}", "ls 'a b' c"),
        ("seq {n}", "seq 3"),
        ("echo {unknown}", "echo {unknown}"),
        ("awk '{print $1}' f", "awk '{print $1}' f"),
        ("echo ${name}", "echo ${name}"),
        ("echo {{name}}", "echo {name}"),
        ("find . -exec grep -l x {} \\;", "find . -exec grep -l x {} \\;"),
        ("echo {{}}", "echo {}"),
        ('printf \'{"a": {"b": 1}}\'', 'printf \'{"a": {"b": 1}}\''),
        ("echo {a,b}", "echo {a,b}"),
    ],
)
def test_param_expansion_quotes_by_default(text, expected):
    assert expand_params(text, PARAMS) == expected


def test_param_expansion_unquoted_for_values():
    assert expand_params("{evil}", PARAMS, quote=False) == "x; rm -rf ~"
    assert expand_value("${HOME}/{name}", ENV, PARAMS) == "/home/u/world"


def test_env_runs_before_params():
    # a param value that looks like an env template is not expanded again
    assert expand_value("{v}", ENV, {"v": "${HOME}"}) == "${HOME}"
    assert expand_value("${X:-{name}}", ENV, PARAMS) == "world"


def test_argv_words_never_split():
    assert expand_argv(["echo", "{evil}", "{files}", "pre-{name}"], ENV, PARAMS) == [
        "echo", "x; rm -rf ~", "a b", "c", "pre-world",
    ]
