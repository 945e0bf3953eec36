"""Recording one output stream: log file, bounded memory, incremental decoding.

Whatever a command prints, memory stays bounded: the first and last
``keep_bytes / 2`` bytes are held in memory for the result, and every byte is
appended to a log file.  With ``defer_log`` the log is only written once it is
needed -- the output outgrew what the result keeps, it is binary (the result
then points at the log), or its text is not its exact bytes (``\r`` progress
collapsed, bytes that are not UTF-8) -- so the common small command leaves no file behind;
``keep_log`` at the end writes it anyway.  Live text is decoded incrementally, so a UTF-8 character split across
two reads survives; undecodable bytes become U+FFFD and are counted.

A stream is called binary -- flagged, and no longer shown -- only on evidence
that it is not text: a NUL byte, or more than 30 % undecodable bytes once at
least 1 KB was seen.  Two stray bytes in a short line, or a Latin-1 file with
a few accents, are text with a few bad bytes, and the result says how many.

The log is a convenience, the result is what was asked for: a log that cannot
be opened or written (a full disk, an I/O error) is closed and noted
(:attr:`StreamCapture.log_error`), never raised, and the head and tail in
memory are kept.
"""

from __future__ import annotations

import codecs
import collections
import contextlib
import os
from collections.abc import Callable
from typing import BinaryIO

from .results import StreamCapture, collapse_carriage_returns, format_bytes, log_hint

__all__ = [
    "BINARY_MIN_BYTES", "BINARY_SNIFF_BYTES", "BINARY_UNDECODABLE_SHARE", "StreamRecorder",
    "count_undecodable", "os_error_reason",
]

#: How many leading bytes decide whether a stream is binary.
BINARY_SNIFF_BYTES = 8192
#: Below this many bytes, undecodable bytes alone never make a stream binary (a short line
#: with two bad bytes is text, not 50 % garbage).
BINARY_MIN_BYTES = 1024
#: Share of undecodable bytes (of those sniffed) past which a stream is binary: Latin-1 or
#: CP-1252 text has a few per line; compressed or random data has about half.
BINARY_UNDECODABLE_SHARE = 0.30
#: Bytes gathered before one write to the log: ext4 takes 1 MB writes about five times faster
#: than 64 KB ones (measured: 200 MB in 0.07 s against 0.35 s), and ``os.writev`` hands the
#: pieces over without joining them first.
LOG_BATCH_BYTES = 1 << 20
#: The most pieces one ``os.writev`` takes.
_IOV_MAX = os.sysconf("SC_IOV_MAX") if "SC_IOV_MAX" in os.sysconf_names else 1024
_REPLACEMENT = "\ufffd"
_ENCODED_REPLACEMENT = _REPLACEMENT.encode("utf-8")


def count_undecodable(consumed: bytes, text: str) -> int:
    """How many of ``consumed`` bytes became U+FFFD in ``text`` (their decoding with ``"replace"``).

    Arithmetic instead of a counting error handler (50 times slower on a Latin-1 log): every
    other character re-encodes to exactly the bytes it came from, and a U+FFFD that was in the
    input is always its own three bytes, ``EF BF BD`` (``EF`` cannot continue another character).
    """
    literal = consumed.count(_ENCODED_REPLACEMENT)
    replaced = text.count(_REPLACEMENT) - literal
    return len(consumed) - (len(text.encode("utf-8")) - len(_ENCODED_REPLACEMENT) * replaced)


def _decode_edge(data: bytes, *, at_start: bool) -> str:
    """Decode a slice cut from a longer stream without inventing garbage at the cut."""
    if at_start:
        # drop UTF-8 continuation bytes that belong to a character cut off before the slice
        i = 0
        while i < min(len(data), 3) and 0x80 <= data[i] <= 0xBF:
            i += 1
        return data[i:].decode("utf-8", "replace")
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    return decoder.decode(data, final=False)  # an incomplete last character is held back, not replaced


def _whole_lines(head: bytes, tail: bytes, tail_starts_line: bool) -> tuple[bytes, bytes]:
    """The kept head and tail of a cut stream trimmed to whole lines, so that a row of data is never shown
    half (``…85184\\n85`` + ``572\\n428573…``); a part whose line breaks are far from its cut (long lines, or
    none) keeps its cut inside a line.  A newline is one byte that is never part of a UTF-8 character, so a
    cut just after one splits no character."""
    end = head.rfind(b"\n") + 1
    if end and end >= len(head) // 2:
        head = head[:end]
    start = tail.find(b"\n") + 1
    if not tail_starts_line and 0 < start <= len(tail) // 2:
        tail = tail[start:]
    return head, tail


