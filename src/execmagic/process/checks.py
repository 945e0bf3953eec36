"""One validator for what callers hand the engine: seconds, env names, argv words, text, stdin input.

The Python API, the agent tools, the magics and the engine's planner all call
these, so a bad value gets the same one-line :class:`UsageProblem` naming the
argument wherever it came from -- instead of a ``TypeError`` from deep inside
``subprocess``, a ``ValueError: embedded null byte``, an ``OverflowError`` from
a ``select`` or ``Condition.wait``, or a ``nan`` that silently means "forever".
Each function returns the value to use, so a caller checks and converts in one step.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

from .errors import UsageProblem, shown_value

#: The longest timeout or grace accepted (a year): far beyond any real job, far below what
#: ``select``/``threading`` can wait without an ``OverflowError``.
MAX_SECONDS = 365 * 24 * 3600.0
#: What ``wait=inf`` (or any longer wait) becomes: "until the shell ends" in practice.
FOREVER = MAX_SECONDS
#: A variable name a shell accepts; ``""``, ``"A=B"`` or ``"1X"`` could never be read back.
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _number(value: Any, name: str) -> float:
    """``value`` as a float; bools, strings and ``None`` are refused (``True`` seconds is a mistake)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UsageProblem(f"{name} must be a number of seconds, not {type(value).__name__} {shown_value(value)}")
    try:
        return float(value)
    except OverflowError:  # an int too large for a float
        return math.inf


def timeout(value: Any, name: str = "timeout") -> float | None:
    """A timeout: ``None`` (no limit) or a finite number of seconds, more than 0, at most a year.

    ``nan`` compares false with everything, so unchecked it used to mean "no limit" (or
    killed the background reader); ``inf``/``1e12`` overflow the waits that enforce it.
    """
    if value is None:
        return None
    seconds = _number(value, name)
    if not (0 < seconds <= MAX_SECONDS):
        raise UsageProblem(f"{name} must be a positive number of seconds, at most {MAX_SECONDS:.0f} (a year),"
                           f" not {shown_value(value)}")
    return seconds


def grace(value: Any, name: str = "grace") -> float | None:
    """A grace period before SIGKILL: ``None`` (the default), or 0 (no patience) to a year; never ``nan``."""
    if value is None:
        return None
    seconds = _number(value, name)
    if not (0 <= seconds <= MAX_SECONDS):
        raise UsageProblem(f"{name} must be a number of seconds from 0 to {MAX_SECONDS:.0f}, not {shown_value(value)}")
    return seconds


def wait(value: Any, name: str = "wait") -> float:
    """A wait for news: 0 (look and return) or more; ``inf`` or anything past a year means "until the
    shell ends" and is clamped to :data:`FOREVER`, so no wait can overflow."""
    seconds = _number(value, name)
    if math.isnan(seconds) or seconds < 0:
        raise UsageProblem(f"{name} must be 0 or more seconds (inf: until the shell ends), not {shown_value(value)}")
    return min(seconds, FOREVER)


def count(value: Any, name: str, *, minimum: int = 0) -> int:
    """A whole number of at least ``minimum`` (lines, bytes); bools and floats are refused."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise UsageProblem(f"{name} must be a whole number, not {type(value).__name__} {shown_value(value)}")
    if value < minimum:
        raise UsageProblem(f"{name} must be {minimum} or more, not {value}")
    return value


def text(value: Any, name: str) -> str:
    """A string with no NUL byte in it: the OS cuts C strings at NUL, so such a value cannot reach a program."""
    if not isinstance(value, str):
        raise UsageProblem(f"{name} must be a string, not {type(value).__name__} {shown_value(value)}")
    if "\x00" in value:
        raise UsageProblem(f"{name} contains a NUL byte (\\x00) at position {value.index(chr(0))};"
                           " no program can receive it")
    return value


def optional_text(value: Any, name: str) -> str | None:
    """:func:`text`, or ``None``."""
    return None if value is None else text(value, name)


def env_name(value: Any, name: str = "env") -> str:
    """A variable name as a shell accepts it: ``[A-Za-z_][A-Za-z0-9_]*``."""
    if not isinstance(value, str):
        raise UsageProblem(f"{name} names must be strings, not {type(value).__name__} {shown_value(value)}")
    if not ENV_NAME.fullmatch(value):
        raise UsageProblem(f"{name} name {shown_value(value)} is not a variable name"
                           " (letters, digits and _, not starting with a digit)")
    return value


def environment(value: Mapping[str, Any] | None, name: str = "env") -> dict[str, str] | None:
    """``{NAME: value}`` with valid names and string values without NUL bytes; ``None`` stays ``None``."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise UsageProblem(f"{name} must be a mapping of names to strings, not {type(value).__name__}")
    return {env_name(key, name): text(item, f"{name} value of {key}") for key, item in value.items()}


def argv(words: Iterable[Any], name: str = "argv") -> list[str]:
    """An argument vector: each item a string (or a path) without NUL bytes.

    ``spawn(["echo", 5])`` is a mistake to name ("argv item 1 must be a string, not int"),
    not a ``TypeError`` from inside ``subprocess``.
    """
    if isinstance(words, (str, bytes)) or not isinstance(words, Iterable):
        raise UsageProblem(f"{name} must be a list of strings, not {type(words).__name__}")
    checked = []
    for index, word in enumerate(words):
        if isinstance(word, os.PathLike):
            word = os.fspath(word)
        if not isinstance(word, str):
            raise UsageProblem(f"{name} item {index} must be a string, not {type(word).__name__} {shown_value(word)}")
        checked.append(text(word, f"{name} item {index}"))
    return checked


def input_value(value: Any, name: str = "input") -> str | bytes | None:
    """Stdin input before templating: text (no NUL bytes) or bytes (passed on unchanged, any bytes at all).

    A ``bytearray``/``memoryview`` becomes ``bytes``; bytes are never templated nor shown as ``b'…'``.
    """
    if value is None:
        return None
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if not isinstance(value, str):
        raise UsageProblem(f"{name} must be str or bytes, not {type(value).__name__} {shown_value(value)}")
    return text(value, name)


def encode_input(value: str, name: str = "input") -> bytes:
    """Text input as UTF-8 bytes.  Lone surrogates from ``surrogateescape`` decoding (U+DC80–U+DCFF)
    turn back into the raw bytes they stand for; any other lone surrogate is a one-line problem."""
    text(value, name)
    try:
        return value.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError as exc:
        bad = value[exc.start]
        raise UsageProblem(f"{name} contains a lone surrogate {bad!r} at position {exc.start} that is not"
                           " valid text; pass bytes instead") from None


__all__ = ["ENV_NAME", "FOREVER", "MAX_SECONDS", "argv", "count", "encode_input", "env_name", "environment",
           "grace", "input_value", "optional_text", "text", "timeout", "wait"]
