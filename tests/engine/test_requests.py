"""A run is asked for with a value (a ``Request``), and the engine owns what a backend changes about it:
a foreground run elsewhere is the backend's job, ended with the run, writing no session back; one rule
says what a sandbox does against a backend."""

from __future__ import annotations

import dataclasses
import os

import pytest

import execmagic
from elsewhere import Elsewhere
from execmagic.background.backends.local import LocalBackend
from execmagic.engine.placement import SandboxElsewhere, elsewhere_note, sandbox_elsewhere
from execmagic.engine.plans import Planner
from execmagic.engine.requests import Request
from execmagic.engine.sandboxing import SandboxChoice
from execmagic.process.logdir import LogDir


def test_a_request_is_a_frozen_value():
    request = Request(text="echo {x}", params={"x": "1"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.text = "rm -rf ~"  # type: ignore[misc]
    assert not request.remote and Request(on=Elsewhere()).remote and not Request(on=LocalBackend()).remote


def test_the_engine_holds_a_planner_and_shares_its_settings(engine, tmp_path):
    assert isinstance(engine.planner, Planner) and not isinstance(engine, Planner)
    engine.logs = LogDir(str(tmp_path / "other"))
    engine.redact_display = False
    assert engine.planner.logs is engine.logs and engine.planner.redact_display is False
    plan = engine.plan(Request(text="echo hi"))
    assert plan.state_path is not None and plan.state_path.startswith(engine.logs.runtime())


class _Uncountable(dict):
    """A notebook's namespace as planning sees it: counting its names walks all of them (a large notebook)."""

    def __len__(self) -> int:
        raise AssertionError("the namespace was counted")


def test_planning_never_counts_the_notebooks_variables(engine):
    """Whether a notebook has variables is never asked of its namespace, nor is it copied: every run paid a walk
    of every name it holds (a %spawn two)."""
    plan = engine.plan(Request(text="echo hi", variables=_Uncountable(x=1)))
    assert plan.error is None and plan.command.argv[-1] == "echo hi"
    plan = engine.plan(Request(text="echo {x}", variables=_Uncountable(x="a b")))
    assert plan.error is None and plan.command.argv[-1] == "echo 'a b'"
    plan = engine.plan(Request(argv=("printf", "{x}", "-{x}-"), variables=_Uncountable(x=["a", "b"])))
    assert plan.error is None and plan.command.argv == ("printf", "a", "b", "-a b-")


def test_run_on_a_backend_is_the_backends_job_and_writes_no_session_back(engine):
    backend = Elsewhere()
    before = engine.session.current_cwd()
    result = execmagic.run("cd /; export WHERE=there; echo $JOB_NAME", on=backend, engine=engine)
    assert result.success and result.stdout == f"{engine.token}-1\n"
    assert engine.session.current_cwd() == before and "WHERE" not in engine.session.environment()
    (job,) = backend.jobs
    assert job.finished == [False] and not job.watched  # ended by the engine; watched only by a status line


def test_a_run_on_a_backend_that_is_stopped_ends_its_job_too(engine):
    backend = Elsewhere()
    result = execmagic.run("sleep 30", timeout=0.5, on=backend, engine=engine)
    assert result.timed_out and backend.jobs[0].finished == [True]


def test_a_plan_on_a_backend_shows_the_jobs_command(engine):
    backend = Elsewhere()
    plan = engine.plan(Request(text="echo hi", on=backend))
    assert plan.job is backend.jobs[0] and plan.command is plan.job.command and plan.backend is backend
    assert plan.state_path is None  # a job elsewhere never writes the session back
    assert engine.plan(Request(text="echo hi", on=LocalBackend())).job is None  # local: the command itself


def test_start_on_a_backend_goes_there_without_a_foreground_job(engine):
    backend = Elsewhere()
    info = execmagic.start("echo started", on=backend, name="far", engine=engine)
    assert info.backend == "elsewhere" and backend.jobs == []
    assert execmagic.read("far", wait=30, engine=engine).stdout == "started\n"


@pytest.mark.parametrize("mode, insist, expected", [
    ("off", False, SandboxChoice(None)),
    ("auto", False, SandboxChoice(None, (elsewhere_note("elsewhere"),))),
    ("workspace", False, SandboxElsewhere),
    ("read-only", False, SandboxElsewhere),
    ("auto", True, SandboxElsewhere),
])
def test_the_one_rule_for_a_sandbox_against_a_backend(mode, insist, expected):
    assert sandbox_elsewhere(mode, None, insist=insist) is None
    assert sandbox_elsewhere(mode, LocalBackend(), insist=insist) is None  # here: the sandbox is set as usual
    if expected is SandboxElsewhere:
        with pytest.raises(SandboxElsewhere) as caught:
            sandbox_elsewhere(mode, Elsewhere(), insist=insist)
        assert (caught.value.mode, caught.value.backend) == (mode, "elsewhere")
        assert isinstance(caught.value, execmagic.UsageProblem)
    else:
        assert sandbox_elsewhere(mode, Elsewhere(), insist=insist) == expected


def test_no_sandbox_reaches_a_job_elsewhere(engine, sandbox_place):
    ws, _home = sandbox_place
    sandbox = engine.sandbox("read-only").sandbox
    assert sandbox is not None
    with pytest.raises(SandboxElsewhere):
        engine.plan(Request(text=f"touch {ws}/ran", sandbox=sandbox, on=Elsewhere()))
    plan = engine.plan(Request(text=f"touch {ws}/ran", sandbox=sandbox, background=True))
    with pytest.raises(SandboxElsewhere):
        engine.start_background(plan, backend=Elsewhere())
    assert engine.sandbox_for("auto", Elsewhere()) == SandboxChoice(None, (elsewhere_note("elsewhere"),))
    assert engine.sandbox_for("read-only", None).sandbox is sandbox  # here: the engine's sandbox, as set
    assert not os.path.exists(f"{ws}/ran") and engine.shells.list() == []
