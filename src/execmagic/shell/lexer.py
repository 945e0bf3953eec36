"""Shell text split into words and operators as a POSIX shell splits it: the guard's words, the standby's tokens.

- *What are its words?* (:func:`tokenize`, for the guard): the text split into words and operators
  as a POSIX shell splits it, quotes removed, with the ``$(…)``/backtick/``<(…)`` bodies the shell
  would run;
- *Which token is which text?* (:mod:`.sources`, for the standby's "surely parses" check in
  :mod:`.plain_syntax`): the same tokens, each with the text it was read from.

Where it meets a substitution it asks the walk where it ends (:mod:`.ends`), so the two never
disagree on nesting.  What most scripts are made of is read at once, each as the walker reads it a piece at a
time: plain stretches of words, operators and blanks (:mod:`.stretches`), words of quotes and the expansions a walk
only passes (:mod:`.quoted_words`), heredocs (:mod:`.heredocs`), a descriptor's redirection (``2>``).

Over 400 lines, on purpose: :class:`_Lexer` is one walker (about 400 lines) whose every step reads and
writes the same word in progress (``parts``, ``code``, ``live``, ``subs``, ``length``); split in two,
each half would reach into the other's fields.
"""

from __future__ import annotations

import re
from typing import Any

from .ends import (
    Body,
    Ends,
    arith_known,
    arith_or_command,
    backtick_body,
    live_between,
    live_substitutions,
    param_end,
    paren_end,
    walk_to_close,
)
from .frames import SIMPLE_ARITHMETIC, Frame
from .heredocs import HeredocReading
from .quoted_words import Quoted, made_with_bodies, quoted_word
from .stretches import LINE_STRETCH, PLAIN_PIECE, known_pieces, plain_tokens, spanned, stretch_end
from .words import OPERATOR, OPS, Op, Word, ansi_end, unescape
from .work import bounded, step, uncollected

__all__ = ["tokenize"]

_PLAIN = re.compile(r"[^ \t\n'\"\\$`;&|()<>#]+")  # bash's blanks are space and tab alone: "\r" is a letter
_EMPTY_BACKTICKS = re.compile(r"(?:``)+")
_DQ_PLAIN = re.compile(r'[^"\\$`]+')
#: The longest plain stretch kept by its text (a longer one is seldom written again, and its hash is a pass over it),
#: and how many are kept a reading (a notebook's script of a MB has some 3,000 and 5,000: where each is new, a MB of
#: them doubled the reading's memory).
_KEPT_STRETCH = 512
_KEPT_STRETCHES = 8192
#: Digits that name a descriptor and the redirection after them (as :data:`~.words.OPERATOR` reads it there), but a
#: heredoc's ``<<`` (its word follows) and a ``<(``/``>(`` (a process substitution: a word with the digits).
_DESCRIPTOR = re.compile(r"[0-9]+(<<<|>>|>\||>&|<&|<>|<(?![<(])|>(?!\())")
#: What makes text a command of its own, or a redirection of the one it stands in, to a shell that reads it as code.
_DASH_COMMAND = re.compile(r"[;&|<>\n]")


