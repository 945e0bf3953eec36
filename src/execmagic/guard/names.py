"""What the variables hold: ``$D`` in a command as the shell would expand it, as far as it is known.

An agent deleted a home folder in two calls: ``export D="$HOME"``, then ``rm -rf "$D"``.  The text
of the second call alone cannot tell what ``$D`` is; the session can.  The engine hands the check
the variables a run starts with (the session's exports), and the walk adds what the text itself
assigns before a command (``BUILD=./b; rm -rf "$BUILD"/``).  A variable neither exported nor
assigned is empty, as in the shell -- ``rm -rf "$NOPE"/`` is ``rm -rf /``.

What cannot be known stays as written, and a path holding it is not judged: a value read at run
time (``read d``, ``for f in $(ls)``), a ``${X%/*}``, ``$PWD`` and the other names bash sets itself,
and -- after a ``source``, an ``eval`` or a ``BASH_ENV`` file, which may set any name -- every name
not known already.  ``${X:?}`` of an empty ``X`` stops the shell before the command, so it is not
judged either.  Without the session's variables (``env=None``) only what the text assigns is known,
and other names stay as written.

Two more things the shell does to a word are followed: ``$(echo /)`` and ``$(printf …)`` -- a
command that only prints text it was given -- are what they print, and a path in the session's home
directory spelled out (``/home/me``) is ``~``, the home directory the rules know.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Container, Mapping, Sequence

from ..shell.words import WRITES, Word
from .changed import MAX_VALUES as _MAX_VALUES
from .changed import NAME as _NAME
from .changed import REF as _REF
from .changed import changed as _changed
from .commands import ASSIGNMENT, Command, assigned
from .printers import emitted, may_emit
from .readings import Readings
from .values import Values, operator

__all__ = ["Names", "Readings"]

#: Names bash gives values itself: unknown to the check unless the text assigns them.
_SHELL_SET = frozenset({
    "PWD", "OLDPWD", "RANDOM", "SRANDOM", "SECONDS", "LINENO", "PPID", "UID", "EUID", "GROUPS", "HOSTNAME",
    "HOSTTYPE", "OSTYPE", "MACHTYPE", "IFS", "OPTIND", "OPTARG", "OPTERR", "REPLY", "MAPFILE", "PIPESTATUS",
    "FUNCNAME", "DIRSTACK", "COLUMNS", "LINES", "EPOCHSECONDS", "EPOCHREALTIME", "SHELL", "HOME", "PS1", "PS2", "PS4",
    "HISTFILE", "HISTSIZE", "HISTFILESIZE", "MAIL", "MAILCHECK", "TMOUT", "COMP_WORDS", "COMP_CWORD"})
_REFERENCE = re.compile(r"\$(?:\{(?P<bang>!?)(?P<braced>[A-Za-z_]\w*|[@*]|\d+)"
                        r"(?:(?P<op>:?[-?=+]|%%?|##?|//?|\^\^?|,,?|:)(?P<arg>[^}]*))?\}"
                        r"|(?P<plain>[A-Za-z_]\w*|[@*\d]))")
#: ``"$@"``: one word per value even in quotes.
_EACH = frozenset({"$@", "${@}"})
#: Characters an expanded word may hold at most: a longer one is no path anyone types, and ``a=$a$a``
#: repeated would double it each time (2**30 characters after thirty) -- it is left as written.
_MAX_TEXT = 64 * 1024
#: How deep a ``$(echo $(echo …))`` is read as what it prints, counted from the top of the check (a walk of
#: code at depth 2 starts at 2): as deep as the walk follows code inside code, which refuses what is deeper.
_MAX_PRINTING = 8
@dataclasses.dataclass
class Names:
    """The variables a walk knows: the session's exports (``env``) and what the text assigned so far.

    ``env`` is ``None`` when the session is not known (unknown names stay as written); ``opaque`` is set
    once something ran that may set any name (``source``, ``eval``), so that unknown names are unknown
    rather than empty.
    """

    env: Mapping[str, str] | None = None
    values: dict[str, Values] = dataclasses.field(default_factory=dict)
    opaque: bool = False
    #: What this check has read so far, shared by every copy (see :class:`Readings`).
    readings: Readings = dataclasses.field(default_factory=lambda: Readings(), compare=False, repr=False)
    #: How deep the ``$(…)`` being read as what it prints is nested in the checked text: the depth of the code
    #: being walked, and one more for each ``$(…)`` being read inside it (see :meth:`printed`).
    printing: int = dataclasses.field(default=0, compare=False, repr=False)
    #: The text walked is one spelled as dash reads its heredocs' words (see ``dash_words.as_dash_reads``): code in it
    #: is not spelled so again (each level again would walk the code nested in it twice as often as the level around).
    as_dash: bool = dataclasses.field(default=False, compare=False, repr=False)
    #: Something keeps these names as they are (a subshell's ``(`` to restore them, a body found quiet under them):
    #: :meth:`assign` changes a copy then, else these (a copy at every ``NAME=`` of a script was the square of it).
    kept: bool = dataclasses.field(default=False, compare=False, repr=False)
    #: A ``declare -n`` reference was given (see :meth:`_referred`): until then a name is itself.
    refers: bool = dataclasses.field(default=False, compare=False, repr=False)
    #: What each ``$(…)`` body prints, by body and :attr:`printing` depth, under these names as they are now:
    #: shared by copies until one of them changes a name (then it starts its own), so that the walk of a body
    #: finds what the expansion of the word around it already read.  Asked afresh at every level, a word of
    #: ``$(echo $(echo …))`` eight deep was read again eight times at each of the eight levels.
    _printed: dict[tuple[str, int], str | None] = dataclasses.field(default_factory=dict, compare=False, repr=False)
    #: What each word expanded to (:meth:`word`), by the word and all it holds, under these names as they are now
    #: (shared and started afresh as :attr:`_printed`): a script's ``"$N"``, ``$PATH`` and ``"$f"`` again and again.
    _words: dict[tuple[object, ...], list[Word]] = dataclasses.field(default_factory=dict, compare=False, repr=False)
    #: Some name was given several values (``for X in cd rm``): a word may be one command or another (:meth:`variants`).
    several: bool = dataclasses.field(default=False, compare=False, repr=False)

    @classmethod
    def of(cls, env: Mapping[str, str] | None) -> Names:
        """The names a run with environment ``env`` starts with (a ``BASH_ENV`` file may set any of them)."""
        return cls(env, {}, env is not None and bool(env.get("BASH_ENV")))

    @property
    def downloads(self) -> dict[tuple[str, int], bool]:
        """Whether code run in a ``$(…)`` body downloads something, by body and depth (see :class:`Readings`)."""
        return self.readings.downloads

    def copy(self) -> Names:
        """The names code run inside this code (a subshell, ``bash -c``, ``$(…)``) starts with."""
        copied = Names.__new__(Names)  # not through __init__: every walk and every given name makes one
        copied.__dict__.update(self.__dict__)
        copied.values = dict(self.values)
        copied.kept = False
        return copied

    def set(self, name: str, values: Values) -> None:
        """Give ``name`` these ``values`` (what it held printed otherwise: this copy's answers start afresh)."""
        self.values[name] = values
        self._printed, self._words = {}, {}  # (new ones: a copy shares the dicts it was made with)
        self.several = self.several or (values is not None and len(values) > 1)
        if name.startswith(_REF):
            self.refers = True

    def make_opaque(self) -> None:
        """Something ran that may set any name: unknown names are unknown from here on, not empty."""
        if not self.opaque:
            self.opaque = True
            self._printed, self._words = {}, {}

    def given(self, words: Sequence[Word]) -> Names:
        """The names code run by a command sees, with the command's own ``X=/ sh -c …`` (or ``env X=/ …``)."""
        pairs = [word for word in words if ASSIGNMENT.match(word)]
        if not pairs:
            return self
        child = self.copy()
        for name, value in assigned(Command(pairs)).items():
            child.set(name, (value,) if value else None)
        return child

    def positional(self, args: Sequence[Word]) -> Names:
        """The names the code of ``sh -c CODE`` sees when ``args`` follow: ``$0`` the first, ``$1``… the next, ``$@``
        and ``$*`` all but the first (``bash -c '"$@"' _ rm -rf /``); not known where an argument is not."""
        known, given = all(word.live == () for word in args), [*args, *[""] * 10]  # (one not given is empty)
        return self.copy().assign([*((str(i), (str(given[i]),) if known else None) for i in range(10)),
                                   *((each, (" ".join(args[1:]),) if known else None) for each in "@*")])

    @property
    def home(self) -> str | None:
        """The session's home directory spelled out (``/home/me``), when known and not ``/``."""
        home = (self.env or {}).get("HOME", "").rstrip("/")
        return home if home.startswith("/") and "HOME" not in self.values else None

    def value(self, name: str) -> Values:
        """What ``$name`` may be: its values, or ``None`` when not known (``$HOME`` stays: paths know it)."""
        target = self._referred(name)
        if target != name:
            return self.value(target)
        if name in self.values:
            return self.values[name]
        if not _NAME.match(name):  # $1, $@: the arguments the session or a script was given, unless set here
            return None
        if name in _SHELL_SET or name.startswith(("BASH", "COMP_")) or self.env is None:
            return None
        if name in self.env:
            return (self.env[name],)
        return None if self.opaque else ("",)

    def _referred(self, name: str) -> str:
        """The name ``name`` stands for: itself, or what a ``declare -n`` made it refer to (a few steps at most)."""
        if not self.refers:  # (no reference given: none is among the values)
            return name
        for _ in range(8):
            ref = self.values.get(_REF + name)
            if not ref or not _NAME.fullmatch(ref[0]):
                return name
            name = ref[0]
        return name

    # -- expanding ---------------------------------------------------------------------------------
    def expand(self, command: Command, code: bool = True) -> Command:
        """``command`` with its variables, printed substitutions and spelled-out home directory expanded.

        ``code``: whether it may run code while it is expanded (``False``: the caller found none in it)."""
        if not self.values and self.env is None and not (code and self._prints(command)):  # (every name unknown:
            return command  # only what a $(…) prints is known, and the home folder is not)
        home = self.home if self.env is not None else None  # (a plain word is itself, but for a home spelled out)
        words = [new for word in command.words for new in (
            (word,) if word.live == () and not (home and word.startswith(home)) else self.word(word))]
        return Command(words, self._redirects(command))

    def redirects(self, command: Command, code: bool = True) -> list[tuple[str, Word]]:
        """The redirections of ``command`` as :meth:`expand` expands them (asked first of a command only its
        redirections can get judged: most write where no rule looks, their words kept as they are)."""
        if not self.values and self.env is None and not (code and self._prints(command)):
            return command.redirects
        return self._redirects(command)

    def _redirects(self, command: Command) -> list[tuple[str, Word]]:
        if not self.several:
            return [(op, target if op in ("<<", "<<-") else (self.word(target) or [target])[0])
                    for op, target in command.redirects]
        found = []  # one that writes to a word of several values once for each: for f in a /etc/passwd; do … > $f
        for op, target in command.redirects:
            words = [target] if op in ("<<", "<<-") else self.word(target) or [target]
            found += [(op, word) for word in words] if len(words) > 1 and op in WRITES else [(op, words[0])]
        return found

    def _prints(self, command: Command) -> bool:
        """Whether a ``$(…)`` or backtick ``command`` runs while it is expanded prints what is known whatever the
        names hold (``rm -rf $(echo /)``)."""
        for word in command.words:
            if word.code and any(self.printed(body) is not None for body in word.code):
                return True
        return any(self.printed(body) is not None for op, target in command.redirects if op not in ("<<", "<<-")
                   for body in target.code)  # (a heredoc's body is not expanded here)

    def word(self, word: Word) -> list[Word]:
        """The words ``word`` becomes: one, none (an unquoted empty expansion), or one per value it may take (never
        changed by a caller: kept for the same word under these names)."""
        if word.live == () and (self.env is None or not (home := self.home) or not word.startswith(home)):
            return [word]  # (a plain word, most redirections' targets: itself, at once)
        key = (word, word.live, word.quoted, word.shown, word.code, word.feed, self.printing)
        found = self._words.get(key)
        if found is None:
            found = self._words[key] = [word] if (texts := self._texts(word)) is None else self._made(word, texts)
        return found

    def variants(self, command: Command) -> list[Command]:
        """``command`` expanded once for each value its words of several values may take (a name holds several:
        :attr:`several`): ``for X in cd rm; do $X -rf /`` runs ``cd -rf /``, then ``rm -rf /``, not what :meth:`expand`
        makes, ``cd rm -rf /`` (a word per value: right for arguments, not for the command run).  Empty: none."""
        for index, word in enumerate(command.words):
            if word.live == () or (texts := self._texts(word)) is None or len(texts) < 2:
                continue
            rest = Command(command.words[index + 1:], command.redirects)
            after = self.variants(rest) or [self.expand(rest)]  # (each of several such words: all their pairs)
            before = [new for each in command.words[:index] for new in self.word(each)]
            return [Command([*before, *self._made(word, [text]), *each.words], each.redirects)
                    for text in texts for each in after][:_MAX_VALUES * _MAX_VALUES]
        return []

    def _texts(self, word: Word) -> list[str] | None:
        """The texts ``word`` may be, one per value (before fields are split), or ``None``: left as written."""
        live = word.live if word.live is not None else [m.start() for m in re.finditer(r"[$`]", word)]
        if not live:  # a plain word (most of a script's): itself, but for a home directory spelled out
            home = self.home if self.env is not None else None
            if not home or not word.startswith(home):
                return None
        texts, pos = [""], 0
        for start in live:
            if start < pos:
                continue
            found = self._expansion(word, start)
            if found is None:
                continue
            values, end = found
            if sum(len(text) for text in texts) + len(values) * max(map(len, values), default=0) > _MAX_TEXT:
                return None
            texts = [text + word[pos:start] + value for text in texts for value in values][:_MAX_VALUES]
            pos = end
        return [self._home(text + word[pos:]) for text in texts]

    def _made(self, word: Word, texts: list[str]) -> list[Word]:
        """The words ``word`` becomes when it is ``texts`` (:meth:`_texts`): split where the shell splits them."""
        if texts == [word]:
            return [word]
        if word in _EACH:  # "$@": a word per value (joined here by a blank, whatever IFS is)
            texts = [part for text in texts for part in text.split()]
        elif not word.quoted and not ASSIGNMENT.match(word):  # unquoted: split, and an empty word is no word
            texts = [part for text in texts for part in self._split(text)]
        # shown as written, once: a refusal quotes $D, not what D holds
        return [Word(text, word.code, word.feed, word.quoted, "" if i else word.shown, live=())
                for i, text in enumerate(texts)]

    def _split(self, text: str) -> list[str]:
        """The fields an unquoted expansion's ``text`` is split into: at blanks, or at the characters of an ``IFS``
        the text gave (``IFS=,; x=rm,-rf,/; $x`` runs ``rm -rf /``); an ``IFS`` not known splits at blanks."""
        ifs = self.values.get("IFS")
        if not ifs or len(ifs) != 1 or ifs[0] == " \t\n":
            return text.split()
        return [part for part in re.split(f"[{re.escape(ifs[0])}]+", text) if part] if ifs[0] else [text]

    def _home(self, text: str) -> str:
        home = self.home
        if home and (text == home or text.startswith(home + "/")):
            return "~" + text[len(home):]
        return text

    def _expansion(self, word: str, start: int) -> tuple[tuple[str, ...], int] | None:
        """The values of the expansion at ``start`` and where it ends, or ``None`` when it is not known."""
        if word.startswith("$((", start):
            return None
        if word.startswith("$(", start) or word.startswith("`", start):
            known = word.subs.get(start) if isinstance(word, Word) and word.subs else None
            if known is not None:  # as the reading of the text found it (its body knows where it stands there)
                end, body = known
            else:
                end = self.readings.end(word, start)
                body = word[start + 2:end - 1] if word[start] == "$" else word[start + 1:end - 1]
            printed = self.printed(body)
            return None if printed is None else ((printed,), end)
        reference = _REFERENCE.match(word, start)
        if reference is None:
            return None
        name, op = reference.group("braced") or reference.group("plain"), reference.group("op")
        values = self.value(name)
        if reference.group("bang"):  # ${!x}: the value of the name x holds
            values = self._indirect(values)
        if values is None and name == "HOME" and op and self.home:  # ${HOME%/}: paths know $HOME, not this
            values = (self.home,)
        values = operator(values, op, reference.group("arg") or "")
        return None if values is None else (values, reference.end())

    def _indirect(self, values: Values) -> Values:
        """What ``${!x}`` may be when ``x`` may hold ``values``: the values of the names they are."""
        if values is None or not all(_NAME.fullmatch(value) for value in values):
            return None
        found: list[str] = []
        for value in values:
            held = self.value(value)
            if held is None:
                return None
            found.extend(held)
        return tuple(found[:_MAX_VALUES])

    def printed(self, body: str) -> str | None:
        """What ``$(body)`` is when ``body`` only prints text it was given (``echo /``), trailing newlines off.

        Not known for a body nested deeper than :data:`_MAX_PRINTING` in the checked text: the walk refuses code
        nested that deep (rule too-deep), so nothing goes unjudged.  Each body is read once per depth and set of
        names: the walk of the code around it (one level deeper) finds the answer its expansion already gave.
        """
        if self.printing >= _MAX_PRINTING:
            return None
        key = (body, self.printing)
        if key not in self._printed:
            self._printed[key] = self._print(body)
        return self._printed[key]

    def _print(self, body: str) -> str | None:
        readings = self.readings
        items = [item for item in readings.items(readings.read(body)) if item != ";"]
        if len(items) != 1 or not isinstance(items[0], Command):
            return None if items else ""  # an empty body (or a comment) prints nothing: rm -rf /$() is rm -rf /
        if not may_emit(items[0]):
            return None  # ($(basename "$f"): no word of it need be expanded to know it prints nothing known)
        self.printing += 1
        try:
            text = emitted(self.expand(items[0]), self.value("PWD"))  # ($(pwd): where a cd the walk followed went)
        finally:
            self.printing -= 1
        return None if text is None else text.rstrip("\n")

    # -- remembering -------------------------------------------------------------------------------
    def assign(self, pairs: Sequence[tuple[str, Values]]) -> Names:
        """These names given these values, in order (what a command that only assigns plainly does:
        ``commands.Assignments``): these names changed, or a changed copy when something keeps them (:attr:`kept`)."""
        after = self.copy() if self.kept else self
        if after.refers:
            for name, value in pairs:
                after.values[after._referred(name)] = value
        else:  # (each name is itself: given all at once, 111,000 of them in 10 ms)
            after.values.update(pairs)
        after._printed, after._words = {}, {}  # (what a name held printed otherwise: see set)
        return after

    def remember(self, pipeline: Sequence[Command]) -> Names:
        """The names after a pipeline (already expanded): what it assigns, reads, loops over, unsets.

        ``self`` itself when the pipeline changes no name, else a changed copy when something keeps these
        (:attr:`kept`: names once passed on are never changed, so that a subshell's ``(`` keeps the names it must
        restore at its ``)`` without a copy), else these names changed.
        """
        changes: list[tuple[str, Values]] = []
        for command in pipeline:
            changes += _changed(command)
        if len(pipeline) == 1:  # a pipeline's stages are subshells: X=1 | … sets nothing
            # X=(a b) reads as X= here: an array, not empty
            changes += [(name, (value,) if value else None) for name, value in assigned(pipeline[0]).items()]
        if not changes:
            return self
        refs = {name for name, _ in changes if name.startswith(_REF)}  # declare -n r=x: r=x is no value of r
        if self._holds(changes, refs):  # (a loop's read -r line, n=$((n + 1)) at every turn: no copy, what $(…)
            return self  # printed still holds, and the bodies found quiet under these names are still quiet)
        after = self.copy() if self.kept else self
        for name, values in changes:
            if name == "":
                after.make_opaque()
            elif _REF + name not in refs:
                after.set(name if name.startswith(_REF) else after._referred(name), values)
        return after

    def _holds(self, changes: Sequence[tuple[str, Values]], refs: Container[str]) -> bool:
        """Whether each of ``changes`` (as :meth:`remember` makes them) would leave these names as they are: each name
        given the values it holds (then none changes anything, one after another), opaque names made opaque."""
        values = self.values
        for name, given in changes:
            if name == "":
                if not self.opaque:
                    return False
            elif _REF + name not in refs:
                target = name if name.startswith(_REF) else self._referred(name)
                if target not in values or values[target] != given:
                    return False
        return True
