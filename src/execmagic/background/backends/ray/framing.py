"""The two ends of the wrapper's framing: the entrypoint that ships it, and the reader of its log.

:mod:`.wrapper` runs on the node and writes the command's output into Ray's one log as lines
``TAG KIND BASE64``; :class:`FrameReader` takes Ray's log text as it grows, decodes the complete
lines past its offset back into the exact bytes of each stream, and skips every other line (Ray's
own ``Running entrypoint …`` line, a runtime environment's setup messages).  The tag is random per
job, so nothing the command prints can pass for a frame.
"""

from __future__ import annotations

import base64
import binascii
import json
import secrets
import shlex
import zlib
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any

from ....process.records import record

__all__ = ["Frame", "FrameReader", "Outcome", "entrypoint", "new_tag"]


def new_tag() -> str:
    """A tag for one job's frames: letters and digits only (the log stays plain ASCII)."""
    return f"em{secrets.token_hex(8)}:"


@record
class Outcome:
    """How the command ended, from the wrapper's last frame."""

    #: ``exit``, ``signal`` (the command died of one), ``timeout``, ``stopped`` (a signal reached the wrapper).
    how: str
    #: The wrapper's own exit code (the command's code; 128 + N for a signal; 124 for a timeout).
    code: int
    #: The signal's name (``SIGKILL``) for ``signal`` and ``stopped``.
    signal: str | None = None
    #: SIGKILL was needed after the grace.
    escalated: bool = False

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Outcome:
        code = data.get("code")
        return cls(how=str(data.get("how") or "exit"), code=code if isinstance(code, int) else 1,
                   signal=data.get("signal") if isinstance(data.get("signal"), str) else None,
                   escalated=bool(data.get("escalated")))


@record
class Frame:
    """One decoded line: ``stdout``/``stderr`` bytes, the ``hello`` (node, pid) or the ``outcome``."""

    kind: str
    data: bytes = b""
    hello: Mapping[str, Any] | None = None
    outcome: Outcome | None = None


_KINDS = {"O": "stdout", "E": "stderr"}


class FrameReader:
    """Decodes a job's log as it grows; :attr:`offset` is how much of it was consumed (characters of
    the log as Ray's API returns it, so the next look cuts there: only what is new is decoded)."""

    def __init__(self, tag: str, offset: int = 0) -> None:
        self.tag = tag
        self.offset = offset

    def feed(self, log: str) -> list[Frame]:
        """The frames of the complete lines ``log`` has past :attr:`offset` (the whole log so far,
        as Ray returns it); a line still being written waits for the next look."""
        end = log.rfind("\n", self.offset)
        if end < 0:
            return []
        chunk = log[self.offset:end]
        self.offset = end + 1
        frames = []
        for line in chunk.split("\n"):
            if not line.startswith(self.tag) or len(line) < len(self.tag) + 1:
                continue  # Ray's own lines, or a runtime environment's
            kind, payload = line[len(self.tag)], line[len(self.tag) + 1:]
            try:
                data = base64.b64decode(payload, validate=True)
            except (binascii.Error, ValueError):
                continue
            if kind in _KINDS:
                frames.append(Frame(_KINDS[kind], data))
            elif kind in "HX":
                try:
                    value = json.loads(data)
                except ValueError:
                    continue
                if isinstance(value, dict):
                    frames.append(Frame("hello", hello=value) if kind == "H"
                                  else Frame("outcome", outcome=Outcome.from_json(value)))
        return frames


def _wrapper_source() -> bytes:
    return resources.files(__package__).joinpath("wrapper.py").read_bytes()


def entrypoint(argv: Sequence[str], *, tag: str, marker: str, timeout: float | None, grace: float,
               cwd: str | None = None, handed: bool = False) -> str:
    """The shell line Ray runs: the node's Python running :mod:`.wrapper` (compressed, base64) on
    a base64 spec of the command.  One line of letters, digits and a little punctuation: nothing in
    it can look like a frame, whatever the command says (Ray writes the entrypoint into the log).
    ``handed``: the script is in the job's environment, and ``argv``'s last word is the boot that reads
    it from the descriptor its ``{fd}`` names (see :mod:`..script_env`)."""
    spec = {"tag": tag, "marker": marker, "argv": list(argv), "timeout": timeout or None, "grace": grace, "cwd": cwd,
            "handed": handed}
    code = base64.b64encode(zlib.compress(_wrapper_source(), 9)).decode()
    loader = f"import base64,zlib;exec(compile(zlib.decompress(base64.b64decode('{code}')),'execmagic-wrapper','exec'))"
    spec_text = base64.b64encode(json.dumps(spec).encode()).decode()
    # `command -v` finds the node's Python (python3 first); exec so Ray's child is the wrapper itself
    return ("py=$(command -v python3 || command -v python) || { echo 'execmagic: no python3 on this Ray node';"
            f" exit 127; }}; exec \"$py\" -c {shlex.quote(loader)} {spec_text}")
