"""Templating: env first, then params, each value a literal of the place it stands in.

The hostile table runs real interpreters: every value, in every context, in
bash, sh and dash (and Python and node where the context is theirs), must come
out as exactly its own bytes, and nothing it says may run.
"""

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from execmagic.engine.contexts import ansi_c_quoting, contexts_at
from execmagic.engine.template import expand_argv, expand_env, expand_params, expand_value, fill
from execmagic.process.errors import TemplateError
from work_count import work

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
        ('echo "{evil}"', 'echo "x; rm -rf ~"'),
        ("echo '{evil}'", "echo 'x; rm -rf ~'"),
        ('echo "$(echo {evil})"', "echo \"$(echo 'x; rm -rf ~')\""),
    ],
)
def test_param_expansion_quotes_for_where_it_stands(text, expected):
    assert expand_params(text, PARAMS) == expected


def test_param_expansion_as_written_for_values():
    assert expand_params("{evil}", PARAMS, language=None) == "x; rm -rf ~"
    assert expand_value("${HOME}/{name}", ENV, PARAMS) == "/home/u/world"


def test_env_runs_before_params():
    # a param value that looks like an env template is not expanded again
    assert expand_value("{v}", ENV, {"v": "${HOME}"}) == "${HOME}"
    assert expand_value("${X:-{name}}", ENV, PARAMS) == "world"


def test_argv_words_never_split():
    assert expand_argv(["echo", "{evil}", "{files}", "pre-{name}"], ENV, PARAMS) == [
        "echo", "x; rm -rf ~", "a b", "c", "pre-world",
    ]


class Config:
    path = "/data/in put"
    _private = "hidden"


def test_attribute_and_item_access_like_str_format():
    params = {"cfg": {"path": "/data/x y", "list": [10, 20]}, "obj": Config(), "os": os}
    assert expand_params("ls {cfg['path']} {cfg[path]} {cfg[list][1]}", params) == \
        "ls '/data/x y' '/data/x y' 20"
    assert expand_params("ls {obj.path}", params) == "ls '/data/in put'"
    assert expand_params("{os.sep}", params) == "/"
    assert expand_params("{obj._private}", params) == "{obj._private}"  # private names are not templates
    with pytest.raises(TemplateError, match=r"\{cfg\['nope'\]\}: KeyError"):
        expand_params("{cfg['nope']}", params)
    with pytest.raises(TemplateError, match=r"AttributeError"):
        expand_params("{obj.nope}", params)


class Unprintable:
    def __str__(self):
        raise ValueError("no text for you")


@pytest.mark.parametrize("value, message", [
    (None, r"\{v\} is None"),
    ("a\0b", "NUL byte"),
    (b"a\0b", "NUL byte"),
    (Unprintable(), r"\{v\}: str\(\) of its Unprintable value failed: ValueError: no text for you"),
])
def test_values_that_cannot_be_text_are_one_line_errors(value, message):
    for language in ("bash", "sh", "zsh", "perl", None):
        with pytest.raises(TemplateError, match=message) as info:
            expand_params("echo {v}", {"v": value}, language=language)
        assert "\n" not in str(info.value)


def test_nul_bytes_are_escaped_where_a_literal_can_hold_them():
    assert expand_params("x = {v}", {"v": "a\0b"}, language="python") == "x = 'a\\x00b'"
    assert expand_params("x = {v}", {"v": b"a\0b"}, language="python") == "x = b'a\\x00b'"
    assert expand_params("x = {v}", {"v": "a\0b"}, language="node") == 'x = "a\\u0000b"'


def test_values_of_every_type():
    assert expand_params("echo {p} {b} {i} {f} {t}", {
        "p": pathlib.Path("/a b"), "b": b"\xff\xfe", "i": 7, "f": 1.5, "t": True,
    }) == "echo '/a b' '\udcff\udcfe' 7 1.5 True"
    assert expand_params("x = {v}", {"v": None}, language="python") == "x = None"
    assert expand_params("x = {v}", {"v": {"a": [1, 2.5, None, True]}}, language="python") == \
        "x = {'a': [1, 2.5, None, True]}"
    assert expand_params("x = {v}", {"v": float("nan")}, language="python") == "x = float('nan')"
    assert expand_params("x = {v}", {"v": {"a": [1, None, True]}}, language="node") == 'x = {"a": [1, null, true]}'


@pytest.mark.parametrize("template", ["cat <<EOF\n{v}\nEOF", "cat <<'EOF'\n{v}\nEOF", "cat <<-EOF\n{v}\n\tEOF"])
def test_a_value_cannot_end_a_heredoc_early(template):
    with pytest.raises(TemplateError, match="would end the heredoc early"):
        expand_params(template, {"v": "data\nEOF\nrm -rf ~"})


