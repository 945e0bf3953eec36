"""Downloaded code run unseen, as the walk finds it (the structural part of rule pipe-to-shell): a file curl or wget
saved, run later in the same text (``curl -o f URL && sh f``), and code run in a ``$(…)`` or ``<(…)`` that downloads
something (``bash <(curl …)``, ``sh -c "$(wget -O- …)"``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from .commands import Command, Simple
from .names import Names
from .options import DOWNLOADERS, ran_file, saved_files
from .paths import Path
from .readings import Readings
from .rules import Refusal, refuse

__all__ = ["downloaded", "runs_download"]

#: The walk of a text (``walk.walk``): what it yields, given the text, the directory, the depth and the names.
Walker = Callable[[str, "Path | None", int, Names], Iterable["Simple | Refusal"]]


def runs_download(pipeline: list[Command], downloads: set[str]) -> Iterator[Refusal]:
    """Note the files curl/wget save; refuse running one (``sh f``, ``./f``) later in the same text."""
    for command in pipeline:
        words = command.unwrapped[0]
        if command.program in DOWNLOADERS:
            downloads.update(saved_files(words))
        elif downloads and ran_file(words) in downloads:
            yield refuse("pipe-to-shell", command.shown())


def downloaded(bodies: Iterable[str], depth: int, names: Names, walk: Walker) -> bool:
    """Whether code run in ``bodies`` (``$(…)``, ``<(…)``) downloads something (curl, wget): ``walk`` walks each
    (the walk's own, which asks this).

    Each body's answer is kept for the rest of the check (``names.downloads``): asked again at every level of
    nesting, of every level inside it, it cost twice as much per level.
    """
    return any(_body_downloads(body, depth, names.readings, walk) for body in bodies)


def _body_downloads(body: str, depth: int, readings: Readings, walk: Walker) -> bool:
    key = (body, depth)
    seen = readings.downloads
    if key not in seen:
        inner = Names(readings=readings)
        seen[key] = any(isinstance(item, Simple) and item.name in DOWNLOADERS
                        for item in walk(body, None, depth + 1, inner))
    return seen[key]
