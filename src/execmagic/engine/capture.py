"""Recording one output stream: log file, bounded memory, incremental decoding.

Whatever a command prints, memory stays bounded: the first and last
``keep_bytes / 2`` bytes are held in memory for the result, and every byte is
appended to a log file (opened on the first byte, so a silent command costs no
file).  Live text is decoded incrementally, so a UTF-8 character split across
two reads survives, undecodable bytes become U+FFFD, and output that looks
binary (NUL bytes, or mostly undecodable) is flagged and no longer shown.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Callable
from typing import BinaryIO

from .results import StreamCapture, format_bytes

#: How many leading bytes decide whether a stream is binary.
BINARY_SNIFF_BYTES = 8192
_REPLACEMENT = "\ufffd"


def collapse_carriage_returns(text: str) -> str:
    """Keep what a terminal would finally show of ``\\r`` progress lines (``\\r\\n`` is a newline)."""
    if "\r" not in text:
        return text
    text = text.replace("\r\n", "\n")
    return "\n".join(line.rsplit("\r", 1)[-1] for line in text.split("\n"))


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


class StreamRecorder:
    """Accumulates one stream of a run.  Not thread-safe: one reader feeds it."""

    def __init__(self, name: str, open_log: Callable[[str], tuple[str, BinaryIO]], keep_bytes: int) -> None:
        self.name = name
        self._open_log = open_log
        self._half = max(keep_bytes // 2, 1)
        self._head = bytearray()
        self._tail = bytearray()
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._log: BinaryIO | None = None
        self.log_path: str | None = None
        self.total = 0
        self.binary = False
        self._sniffed = 0
        self._sniff_bad = 0

    def feed(self, data: bytes) -> str:
        """Record ``data``; return the text to show live (empty once the stream is known binary)."""
        if not data:
            return ""
        if self._log is None:
            self.log_path, self._log = self._open_log(self.name)
        self._log.write(data)
        self.total += len(data)
        room = self._half - len(self._head)
        if room > 0:
            self._head += data[:room]
            data_for_tail = data[room:]
        else:
            data_for_tail = data
        if data_for_tail:
            self._tail += data_for_tail
            if len(self._tail) > 2 * self._half:
                del self._tail[: len(self._tail) - self._half]
        if self.binary:
            return ""
        text = self._decoder.decode(data)
        if self._sniffed < BINARY_SNIFF_BYTES:
            self._sniffed += len(data)
            self._sniff_bad += text.count(_REPLACEMENT)
            if b"\x00" in data or self._sniff_bad * 4 > max(len(text), 1):
                self.binary = True
                return f"\n[binary output on {self.name}: not shown; every byte is in {self.log_path}]\n"
        return text

    def finish(self) -> StreamCapture:
        """Close the log and build the stored capture (middle cut if needed, ``\\r`` collapsed)."""
        if self._log is not None:
            self._log.close()
        if self.binary:
            text = f"[binary output: {format_bytes(self.total)}; see {self.log_path}]"
            return StreamCapture(text=text, bytes=self.total, truncated=True, binary=True, log_path=self.log_path)
        if len(self._head) + len(self._tail) == self.total:
            text = (bytes(self._head) + bytes(self._tail)).decode("utf-8", "replace")
            truncated = False
        else:
            tail = bytes(self._tail[-self._half :])
            kept = len(self._head) + len(tail)
            omitted = self.total - kept
            text = (
                _decode_edge(bytes(self._head), at_start=False)
                + f"\n… [{format_bytes(omitted)} omitted from the middle; full output in {self.log_path}] …\n"
                + _decode_edge(tail, at_start=True)
            )
            truncated = True
        return StreamCapture(
            text=collapse_carriage_returns(text),
            bytes=self.total,
            truncated=truncated,
            log_path=self.log_path,
        )

    def live_remainder(self) -> str:
        """Flush the decoder at end of stream (an incomplete last character becomes U+FFFD)."""
        return "" if self.binary else self._decoder.decode(b"", final=True)


class LogDir:
    """Hands out per-run log files under one directory, created on first use."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.ensure()

    def ensure(self) -> str:
        """Create the directory if it is missing (it may have been cleaned up under us); return it."""
        os.makedirs(self.path, exist_ok=True)
        return self.path

    def opener(self, run_label: str) -> Callable[[str], tuple[str, BinaryIO]]:
        def open_log(stream: str) -> tuple[str, BinaryIO]:
            path = os.path.join(self.ensure(), f"{run_label}.{stream}.log")
            return path, open(path, "wb", buffering=1 << 20)

        return open_log