def test_arithmetic_takes_only_integers():
    assert expand_params("echo $(( {n} + 1 ))", {"n": 41}) == "echo $(( 41 + 1 ))"
    with pytest.raises(TemplateError, match="arithmetic"):
        expand_params("echo $(( {n} + 1 ))", {"n": "1 + x"})


def test_single_quotes_inside_a_quoted_parameter_expansion_are_refused():
    assert expand_params('echo "${X:-{v}}"', {"v": 'a"b$c'}) == 'echo "${X:-a\\"b\\$c}"'
    with pytest.raises(TemplateError, match="single quote"):
        expand_params('echo "${X:-{v}}"', {"v": "it's"})


# -- the hostile table: real interpreters, exact bytes, nothing runs ----------------------------
def hostile_values(marker: str) -> list[object]:
    touch = f"touch {marker}"
    return [
        f"$({touch})", f"`{touch}`", f"; {touch}", f"&& {touch}", f"| {touch}", f"\n{touch}\n",
        f"'$({touch})'", f'"$({touch})"', f"'; {touch}; '", f'"; {touch}; "', f"$'\\'; {touch}; '",
        "'", '"', "\\", "\\'", '\\"', "$'\\x41'", "!", "!!", "*", "?", "[a]", "~", "-rf", "--version",
        "a b  c", "", " ", "\t", "${HOME}", "$HOME", "$((1+1))", "}", "{", "{x}", "\\\n", "é ü 😀",
        b"\xff\xfe latin1 \xe9", "a'b\"c\\d`e$f", "#", "%s", "\r\n", "\x1b[31m", "*/", "\\u0041",
        f"EOF\n{touch}", ")", "))", "`", "$", "\\$(x)",
    ]


def as_bytes(value: object) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode("utf-8", "surrogateescape")


SHELL_CONTEXTS = {
    "unquoted": ("printf '%s\\0' {v}", lambda b: b),
    "double quotes": ("printf '%s\\0' \"{v}\"", lambda b: b),
    "single quotes": ("printf '%s\\0' '{v}'", lambda b: b),
    "ansi-c quotes": ("printf '%s\\0' $'{v}'", None),  # expected depends on the shell
    "heredoc": ("cat <<EOF\n{v}\nEOF\nprintf '\\0'", lambda b: b + b"\n"),
    "quoted heredoc": ("cat <<'EOF'\n{v}\nEOF\nprintf '\\0'", lambda b: b + b"\n"),
    "comment": ("printf 'ok\\0' # {v}", lambda b: b"ok"),
    "command substitution": ("printf '%s\\0' \"$(printf '%s' {v})\"", lambda b: b.rstrip(b"\n")),
    "backticks": ("printf '%s\\0' \"`printf '%s' {v}`\"", lambda b: b.rstrip(b"\n")),
}
SHELLS = [s for s in ("bash", "sh", "dash") if shutil.which(s)]


@pytest.mark.parametrize("context", list(SHELL_CONTEXTS))
@pytest.mark.parametrize("language", SHELLS)
def test_hostile_values_in_shell_contexts(engine, tmp_path, language, context):
    marker = tmp_path / "pwned"
    template, expect = SHELL_CONTEXTS[context]
    values = [v for v in hostile_values(str(marker))
              if not (context.endswith("heredoc") and "EOF" in str(v).split("\n"))]
    if expect is None:
        dollar = b"$" if ansi_c_quoting(language) is False else b""
        def expect(b):
            return (dollar + b)
    got = run_table(engine, tmp_path, language, template, values)
    assert len(got) == len(values)
    for value, out in zip(values, got, strict=False):
        assert out == expect(as_bytes(value)), (language, context, value)
    assert not marker.exists()


def run_table(engine, tmp_path, language, template, values, prelude=""):
    """One script, one line per value, its output written to a file; returns the NUL-separated outputs."""
    out = tmp_path / "out.bin"
    redirect = f"exec > {out}\n" if language in SHELLS else ""
    script = redirect + prelude + "\n".join(template.replace("{v}", f"{{v{i}}}") for i in range(len(values)))
    params = {f"v{i}": v for i, v in enumerate(values)}
    result = engine.run_script(script, language, params=params, cwd=str(tmp_path), isolated=True,
                               env={"OUT": str(out)})
    assert result.exit_code == 0, (result.stderr, language, template)
    return out.read_bytes().split(b"\0")[:-1]


PY_PRELUDE = ("import os\nsink = open(os.environ['OUT'], 'wb', buffering=0)\n"
              "def out(v): sink.write((v if isinstance(v, bytes) else os.fsencode(str(v))) + b'\\0')\n")
