"""Our shell reader against tree-sitter, question by question, on the corpora the tests hold.

    python tests/benchmarks/shell_front_end.py [--fuzz N] [--repeat N]

Needs ``tree-sitter`` (0.26), ``tree-sitter-bash`` (0.25), ``tree-sitter-python`` and
``tree-sitter-javascript`` installed (they are not dependencies of the package).  Four questions
our code answers today, each asked of our scanner and of a tree-sitter based answer (the syntax tree
plus the few lines a caller would need on top of it, written here):

* **shell template context** (``shell/walk.py``): where a ``{name}`` lands in a bash/sh/dash
  script -- code, ``"…"``, ``'…'``, ``$'…'``, heredoc, arithmetic, comment, inside backticks or
  ``"${…}"`` -- which decides how its value is written;
* **Python/JS template context** (``engine/code_scan.py``): the same for Python and node;
* **guard words** (``shell/lexer.py``'s ``tokenize``): the words of a command after quote removal, and the
  ``$(…)``/backtick/``<(…)`` bodies in each that the shell runs;
* **surely parses** (``shell/plain_syntax.py`` over the lexer's tokens): whether ``bash -n`` accepts a script (a *yes*
  must never be wrong; a *no* only sends the script to a new bash).

Corpora: the templating tables and both tables of escapes (``tests/engine/test_template.py``), the
guard tables (``tests/guard/test_rules.py``, ``tests/guard/test_respellings.py``), and
``tests/shell/test_plain_syntax.py``'s lists and its random-script generator (unfiltered).
Where the two answers differ, bash (or python3/node) is the judge: a template answer is right when
every payload comes out as its own bytes (where the row says what to expect) and none runs; a word
split is right when it is the argv ``printf '%s\\0'`` receives (judged only for single commands
without ``$``, backticks or redirections: nothing in them can run); a parse answer is right when it
is ``bash -n``'s.  Prints one Markdown table; nothing here runs in the default suite.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
sys.path.insert(0, TESTS)

from execmagic.engine.contexts import ansi_c_quoting, contexts_at  # noqa: E402
from execmagic.engine.literals import render  # noqa: E402
from execmagic.engine.template import _PARAM_REF  # noqa: E402
from execmagic.process.errors import TemplateError  # noqa: E402
from execmagic.shell.lexer import tokenize  # noqa: E402
from execmagic.shell.plain_syntax import _ALIAS, surely_parses  # noqa: E402
from execmagic.shell.scanning import Context  # noqa: E402
from execmagic.shell.words import Word, unescape  # noqa: E402

SETUP_CODE = ("import time; t = time.perf_counter(); import tree_sitter as ts, tree_sitter_bash as b, "
              "tree_sitter_python as p, tree_sitter_javascript as j; i = time.perf_counter(); "
              "[ts.Parser(ts.Language(m.language())) for m in (b, p, j)]; s = time.perf_counter(); "
              "print((i - t) * 1e3, (s - i) * 1e3)")

import tree_sitter as ts  # noqa: E402
import tree_sitter_bash  # noqa: E402
import tree_sitter_javascript  # noqa: E402
import tree_sitter_python  # noqa: E402

BASH = ts.Parser(ts.Language(tree_sitter_bash.language()))
PYTHON = ts.Parser(ts.Language(tree_sitter_python.language()))
NODE = ts.Parser(ts.Language(tree_sitter_javascript.language()))
SHELLS = ("bash", "sh", "dash")


def load(path: str) -> Any:
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], os.path.join(TESTS, path))
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


# -- tree-sitter answers ---------------------------------------------------------------------------------
def _ancestors(node: ts.Node) -> list[ts.Node]:
    chain = []
    while node is not None:
        chain.append(node)
        node = node.parent
    return chain


def _placeholders(text: str, spans: list[tuple[int, int]]) -> bytes:
    """The text with each template replaced by a plain name of the same length (its own text is never code)."""
    out = text
    for start, end in spans:
        out = out[:start] + "x" * (end - start) + out[end:]
    return out.encode()


def ts_shell_contexts(text: str, spans: list[tuple[int, int]], language: str) -> dict[int, Context]:
    source = _placeholders(text, spans)
    root = BASH.parse(source).root_node
    ansi_c = ansi_c_quoting(language)
    found = {}
    for start, _ in spans:
        offset = len(text[:start].encode())
        found[start] = _shell_context(root.descendant_for_byte_range(offset, offset), offset, ansi_c)
    return found


def _shell_context(node: ts.Node, offset: int, ansi_c: bool | None) -> Context:
    chain = _ancestors(node)
    ticks = tuple(any(a.type == "string" for a in chain[i + 1:]) for i, n in enumerate(chain)
                  if n.type == "command_substitution" and n.text.startswith(b"`"))
    for index, n in enumerate(chain):
        kind = n.type
        if kind == "comment":
            return Context("comment", backticks=ticks)
        if kind == "heredoc_body":
            start = next(c for c in n.parent.children if c.type == "heredoc_start").text.decode()
            quoted = any(c in start for c in "'\"\\")
            delimiter = re.sub(r"['\"\\]", "", start)
            strip = n.parent.children[0].text == b"<<-"
            return Context("heredoc-quoted" if quoted else "heredoc", delimiter=delimiter, strip_tabs=strip,
                           backticks=ticks)
        in_param = any(a.type == "expansion" for a in chain[:index]) and kind in ("string", "heredoc_body")
        if kind == "raw_string":
            outer = [a.type for a in chain[index + 1:]]
            if "expansion" in outer and any(t in ("string", "heredoc_body") for t in outer):
                return Context("dquote", backticks=ticks, in_param=True)  # bash: '…' is plain text there
            return Context("squote", backticks=ticks)
        if kind == "ansi_c_string":
            kind = {True: "ansi", False: "squote", None: "ansi-unknown"}[ansi_c]
            return Context(kind, backticks=ticks)
        if kind == "string":
            return Context("dquote", backticks=ticks, in_param=in_param)
        if kind in ("arithmetic_expansion", "c_style_for_statement") or (
                kind == "compound_statement" and n.text.startswith(b"((")):
            body = n.child_by_field_name("body")
            if body is None or offset < body.start_byte:
                return Context("arith", backticks=ticks)
        if kind in ("command_substitution", "process_substitution"):
            return Context("code", backticks=ticks)
    return Context("code", backticks=ticks)


def _tree_contexts(parser: ts.Parser, classify: Callable[[ts.Node], Context]
                   ) -> Callable[[str, list[tuple[int, int]], str], dict[int, Context]]:
    """An answer for one grammar: the context of the smallest node at each template's first byte."""

    def answer(text: str, spans: list[tuple[int, int]], language: str) -> dict[int, Context]:
        root = parser.parse(_placeholders(text, spans)).root_node
        found = {}
        for start, _ in spans:
            offset = len(text[:start].encode())
            found[start] = classify(root.descendant_for_byte_range(offset, offset))
        return found

    return answer


