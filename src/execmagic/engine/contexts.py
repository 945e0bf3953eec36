"""Where a ``{name}`` stands in a script: the lexical context that decides how its value is written.

A value is only safe as a literal *of the place it lands in*: one shell word
where words are split, escaped text inside ``"…"``, the ``'\\''`` form inside
``'…'``, and so on.  These scanners walk a script once, in the order a shell
(or Python, or JavaScript) would read it, and report the context at each
template's offset.  They are not full parsers; they track exactly what changes
how a character is read: quotes, escapes, substitutions, heredocs, comments.

Each scanner takes the sorted offsets it must report and stops after the
last one, and jumps between interesting characters with one regex search, so
a 10 MB heredoc with a template on its first line costs almost nothing.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import shutil
from collections.abc import Iterable

__all__ = ["NODE_LANGUAGES", "PYTHON_LANGUAGES", "SHELL_LANGUAGES", "Context", "contexts_at"]

#: Languages whose scripts are read by a POSIX-style shell (and are quoted like one).
SHELL_LANGUAGES = frozenset({"bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "busybox"})
PYTHON_LANGUAGES = frozenset({"python", "python3"})
NODE_LANGUAGES = frozenset({"node", "javascript", "js"})


@dataclasses.dataclass(frozen=True)
class Context:
    """The context of one offset.

    ``kind`` is one of: ``code`` (shell words), ``dquote``, ``squote``, ``ansi`` (``$'…'``),
    ``heredoc`` / ``heredoc-quoted`` (``delimiter`` and ``strip_tabs`` tell where it ends),
    ``arith`` (``$((…))``), ``comment``; for Python ``py-code``, ``py-string``, ``py-comment``
    (``prefix``/``quote`` say which string literal); for JavaScript ``js-code``, ``js-string``,
    ``js-template``, ``js-comment``, ``js-block-comment``; ``plain`` for other languages.
    ``backticks`` lists, innermost first, whether each enclosing old-style backtick
    substitution is itself inside double quotes (each one adds a layer of backslash escaping).
    """

    kind: str
    quote: str = ""
    prefix: str = ""
    delimiter: str = ""
    strip_tabs: bool = False
    backticks: tuple[bool, ...] = ()
    #: Inside ``${…}`` (within ``"…"`` or a heredoc), where bash pairs single quotes even there.
    in_param: bool = False


def contexts_at(text: str, spans: Iterable[tuple[int, int]], language: str) -> dict[int, Context]:
    """The context at the start of each template span ``(start, end)`` in ``text`` written in ``language``.

    The spans' own text (``{cfg['k']}``) is skipped: it is replaced, never read as code.
    """
    wanted = sorted(spans)
    scanner: _Scanner
    if language in SHELL_LANGUAGES:
        scanner = _ShellScanner(text, wanted, ansi_c_quoting(language))
    elif language in PYTHON_LANGUAGES:
        scanner = _PythonScanner(text, wanted)
    elif language in NODE_LANGUAGES:
        scanner = _NodeScanner(text, wanted)
    else:
        return {start: Context("plain") for start, _ in wanted}
    return scanner.run()


class _Scanner:
    """The loop every language shares: jump to the next interesting character or template, act on it."""

    def __init__(self, text: str, spans: list[tuple[int, int]]) -> None:
        self.text = text
        self.spans = spans

    def run(self) -> dict[int, Context]:
        found: dict[int, Context] = {}
        text, pos, index = self.text, 0, 0
        while index < len(self.spans):
            stop = self._stops().search(text, pos)
            end = stop.start() if stop else len(text)
            start, span_end = self.spans[index]
            if start <= end:
                found[start] = self._context()
                pos = max(pos, span_end)
                index += 1
                continue
            if stop is None:
                break
            pos = self._step(stop.start())
        return found

    def _stops(self) -> re.Pattern[str]:
        raise NotImplementedError

    def _context(self) -> Context:
        raise NotImplementedError

    def _step(self, i: int) -> int:
        """Act on the interesting character at ``i``; return where to search on."""
        raise NotImplementedError


# -- shells ------------------------------------------------------------------------------------
_ANSI_C = {"bash": True, "zsh": True, "ksh": True, "mksh": True, "dash": False}


@functools.cache
def ansi_c_quoting(language: str) -> bool | None:
    """Whether the shell reads ``$'…'`` as ANSI-C quoting (bash, zsh, ksh) or as ``$`` then ``'…'`` (dash).

    ``sh`` is whichever shell the system links it to; ``None`` means unknown, and then no
    value is placed inside ``$'…'`` at all (either reading would let a value escape the other).
    """
    if language == "sh":
        found = shutil.which("sh")
        language = os.path.basename(os.path.realpath(found)) if found else ""
    return _ANSI_C.get(language)

@dataclasses.dataclass
class _Frame:
    kind: str            # code, dquote, squote, ansi, heredoc, heredoc-quoted, arith, param, comment, backtick
    closer: str = ""     # what ends a code frame: "" (top), ")" for $( … ), "`", "}" for ${ … }
    depth: int = 0       # open parentheses inside a code/arith frame
    delimiter: str = ""
    strip_tabs: bool = False
    in_dquote: bool = False


# The characters after which a scanner in each frame has something to decide.
_SHELL_STOPS = {
    "code": re.compile(r"[\\'\"`$#()<}\n{]"),
    "dquote": re.compile(r'[\\"`$]'),
    "squote": re.compile(r"'"),
    "ansi": re.compile(r"[\\']"),
    "heredoc": re.compile(r"[\\`$\n]"),
    "heredoc-quoted": re.compile(r"\n"),
    "arith": re.compile(r"[\\'\"`$()]"),
    "comment": re.compile(r"\n"),
}
_HEREDOC_OP = re.compile(r"<<(-?)[ \t]*((?:[^\s;&|<>()'\"\\]|'[^']*'|\"(?:[^\"\\]|\\.)*\"|\\.)+)")
_WORD_START_BEFORE = frozenset(" \t\n;&|()<>")


class _ShellScanner(_Scanner):
    def __init__(self, text: str, spans: list[tuple[int, int]], ansi_c: bool | None) -> None:
        super().__init__(text, spans)
        self.ansi_c = ansi_c
        self.stack: list[_Frame] = [_Frame("code")]
        self.pending: list[_Frame] = []  # heredocs whose bodies start at the next newline

    def _stops(self) -> re.Pattern[str]:
        kind = self.stack[-1].kind
        return _SHELL_STOPS["code" if kind in ("param", "backtick") else kind]

    def _context(self) -> Context:
        frames = self.stack
        ticks = tuple(f.in_dquote for f in reversed(frames) if f.kind == "backtick")
        top = frames[-1]
        kind = top.kind
        if kind == "backtick":
            kind = "code"
        elif kind == "ansi" and self.ansi_c is None:
            kind = "ansi-unknown"
        elif kind == "param":  # ${…} is read like the quoting around it
            outer = next(f for f in reversed(frames) if f.kind != "param")
            kind = "code" if outer.kind == "backtick" else outer.kind
            top = outer
            return Context(kind, delimiter=top.delimiter, strip_tabs=top.strip_tabs, backticks=ticks,
                           in_param=kind != "code")
        return Context(kind, delimiter=top.delimiter, strip_tabs=top.strip_tabs, backticks=ticks)

    def _step(self, i: int) -> int:
        frame = self.stack[-1]
        text = self.text
        ch = text[i]
        kind = frame.kind
        if ch == "\\":
            return i + 2
        if kind in ("squote", "ansi"):
            self.stack.pop()
            return i + 1
        if kind == "comment":
            self.stack.pop()
            return i  # the newline is code's business (it may start heredoc bodies)
        if kind == "heredoc-quoted" or (kind == "heredoc" and ch == "\n"):
            return self._heredoc_line(frame, i + 1)
        if ch == "$":
            return self._dollar(i)
        if ch == "`":
            if kind == "backtick":
                self.stack.pop()
            else:
                self.stack.append(_Frame("backtick", closer="`", in_dquote=self._in_dquote()))
            return i + 1
        if kind == "dquote":
            if ch == '"':
                self.stack.pop()
            return i + 1
        if kind == "arith":
            return self._arith(frame, i, ch)
        return self._code(frame, i, ch)

    def _in_dquote(self) -> bool:
        return any(f.kind == "dquote" for f in self.stack)

    def _dollar(self, i: int) -> int:
        text = self.text
        nxt = text[i + 1:i + 3]
        top = self.stack[-1].kind
        if nxt.startswith("'") and top not in ("dquote", "heredoc"):
            if self.ansi_c is False:
                return i + 1  # dash: "$" then an ordinary '…'
            self.stack.append(_Frame("ansi"))
            return i + 2
        if nxt.startswith('"') and top not in ("dquote", "heredoc"):
            self.stack.append(_Frame("dquote"))
            return i + 2
        if nxt == "((":
            self.stack.append(_Frame("arith"))
            return i + 3
        if nxt.startswith("("):
            self.stack.append(_Frame("code", closer=")"))
            return i + 2
        if nxt.startswith("{"):
            self.stack.append(_Frame("param", closer="}"))
            return i + 2
        return i + 1

    def _arith(self, frame: _Frame, i: int, ch: str) -> int:
        if ch == "(":
            frame.depth += 1
        elif ch == ")":
            if frame.depth:
                frame.depth -= 1
            elif self.text.startswith("))", i):
                self.stack.pop()
                return i + 2
        elif ch == '"':
            self.stack.append(_Frame("dquote"))
        return i + 1

    def _code(self, frame: _Frame, i: int, ch: str) -> int:
        text = self.text
        at_word_start = i == 0 or text[i - 1] in _WORD_START_BEFORE
        if ch == "'":
            self.stack.append(_Frame("squote"))
        elif ch == '"':
            self.stack.append(_Frame("dquote"))
        elif ch == "#" and at_word_start:
            self.stack.append(_Frame("comment"))
        elif ch == "(":
            if text.startswith("((", i) and at_word_start:
                self.stack.append(_Frame("arith"))
                return i + 2
            frame.depth += 1
        elif ch == ")":
            if frame.depth:
                frame.depth -= 1
            elif frame.closer == ")":
                self.stack.pop()
        elif ch == "}":
            if frame.kind == "param" and frame.depth == 0:
                self.stack.pop()
        elif ch == "{":
            if frame.kind == "param":
                frame.depth += 1
        elif ch == "<":
            return self._heredoc_operator(i)
        elif ch == "\n" and self.pending:
            return self._heredoc_line(None, i + 1)
        return i + 1

    def _heredoc_operator(self, i: int) -> int:
        text = self.text
        if text.startswith("<<<", i):
            return i + 3
        match = _HEREDOC_OP.match(text, i)
        if match is None:
            return i + 1
        word = match.group(2)
        quoted = any(c in word for c in "'\"\\")
        delimiter = re.sub(r"\\(.)", r"\1", re.sub(r"'([^']*)'|\"((?:[^\"\\]|\\.)*)\"",
                                                   lambda m: m.group(1) or m.group(2) or "", word))
        self.pending.append(_Frame("heredoc-quoted" if quoted else "heredoc", delimiter=delimiter,
                                   strip_tabs=bool(match.group(1))))
        return match.end()

    def _heredoc_line(self, current: _Frame | None, start: int) -> int:
        """At the start of a line: end the current heredoc at its delimiter line, open the next pending one."""
        text = self.text
        if current is not None:
            line_end = text.find("\n", start)
            line = text[start:len(text) if line_end < 0 else line_end]
            if (line.lstrip("\t") if current.strip_tabs else line) != current.delimiter:
                return start
            self.stack.pop()
            start = len(text) if line_end < 0 else line_end + 1
        if self.pending:
            self.stack.append(self.pending.pop(0))
            return self._heredoc_line(self.stack[-1], start) if self._at_delimiter(start) else start
        return start

    def _at_delimiter(self, start: int) -> bool:
        frame = self.stack[-1]
        line_end = self.text.find("\n", start)
        line = self.text[start:len(self.text) if line_end < 0 else line_end]
        return (line.lstrip("\t") if frame.strip_tabs else line) == frame.delimiter




# -- Python ------------------------------------------------------------------------------------
_PY_STOPS = {
    "code": re.compile(r"[#'\"()\[\]{}]"),
    "comment": re.compile(r"\n"),
}
_PY_STRING_START = re.compile(r"(?<![A-Za-z0-9_])([rRbBuUfF]{0,2})('\'\'|\"\"\"|'|\")")


@dataclasses.dataclass
class _PyFrame:
    kind: str              # code (depth counts brackets: a code frame inside an f-string ends at its "}"), string, comment
    quote: str = ""
    prefix: str = ""
    depth: int = 0
    stops: re.Pattern[str] | None = None


class _PythonScanner(_Scanner):
    def __init__(self, text: str, spans: list[tuple[int, int]]) -> None:
        super().__init__(text, spans)
        self.stack: list[_PyFrame] = [_PyFrame("code")]

    def _stops(self) -> re.Pattern[str]:
        top = self.stack[-1]
        return top.stops or _PY_STOPS[top.kind]

    def _context(self) -> Context:
        top = self.stack[-1]
        return Context("py-" + top.kind, quote=top.quote, prefix=top.prefix)

    def _step(self, i: int) -> int:
        top, ch = self.stack[-1], self.text[i]
        if top.kind == "comment":
            self.stack.pop()
            return i + 1
        if top.kind == "string":
            return self._in_string(top, i, ch)
        if ch == "#":
            self.stack.append(_PyFrame("comment"))
        elif ch in "([{":
            top.depth += 1
        elif ch in ")]}":
            if top.depth:
                top.depth -= 1
            elif len(self.stack) > 1:  # the "}" that ends an f-string's replacement field
                self.stack.pop()
        else:
            return self._open_string(i)
        return i + 1

    def _open_string(self, i: int) -> int:
        j = i
        while j > 0 and i - j < 2 and self.text[j - 1] in "rRbBuUfF":
            j -= 1
        match = _PY_STRING_START.match(self.text, j) or _PY_STRING_START.match(self.text, i)
        assert match is not None
        prefix, quote = match.group(1).lower(), match.group(2)
        specials = "\\\\" + re.escape(quote[0]) + ("{}" if "f" in prefix else "") + ("" if len(quote) == 3 else "\\n")
        self.stack.append(_PyFrame("string", quote=quote, prefix=prefix, stops=re.compile(f"[{specials}]")))
        return match.end()

    def _in_string(self, top: _PyFrame, i: int, ch: str) -> int:
        text = self.text
        if ch == "\\":
            return i + 2
        if ch == "{":
            if text.startswith("{{", i):
                return i + 2
            self.stack.append(_PyFrame("code"))  # an f-string's replacement field is code
            return i + 1
        if ch == "}":
            return i + 2 if text.startswith("}}", i) else i + 1
        if ch == "\n" or text.startswith(top.quote, i):
            self.stack.pop()
            return i + (1 if ch == "\n" else len(top.quote))
        return i + 1


# -- JavaScript --------------------------------------------------------------------------------
_JS_STOPS = {
    "code": re.compile(r"['\"`{}]|//|/\*"),
    "string'": re.compile(r"[\\'\n]"),
    'string"': re.compile(r'[\\"\n]'),
    "template": re.compile(r"[\\`]|\$\{"),
    "comment": re.compile(r"\n"),
    "block-comment": re.compile(r"\*/"),
}


@dataclasses.dataclass
class _JsFrame:
    kind: str   # code (depth counts braces: a code frame inside a template literal ends at its "}"), string, …
    quote: str = ""
    depth: int = 0


class _NodeScanner(_Scanner):
    def __init__(self, text: str, spans: list[tuple[int, int]]) -> None:
        super().__init__(text, spans)
        self.stack: list[_JsFrame] = [_JsFrame("code")]

    def _stops(self) -> re.Pattern[str]:
        top = self.stack[-1]
        return _JS_STOPS[top.kind + top.quote if top.kind == "string" else top.kind]

    def _context(self) -> Context:
        top = self.stack[-1]
        return Context("js-" + top.kind, quote=top.quote)

    def _step(self, i: int) -> int:
        top, text = self.stack[-1], self.text
        ch = text[i]
        if top.kind in ("comment", "block-comment", "string"):
            if ch == "\\":
                return i + 2
            self.stack.pop()
            return i + (2 if top.kind == "block-comment" else 1)
        if top.kind == "template":
            if ch == "\\":
                return i + 2
            if ch == "`":
                self.stack.pop()
                return i + 1
            self.stack.append(_JsFrame("code"))  # ${ … } inside a template literal is code
            return i + 2
        return self._code(top, i, ch)

    def _code(self, top: _JsFrame, i: int, ch: str) -> int:
        text = self.text
        if text.startswith("//", i):
            self.stack.append(_JsFrame("comment"))
        elif text.startswith("/*", i):
            self.stack.append(_JsFrame("block-comment"))
            return i + 2
        elif ch == "{":
            top.depth += 1
        elif ch == "}":
            if top.depth:
                top.depth -= 1
            elif len(self.stack) > 1:
                self.stack.pop()
        elif ch == "`":
            self.stack.append(_JsFrame("template", quote="`"))
        else:
            self.stack.append(_JsFrame("string", quote=ch))
        return i + 1