class _Lexer(HeredocReading):
    """Shell text → words and operators, as a POSIX shell splits it.

    It keeps what the rules need: which text was quoted (data), which was live code
    (``$(…)``, backticks, ``<(…)``), heredoc bodies (each found with one regex search,
    so a long heredoc costs little), and a skeleton of the text with quoted parts blanked
    -- what the fork-bomb pattern reads, so ``echo ':(){ :|:& };:'`` is not one.
    """

    def __init__(self, text: str, sources: bool = False, noted: bool = False, joined: bool = False,
                 spelled: bool = False, made: bool = True) -> None:
        self.text = text
        self.joined = joined  # a ((WORD)) in a plain stretch is one token (see words.Subshells)
        #: The ends of the text's ( … ), shared with its bodies: kept when they will be read again (``noted``).
        self.ends = text.ends if isinstance(text, Body) else Ends() if noted else None
        self.i = 0
        self.tokens: list[Word | Op] = []
        self.skeleton: list[str] = []
        self.heredocs: list[tuple[int, str, bool, bool]] = []  # token index, delimiter, strip tabs, quoted
        self.read_bodies: dict[tuple[str, bool], tuple[tuple[str, ...], tuple[int, ...]]] = {}  # (_heredoc_body)
        self.plain_bodies: dict[tuple[str, str, bool], Word] = {}  # (_plain_body)
        self.known = known_pieces() if made else None  # each plain piece's token (plain_tokens; None: its text)
        self.quoted_words: dict[str, Quoted | None] = {}  # (_quoted_word)
        #: Each plain stretch read, by its text: its pieces, tokens and skeleton (a script writes the same `` | ``,
        #: ``done\n``, ``;; *) `` again and again: split once).
        self.stretches: dict[str, tuple[list[str], list[Word | Op], str]] = {}
        self.untold = 0  # steps of plain stretches and heredocs not yet counted (told with the loop's own)
        self.delimiter_next: str | None = None
        #: Where each token was read: (start, end) in the text, or (``spelled``) that text -- kept only when asked.
        self.sources: list[Any] | None = [] if sources or spelled else None
        self.spelled = spelled
        self.word_start = 0
        self.arithmetic_end = 0  # where the (( … )) being read ends
        self.last_close = text.rfind("))")
        self.next_double = -1  # the first "((" at or after where it was last looked for (see _plain_stretch)
        self.stretch_end = -1  # where the last plain stretch ended: one read there at once would find none
        #: See arith_or_command; shared with the bodies where the ends are kept.
        self.arith_log: dict[int, tuple[int, bool]] = {}
        self.expanded_twice = False  # the next word is the target of >&, which bash expands twice
        self._new_word()

    def _new_word(self) -> None:
        self.parts: list[str] = []
        self.code: list[str] = []
        self.feed: str | None = None
        self.quoted = False
        self.started = False
        self.live: list[int] = []
        self.subs: dict[int, tuple[int, str]] = {}
        self.plain: list[tuple[int, int]] = []  # where the word holds text as written (see Word.plain)
        self.length = 0

    def _add(self, piece: str, quoted: bool = False, skeleton: str | None = None) -> None:
        self.parts.append(piece)
        self.length += len(piece)
        self.started = True
        self.quoted |= quoted
        self.skeleton.append(piece if skeleton is None else skeleton)

    def _end_word(self) -> None:
        if not self.started:
            return
        if self.expanded_twice:
            self.code.extend(live_substitutions("".join(self.parts)))
            self.expanded_twice = False
        word = Word("".join(self.parts), self.code, self.feed, self.quoted, live=self.live)
        if self.subs:
            word.subs = self.subs
        if "{" in word:  # (a brace expression needs one: else where the word is plain is never asked)
            word.plain = tuple(self.plain)
        if self.delimiter_next is not None:
            self.heredocs.append((len(self.tokens), word, self.delimiter_next == "<<-", word.quoted))
            self.delimiter_next = None
        self.tokens.append(word)
        if self.sources is not None:
            self._source(self.word_start, min(self.i, len(self.text)))
        self._new_word()

    def _operator(self, op: str) -> None:
        self.tokens.append(OPS[op])
        self.expanded_twice = False
        if self.sources is not None:
            self._source(self.i, self.i + len(op))
        self.skeleton.append(op)

    def run(self) -> list[Word | Op]:
        text = self.text
        n = len(text)
        taken = 0
        while self.i < n:
            taken += 1
            i = self.i
            fresh = not (self.started or self.code or self.expanded_twice)  # (heredocs may wait for the line's end)
            if fresh and self.delimiter_next is None and ((i != self.stretch_end and self._plain_stretch(i))
                                                          or self._quoted_word(i) or self._plain_heredoc(i)
                                                          or self._descriptor(i)):
                continue  # (where a stretch stopped, no other starts: a quoted word or a heredoc may)
            begin, started = i, self.started
            plain = _PLAIN.match(text, i)
            if plain:
                self.plain.append((self.length, self.length + plain.end() - i))
                self._add(plain.group())
                self.i = plain.end()
            else:
                self._step(text[i])
            if self.started and not started:
                self.word_start = begin
            if taken > 4096:
                step(taken + self.untold)
                taken = self.untold = 0
        step(taken + self.untold)
        self.untold = 0
        self._end_word()
        self._read_heredocs()
        return self.tokens

    def _plain_stretch(self, i: int) -> bool:
        """A plain stretch at ``i`` (:func:`~.stretches.stretch_end`): its tokens at once, as one by one would; whether
        one was."""
        if i == self.stretch_end:  # it stopped here, and nothing read since: a stretch here would stop at once
            return False
        text = self.text
        if self.heredocs:  # (to its line's end, where their bodies start)
            end = LINE_STRETCH.match(text, i).end()  # type: ignore[union-attr]  # (a star: it always matches)
        else:
            end, self.arithmetic_end, self.next_double = stretch_end(text, i, self.arithmetic_end, self.next_double,
                                                                     self.last_close)
        if end == i:
            return False
        stretch = text[i:end]
        read = self.stretches.get(stretch) if end - i <= _KEPT_STRETCH else None
        if read is None:  # (its pieces are its text's alone: the lookaheads of their patterns stop at its end)
            read = (*plain_tokens(text, i, end, self.joined, self.known), stretch.replace("\n", ";"))
            if end - i <= _KEPT_STRETCH and len(self.stretches) < _KEPT_STRETCHES:
                self.stretches[stretch] = read
        pieces, tokens, skeleton = read
        if self.heredocs and "{" in stretch:  # (as it was read a piece at a time, where such lines were)
            tokens = [spanned(token) if "{" in token else token for token in tokens]  # type: ignore[arg-type]
        self.tokens.extend(tokens)
        if self.sources is not None:  # (a piece is its own text)
            self.sources.extend(pieces if self.spelled else [m.span() for m in PLAIN_PIECE.finditer(text, i, end)])
        self.skeleton.append(skeleton)
        self.i = self.stretch_end = end
        self.expanded_twice = bool(pieces) and pieces[-1] == ">&"  # a word after it, not yet read, is expanded twice
        self.untold += len(pieces)
        if self.heredocs and text[end - 1] == "\n":
            self._read_heredocs()
        return True

    def _quoted_word(self, i: int) -> bool:
        """A word of plain text, closed quotes, ``$NAME`` and expansions a walk only passes at ``i``
        (:func:`~.quoted_words.quoted_word`), nothing read since the last word (in (( … )) a ' is no quote): made at
        once, as one read piece by piece; whether it was."""
        found = None if i < self.arithmetic_end else quoted_word(self.text, i, self.quoted_words)
        if found is None:
            return False
        end, read = found
        word = made_with_bodies(read, self.text, i, self.ends, self.arith_log, self._body) if read[3] else read[0]
        if word is None:
            return False
        self.i = end
        self.tokens.append(word)
        self.skeleton.append(read[1])
        self.untold += read[2]
        if self.sources is not None:
            self._source(i, end)
        return True

    def _descriptor(self, i: int) -> bool:
        """Digits that name a descriptor and the redirection after them at ``i`` (:data:`_DESCRIPTOR`), nothing read
        since the last word: the operator at once (the digits make no word), as one piece at a time; whether it was.

        How scripts send errors away (``2> err.log``, ``2>/dev/null``, ``2>&1``): read a piece at a time, each took two
        turns of the loop, and the stretch before it stopped at its digits."""
        found = _DESCRIPTOR.match(self.text, i)
        if found is None:
            return False
        op = found.group(1)
        self.tokens.append(OPS[op])
        if self.sources is not None:
            self._source(found.start(1), found.end())
        self.skeleton.append(found.group())
        self.i = found.end()
        self.expanded_twice = op == ">&" and found.start(1) == i + 1 and self.text[i] == "1"  # (1>&: as >& alone)
        self.untold += 2
        return True

    def _step(self, char: str) -> None:
        text, i = self.text, self.i
        if char == "\n":
            self._end_word()
            self._operator(";")
            self.i += 1
            self._read_heredocs()
        elif char in " \t":
            self._end_word()
            self.skeleton.append(char)
            self.i += 1
        elif char == "#" and not self.started and i >= self.arithmetic_end:  # a comment (none in (( … ))), to its end
            end = text.find("\n", i)
            self.i = len(text) if end < 0 else end
        elif char == "#":
            self._add("#")
            self.i += 1
        elif char == "'":
            end = text.find("'", i + 1)
            end = len(text) if end < 0 else end
            self._add(text[i + 1:end], quoted=True, skeleton="''")
            self.i = end + 1
        elif char == '"':
            self._double_quoted()
        elif char == "\\":
            if text.startswith("\\\n", i):  # a line continuation
                self.i += 2
            else:
                self._add(text[i + 1:i + 2], quoted=True, skeleton="''")
                self.i += 2
        elif char == "$":
            self._dollar()
        elif char == "`":
            while True:  # and the next, when one opens right after it (as the next step would)
                self._empty_backticks()
                if not text.startswith("`", self.i):
                    break
                body, self.i = backtick_body(text, self.i + 1)
                self.code.append(body)
                self.live.append(self.length)
                self._add(f"`{body}`", skeleton="``")
                if not text.startswith("`", self.i):
                    break
                step()
        elif char in "<>" and text.startswith("(", i + 1):
            self._process_substitution()
        else:
            if text.startswith("((", i) and not self.started and i >= self.arithmetic_end:
                self._arithmetic_command()  # one inside a (( … )) already read: its substitutions are in
            self._redirect_or_operator()

    def _empty_backticks(self) -> None:
        """A run of ``````: each pair an empty substitution, as one at a time would read it, all at once."""
        run = _EMPTY_BACKTICKS.match(self.text, self.i)
        if run is None:
            return
        pairs = (run.end() - self.i) // 2
        self.code.extend([""] * pairs)
        self.live.extend(range(self.length, self.length + 2 * pairs, 2))
        self._add("``" * pairs, skeleton="``" * pairs)
        self.i = run.end()
        step(pairs)

    def _arithmetic_command(self) -> None:
        """At ``((``: note where it ends if bash reads it as arithmetic (not as two subshells).

        Its words are still judged one by one (``(`` ``(`` and what follows, as ever), but as bash
        reads it there: a ``${`` is two characters (bash counts parentheses only), and every ``$( … )``
        in it runs, quoted or not (bash reads it as it reads "…"), so those become the next word's code.
        """
        if self.last_close < self.i + 2:  # no "))" after it: it cannot be one (checked in O(1), not walked)
            return
        simple = SIMPLE_ARITHMETIC.match(self.text, self.i)
        if simple:  # nothing in it a walk would stop at: it ends at the first "))", and nothing in it runs
            self.arithmetic_end = simple.end()
            return
        after_for, ends = bool(self.tokens) and self.tokens[-1] == "for", self._walk_ends()
        known = None if after_for else self.arith_log.get(self.i + 2) or arith_known(self.text, self.i + 2, ends)
        if known is not None:  # a walk passed it: where it ends is known
            end, arithmetic = (None if known[0] > len(self.text) else known[0]), not known[1]
        else:
            frame = Frame("arith", loop=after_for)
            if not after_for:  # its end shared with the bodies holding it
                frame.start, frame.bare, frame.clean = self.i + 2, True, True
            end = walk_to_close(self.text, self.i + 2, frame, log=self.arith_log, ends=ends)
            arithmetic = frame.kind == "arith"  # a ";" in it made it subshells: kind "code"
        if end is not None and arithmetic:
            self.arithmetic_end = end
            # bash reads (( … )) as it reads "…": a '…' there is no quote, and every $( … ) in it runs
            self.code.extend(live_between(self.text, self.i + 2, end - 2, self.arith_log, ends))

    def _double_quoted(self) -> None:
        text, i, parts = self.text, self.i + 1, []
        length = self.length  # where the next part starts in the word
        while i < len(text) and text[i] != '"':
            step()
            run = _DQ_PLAIN.match(text, i)
            if run:
                parts.append(run.group())
                i = run.end()
            elif text[i] == "\\":
                after = text[i + 1:i + 2]
                parts.append(after if after in '$`"\\' else ("" if after == "\n" else "\\" + after))
                i += 2
            elif text[i] == "$":
                self.live.append(length)
                i = self._expansion(i, parts, in_dquote=True, at=length)
            else:
                body, i = backtick_body(text, i + 1)
                self.code.append(body)
                self.live.append(length)
                parts.append(f"`{body}`")
            length += len(parts[-1]) if parts else 0
        self._add("".join(parts), quoted=True, skeleton='""')
        self.i = i + 1

    def _expansion(self, i: int, parts: list[str], in_dquote: bool = False, at: int = -1) -> int:
        """``$(…)``, ``$((…))``, ``${…}`` or a plain ``$`` at ``i``: add it to ``parts``; the index after it.

        ``at``: where it starts in the word (the word so far when not given), where a ``$(…)``'s end is kept.
        """
        text = self.text
        if text.startswith("$((", i):  # arithmetic: only the substitutions inside it run
            end, command = arith_or_command(text, i + 3, self.arith_log, self.ends)
            if command:  # $((a); b): a command substitution whose body starts with a subshell
                self.code.append(self._body(i + 2, end))
            else:
                self.code.extend(live_between(text, i + 3, end, self.arith_log, self.ends))
            parts.append(text[i:end + 1])
            return end + 1
        if text.startswith("$(", i):
            end = paren_end(text, i + 2, self.ends)
            body = self._body(i + 2, end)
            self.code.append(body)
            parts.append(text[i:end + 1])
            at = self.length if at < 0 else at
            self.subs[at] = (at + end - i + 1, body)  # (past the word's end when open: as a walk of the word finds)
            return end + 1
        walked = text.startswith("$[", i) and arith_or_command(text, i + 2, self.arith_log, self._walk_ends(), "]")
        close = walked[0] if walked else -1
        if 0 <= close < len(text):  # bash's old arithmetic, one expansion to its "]": the substitutions in it run,
            # and what dash (which has none) runs there is its text read as code (unclosed, "$[" is plain to both)
            self.code.extend(live_between(text, i + 2, close, self.arith_log, self.ends))
            if _DASH_COMMAND.search(text, i + 2, close):  # (with none of these, dash runs only the substitutions)
                self.code.append(self._body(i, close))
            parts.append(text[i:close + 1])
            return close + 1
        if text.startswith("${", i) and i < self.arithmetic_end:  # in (( … )) bash reads no ${…}
            parts.append("${")
            return i + 2
        if text.startswith("${", i):
            end = param_end(text, i + 2, in_dquote, self.ends)
            self.code.extend(live_substitutions(self._body(i + 2, end)))
            parts.append(text[i:end + 1])
            return end + 1
        if text.startswith("$$", i):  # the shell's pid: the "$" after it starts nothing
            parts.append("$$")
            return i + 2
        parts.append("$")
        return i + 1

    def _dollar(self) -> None:
        text, i = self.text, self.i
        if text.startswith('$"', i):  # $"…" is "…" translated for the locale: read as "…"
            self.i += 1
            return
        if text.startswith("$'", i):  # ANSI-C quoting
            end = ansi_end(text, i + 2)
            self._add(unescape(text[i + 2:end]), quoted=True, skeleton="''")
            self.i = end + 1
            return
        parts: list[str] = []
        self.live.append(self.length)
        self.i = self._expansion(i, parts)
        self._add("".join(parts), skeleton="$" if parts == ["$"] else "$()")

    def _process_substitution(self) -> None:
        text, i = self.text, self.i
        end = paren_end(text, i + 2, self.ends)
        body = self._body(i + 2, end)
        self.code.append(body)
        if not self.started and text[i] == "<":
            self.feed = body
        self._add(text[i:end + 1], skeleton="<()")
        self.i = end + 1

    def _redirect_or_operator(self) -> None:
        text, i = self.text, self.i
        fd = "".join(self.parts) if text[i] in "<>" and self.started else ""
        if fd and not self.quoted and fd.isdigit():
            self._new_word()  # "2>": the digits name a file descriptor, they are not a word
        else:
            fd = ""
            self._end_word()
        found = OPERATOR.match(text, i)
        op = found.group() if found else text[i]
        self._operator(op)
        self.i += len(op)
        if op in ("<<", "<<-") and i >= self.arithmetic_end:  # (in (( … )) a shift: no heredoc follows)
            self.delimiter_next = op
        # bash expands the word after >& twice when it is not a number: >&'$(cmd)' runs cmd
        self.expanded_twice = op == ">&" and fd in ("", "1")

    def _walk_ends(self) -> Ends:
        """The ends walks note, from one on that may run out of text with the reading going on (an unclosed ``((``)."""
        if self.ends is None:  # (a later walk stops where it opens what that one found never closes: not read twice)
            self.ends = Ends(bodies=False)
        return self.ends

    def _body(self, start: int, end: int) -> str:
        """The text from ``start`` to ``end``: a :class:`Body` where the ends are kept."""
        return self.text[start:end] if self.ends is None else self.ends.body(self.text, start, end)



def tokenize(text: str, noted: bool = False, joined: bool = False) -> tuple[list[Word | Op], str]:
    """The words and operators of shell ``text``, and its skeleton: the text with quoted parts blanked.

    The skeleton is what text-shaped rules read (the fork-bomb pattern), so that
    ``echo ':(){ :|:& };:'`` -- data -- is not taken for one.  ``noted``: the bodies of its substitutions will
    be read too (the guard reads them as code): each is a :class:`Body` that shares the ends this reading
    found (a :class:`Body` given is read so, whatever ``noted`` says).  ``joined``: a plain ``((WORD))`` is one token,
    a :class:`~.words.Subshells` (for the guard, which knows it).
    """
    lexer = _Lexer(text, noted=noted, joined=joined)
    with bounded(text), uncollected():
        tokens = lexer.run()
    return tokens, "".join(lexer.skeleton)