def os_error_reason(exc: OSError) -> str:
    """``"No space left on device"``: the reason an errno stands for, without the path or the number."""
    if exc.errno:
        return os.strerror(exc.errno)
    return str(exc) or type(exc).__name__


class StreamRecorder:
    """Accumulates one stream of a run.  Not thread-safe: one reader feeds it."""

    def __init__(self, name: str, open_log: Callable[[str], tuple[str, BinaryIO]], keep_bytes: int,
                 defer_log: bool = False, log_over: int | None = None) -> None:
        self.name = name
        self._open_log = open_log
        self._half = max(keep_bytes // 2, 1)
        # never past what memory holds (the head and the tail): output that memory cuts is always in a log,
        # where the whole of it is read back from (an odd keep_bytes holds one byte less than it says)
        self._log_over = min(keep_bytes if log_over is None else log_over, 2 * self._half)
        # output not yet written to the log (while deferring; None once the log is being written)
        self._pending: list[bytes] | None = [] if defer_log else None
        self._pending_size = 0
        self._head = bytearray()
        # the last bytes, as the chunks they came in (no copy of each byte into one buffer): at least the
        # last ``_tail_len`` of them, as many as one buffer trimmed to a half past its twice would hold
        self._tail: collections.deque[bytes] = collections.deque()
        self._tail_held = 0
        self._tail_len = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._decoder_done = False
        self._log: BinaryIO | None = None
        # bytes for the log not written yet (see LOG_BATCH_BYTES)
        self._batch: list[bytes] = []
        self._batch_size = 0
        self.log_path: str | None = None
        #: Why the log stopped short (a full disk); ``None`` while it holds every byte.
        self.log_error: str | None = None
        self.total = 0
        self.binary = False
        #: Bytes replaced by U+FFFD so far (counting stops once the stream is known binary).
        self.undecodable = 0
        self._sniffed = 0
        self._carriage_return = False  # the stored text collapses \r: the log must keep the bytes

    def feed(self, data: bytes) -> str:
        """Record ``data``; return the text to show live (empty once the stream is known binary)."""
        if not data:
            return ""
        if self._pending is not None:
            self._pending.append(data)
            self._pending_size += len(data)
            if self._pending_size > self._log_over:
                self._write_pending()
        else:
            self._write_log(data)
        self.total += len(data)
        self._carriage_return = self._carriage_return or b"\r" in data
        self._keep(data)
        if self.binary:
            return ""
        text = self._decode(data)
        if self._sniffed < BINARY_SNIFF_BYTES:
            self._sniffed += len(data)
            if b"\x00" in data or self._mostly_undecodable():
                self.binary = True
                self._write_pending()  # the result will point at the log
                return f"\n[binary output on {self.name}: not shown; {self._log_hint()}]\n"
        return text

    def _write_pending(self) -> None:
        """Stop deferring: write what was held back, then log as it comes."""
        if self._pending is None:
            return
        pending, self._pending = self._pending, None
        for chunk in pending:
            self._write_log(chunk)

    def _mostly_undecodable(self) -> bool:
        return self._sniffed >= BINARY_MIN_BYTES and self.undecodable > BINARY_UNDECODABLE_SHARE * self._sniffed

    def _decode(self, data: bytes, final: bool = False) -> str:
        held = self._decoder.getstate()[0]  # the start of a character cut by the previous read
        text = self._decoder.decode(data, final)
        if _REPLACEMENT in text:  # else every byte consumed was valid: nothing to count
            consumed = len(held) + len(data) - len(self._decoder.getstate()[0])
            self.undecodable += count_undecodable((held + data)[:consumed], text)
        return text

    def _keep(self, data: bytes) -> None:
        """Hold the first and the last ``keep_bytes / 2`` bytes; let the middle go (to the log only).

        The tail is the last ``_tail_len`` bytes: all of them until there are more than ``keep_bytes``, then
        trimmed to the last half, and so on.  The chunks that hold them are kept as read (a stream of
        200 MB was copied once more, byte by byte, into one buffer: a tenth of the kernel's time for it),
        those it no longer reaches let go: at most ``keep_bytes`` and one read's worth are held."""
        room = self._half - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if data:
            self._tail.append(data)
            self._tail_held += len(data)
            self._tail_len += len(data)
            if self._tail_len > 2 * self._half:
                self._tail_len = self._half
            while self._tail_held - len(self._tail[0]) >= self._tail_len:
                self._tail_held -= len(self._tail.popleft())

    def _tail_bytes(self) -> bytes:
        """The tail held (see :meth:`_keep`), as one piece."""
        held = b"".join(self._tail)
        return held[len(held) - self._tail_len:]

    # -- the log -----------------------------------------------------------------------------
    def _write_log(self, data: bytes) -> None:
        """Append to the log, a megabyte at a time; a log that cannot be opened or written is given up,
        never raised."""
        if self.log_error is not None:
            return
        if self._log is None:  # opened at once: the log's path is known from the first byte on
            try:
                self.log_path, self._log = self._open_log(self.name)
            except OSError as exc:
                self._give_up_log(exc)
                return
        self._batch.append(data)
        self._batch_size += len(data)
        if self._batch_size >= LOG_BATCH_BYTES:
            self._write_batch()

    def _write_batch(self) -> None:
        """Write what was gathered: one ``os.writev``, or -- past ``IOV_MAX`` pieces, which ``writev``
        refuses (a command printing line by line gives thousands a batch) -- the pieces joined first."""
        pieces, self._batch, self._batch_size = self._batch, [], 0
        if self._log is None or not pieces:
            return
        if len(pieces) > _IOV_MAX:
            pieces = [b"".join(pieces)]
        try:
            fd = self._log.fileno()
            while pieces:
                written = os.writev(fd, pieces)
                while pieces and written >= len(pieces[0]):  # a short write (rare on a file): go on after it
                    written -= len(pieces.pop(0))
                if written:
                    pieces[0] = pieces[0][written:]
        except OSError as exc:
            self._give_up_log(exc)

    def _give_up_log(self, exc: OSError) -> None:
        self.log_error = self.log_error or os_error_reason(exc)
        log, self._log = self._log, None
        if log is not None:
            with contextlib.suppress(OSError):
                log.close()  # flushing may fail again; the file is closed all the same

    def _close_log(self) -> None:
        self._write_batch()
        if self._log is None:
            return
        try:
            self._log.close()  # the last buffered bytes reach the disk here, or fail here
        except OSError as exc:
            self._give_up_log(exc)
        self._log = None

    def _log_hint(self) -> str:
        return log_hint(self.log_path, self.log_error)

    # -- the end ----------------------------------------------------------------------------
    def finish(self, keep_log: bool = False) -> StreamCapture:
        """Close the log and build the stored capture (middle cut if needed, ``\\r`` collapsed).

        ``keep_log`` writes a log that was deferred and turned out not to be needed.  A deferred log
        is written anyway when the text differs from the bytes (``\r`` collapsed, bytes that are not
        UTF-8): the log is where the exact bytes can be had (:meth:`StreamCapture.read_bytes`).
        """
        self.live_remainder()  # an incomplete last character counts as undecodable
        cut = self.total > 2 * self._half  # the tail is trimmed only past twice its size
        if keep_log or cut or self._carriage_return or self.undecodable:
            self._write_pending()
        self._pending = None
        self._close_log()
        if self.binary:
            text = f"[binary output: {format_bytes(self.total)}; {self._log_hint()}]"
            return StreamCapture(text=text, bytes=self.total, truncated=True, binary=True, log_path=self.log_path,
                                 log_error=self.log_error)
        held = self._tail_bytes()
        if not cut:  # all of it is held
            text = (bytes(self._head) + held).decode("utf-8", "replace")
        else:
            tail = held[-self._half :]
            starts_line = len(held) > self._half and held[-self._half - 1] == 0x0A  # else unknown
            head, tail = _whole_lines(bytes(self._head), tail, tail_starts_line=starts_line)
            omitted = self.total - len(head) - len(tail)
            text = _decode_edge(head, at_start=False)
            text += ("" if text.endswith("\n") else "\n") + (
                f"… [{format_bytes(omitted)} omitted from the middle; {self._log_hint()}] …\n"
                + _decode_edge(tail, at_start=True))
        return StreamCapture(
            text=collapse_carriage_returns(text),
            bytes=self.total,
            truncated=cut,
            log_path=self.log_path,
            undecodable=self.undecodable,
            log_error=self.log_error,
        )

    def live_remainder(self) -> str:
        """Flush the decoder at end of stream (an incomplete last character becomes U+FFFD)."""
        if self.binary or self._decoder_done:
            return ""
        self._decoder_done = True
        return self._decode(b"", final=True)
