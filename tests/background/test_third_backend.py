"""A third backend is one package and one registration: ``toy_backend`` (a package of this folder,
the shape every backend has, over the backends' shared parts) registered in the registry and nowhere
else, then used through every door a user has -- ``%bg --on toy``, ``%bgout``, ``%kill`` in a real
InteractiveShell, and ``execmagic.start(on="toy")``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

import execmagic
from execmagic.background.backends import registry

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
SRC = os.path.join(os.path.dirname(TESTS), "src")

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def toy():
    sys.path.insert(0, HERE)
    from toy_backend.spec import SPEC

    registry.register(SPEC)
    yield SPEC
    registry.unregister(SPEC.name)
    sys.path.remove(HERE)


def test_the_magics_run_bg_bgout_and_kill_on_a_backend_registered_before_they_load(tmp_path):
    path = os.pathsep.join([HERE, TESTS, SRC, os.environ.get("PYTHONPATH", "")])
    ran = subprocess.run([sys.executable, os.path.join(HERE, "toy_session.py"), str(tmp_path)], capture_output=True,
                         text=True, timeout=100, cwd=tmp_path, env={**os.environ, "PYTHONPATH": path})
    assert ran.returncode == 0, ran.stderr
    seen = json.loads(ran.stdout.strip().splitlines()[-1])
    (started,) = seen["started"]["provenance"]
    assert started["backend"] == "toy" and "%bgout job" in seen["started"]["text"][0]
    assert seen["job"][:2] == ["out1\nout2\nout3\n", "err1\nerr2\nerr3\n"]
    assert seen["job"][2]["status"] == "exited 3" and seen["job"][2]["exit_code"] == 3
    assert seen["long_first"] == "begun\n"
    assert seen["long"][2]["status"] == "killed"
    assert seen["api"]["backend"] == "toy" and seen["api_out"][0] == "from the api\n"
    assert {shell["id"]: shell["backend"] for shell in seen["listing"][0]} == {"job": "toy", "long": "toy", "bg1": "toy"}
    assert seen["wrong_flag"] == "--partition goes with --on slurm"
    assert sorted(name.rsplit(".", 1)[1] for name in os.listdir(tmp_path) if name.startswith("execmagic-")) \
        == ["err", "err", "out", "out"]  # the setting reached the magics' jobs (start(on=NAME) takes the defaults)


def test_start_runs_on_the_toy_by_name(toy, engine):
    info = execmagic.start("echo hi; echo oops >&2; exit 4", on="toy", engine=engine)
    assert info.backend == "toy"
    outs = [execmagic.read(info.id, wait=10, engine=engine)]
    while not outs[-1].at_end:
        outs.append(execmagic.read(info.id, wait=10, engine=engine))
    assert ("".join(o.stdout for o in outs), "".join(o.stderr for o in outs)) == ("hi\n", "oops\n")
    assert outs[-1].shell.status == "exited 4"


def test_no_file_of_execmagic_names_the_toy():
    named = []
    for root, _, files in os.walk(os.path.join(SRC, "execmagic")):
        for name in files:
            if name.endswith((".py", ".md", ".sh")):
                with open(os.path.join(root, name), encoding="utf-8") as fh:
                    if re.search(r"\btoy\b", fh.read(), re.IGNORECASE):
                        named.append(os.path.relpath(os.path.join(root, name), SRC))
    assert named == []