PYTHON_CONTEXTS = {
    "code": "out({v})",
    "double-quoted string": 'out("{v}")',
    "single-quoted string": "out('{v}')",
    "triple-quoted string": 'out("""{v}""")',
    "raw string": 'out(r"{v}")',
    "f-string": 'out(f"{v}")',
    "raw f-string": "out(rf'{v}')",
    "bytes string": 'out(b"{v}")',
    "comment": "out('ok')  # {v}",
}
JS_PRELUDE = ("const fs = require('fs'); const fd = fs.openSync(process.env.OUT, 'w');\n"
              "const out = v => fs.writeSync(fd, Buffer.concat([Buffer.from(String(v)), Buffer.from([0])]));\n")
JS_CONTEXTS = {
    "code": "out({v})",
    "single-quoted string": "out('{v}')",
    "double-quoted string": 'out("{v}")',
    "template literal": "out(`{v}`)",
    "template substitution": "out(`${ {v} }`)",
    "comment": "out('ok') // {v}",
    "block comment": "out('ok') /* {v} */",
}


@pytest.mark.parametrize("context", list(PYTHON_CONTEXTS))
def test_hostile_values_in_python(engine, tmp_path, context):
    marker = tmp_path / "pwned"
    values = hostile_values(str(marker)) + [f"__import__('os').system('touch {marker}')", '"""', "{{", None, 3]
    if context != "code":
        values = values[:-2]  # None and numbers are literals in code; in a string they are text
    got = run_table(engine, tmp_path, "python", PYTHON_CONTEXTS[context], values, PY_PRELUDE)
    expected = [b"ok" if context == "comment" else as_bytes(v) for v in values]
    if context == "code":
        expected[-2:] = [b"None", b"3"]
    assert got == expected
    assert not marker.exists()


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
@pytest.mark.parametrize("context", list(JS_CONTEXTS))
def test_hostile_values_in_node(engine, tmp_path, context):
    marker = tmp_path / "pwned"
    values = [v for v in hostile_values(str(marker)) if not isinstance(v, bytes)]
    values += [f"require('child_process').execSync('touch {marker}')", "${process.exit(3)}"]
    got = run_table(engine, tmp_path, "node", JS_CONTEXTS[context], values, JS_PRELUDE)
    assert got == [b"ok" if "comment" in context else as_bytes(v) for v in values]
    assert not marker.exists()


def test_the_table_is_as_wide_as_promised():
    values = hostile_values("/x")
    assert len(values) >= 30
    assert len(SHELL_CONTEXTS) >= 7 and len(PYTHON_CONTEXTS) >= 2 and len(JS_CONTEXTS) >= 2


# -- places values once escaped from: defaults, heredocs, comments (each ran its payload once) ----
ESCAPES = [
    ("bash", 'X=; printf "%s\\036" "${X:-\'{v}\'}"', "'{p}'"),
    ("sh", 'X=; printf "%s\\036" "${X:-\'{v}\'}"', "'{p}'"),
    ("bash", "X=\ncat <<EOF\n${X:-'{v}'}\nEOF\nprintf '\\036'", "'{p}'\n"),
    ("bash", 'X=; printf "%s\\036" "${X:-$\'{v}\'}"', "{p}"),  # extquote: $'…' is read there
    ("bash", "printf '%s\\036' ${X:- #{v}}", "#{p}"),
    ("dash", "printf '%s\\036' ${X:- #{v}}", "#{p}"),
    ("bash", 'printf "%s\\036" "$(case a in a) printf %s "{v}";; esac)"', "{p}"),
    ("dash", 'printf "%s\\036" "$(case a in a) printf %s "{v}";; esac)"', "{p}"),
    ("bash", 'printf "%s\\036" "$(echo case) {v}"', "case {p}"),
    ("bash", "cat <<$'EOF'\nx\nEOF\nprintf '%s\\036' {v}", "x\n{p}"),
    ("bash", "x=$(cat <<'EOF'\nhi\nEOF\n)\nprintf '%s\\036' {v}", "{p}"),
    ("bash", "printf '%s\\036' `echo a # x`\nprintf '%s\\036' \"{v}\"", "a\x1e{p}"),
    ("python", "import sys\n# {v}\nsys.stdout.write('ok\\036')", "ok"),
    ("node", "process.stdout.write(`{v}{w}` + '\\036')", "{p}$"),
    ("node", "process.stdout.write(/{v}/.source.length + '\\036')", None),
    ("node", "process.stdout.write('a'.replace(/'/g, '') + `{v}` + '\\036')", "a{p}"),
]


