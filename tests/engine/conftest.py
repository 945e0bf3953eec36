"""Fixtures shared by the engine's sandbox tests."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest


@pytest.fixture
def sandbox_place(bwrap_works, monkeypatch):
    """``(workspace, home)``: a workspace (the cwd) and a fake home (``HOME``), under /var/tmp -- the host's
    /tmp is private inside the sandbox, so a workspace there would prove nothing."""
    top = os.path.realpath(tempfile.mkdtemp(prefix="execmagic-engine-sandbox-", dir="/var/tmp"))
    ws, home = os.path.join(top, "ws"), os.path.join(top, "home")
    os.mkdir(ws)
    os.mkdir(home)
    monkeypatch.setenv("HOME", home)
    monkeypatch.chdir(ws)
    try:
        yield ws, home
    finally:
        shutil.rmtree(top, ignore_errors=True)
