"""``%exec --on ray``'s local follower imports nothing from the run's folder.

The follower is a Python process of ours, started in the run's folder -- a notebook's, which an agent
may write.  ``python -m`` puts the working folder first on the module path, so an ``execmagic`` package
planted there ran, unconfined, at the next ``%exec --on ray``; a session's ``PYTHONPATH`` naming that
folder did the same.
"""

from __future__ import annotations

import dataclasses

import pytest

from execmagic.background.backends.ray import RayOptions
from execmagic.background.backends.ray.backend import RayBackend
from processes import TOKEN_VAR

pytestmark = pytest.mark.timeout(120)


def _plant(folder, marker) -> None:
    """An ``execmagic`` package (and module) in ``folder`` that leaves ``marker`` when imported."""
    code = f"open({str(marker)!r}, 'w').write('imported')\n"
    (folder / "execmagic").mkdir()
    (folder / "execmagic" / "__init__.py").write_text(code)
    (folder / "execmagic.py").write_text(code)


@pytest.mark.parametrize("how", ["cwd", "pythonpath"])
def test_an_execmagic_planted_in_the_runs_folder_is_never_imported(engine, ray, tmp_path, no_leftover_processes,
                                                                   how):
    work = tmp_path / "notebooks"
    work.mkdir()
    marker = tmp_path / "planted-code-ran"
    _plant(work, marker)
    env = {"PYTHONPATH": str(work)} if how == "pythonpath" else None
    plan = engine.plan_script("echo from-ray; exit 3", cwd=str(work), env=env, save_session=False)
    backend = RayBackend(RayOptions(env=((TOKEN_VAR, no_leftover_processes),)), address=ray.address, grace=1.0,
                      request_timeout=20)
    job = backend.foreground(plan.command, name=f"planted-{how}-{no_leftover_processes[:8]}")
    assert job.command.cwd == str(work)  # the run's folder is the one the policy checks and the result shows
    try:
        result = engine.run(dataclasses.replace(plan, command=job.command))  # as %exec --on ray runs it
    finally:
        job.finish(stopped=False)
    assert not marker.exists()
    assert (result.stdout, result.exit_code) == ("from-ray\n", 3), result.stderr