@pytest.mark.parametrize("language, script, expected", ESCAPES)
def test_values_that_once_escaped_stay_values(engine, tmp_path, language, script, expected):
    if shutil.which({"python": "true", "node": "node"}.get(language, language)) is None:
        pytest.skip(f"{language} is not installed")
    marker = tmp_path / "pwned"
    payload = {"python": f"\r__import__('os').system('touch {marker}')",
               "node": f"${{require('child_process').execSync('touch {marker}')}}"}.get(
        language, f"$(touch {marker})")
    params = {"v": payload, "w": "$"}
    result = engine.run_script(script, language, params=params, cwd=str(tmp_path), isolated=True)
    assert not marker.exists(), (script, result.stdout)
    if expected is not None:
        assert result.stdout.split("\x1e")[:-1] == expected.format(p=payload).split("\x1e"), result.stderr


@pytest.mark.parametrize("script", ["[[ {v} -eq 1 ]]", "let x={v}", "declare -i n; n={v}", "echo $[ {v} ]",
                                    "a=(1); echo ${{a[{v}]}}", "x=abc; echo ${{x:{v}}}", "x='{v}'; echo $((x))"])
def test_array_subscripts_with_substitutions_are_refused_in_shell_code(engine, tmp_path, script):
    marker = tmp_path / "pwned"
    with pytest.raises(TemplateError, match=r"array subscript with a substitution"):
        engine.run_script(script.replace("{{", "{").replace("}}", "}") if "{{a" in script or "{{x" in script
                          else script, params={"v": f"a[$(touch {marker})]"}, cwd=str(tmp_path), isolated=True)
    assert not marker.exists()


class Sneaky(int):
    def __repr__(self):
        return "__import__('os').system('touch pwned')"

    __str__ = __repr__


class SneakyText(str):
    def __repr__(self):
        return "__import__('os').system('touch pwned')"


@pytest.mark.parametrize("value, python, node", [
    (Sneaky(7), "x = 7", "x = 7"),
    ({Sneaky(1): [Sneaky(2)]}, "x = {1: [2]}", None),
    (SneakyText("hi"), "x = 'hi'", 'x = "hi"'),
])
def test_a_subclass_never_writes_its_own_literal(value, python, node):
    assert expand_params("x = {v}", {"v": value}, language="python") == python
    if node is not None:
        assert expand_params("x = {v}", {"v": value}, language="node") == node


def test_python_source_after_a_keyword_and_lone_surrogates():
    assert expand_params("def f(): return'{v}'", {"v": "it's"}, language="python") == "def f(): return'it\\'s'"
    with pytest.raises(TemplateError, match="lone surrogate"):
        expand_params("echo {v}", {"v": "\ud800"})
    assert expand_params("x = {v}", {"v": "\ud800"}, language="python") == "x = '\\ud800'"


# -- places in nested code values once escaped from, run for real (each ran its payload once) ----
JS_PAYLOAD = "'+require('child_process').execSync('touch {m}')+'"
NESTED_ESCAPES = [
    ("bash", "echo $(echo a)#{v}", ";touch {m}", "a#;touch {m}"),
    ("dash", "echo $(echo a)#{v}", ";touch {m}", "a#;touch {m}"),
    ("bash", "echo $((1))#{v}", ";touch {m}", "1#;touch {m}"),
    ("bash", 'echo "$(if true; then case a in a) echo {v};; esac; fi)"', "x; touch {m}", "x; touch {m}"),
    ("dash", 'echo "$(if true; then case a in a) echo {v};; esac; fi)"', "x; touch {m}", "x; touch {m}"),
    ("bash", 'echo "$({ case a in a) echo {v};; esac; })"', "x; touch {m}", "x; touch {m}"),
    ("bash", 'echo "$(true;case=1) {v}"', "$(touch {m})", " $(touch {m})"),
    ("bash", 'echo "$(case a in esac) {v}"', "$(touch {m})", " $(touch {m})"),
    ("bash", 'echo "${X:-<<EOF}"\necho {v}', "x; touch {m}", "<<EOF\nx; touch {m}"),
    ("bash", "echo $[1<<2]\necho {v}", "x; touch {m}", "4\nx; touch {m}"),
    ("bash", "for((i=0;i<1<<1;i++)); do :; done\necho {v}", "x; touch {m}", "x; touch {m}"),
    ("bash", "echo `echo \\`echo {v}\\``", "`;touch {m};`", "`;touch {m};`"),
    ("bash", 'echo `echo \\`echo "{v}"\\``', "$(touch {m})", "$(touch {m})"),
    ("bash", 'echo "$( (case a in a) echo;; esac) ; echo {v} )"', "$(touch {m})", "$(touch {m})"),
    ("bash", "echo $((echo a); echo ')) {v}')", "$(touch {m})", "a )) $(touch {m})"),
    ("bash", "for ((i=0; i<1; i++)); do echo {v}; done", "$(touch {m})", "$(touch {m})"),
    ("bash", 'echo "$(case a in (a) echo x;; esac) {v}"', "$(touch {m})", "x $(touch {m})"),
    ("node", "let i=1; let b = i++ / 2 + ' / '; console.log('{v}')", JS_PAYLOAD, JS_PAYLOAD),
    ("node", "let x = 1 <!-- /*\nconsole.log('{v}')\n// */", JS_PAYLOAD, JS_PAYLOAD),
    ("node", "if (1) /'/.test('a'); console.log('{v}')", JS_PAYLOAD, JS_PAYLOAD),
    ("node", "let a = (4) / 2; console.log('{v}' + a)", JS_PAYLOAD, JS_PAYLOAD + "2"),
]


