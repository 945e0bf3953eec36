"""Shared fixtures: every test that starts processes proves they are gone afterwards.

Each test runs with a unique ``EXECMAGIC_TEST_TOKEN`` in the environment, which
every process it starts (and their descendants) inherits; after the test, no
live process may still carry it.
"""

from __future__ import annotations

import os
import sys
import uuid

import pytest

from processes import TOKEN_VAR, assert_none_left


@pytest.fixture(autouse=True)
def no_leftover_processes():
    token = uuid.uuid4().hex
    os.environ[TOKEN_VAR] = token
    try:
        yield token
    finally:
        del os.environ[TOKEN_VAR]
    assert_none_left(TOKEN_VAR, token)


@pytest.fixture
def engine(tmp_path):
    from execmagic.engine import Engine, RunOptions

    engine = Engine(log_dir=str(tmp_path / "logs"), options=RunOptions(grace=0.3))
    yield engine
    engine.close()


@pytest.fixture
def py():
    """``py(code)`` → argv that runs ``code`` in a child Python (as Trio's tests do)."""
    return lambda code: [sys.executable, "-c", code]
