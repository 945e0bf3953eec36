"""A magic hands the engine a value: the ``Request`` its line asks for (the text, the options, where
``{name}`` values come from, the sandbox, the backend), which the engine plans and runs."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import pytest

from execmagic.engine.requests import Request
from magic_calls import magic

pytestmark = pytest.mark.watchdog_outlives_test


@pytest.fixture
def asked(fresh_magics, monkeypatch):
    """Every request the magics hand the engine, in order (the engine plans each as usual)."""
    engine = fresh_magics.engine
    seen: list[Request] = []
    plan = engine.plan

    def recording(request):
        seen.append(request)
        return plan(request)

    monkeypatch.setattr(engine, "plan", recording)
    return seen


def test_a_cells_text_reaches_the_engine_as_a_frozen_request(ip, asked):
    ip.user_ns["where"] = "data dir"
    magic(ip, "exec", "--env STAGE=train --param n=3 --no-raise", "echo {n} $where")
    (request,) = asked
    assert (request.text, request.language, request.env, request.params) == ("echo {n} $where", "bash",
                                                                              {"STAGE": "train"}, {"n": "3"})
    assert isinstance(request.variables, Mapping) and request.variables["where"] == "data dir"
    assert not request.background and request.on is None and request.sandbox is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.text = "rm -rf ~"  # type: ignore[misc]


def test_each_magic_says_what_it_asks_for(ip, asked):
    magic(ip, "exec", "sh --errexit --dry-run", "true")
    magic(ip, "spawn", "--dry-run printf '%s' 'a b'")
    magic(ip, "bg", "--dry-run --name later sleep 1")
    magic(ip, "exec", "--bg --dry-run --name cell", "sleep 1")
    by = [(r.language, r.errexit, r.argv, r.background, r.text) for r in asked]
    assert by == [("sh", True, None, False, "true"), ("bash", False, ("printf", "%s", "a b"), False, ""),
                  ("bash", False, None, True, "sleep 1"), ("bash", False, None, True, "sleep 1")]