@pytest.mark.parametrize("language, script, value, expected", NESTED_ESCAPES)
def test_values_stay_values_in_nested_code(engine, tmp_path, language, script, value, expected):
    if shutil.which(language) is None:
        pytest.skip(f"{language} is not installed")
    marker = tmp_path / "pwned"
    value, expected = value.format(m=marker), expected.format(m=marker)
    result = engine.run_script(script, language, params={"v": value}, cwd=str(tmp_path), isolated=True)
    assert not marker.exists(), script
    assert result.stdout.rstrip("\n").endswith(expected), (result.stdout, result.stderr)


@pytest.mark.parametrize("language, script, value, message", [
    ("python", 'x = "s"\nprint(f"{x:{v}}")', "{__import__('os')}", "format spec"),
    ("bash", "[[ {v} -eq 0 ]]", "a[b[0]+$(touch x)]", "array subscript"),
    ("bash", "declare -i n; n={v}", "a[b[0]`touch x`]", "array subscript"),
    ("bash", "echo \"${X:-'}' {v}}\"", "'", "single quote"),
])
def test_places_no_literal_can_hold_a_value_are_refused(language, script, value, message):
    with pytest.raises(TemplateError, match=message):
        expand_params(script, {"v": value}, language=language)


@pytest.mark.parametrize(("language", "script"), [
    ("bash", "echo \\{v}"), ("bash", 'echo "\\{v}"'), ("sh", "cat <<EOF\n\\{v}\nEOF"), ("bash", "echo $'\\{v}'"),
    ("bash", "echo `echo \\\\{v}`"), ("bash", "echo `echo '\\{v}'`"), ("python", "print('\\{v}')"),
    ("python", 'print(r"\\{v}")'), ("node", "console.log('\\{v}')"), ("node", "console.log(`\\{v}`)"),
])
def test_a_value_right_after_a_backslash_is_refused(language, script):
    """The backslash would escape the literal's first character: ``echo \\'…'`` runs the value as code."""
    with pytest.raises(TemplateError, match=r"^\{v\} follows a backslash, which would escape"):
        expand_params(script, {"v": "'\n; touch pwned\n'"}, language=language)


@pytest.mark.parametrize(("language", "script", "expected"), [
    ("bash", "printf '%s' \\\\{v}", "\\a'b\nc"),   # an escaped backslash: the value is one word after it
    ("bash", "printf '%s' '\\{v}'", "\\a'b\nc"),   # in '…' a backslash is an ordinary character
    ("bash", "printf '%s' x # \\{v}", "x"),
    ("python", "import sys; sys.stdout.write('\\\\{v}') # \\{v}", "\\a'b\nc"),
])
def test_a_backslash_that_escapes_nothing_is_fine(language, script, expected):
    text = expand_params(script, {"v": "a'b\nc"}, language=language)
    argv = ["bash", "-c", text] if language == "bash" else [sys.executable, "-c", text]
    assert subprocess.run(argv, capture_output=True, text=True, timeout=10).stdout == expected


@pytest.mark.parametrize("script", ["x=(<<'E'\n{v}\nE", "x=(|\necho {v}", "a[0]=(;)\necho \"{v}\"", "y+=(a) x=(>)\n{v}"])
def test_a_value_after_an_array_syntax_error_is_refused(tmp_path, script):
    """Bash reports a syntax error inside NAME=( … ) and goes on at a later line: what follows is code."""
    bash_goes_on = script.split("\n")[0] + "\ntouch marker"
    subprocess.run(["bash", "-c", bash_goes_on], capture_output=True, cwd=tmp_path, timeout=10)
    assert (tmp_path / "marker").exists()
    with pytest.raises(TemplateError, match=r"^\{v\} stands after a syntax error in an array assignment"):
        expand_params(script, {"v": "; touch pwned"}, language="bash")