def _python_context(node: ts.Node) -> Context:
    for n in _ancestors(node):
        if n.type == "comment":
            return Context("py-comment")
        if n.type == "format_specifier":
            return Context("py-fspec")
        if n.type == "interpolation":
            return Context("py-code")
        if n.type == "string":
            opening = n.children[0].text.decode()
            prefix = opening.rstrip("'\"").lower()
            return Context("py-string", quote=opening[len(prefix):], prefix=prefix)
    return Context("py-code")


def _node_context(node: ts.Node) -> Context:
    for n in _ancestors(node):
        if n.type == "comment":
            return Context("js-block-comment" if n.text.startswith(b"/*") else "js-comment")
        if n.type == "template_substitution":
            return Context("js-code")
        if n.type == "template_string":
            return Context("js-template", quote="`")
        if n.type == "string":
            return Context("js-string", quote=n.text[:1].decode())
        if n.type == "regex":
            return Context("js-regex")
    return Context("js-code")


ts_python_contexts = _tree_contexts(PYTHON, _python_context)
ts_node_contexts = _tree_contexts(NODE, _node_context)

_WORDISH = frozenset({"word", "string", "raw_string", "ansi_c_string", "concatenation", "simple_expansion", "expansion",
                      "command_substitution", "process_substitution", "number", "arithmetic_expansion",
                      "translated_string", "variable_assignment", "heredoc_body", "regex", "extglob_pattern"})
