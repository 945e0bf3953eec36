"""Where a template stands in a POSIX-style shell script (bash, sh, dash, zsh, ksh).

Tracks exactly what changes how a character is read: quotes (``'…'``, ``"…"``, ``$'…'``),
backslashes, ``$(…)``, backticks, ``${…}``, ``$((…))``, heredocs (quoted or not, ``<<-``)
and comments; inside ``$(…)`` a ``case`` pattern's ``)`` does not end it.  Not a full parser: it
follows quoting and nesting, not the grammar.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import shutil

from .scanning import Context, Scanner

__all__ = ["ShellScanner", "ansi_c_quoting"]

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
    cases: int = 0       # open "case … esac" inside a $( … ) frame
    loop: bool = False   # an arithmetic "for (( …; …; … ))", whose ";" are its own
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
    "arith": re.compile(r"[\\'\"`$()\];]"),
    "comment": re.compile(r"\n"),
    "comment-in-backtick": re.compile(r"[\n`]"),
    "psquote": re.compile(r"[\\'\"`$]"),
}
_CODE_WORDS = re.compile(r"[\\'\"`$#()<}\n{]|\bcase(?=[ \t])|\besac(?=[\s;)&|]|$)")
_HEREDOC_OP = re.compile(r"<<(-?)[ \t]*((?:[^\s;&|<>()'\"\\]|'[^']*'|\"(?:[^\"\\]|\\.)*\"|\\.)+)")
# a keyword after which a command (so "case") can stand
_KEYWORD_BEFORE = re.compile(r"(?<![\w$])(?:then|do|else|elif|if|while|until|time)$")
_WORD_START_BEFORE = frozenset(" \t\n;&|(<>")  # not ")": $(…)#x is one word


class ShellScanner(Scanner):
    def __init__(self, text: str, spans: list[tuple[int, int]], ansi_c: bool | None) -> None:
        super().__init__(text, spans)
        self.ansi_c = ansi_c
        self.stack: list[_Frame] = [_Frame("code")]
        self.pending: list[_Frame] = []  # heredocs whose bodies start at the next newline

    def _stops(self) -> re.Pattern[str]:
        frame = self.stack[-1]
        if frame.kind == "comment" and frame.closer == "`":
            return _SHELL_STOPS["comment-in-backtick"]
        if frame.kind == "code" and frame.closer == ")":
            return _CODE_WORDS  # inside $( … ) a case pattern's ")" must not end it
        return _SHELL_STOPS["code" if frame.kind in ("param", "backtick") else frame.kind]

    def _context(self) -> Context:
        frames = self.stack
        ticks = tuple(f.in_dquote for f in reversed(frames) if f.kind == "backtick")
        top = frames[-1]
        kind = top.kind
        if kind == "backtick":
            kind = "code"
        elif kind == "ansi" and self.ansi_c is None:
            kind = "ansi-unknown"
        elif kind in ("param", "psquote"):  # ${…} is read like the quoting around it
            outer = next(f for f in reversed(frames) if f.kind not in ("param", "psquote"))
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
            if text.startswith("`", i + 1) and any(f.kind == "backtick" for f in self.stack):
                return self._escaped_backtick(i)
            return i + 2
        if kind == "psquote" and ch == "'":
            self.stack.pop()
            return i + 1
        if kind in ("squote", "ansi"):
            self.stack.pop()
            return i + 1
        if kind == "comment":
            self.stack.pop()
            return i  # the newline (or closing backtick) is the enclosing frame's business
        if kind == "heredoc-quoted" or (kind == "heredoc" and ch == "\n"):
            return self._heredoc_line(frame, i + 1)
        if ch == "$":
            return self._dollar(i)
        if ch == "`":
            if kind == "backtick" and frame.closer == "`":
                self.stack.pop()
            elif kind == "backtick":
                self.stack.append(_Frame("backtick", closer="`", in_dquote=self._in_dquote()))
            else:
                self.stack.append(_Frame("backtick", closer="`", in_dquote=self._in_dquote()))
            return i + 1
        if kind in ("dquote", "psquote"):
            if ch == '"' and kind == "dquote":
                self.stack.pop()
            return i + 1
        if kind == "arith":
            return self._arith(frame, i, ch)
        return self._code(frame, i, ch)

    def _escaped_backtick(self, i: int) -> int:
        """Inside `…`, a \\` opens (or closes) a nested command substitution: one more layer."""
        top = self.stack[-1]
        if top.kind == "backtick" and top.closer == "\\`":
            self.stack.pop()
        elif top.kind in ("code", "backtick", "dquote", "param"):
            self.stack.append(_Frame("backtick", closer="\\`", in_dquote=self._in_dquote()))
        return i + 2

    def _in_dquote(self) -> bool:
        return any(f.kind == "dquote" for f in self.stack)

    def _dollar(self, i: int) -> int:
        text = self.text
        nxt = text[i + 1:i + 3]
        top = self.stack[-1].kind
        if nxt.startswith("'") and (top in ("dquote", "heredoc", "psquote") or self._quoted_param(self.stack[-1])):
            return i + 1  # "$" then a plain "'" (bash reads no $'…' there)
        if nxt.startswith("'"):
            if self.ansi_c is False:
                return i + 1  # dash: "$" then an ordinary '…'
            self.stack.append(_Frame("ansi"))
            return i + 2
        quoted = top in ("dquote", "heredoc", "psquote") or self._quoted_param(self.stack[-1])
        if nxt.startswith('"') and not quoted:
            self.stack.append(_Frame("dquote"))
            return i + 2
        if nxt.startswith("["):  # $[ … ], bash's old arithmetic
            self.stack.append(_Frame("arith", closer="]"))
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
        elif ch == "]" and frame.closer == "]" and not frame.depth:
            self.stack.pop()
        elif ch == ";" and not frame.loop and frame.closer != "]":
            # no arithmetic holds a ";": bash read "$((" / "((" as two subshells, "( (…); …)"
            frame.kind, frame.closer, frame.depth = "code", ")", 0
        elif ch == '"':
            self.stack.append(_Frame("dquote"))
        return i + 1

    def _command_position(self, i: int) -> bool:
        """Whether a word at ``i`` stands where a command (so a keyword) can: after ``;``, ``&``,
        ``|``, ``(``, a newline, or at the start of a ``$( … )``."""
        j = i
        while j > 0 and self.text[j - 1] in " \t":
            j -= 1
        if j == 0 or self.text[j - 1] in ";&|(\n{!" or self.text.startswith("$(", j - 2):
            return True
        return _KEYWORD_BEFORE.search(self.text, max(0, j - 6), j) is not None

    def _quoted_param(self, frame: _Frame) -> bool:
        """A ``${…}`` inside ``"…"`` or a heredoc: bash reads a ``'`` there as a plain character."""
        if frame.kind != "param":
            return False
        outer = next(f for f in reversed(self.stack) if f.kind != "param")
        return outer.kind in ("dquote", "heredoc")

    def _code(self, frame: _Frame, i: int, ch: str) -> int:
        text = self.text
        at_word_start = i == 0 or text[i - 1] in _WORD_START_BEFORE
        if ch in "ce":  # the words case / esac (only $( … ) frames stop at them)
            if ch == "c" and self._command_position(i):
                frame.cases += 1
            elif ch == "e" and frame.cases and (i == 0 or text[i - 1] in " \t\n;"):
                frame.cases -= 1  # an empty "case x in esac" too
            return i + 4
        if ch == "'":
            # inside "${…}" bash pairs single quotes (a "}" between them does not close it) but
            # reads them as plain characters: the text between is as live as the "…" around it
            self.stack.append(_Frame("psquote" if self._quoted_param(frame) else "squote"))
        elif ch == '"':
            self.stack.append(_Frame("dquote"))
        elif ch == "#" and at_word_start and frame.kind != "param":
            in_tick = any(f.kind == "backtick" for f in self.stack)
            self.stack.append(_Frame("comment", closer="`" if in_tick else ""))
        elif ch == "(":
            after_for = bool(re.search(r"(?<![\w$])for[ \t]*$", text[max(0, i - 8):i]))
            if text.startswith("((", i) and (at_word_start or after_for or _KEYWORD_BEFORE.search(
                    text, max(0, i - 6), i)):
                self.stack.append(_Frame("arith", loop=after_for))
                return i + 2
            if frame.kind == "param":
                frame.depth += 1
            else:  # a subshell, a group, a function's () or a case's (pattern): its own frame
                self.stack.append(_Frame("code", closer=")"))
        elif ch == ")":
            if frame.depth:
                frame.depth -= 1
            elif frame.closer == ")" and not frame.cases:  # a case pattern's ")" is not the end
                self.stack.pop()
        elif ch == "}":
            if frame.kind == "param" and frame.depth == 0:
                self.stack.pop()
        elif ch == "{":
            if frame.kind == "param":
                frame.depth += 1
        elif ch == "<":
            return i + 2 if frame.kind == "param" and text.startswith("<<", i) else self._heredoc_operator(i)
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
        word = re.sub(r"\$(?=['\"])", "", match.group(2))  # $'EOF' ends at EOF, as bash reads it
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
            line = line.lstrip("\t") if current.strip_tabs else line
            in_substitution = any(f.closer == ")" for f in self.stack[:-1])
            if in_substitution and line.startswith(current.delimiter + ")"):
                self.stack.pop()  # bash also ends the body at "EOF)" inside $( … ); the ")" is code
                return start + (len(text[start:]) - len(text[start:].lstrip("\t"))) + len(current.delimiter)
            if line != current.delimiter:
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