def test_values_inside_a_well_formed_array_stay_values():
    text = expand_params("x=( {v} \"{v}\" '{v}' # {v}\n ); printf '<%s>' \"${x[@]}\"", {"v": "a b|c;d"})
    done = subprocess.run(["bash", "-c", text], capture_output=True, text=True, timeout=10)
    assert done.stdout == "<a b|c;d>" * 3


@pytest.mark.parametrize(("language", "script"), [
    ("python", "x = 1  # note\r{v}"),
    ("node", "let x = 1 // note\u2028{v}"), ("node", "let x = 1 // note\r{v}"), ("node", "let x = 1 <!-- note\u2029{v}"),
    ("node", "let x = /a\u2028{v}"),
])
def test_a_comment_ends_at_every_line_end_the_language_knows(tmp_path, language, script):
    """Python ends a line at "\\r" too, JavaScript at "\\r", U+2028 and U+2029: what follows is code."""
    marker = tmp_path / "pwned"
    value = (f"__import__('os').system('touch {marker}')" if language == "python"
             else f"require('fs').writeFileSync('{marker}', '')")
    text = expand_params(script, {"v": value}, language=language)
    argv = [sys.executable, "-c", text] if language == "python" else ["node", "-e", text]
    subprocess.run(argv, capture_output=True, cwd=tmp_path, timeout=30)
    assert not marker.exists(), text


# -- a notebook variable goes where $VAR would go; a param everywhere ------------------------------------
WHERE = [
    ("bash", "echo {w} \"{w}\" $(( {n} )) ${X:-{w}}", "echo 'a b' \"a b\" $(( 5 )) ${X:-'a b'}"),
    ("bash", "cat <<EOF\n{w}\nEOF", "cat <<EOF\na b\nEOF"),
    ("bash", "awk '{n}' f; sed -n '{p}'; echo $'{w}'", "awk '{n}' f; sed -n '{p}'; echo $'{w}'"),
    ("bash", "cat <<'EOF'\n{w}\nEOF\n# {w}", "cat <<'EOF'\n{w}\nEOF\n# {w}"),
    ("bash", "echo \"$(awk '{n}')\" `echo {w}`", "echo \"$(awk '{n}')\" `echo 'a b'`"),
    ("dash", "echo {w} '{w}'", "echo 'a b' '{w}'"),
    ("python", 'for i in range(3): print(f"item {i}", "{w}", {n})', 'for i in range(3): print(f"item {i}", "{w}", {n})'),
    ("node", "console.log(`${i}`, '{w}', {n})", "console.log(`${i}`, '{w}', {n})"),
    ("perl", "print '{w}'", "print '{w}'"),
    (None, "{w}/{n}", "a b/5"),
]


@pytest.mark.parametrize(("language", "script", "expected"), WHERE)
def test_a_notebook_variable_fills_only_where_a_shell_expands_a_variable(language, script, expected):
    variables = {"w": "a b", "n": 5, "p": "/data/raw", "i": 42}
    assert expand_params(script, {}, language=language, variables=variables) == expected


def test_a_notebook_variable_fills_the_options_values_and_argv_words():
    """``--cwd``, ``--env`` and ``--input`` values and ``%spawn``'s words pass through no interpreter: every place fills."""
    assert expand_value("{w}/x {{w}}", ENV, {}, {"w": "a b"}) == "a b/x {w}"
    assert expand_argv(["ls", "{xs}", "-{w}"], ENV, {}, {"xs": ["a", "b c"], "w": "l"}) == ["ls", "a", "b c", "-l"]


@pytest.mark.parametrize("language", ["bash", "python", "node", "perl"])
def test_a_param_fills_everywhere_and_wins_over_a_variable(language):
    text = expand_params("x = '{w}'", {"w": "p"}, language=language, variables={"w": "v"})
    assert text == "x = 'p'"


@pytest.mark.parametrize(("language", "script", "expected"), [
    ("bash", "docker inspect -f '{{.State.Running}}' c; echo {{x}} \"{{y}}\"",
     "docker inspect -f '{{.State.Running}}' c; echo {x} \"{y}\""),
    ("bash", "echo '{{v}}' '{{x}}'", "echo '{v}' '{{x}}'"),        # where {v} fills, {{v}} is its escape
    ("python", 'print(f"{{x}}", f"{{v}}")', 'print(f"{{x}}", f"{v}")'),
    ("node", "const o = {{a: 1}}", "const o = {{a: 1}}"),
])
def test_double_braces_are_a_brace_only_where_a_template_would_fill(language, script, expected):
    assert expand_params(script, {"v": 1}, language=language, variables={"x": 2}) == expected


