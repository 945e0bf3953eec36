"""Where an agent's background jobs run is the operator's setting (``Toolbox(background_on=…)``,
``execmagic-mcp --background-on``), never a model's argument; a job on another system is outside the
sandbox, and the tool's description and every answer of such a job say so."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from elsewhere import Elsewhere
from execmagic.agents.tools import Toolbox
from execmagic.engine.placement import SandboxElsewhere, elsewhere_note
from execmagic.mcp import StartProblem, build_toolbox, parser

NOTE = elsewhere_note("elsewhere")


def call(box, name, **arguments):
    answer = box.dispatch(name, arguments)
    assert json.loads(json.dumps(answer)) == answer
    return answer


def test_the_description_says_jobs_run_outside_and_no_argument_chooses_where(engine):
    box = Toolbox(engine, sandbox="off", background_on=Elsewhere(), grace=0.3)
    bash = box.tools["Bash"]
    assert "run as jobs on elsewhere (the user's setting)" in bash.description
    assert "outside any sandbox here" in bash.description
    assert set(bash.parameters["properties"]) == {"command", "description", "timeout", "run_in_background"}
    for name in ("on", "background_on", "backend"):  # a model cannot send a job anywhere else
        answer = call(box, "Bash", command="true", run_in_background=True, **{name: "local"})
        assert not answer["success"] and f"unknown argument '{name}'" in answer["error"]
    assert box.engine.shells.list() == []
    assert "run as jobs" not in Toolbox(engine, sandbox="off", grace=0.3).tools["Bash"].description


def test_every_answer_of_a_job_elsewhere_says_so_whatever_the_sandbox(engine):
    box = Toolbox(engine, sandbox="off", background_on=Elsewhere(), grace=0.3)
    started = call(box, "Bash", command="echo far", run_in_background=True)
    assert started["success"] and started["notes"] == [NOTE]
    assert [info.backend for info in engine.shells.list()] == ["elsewhere"]
    here = call(box, "Bash", command="echo here")  # a foreground command runs here: nothing to say
    assert here["success"] and NOTE not in here["notes"]
    dry = Toolbox(engine, sandbox="off", background_on=Elsewhere(), dry_run=True)
    assert call(dry, "Bash", command="echo far", run_in_background=True)["notes"] == [NOTE]
    call(box, "KillShell", shell_id=started["shell_id"])


def test_auto_confines_commands_here_and_not_the_jobs_elsewhere(engine, bwrap_works):
    box = Toolbox(engine, sandbox="auto", background_on=Elsewhere(), grace=0.3)
    here = call(box, "Bash", command="true")
    assert here["success"] and "sandbox" in here
    started = call(box, "Bash", command="sleep 30", run_in_background=True)
    assert started["success"] and "sandbox" not in started and NOTE in started["notes"]
    call(box, "KillShell", shell_id=started["shell_id"])


@pytest.mark.parametrize("mode", ["workspace", "read-only"])
def test_a_sandbox_named_with_a_backend_elsewhere_is_refused_at_once(engine, bwrap_works, mode):
    with pytest.raises(SandboxElsewhere) as caught:
        Toolbox(engine, sandbox=mode, background_on=Elsewhere())
    assert (caught.value.mode, caught.value.backend) == (mode, "elsewhere")


def test_the_mcp_servers_operator_chooses_the_backend():
    box = build_toolbox(parser().parse_args(["--sandbox", "off", "--background-on", "slurm"]))
    try:
        assert box.background_on is not None and box.background_on.name == "slurm"
        assert "run as jobs on slurm" in box.tools["Bash"].description
    finally:
        box.engine.close()
    with pytest.raises(SystemExit):  # only a backend there is
        parser().parse_args(["--background-on", "kubernetes"])


def test_the_mcp_server_refuses_a_sandbox_named_with_a_backend_elsewhere(bwrap_works):
    with pytest.raises(StartProblem, match=r"^--sandbox workspace does not go with --background-on slurm: .*"
                                           r"use --sandbox auto"):
        build_toolbox(parser().parse_args(["--sandbox", "workspace", "--background-on", "slurm"]))


@pytest.mark.parametrize(("backend", "said"), [("local", False), ("slurm", True)])
def test_the_mcp_servers_start_line_says_jobs_are_outside_only_when_they_are(backend, said):
    """``--background-on local`` runs the jobs here, inside the sandbox: the start line must not say otherwise."""
    done = subprocess.run([sys.executable, "-m", "execmagic.mcp", "--sandbox", "off", "--background-on", backend],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith("execmagic-mcp: serving Bash")
    assert ("outside the sandbox" in done.stderr) is said
    assert (f"background jobs on {backend}" in done.stderr) is said
