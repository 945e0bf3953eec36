"""Output a model reads: redacted first, then cut to a budget, every stream keeping its place.

The order matters.  Redaction runs on the whole text before anything is cut, so a secret that
would straddle the cut is still recognised whole, and the cut runs last, so what redaction wrote
can never push an answer past its limit.  When stdout and stderr are both long, each keeps a fair
share of the budget (a short one keeps all of itself), so the ``[stderr]`` header and the end of
each stream are always there.  Every note says exactly what was left out and where the whole of
it is.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence

from ..process.records import record
from ..process.results import format_bytes

__all__ = ["Holdback", "Part", "cut_middle", "merge_streams", "shape", "split_budget"]


@record
class Part:
    """One stream's text as it goes into an answer."""

    text: str
    #: Written on a line of its own before the text (``"[stderr]\n"``).
    header: str = ""
    log_path: str | None = None
    #: The stream's real size when ``text`` is already a head-and-tail of it (the run kept only so
    #: much in memory): then a count of characters left out here would understate it.
    whole_bytes: int | None = None
    #: Bytes before ``text`` that this read does not return (they are in the log).
    skipped: int = 0


class Holdback:
    """The end of each background stream's last read that may be a secret cut short, held back until
    the next read, where it is redacted with what follows it.

    Each read of a background shell is redacted on its own, so a command that prints a token in two
    pieces (twenty characters, a pause, the rest) would show both halves, neither of them shaped like a
    token.  ``tail`` (:func:`~execmagic.guard.secrets.secret_tail`) says where such a start begins; the
    last read of a shell that ended (``final``) holds nothing back.  Not thread-safe: the caller reads
    and carries under one lock, so two reads of one shell cannot take each other's held text.
    """

    def __init__(self) -> None:
        self._held: dict[tuple[Hashable, str], str] = {}

    def carry(self, shell: Hashable, stream: str, text: str, skipped: int, tail: Callable[[str], int],
              final: bool) -> tuple[str, int]:
        """This read's text as it may be returned and the bytes before it that are not: what the last
        read held back goes first -- or, when this read skipped output (the held text is not next to
        it), is counted with what was skipped -- and a possible secret's start at the end stays held."""
        held = self._held.pop((shell, stream), "")
        if skipped:
            skipped += len(held.encode("utf-8", "replace"))
        else:
            text = held + text
        at = len(text) if final else tail(text)
        if at < len(text):
            self._held[(shell, stream)] = text[at:]
        return text[:at], skipped

    def holding(self, shell: Hashable) -> int:
        """How many characters of ``shell``'s output are held back now."""
        return sum(len(text) for (held_by, _), text in self._held.items() if held_by == shell)


def _note(omitted: int, whole_bytes: int | None, hint: str) -> str:
    if whole_bytes is not None:
        return f"\n… [the middle left out: {format_bytes(whole_bytes)} in all{hint}] …\n"
    return f"\n… [{omitted:,} characters omitted from the middle{hint}] …\n"


def cut_middle(text: str, limit: int, log_hint: str = "", whole_bytes: int | None = None) -> str:
    """Keep the start and the end of ``text`` within ``limit`` characters; say exactly what was left out.

    The note takes room of its own, so the count it states depends on its own length: it is settled
    by trying the count until it stops changing (a count only grows a digit or a comma at a time).
    A limit too small for the note drops the hint, then the note: the limit always holds.
    """
    if len(text) <= limit:
        return text
    for hint in (log_hint, ""):
        omitted = max(len(text) - limit, 1)
        for _ in range(4):
            note = _note(omitted, whole_bytes, hint)
            keep = limit - len(note)
            if keep < 0 or len(text) - keep == omitted:
                break
            omitted = len(text) - keep
        if keep >= 0:
            head = keep // 2
            return text[:head] + note + text[len(text) - (keep - head):]
    return text[:limit]


def merge_streams(stdout: str, stderr: str, header: str = "") -> str:
    """stdout then stderr, the second always starting on a line of its own (after ``header``, if any)."""
    if not stderr:
        return stdout
    gap = "\n" if stdout and not stdout.endswith("\n") else ""
    return stdout + gap + header + stderr


def _hint(path: str | None) -> str:
    return f"; full output in {path}" if path else ""


def split_budget(sizes: Sequence[int], budget: int) -> list[int]:
    """Split ``budget`` over texts of ``sizes``: the short ones keep all of themselves, the rest share."""
    shares = [0] * len(sizes)
    left, waiting = budget, sorted(range(len(sizes)), key=lambda i: sizes[i])
    while waiting:
        i = waiting.pop(0)
        shares[i] = min(sizes[i], left // (len(waiting) + 1))
        left -= shares[i]
    return shares


def shape(parts: Sequence[Part], limit: int, clean: Callable[[str], str] = str) -> str:
    """The parts as one text of at most ``limit`` characters: ``clean`` (redaction) on each whole
    text first, then each cut in its middle to its share, then joined with headers on lines of their own."""
    texts: list[str] = []
    kept: list[Part] = []
    for part in parts:
        text = clean(part.text)
        if part.skipped:
            text = (f"[… {format_bytes(part.skipped)} of earlier output not returned here"
                    f"{_hint(part.log_path)}]\n") + text
        if text:
            texts.append(text)
            kept.append(part)
    headers = [part.header for part in kept]
    out = _joined(headers, texts)
    if len(out) <= limit:
        return out
    # the headers, and a newline before each stream but the first that follows a text without one: a
    # cut keeps each text's end, so the newlines the cut answer needs are the ones the whole one did
    overhead = len(out) - sum(map(len, texts))
    out = _joined(headers, _cut(texts, kept, max(limit - overhead, 0)))
    if len(out) > limit:  # a share too small to keep a text's end: count a newline before every stream
        out = _joined(headers, _cut(texts, kept, max(limit - sum(len(h) + 1 for h in headers), 0)))
    return out


def _cut(texts: Sequence[str], parts: Sequence[Part], budget: int) -> list[str]:
    """Each text cut in its middle to its share of ``budget``."""
    shares = split_budget([len(t) for t in texts], budget)
    return [cut_middle(text, share, _hint(part.log_path), part.whole_bytes)
            for text, share, part in zip(texts, shares, parts, strict=True)]


def _joined(headers: Sequence[str], texts: Sequence[str]) -> str:
    out = ""
    for header, text in zip(headers, texts, strict=True):
        out = merge_streams(out, text, header)
    return out