def test_what_filled_and_what_was_left_is_told():
    done = fill("echo {w} '{w}' {n_row} '{n}' {undefined} '{print}' {v}", {"v": [1, 2]}, language="bash",
                variables={"w": "x", "n": 1, "n_rows": 3})
    assert [(f.ref, f.value, f.from_variables) for f in done.fills] == [("w", "x", True), ("v", [1, 2], False)]
    assert done.notes == (
        "{n_row} names no variable and was left as written; did you mean {n_rows}?",
        "{w}, {n} in single quotes are left as written: notebook variables fill only where the shell expands $VAR;"
        " --param w --param n fill them there too",
    )
    # in a python or node cell: a name in a plain string literal may be an old template; f-strings, comments,
    # template literals and other forms in code are the language's own
    assert fill("print('{w}', f'{w}', {w}) # {w}", {}, language="python", variables={"w": 1}).notes == (
        "{w} in a Python string is left as written: notebook variables fill only where a shell would expand $VAR,"
        " never in a python or node cell's code; --param w fills it there too",)
    assert fill("log(`${w} {w}`, {w: 1}, {w[0]}) // {w}", {}, language="node", variables={"w": 1}).notes == ()
    assert fill("log('{w}')", {}, language="node", variables={"w": 1}).notes[0].startswith(
        "{w} in a JavaScript string is left as written")
    # a typo of a param is told anywhere; a variable's only where it would fill; awk and find say nothing
    assert fill("print('{limt}')", {"limit": 1}, language="python").notes[0].endswith("did you mean {limit}?")
    assert fill("print(f'{n_row}')", {}, language="python", variables={"n_rows": 1}).notes == ()
    assert fill("awk '{print $1}' f; find . -exec echo {} \\;", {}, variables={"print": 1}).notes == ()


@pytest.mark.parametrize(("language", "code", "params", "noted"), [
    ("python", "print({n})", {}, "{n} in Python code"),  # a set of a name the cell never defined: a NameError
    ("node", "console.log({n})", {}, "{n} in JavaScript code"),
    ("python", "for i in range(3): print(f'item {i}')", {}, None),  # an f-string's field is the user's
    ("python", "s = {k}\nd = {n: 1}\nt = {n[0]} # {n}", {}, None),  # not a notebook variable; other forms
    ("python", "print({n})", {"n": 5}, None),  # passed with --param: it fills
])
def test_a_notebook_variable_left_bare_in_a_python_or_node_cells_code_is_told(language, code, params, noted):
    notes = fill(code, params, language=language, variables={"n": 5, "i": 42}).notes
    assert notes == (() if noted is None else (
        f"{noted} is left as written: notebook variables fill only where a shell would expand $VAR, never in a"
        " python or node cell's code; --param n fills it there too",))


@pytest.mark.parametrize("form", ["{x!r}", "{x.upper()}", "{x:>10}", "{x[0]!s}", "{x(1)}"])
def test_a_form_that_is_not_filled_is_refused_where_it_would_fill(form):
    with pytest.raises(TemplateError, match=r"is a form that is not filled.*write \{\{"):
        expand_params(f"echo {form}", {}, variables={"x": "v"})
    with pytest.raises(TemplateError, match="is a form that is not filled"):
        expand_params(f"print(f'{form}')", {"x": "v"}, language="python")
    # where the name would not fill, it is the language's own text
    assert expand_params(f"echo '{form}'", {}, variables={"x": "v"}) == f"echo '{form}'"
    assert expand_params(f"print(f'{form}')", {}, language="python", variables={"x": "v"}) == f"print(f'{form}')"
    assert expand_params("cp f.{x,y} {a..c}", {}, variables={"x": "v", "a": 1}) == "cp f.{x,y} {a..c}"


def test_a_template_left_as_written_is_read_as_the_text_it_is(tmp_path):
    """``'{a[']}`` left as written ends the quote at its own ``'``: what follows is code to bash, and a
    value there must be written as code, not as text of a quote the walk would wrongly think still open."""
    marker = tmp_path / "pwned"
    script = "printf '<%s>' '{a[']}{v}'x'"
    text = expand_params(script, {"v": f"x; touch {marker}"}, variables={"a": {"'": 1}})
    done = subprocess.run(["bash", "-c", text], capture_output=True, cwd=tmp_path, timeout=10)
    assert not marker.exists(), text
    assert done.stdout.decode() == f"<{{a[]}}x; touch {marker}x>"


