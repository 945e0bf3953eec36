"""Where a template stands in Python or JavaScript source: code, a string literal (which kind),
an f-string's or template literal's replacement field (code again), or a comment."""

from __future__ import annotations

import bisect
import dataclasses
import functools
import re

from ..shell.scanning import Context, Scanner
from ..shell.work import step

__all__ = ["NodeScanner", "PythonScanner"]

# -- Python ------------------------------------------------------------------------------------
_PY_STOPS = {
    # the script's own code: its brackets change nothing (only a replacement field's do), so they are not stops --
    # stopping at each made a line of 4,000 "(" cost a step of Python each
    "code": re.compile(r"[#'\"]"),
    "comment": re.compile(r"[\r\n]"),  # Python ends a line at "\r" too
}
# in a replacement field a ":" at the top level starts the format spec (where "{" starts code again)
_FIELD_STOPS = re.compile(r"[#'\"()\[\]{}:]")
_SPEC_STOPS = re.compile(r"[{}]")
_OPENERS = re.compile(r"[(\[{]+")
_CLOSERS = re.compile(r"[)\]}]+")
#: Plain strings, each after code with nothing in it a step stops at or that could prefix a string (see
#: :meth:`PythonScanner._plain_strings`); and each such string's quotes.
_PLAIN_STRING = r"""[^#'"A-Za-z0-9_]*(?:"(?!"")[^"\\\n]*"|'(?!'')[^'\\\n]*')"""
_PLAIN_STRINGS, _ONE_PLAIN_STRING = re.compile(f"(?:{_PLAIN_STRING})*"), re.compile(_PLAIN_STRING)
_PY_STRING_START = re.compile(r"(?<![A-Za-z0-9_])([rRbBuUfF]{0,2})('\'\'|\"\"\"|'|\")")


@dataclasses.dataclass
class _PyFrame:
    # code (depth counts brackets: a code frame inside an f-string ends at its "}"), string, comment
    kind: str
    quote: str = ""
    prefix: str = ""
    depth: int = 0
    stops: re.Pattern[str] | None = None


@functools.cache
def _string_stops(quote: str, formatted: bool) -> re.Pattern[str]:
    """What ends or changes a string literal opened by ``quote``: compiled once per kind, not once per string."""
    specials = "\\\\" + re.escape(quote[0]) + ("{}" if formatted else "") + ("" if len(quote) == 3 else "\\n")
    return re.compile(f"[{specials}]")


class PythonScanner(Scanner):
    def __init__(self, text: str, spans: list[tuple[int, int]]) -> None:
        super().__init__(text, spans)
        self.stack: list[_PyFrame] = [_PyFrame("code")]
        self.starts = [start for start, _ in spans]  # a run of brackets read at once stops at a template

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
        if top.kind == "fspec":
            if ch == "{":
                self.stack.append(_PyFrame("code", stops=_FIELD_STOPS))
            else:
                self.stack.pop()  # the "}" that ends the field
            return i + 1
        if ch == ":":
            if top.depth == 0 and top.stops is _FIELD_STOPS and not self.text.startswith(":=", i):
                top.kind, top.stops = "fspec", _SPEC_STOPS
            return i + 1
        if ch == "#":
            self.stack.append(_PyFrame("comment"))
        elif ch in "([{":
            end = self._run(_OPENERS, i)
            top.depth += end - i
            return end
        elif ch in ")]}":
            end = self._run(_CLOSERS, i)
            if end - i <= top.depth:  # none of them ends the field
                top.depth -= end - i
                return end
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
        if match is not None:
            prefix, quote, end = match.group(1).lower(), match.group(2), match.end()
        else:  # right after a keyword (return'…', else'…'): a string with no prefix
            quote = self.text[i:i + 3] if self.text.startswith(self.text[i] * 3, i) else self.text[i]
            prefix, end = "", i + len(quote)
        stops = _string_stops(quote, "f" in prefix)
        close = stops.search(self.text, end)
        if close and self.text.startswith(quote, close.start()) and self._next_template(end - 1) > close.start():
            return self._plain_strings(close.start() + len(quote))  # nothing in it to stop at, no template: passed
        self.stack.append(_PyFrame("string", quote=quote, prefix=prefix, stops=stops))
        return end

    def _plain_strings(self, i: int) -> int:
        """After a string passed in one step (ending at ``i``): the plain strings after it (no prefix, not triple, no
        escape) with code between that holds nothing to stop at, each passed in a step of its own as the first was --
        at once, short of the next template; where the last ends (``"$("`` again and again: one step each)."""
        run = _PLAIN_STRINGS.match(self.text, i, self._next_template(i - 1))  # (never read past a template)
        if run is None or run.end() == i:
            return i
        step(len(_ONE_PLAIN_STRING.findall(run.group())))
        return run.end()

    def _next_template(self, i: int) -> int:
        """Where the first template after ``i`` starts (past the end of the text when none does)."""
        at = bisect.bisect_right(self.starts, i)
        return self.starts[at] if at < len(self.starts) else len(self.text) + 1

    def _run(self, brackets: re.Pattern[str], i: int) -> int:
        """The end of the run of ``brackets`` at ``i`` (read as one step), cut before the next template's start."""
        run = brackets.match(self.text, i)
        return min(run.end() if run else i + 1, self._next_template(i))

    def _in_string(self, top: _PyFrame, i: int, ch: str) -> int:
        text = self.text
        if ch == "\\":
            return i + 2
        if ch == "{":
            if text.startswith("{{", i):
                return i + 2
            self.stack.append(_PyFrame("code", stops=_FIELD_STOPS))  # an f-string's replacement field is code
            return i + 1
        if ch == "}":
            return i + 2 if text.startswith("}}", i) else i + 1
        if ch == "\n" or text.startswith(top.quote, i):
            self.stack.pop()
            return i + (1 if ch == "\n" else len(top.quote))
        return i + 1


