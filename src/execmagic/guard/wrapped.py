"""What a wrapper runs that is not simply the words after its options: ``env -S``'s string, split into words, and
``parallel``'s command with its arguments put in (:func:`.commands.unwrap` takes the wrappers off)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..shell.lexer import tokenize
from ..shell.words import Word

__all__ = ["parallel", "split_string"]

_PARALLEL_ARGS = (":::", "::::", ":::+", "::::+")


def _split(text: str) -> list[Word]:
    """The words of ``text`` (``env -S 'rm -rf /'``, ``parallel 'rm -rf {}'``), as a shell splits them."""
    return [token for token in tokenize(text)[0] if isinstance(token, Word)]


def split_string(word: str, following: Sequence[Word]) -> list[Word] | None:
    """``env -S STR``, ``-iSSTR``, ``--split-string=STR``: STR's words, then ``following`` (less the value)."""
    if word.startswith("--split-string="):
        return [*_split(word.split("=", 1)[1]), *following]
    short = re.fullmatch(r"-[iv0]*S(.*)", word, re.DOTALL)  # -i, -v, -0 take no value
    if word == "--split-string" or (short and not short.group(1)):
        return [*_split(following[0]), *following[1:]] if following else []
    return [*_split(short.group(1)), *following] if short else None


def parallel(words: list[Word]) -> list[Word]:
    """``parallel rm -rf ::: / ~`` → ``rm -rf / ~`` (the arguments replace ``{}``, else are appended)."""
    cut = next((i for i, w in enumerate(words) if w in _PARALLEL_ARGS), len(words))
    command, args = words[:cut], [w for w in words[cut + 1:] if w not in _PARALLEL_ARGS]
    if len(command) == 1 and " " in command[0]:  # parallel 'rm -rf {}' ::: /
        command = _split(command[0])
    if "{}" not in command:
        return command + args
    return [a for w in command for a in (args if w == "{}" else [w])]