@pytest.mark.parametrize("shell", ["bash", "dash"])
@pytest.mark.parametrize("script", ["echo `cat <<`x\n{v}\nx\n", "`cat <<`x\n{v}\n", "echo `cat <<x`\n{v}\nx\n",
                                    "echo \"`cat <<x`\"\n{v}\nx\n", "echo $(echo `cat <<x`)\n{v}\nx\n",
                                    "echo `echo \\`cat <<x\\``\n{v}\nx\n", "echo `cat <<x; cat <<y`\n{v}\nx\ny\n",
                                    "echo `cat <<'`'x {v}\n`\n"])
def test_a_heredoc_opened_in_backticks_ends_with_them(tmp_path, script, shell):
    """Bash and dash read a backtick's body to the next backtick before they parse it: a heredoc opened in it has
    its body there or nowhere (``echo `cat <<x```: the next lines are code), and its word ends at that backtick
    (``<<`x``: the word is empty).  Read as the body of a heredoc, a value there was written as heredoc text --
    its newline and ``;`` as they are -- and ran as code."""
    marker = tmp_path / "pwned"
    for value in [f"x; touch {marker}", f"\ntouch {marker}\n", f"x\ntouch {marker}"]:
        text = expand_params(script, {"v": value}, language=shell)
        subprocess.run([shell, "-c", text], capture_output=True, cwd=tmp_path, timeout=10)
        assert not marker.exists(), text


@pytest.mark.parametrize("script", ["echo $(cat <<x)\n{v}\nx\n", "echo \"$(cat <<x)\"\n{v}\nx\n",
                                    "echo $(cat <<x; echo)\n{v}\nx\n"])
def test_a_heredoc_opened_in_a_substitution_that_ends_on_its_line_is_no_place_for_a_value_in_dash(tmp_path, script):
    """Dash ends the body of a heredoc opened in a ``$( … )`` at its ``)`` (the next lines are code: a value there,
    written as heredoc text, ran), and reads that of one in a ``( … )`` on the next lines, as bash reads both:
    refused there for dash, filled for bash, and a heredoc whose body is inside the ``$( … )`` fills for both."""
    marker = tmp_path / "pwned"
    with pytest.raises(TemplateError, match="heredoc opened inside"):
        expand_params(script, {"v": f"x; touch {marker}"}, language="dash")
    text = expand_params(script, {"v": f"y\ntouch {marker}"}, language="bash")
    subprocess.run(["bash", "-c", text], capture_output=True, cwd=tmp_path, timeout=10)
    assert not marker.exists(), text
    kept = "x=$(cat <<EOF\n{v}\nEOF\n)\necho \"$x\"\n"
    text = expand_params(kept, {"v": f"x; touch {marker}"}, language="dash")
    assert subprocess.run(["dash", "-c", text], capture_output=True, text=True, cwd=tmp_path).stdout == \
        f"x; touch {marker}\n" and not marker.exists()


# -- a python cell's brackets ------------------------------------------------------------------
def test_python_brackets_cost_no_step_each():
    """A line of 20,000 ``(`` in a python cell was a step of Python per bracket: the script's own brackets change
    nothing, and a replacement field's are read a run at a time."""
    for text in ["x = " + "(" * 20_000 + " {n}", 'f"{' + "(" * 20_000 + "{n}"]:
        spans = [(len(text) - 3, len(text))]
        assert work(lambda text=text, spans=spans: contexts_at(text, spans, "python")) < 2_000


@pytest.mark.parametrize(("text", "kinds"), [
    ('f"{((({n})))}" + \'{m}\'', ["py-code", "py-string"]),
    ('f"{d[{{n}: 1}[2]]}{m}" \'{k}\'', ["py-code", "py-string", "py-string"]),
    ('f"{x[(1]}{n}" {m}', ["py-code", "py-string"]),  # "(" still open: the "}" closes no field
    ('f"{x)))}" {n}', ["py-code"]),
    ('f"{x:{(({n}}}" {m}', ["py-code", "py-string"]),
    ("(((( {n} ]]]] '{m}' ((", ["py-code", "py-string"]),
    # a string with nothing in it to stop at is passed in one step; one holding a template is not
    ('"a" {n} "b{m}" \'\'\'c"\'\'\' {k}', ["py-code", "py-string", "py-code"]),
    ('"a\\"{n}" f"{{" {m}', ["py-string", "py-code"]),
])
def test_python_brackets_read_a_run_at_a_time_end_a_field_where_they_did(text, kinds):
    import re
    spans = [m.span() for m in re.finditer(r"\{[nmk]\}", text)]
    found = contexts_at(text, spans, "python")
    assert [found[start].kind for start, _ in spans] == kinds
