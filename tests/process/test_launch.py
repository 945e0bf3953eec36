"""Finding what a name runs: the PATH lookup is shutil.which's, to the file, on every kind of PATH entry."""

from __future__ import annotations

import os
import shutil

import pytest

from execmagic.process.errors import PreExecError
from execmagic.process.launch import executable_identity, resolve_executable


def _folders(tmp_path):
    """Folders holding ``prog`` as each thing that is not a program, then as two programs."""
    made = {}
    for name in ("plain", "folder", "dangling", "link", "first", "second"):
        made[name] = tmp_path / name
        made[name].mkdir()
    (made["plain"] / "prog").write_text("#!/bin/sh\n")  # not executable
    (made["folder"] / "prog").mkdir()
    os.symlink(tmp_path / "nowhere", made["dangling"] / "prog")
    for name in ("first", "second"):
        (made[name] / "prog").write_text("#!/bin/sh\n")
        (made[name] / "prog").chmod(0o755)
    os.symlink(made["second"] / "prog", made["link"] / "prog")
    return made


def test_the_lookup_finds_what_shutil_which_finds(tmp_path, monkeypatch):
    made = _folders(tmp_path)
    monkeypatch.chdir(made["first"])
    skip = [str(made[name]) for name in ("plain", "folder", "dangling")]
    paths = [
        ":".join([*skip, str(made["link"]), str(made["first"])]),
        ":".join([*skip, str(made["first"]), str(made["second"])]),
        ":".join([*skip, str(tmp_path / "missing"), str(made["second"]), str(made["second"])]),
        ":".join(skip),
        "",  # finds nothing
        ":",  # the current folder (twice)
        f"{made['plain']}::{made['second']}",  # an empty entry: the current folder, before the second
        "first",  # relative: from the kernel's folder
        f"{made['first']}/:{made['second']}",
    ]
    for path in paths:
        expected = shutil.which("prog", path=path)
        env = {"PATH": path}
        if expected is None:
            with pytest.raises(PreExecError):
                resolve_executable("prog", str(tmp_path), env)
            continue
        assert resolve_executable("prog", str(tmp_path), env) == expected, path
        found = os.stat(expected)
        assert executable_identity("prog", str(tmp_path), env) == (found.st_dev, found.st_ino), path


def test_a_path_with_a_slash_is_the_file_it_names(tmp_path):
    made = _folders(tmp_path)
    found = os.stat(made["first"] / "prog")
    assert executable_identity("first/prog", str(tmp_path), {}) == (found.st_dev, found.st_ino)
    with pytest.raises(PreExecError):
        executable_identity("plain/prog", str(tmp_path), {})