# -- JavaScript --------------------------------------------------------------------------------
_JS_STOPS = {
    "code": re.compile(r"['\"`{}/()]|<!--|^[ \t]*-->", re.MULTILINE),  # node scripts take HTML-like comments
    "string'": re.compile(r"[\\'\n]"),
    'string"': re.compile(r'[\\"\n]'),
    "template": re.compile(r"[\\`]|\$\{"),
    "comment": re.compile(r"[\n\r\u2028\u2029]"),  # JavaScript's line terminators: each ends a // comment
    "block-comment": re.compile(r"\*/"),
    "regex": re.compile(r"[\\/\[\]\n\r\u2028\u2029]"),
}
_CONDITION_BEFORE = re.compile(r"(?<![\w$.])(?:if|while|for|with)\s*$")
_HTML_CLOSE = re.compile(r"[ \t]*-->")
# after these (or at the start) a "/" begins a regex literal, not a division
_REGEX_BEFORE = re.compile(r"(?:^|(?<![+\-])[(,=:\[!&|?{};+\-*%<>~^]|(?<![\w$.])(?:return|typeof|case|do|else|in|of"
                           r"|new|delete|void|throw|yield|await))\s*$")  # not after i++ / x-- (a division)


@dataclasses.dataclass
class _JsFrame:
    kind: str   # code (depth counts braces: a code frame inside a template literal ends at its "}"), string, …
    quote: str = ""
    depth: int = 0
    # for each open "(": whether it follows if/while/for/with (then a "/" after its ")" starts a regex)
    parens: list[bool] = dataclasses.field(default_factory=list)
    regex_after: int = -1  # the position just after such a ")"


class NodeScanner(Scanner):
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
        if top.kind == "regex":
            return self._in_regex(top, i, ch)
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

    def _in_regex(self, top: _JsFrame, i: int, ch: str) -> int:
        """A regex literal ends at an unescaped ``/`` outside a ``[…]`` class (or, malformed, at the line)."""
        if ch == "\\":
            return i + 2
        if ch == "[":
            top.depth = 1
        elif ch == "]":
            top.depth = 0
        elif ch in "\n\r\u2028\u2029" or (ch == "/" and not top.depth):
            self.stack.pop()
        return i + 1

    def _code(self, top: _JsFrame, i: int, ch: str) -> int:
        text = self.text
        if text.startswith(("//", "<!--"), i) or _HTML_CLOSE.match(text, i):
            self.stack.append(_JsFrame("comment"))
        elif text.startswith("/*", i):
            self.stack.append(_JsFrame("block-comment"))
            return i + 2
        elif ch == "/":
            after_condition = top.regex_after >= 0 and not text[top.regex_after:i].strip()
            if after_condition or _REGEX_BEFORE.search(text, max(0, i - 20), i):
                self.stack.append(_JsFrame("regex"))
        elif ch == "(":
            top.parens.append(bool(_CONDITION_BEFORE.search(text, max(0, i - 10), i)))
        elif ch == ")":
            if top.parens and top.parens.pop():
                top.regex_after = i + 1
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