_NAMES_ARE_WORDS = frozenset({"for_statement", "select_statement", "declaration_command", "unset_command"})
_DECLARE = frozenset({"export", "unset", "declare", "local", "readonly", "typeset"})
_RESERVED = frozenset({"!", "[[", "]]", "{", "}", "case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for",
                       "function", "if", "in", "select", "then", "time", "until", "while"})


def _unquote(node: ts.Node, source: bytes) -> str:
    """A word node after quote removal, as the guard sees it (``$VAR`` and ``$(…)`` kept as written)."""
    kind, raw = node.type, node.text.decode()
    if kind == "raw_string":
        return raw[1:-1]
    if kind == "ansi_c_string":
        return unescape(raw[2:-1])
    if kind == "word":
        return re.sub(r"\\(.)", r"\1", raw.replace("\\\n", ""), flags=re.DOTALL)
    if kind == "string":
        inner = raw[1:-1] if raw.endswith('"') else raw[1:]
        return re.sub(r'\\([$`"\\\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), inner)
    if kind in ("concatenation", "variable_assignment"):
        out, at = [], node.start_byte
        for child in node.children:
            out.append(source[at:child.start_byte].decode())
            out.append(_unquote(child, source))
            at = child.end_byte
        return "".join(out) + source[at:node.end_byte].decode()
    return raw


def _bodies(node: ts.Node) -> list[str]:
    """The ``$(…)``, backtick and ``<(…)`` bodies a word holds that the shell runs (not in single quotes)."""
    if node.type in ("raw_string", "ansi_c_string"):
        return []
    if node.type in ("command_substitution", "process_substitution"):
        raw = node.text.decode()
        if raw.startswith("`"):
            return [re.sub(r"\\([`$\\])", r"\1", raw[1:-1])]
        return [raw[2:-1]]
    return [body for child in node.children for body in _bodies(child)]


def ts_words(text: str) -> list[tuple[str, tuple[str, ...]]]:
    source = text.encode()
    out: list[tuple[int, str, tuple[str, ...]]] = []

    def walk(node: ts.Node) -> None:
        kind, parent = node.type, node.parent.type if node.parent else ""
        if kind in _WORDISH or (kind == "variable_name" and parent in _NAMES_ARE_WORDS) or (
                not node.is_named and parent in ("declaration_command", "unset_command") and kind in _DECLARE):
            word = _unquote(node, source)
            if word not in _RESERVED:
                # a heredoc's body stands where its delimiter word does, as the guard reads it
                at = next(c.start_byte for c in node.parent.children if c.type == "heredoc_start") \
                    if kind == "heredoc_body" else node.start_byte
                out.append((at, word, tuple(_bodies(node))))
            return
        if kind in ("comment", "heredoc_start", "heredoc_end", "file_descriptor"):
            return
        for child in node.children:
            walk(child)

    walk(BASH.parse(source).root_node)
    return [(word, bodies) for _, word, bodies in sorted(out, key=lambda item: item[0])]


def our_words(text: str) -> list[tuple[str, tuple[str, ...]]]:
    return [(str(t), t.code) for t in tokenize(text)[0] if isinstance(t, Word) and t not in _RESERVED]


def ts_parses(script: str) -> bool:
    return not _ALIAS.search(script) and not BASH.parse(script.encode()).root_node.has_error


# -- judges ----------------------------------------------------------------------------------------------
@dataclass
class TemplateCase:
    language: str
    script: str
    payloads: list[Any]
    expect: Callable[[Any, str], bytes | None] | None = None  # what stdout must be for a payload; None: only "nothing runs"
    refuse: bool = False  # the row says no literal can hold the value: a TemplateError is the right answer


def _spans(script: str) -> list[tuple[int, int]]:
    """Where the templates stand, as the engine finds them."""
    return [m.span() for m in _PARAM_REF.finditer(script) if m.group("name") and not m.group("raw")]


def _interpreter(language: str, script: str) -> list[str]:
    return {"python": ["python3", "-c", script], "node": ["node", "-e", script]}.get(language, [language, "-c", script])


def judge_template(case: TemplateCase, answer: Callable[..., dict[int, Context]]) -> bool:
    """Whether ``answer``'s contexts write every payload as a value that arrives intact and runs nothing."""
    spans = _spans(case.script)
    places = answer(case.script, spans, case.language)
    for payload in case.payloads:
        with tempfile.TemporaryDirectory() as folder:
            marker = os.path.join(folder, "pwned")
            value = payload.replace("{m}", marker) if isinstance(payload, str) else payload
            try:
                filled = _fill(case.script, spans, places, value)
            except TemplateError:
                if case.refuse:
                    continue
                return False
            if case.refuse:
                return False
            try:
                done = subprocess.run(_interpreter(case.language, filled), cwd=folder, capture_output=True, timeout=10)
            except subprocess.TimeoutExpired:
                return False
            if os.path.exists(marker):
                return False
            wanted = case.expect(value, marker) if case.expect else None
            if wanted is not None and done.stdout != wanted and not done.stdout.rstrip(b"\n").endswith(wanted):
                return False
    return True


def _fill(script: str, spans: list[tuple[int, int]], places: dict[int, Context], value: Any) -> str:
    out, at = [], 0
    for start, end in spans:
        out += [script[at:start], render(value, places[start], script[start + 1:end - 1])]
        at = end
    return "".join(out) + script[at:]


#: Words judged by reading bash's manual rather than by running: ``-`` is an argument (python reads its
#: program from stdin because of it); tree-sitter-bash 0.25 drops the token before a heredoc.
HAND_JUDGED = {
    "python3 - <<'EOF'\nimport os, shutil\nshutil.rmtree(os.path.expanduser('~'))\nEOF":
        ["python3", "-", "import os, shutil\nshutil.rmtree(os.path.expanduser('~'))\n"],
}


def judge_words(text: str) -> list[tuple[str, tuple[str, ...]]] | None:
    """Bash's own words for ``text`` when nothing in it can run: one simple command, no ``$``, ``` ` ``` or redirection."""
    if text in HAND_JUDGED:
        return [(w, ()) for w in HAND_JUDGED[text]]
    if re.search(r"[$`<>;&|()\n{}]", re.sub(r"'[^']*'", "''", text)) or re.search(r"[$`]", text):
        return None
    if len(BASH.parse(text.encode()).root_node.children) != 1:
        return None
    script = "set -f +B; HOME='~'; printf '%s\\0' " + text
    done = subprocess.run(["bash", "--norc", "-c", script], capture_output=True, timeout=10)
    if done.returncode:
        return None
    return [(w, ()) for w in done.stdout.decode("utf-8", "surrogateescape").split("\0")[:-1] if w not in _RESERVED]


def bash_parses(script: str) -> bool:
    return subprocess.run(["bash", "-n"], input=script.encode(), capture_output=True).returncode == 0


# -- corpora ---------------------------------------------------------------------------------------------
def template_cases() -> tuple[list[TemplateCase], list[TemplateCase]]:
    t = load("engine/test_template.py")
    marker_values = [v for v in t.hostile_values("{m}")]
    shell: list[TemplateCase] = []
    code: list[TemplateCase] = []
    for text, _ in t.test_param_expansion_quotes_for_where_it_stands.pytestmark[0].args[1]:
        shell.append(TemplateCase("bash", text.replace("{name}", "{v}").replace("{evil}", "{v}"),
                                  ["$(touch {m})", "x; touch {m}"]))
    for language in SHELLS:
        for name, (template, expect) in t.SHELL_CONTEXTS.items():
            values = [v for v in marker_values if not (name.endswith("heredoc") and "EOF" in str(v).split("\n"))]
            if expect is None:
                dollar = b"$" if ansi_c_quoting(language) is False else b""
                def expect(b: bytes, dollar: bytes = dollar) -> bytes:
                    return dollar + b
            shell.append(TemplateCase(language, template, values,
                                      lambda v, m, e=expect: e(t.as_bytes(v)) + b"\0"))
    for language, template in t.PYTHON_CONTEXTS.items():
        code.append(TemplateCase("python", "import sys\nout = lambda v: sys.stdout.buffer.write("
                                 "(v if isinstance(v, bytes) else str(v).encode('utf-8', 'surrogateescape')))\n"
                                 + template, marker_values + ["__import__('os').system('touch {m}')", '"""', "{{"],
                                 None if language == "comment" else (lambda v, m: t.as_bytes(v))))
    for language, template in t.JS_CONTEXTS.items():
        code.append(TemplateCase("node", "const out = v => process.stdout.write(String(v));\n" + template,
                                 [v for v in marker_values if not isinstance(v, bytes)]
                                 + ["require('child_process').execSync('touch {m}')", "${process.exit(3)}"],
                                 None if "comment" in language else (lambda v, m: t.as_bytes(v))))
    payload = {"python": "\r__import__('os').system('touch {m}')",
               "node": "${{require('child_process').execSync('touch {m}')}}"}
    for language, script, expected in t.ESCAPES:
        p = payload.get(language, "$(touch {m})")
        script = script.replace("{w}", "$")
        expect = None if expected is None else (lambda v, m, e=expected: (e.replace("{p}", v) + "\x1e").encode())
        (code if language in ("python", "node") else shell).append(TemplateCase(language, script, [p], expect))
    for language, script, value, expected in t.NESTED_ESCAPES:
        (code if language == "node" else shell).append(
            TemplateCase(language, script, [value], lambda v, m, e=expected: e.replace("{m}", m).encode()))
    for script in t.test_array_subscripts_with_substitutions_are_refused_in_shell_code.pytestmark[0].args[1]:
        shell.append(TemplateCase("bash", script.replace("{{", "{").replace("}}", "}") if "{{" in script else script,
                                  ["a[$(touch {m})]"], refuse=True))
    for language, script, value, _ in t.test_places_no_literal_can_hold_a_value_are_refused.pytestmark[0].args[1]:
        (code if language == "python" else shell).append(TemplateCase(language, script, [value], refuse=True))
    for script in t.test_a_value_cannot_end_a_heredoc_early.pytestmark[0].args[1]:
        shell.append(TemplateCase("bash", script, ["data\nEOF\ntouch {m}"], refuse=True))
    shell.append(TemplateCase("bash", "echo $(( {v} + 1 ))", ["1 + x"], refuse=True))
    shell.append(TemplateCase("bash", 'echo "${X:-{v}}"', ['a"b$c'], lambda v, m: b'a"b$c\n'))
    shell.append(TemplateCase("bash", 'echo "${X:-{v}}"', ["it's"], refuse=True))
    kernel = load("test_kernel_templating.py")
    shell.append(TemplateCase("bash", "printf '<%s>' {v} \"{v}\" '{v}'; echo", kernel.HOSTILE,
                              lambda v, m: f"<{v}><{v}><{v}>\n".encode()))
    code.append(TemplateCase("python", "def f(): return'{v}'\nprint(f())", ["it's"], lambda v, m: b"it's\n"))
    return shell, code


def guard_cases() -> list[str]:
    rules = load("guard/test_rules.py")
    spell = load("guard/test_respellings.py")
    texts = [row[0] for row in rules.REFUSED] + list(rules.ALLOWED)
    texts += [row[0] for row in spell.GOT_THROUGH + spell.RESPELLINGS]
    texts += [row[1] for row in spell.SESSION + spell.SESSION_ALLOWED]
    texts += list(spell.ORDINARY)
    limits = load("guard/test_guard_limits.py")
    trims = (limits.test_a_literal_trim_of_a_variable_is_judged_as_its_value,
             limits.test_a_trim_that_leaves_an_ordinary_path_is_allowed)
    texts += [text for test in trims
              for text in test.pytestmark[0].args[1]]
    texts += ["a=x; " + "; ".join(["a=$a$a"] * 30) + "; rm -rf $a", "rm -rf " + "$(echo " * 40 + "/" + ")" * 40]
    return list(dict.fromkeys(texts))


def parse_cases(fuzz: int) -> list[str]:
    plain = load("shell/test_plain_syntax.py")
    scripts = list(plain.PLAIN) + list(plain.ASK)
    rng = random.Random(0)
    for _ in range(fuzz):
        scripts.append("".join(rng.choice(plain.ATOMS) + rng.choice(["", " "]) for _ in range(rng.randint(1, 9))))
    return scripts


# -- the comparison --------------------------------------------------------------------------------------
@dataclass
class Row:
    question: str
    cases: int = 0
    agree: int = 0
    ts_better: list[str] = field(default_factory=list)
    ours_better: list[str] = field(default_factory=list)
    both_wrong: list[str] = field(default_factory=list)
    unjudged: list[str] = field(default_factory=list)
    ours_us: float = 0.0
    ts_us: float = 0.0


def median_us(call: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def _renders(case: TemplateCase, places: dict[int, Context]) -> list[str]:
    spans = _spans(case.script)
    out = []
    for value in case.payloads:
        try:
            out.append(_fill(case.script, spans, places, value))
        except TemplateError as exc:
            out.append(f"refused: {type(exc).__name__}")
    return out


def compare_templates(question: str, cases: list[TemplateCase], ours: Callable[..., dict[int, Context]],
                      theirs: Callable[[str, list[tuple[int, int]], str], dict[int, Context]], repeat: int) -> Row:
    row = Row(question)
    for case in cases:
        spans = _spans(case.script)
        if not spans:
            continue
        row.cases += 1
        mine, other = ours(case.script, spans, case.language), theirs(case.script, spans, case.language)
        if mine == other or _renders(case, mine) == _renders(case, other):
            row.agree += 1
            continue
        right_ours, right_ts = judge_template(case, ours), judge_template(case, theirs)
        shown = f"{case.language}: {case.script!r} -- ours {_kinds(mine)}, tree-sitter {_kinds(other)}"
        _tally(row, right_ours, right_ts, shown)
    sample = [(c.script, _spans(c.script), c.language) for c in cases]
    row.ours_us = statistics.median(median_us(lambda s=s: ours(*s), repeat) for s in sample)
    row.ts_us = statistics.median(median_us(lambda s=s: theirs(*s), repeat) for s in sample)
    return row


def _kinds(places: dict[int, Context]) -> str:
    return ",".join(c.kind + ("+param" if c.in_param else "") + ("`" * len(c.backticks)) for c in places.values())


def _tally(row: Row, right_ours: bool | None, right_ts: bool | None, shown: str) -> None:
    if right_ours is None or right_ts is None:
        row.unjudged.append(shown)
    elif right_ts and not right_ours:
        row.ts_better.append(shown)
    elif right_ours and not right_ts:
        row.ours_better.append(shown)
    elif not right_ours and not right_ts:
        row.both_wrong.append(shown)
    else:
        row.agree += 1  # both right: the difference does not matter to the value's safety


def compare_words(texts: list[str], repeat: int) -> Row:
    row = Row("guard words (shell_lex.tokenize)")
    for text in texts:
        row.cases += 1
        mine, other = our_words(text), ts_words(text)
        if mine == other:
            row.agree += 1
            continue
        truth = judge_words(text)
        shown = f"{text!r} -- ours {[w for w, _ in mine]}, tree-sitter {[w for w, _ in other]}"
        if truth is None:
            row.unjudged.append(shown)
            continue
        plain = [(w, ()) for w, _ in mine], [(w, ()) for w, _ in other]
        _tally(row, plain[0] == truth, plain[1] == truth, shown)
    row.ours_us = statistics.median(median_us(lambda t=t: tokenize(t), repeat) for t in texts)
    row.ts_us = statistics.median(median_us(lambda t=t: ts_words(t), repeat) for t in texts)
    return row


def compare_parses(scripts: list[str], repeat: int) -> tuple[Row, dict[str, int]]:
    row = Row("surely parses (plain_syntax over shell_lex)")
    counts = {"ours_yes": 0, "ts_yes": 0, "bash_yes": 0, "ours_false_yes": 0, "ts_false_yes": 0}
    for script in dict.fromkeys(scripts):
        row.cases += 1
        mine, other, truth = surely_parses(script), ts_parses(script), bash_parses(script)
        counts["ours_yes"] += mine
        counts["ts_yes"] += other
        counts["bash_yes"] += truth
        counts["ours_false_yes"] += mine and not truth
        counts["ts_false_yes"] += other and not truth
        if mine == other:
            row.agree += 1
            continue
        # a "no" is never wrong for the standby (it asks bash); a false "yes" is
        shown = f"{script!r} -- ours {'yes' if mine else 'no'}, tree-sitter {'yes' if other else 'no'}, " \
                f"bash -n {'yes' if truth else 'no'}"
        (row.ts_better if other == truth else row.ours_better).append(shown)
    sample = list(dict.fromkeys(scripts))[:300]
    row.ours_us = statistics.median(median_us(lambda s=s: surely_parses(s), repeat) for s in sample)
    row.ts_us = statistics.median(median_us(lambda s=s: ts_parses(s), repeat) for s in sample)
    return row, counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fuzz", type=int, default=900, help="random scripts for the parse question")
    parser.add_argument("--repeat", type=int, default=50, help="calls per timing")
    parser.add_argument("--cases", action="store_true", help="list every case where the answers differ")
    args = parser.parse_args()
    setup = subprocess.run([sys.executable, "-c", SETUP_CODE], capture_output=True, text=True, check=True)
    imported, parsers = map(float, setup.stdout.split())
    shell, code = template_cases()
    rows = [compare_templates("shell template context (shell_lex walk)", shell, contexts_at, ts_shell_contexts,
                              args.repeat),
            compare_templates("Python/JS template context (code_scan.py)", code, contexts_at,
                              lambda s, sp, lang: (ts_python_contexts if lang == "python" else ts_node_contexts)(
                                  s, sp, lang), args.repeat),
            compare_words(guard_cases(), args.repeat)]
    parse_row, counts = compare_parses(parse_cases(args.fuzz), args.repeat)
    rows.append(parse_row)
    print("| question | cases | agree | tree-sitter right, ours wrong | ours right, tree-sitter wrong "
          "| both wrong | not judged | ours µs/call | tree-sitter µs/call |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r.question} | {r.cases} | {r.agree} | {len(r.ts_better)} | {len(r.ours_better)} "
              f"| {len(r.both_wrong)} | {len(r.unjudged)} | {r.ours_us:.1f} | {r.ts_us:.1f} |")
    print(f"\ntree-sitter set-up in a fresh interpreter: import {imported:.1f} ms, three parsers {parsers:.1f} ms")
    print(f"surely parses: yes from ours {counts['ours_yes']}, tree-sitter {counts['ts_yes']}, bash -n "
          f"{counts['bash_yes']}; a yes bash -n refuses: ours {counts['ours_false_yes']}, "
          f"tree-sitter {counts['ts_false_yes']}")
    for r in rows:
        for title, items in (("tree-sitter right, ours wrong", r.ts_better), ("ours right, tree-sitter wrong",
                             r.ours_better), ("both wrong", r.both_wrong), ("not judged", r.unjudged)):
            if items:
                print(f"\n{r.question} -- {title} ({len(items)}):")
                for item in items if args.cases else items[:15]:
                    print(f"- {item[:300]}")


if __name__ == "__main__":
    main()
