"""``--on NAME`` and each backend's flags and settings, as the magics build them from the backends'
registry: the checks that need no cluster (a real one is in ``tests/slurm``)."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError

from execmagic.background.backends import registry
from execmagic.display import PROVENANCE_MIME as PROVENANCE
from magic_calls import magic

pytestmark = pytest.mark.watchdog_outlives_test


def test_on_offers_every_registered_backend_and_says_what_each_is(ip):
    action = next(a for a in ip.magics_manager.magics["line"]["bg"].parser._actions if a.dest == "on")
    assert tuple(action.choices) == registry.names()
    assert action.help == ("where to run: local (default), slurm (a batch job; its logs on a shared folder) or ray"
                           " (a Ray job, through the dashboard's Jobs API)")


def test_a_backends_flag_without_its_backend_is_one_line(ip):
    with pytest.raises(UsageError, match=r"^--partition goes with --on slurm$"):
        ip.run_line_magic("bg", "--partition gpu true")
    with pytest.raises(UsageError, match=r"^--cpus goes with --on slurm or ray$"):
        ip.run_line_magic("bg", "--on local --cpus 2 true")
    with pytest.raises(UsageError, match=r"^--mem goes with --on slurm or ray$"):
        ip.run_line_magic("exec", "--mem 4G true")


def test_option_checks_come_from_the_backend_before_anything_is_submitted(ip, tmp_path):
    ip.run_line_magic("config", f"SlurmBackend.logs_dir = {str(tmp_path / 'jobs')!r}")
    try:
        with pytest.raises(UsageError, match=r"^--cpus needs a whole number of CPUs, at least 1, not 0$"):
            ip.run_line_magic("bg", "--on slurm --cpus 0 true")
        with pytest.raises(UsageError, match=r"^--sbatch-args may not set --output"):
            ip.run_line_magic("bg", "--on slurm --sbatch-args=--output=x true")
        ip.run_line_magic("config", "SlurmBackend.sbatch_args = '-J mine'")
        with pytest.raises(UsageError, match=r"^--sbatch-args may not set --job-name"):  # the setting is checked too
            ip.run_line_magic("bg", "--on slurm true")
    finally:
        ip.run_line_magic("config", "SlurmBackend.sbatch_args = ''")
        ip.run_line_magic("config", "SlurmBackend.logs_dir = ''")
    assert not (tmp_path / "jobs").exists()  # refused before the backend made its folder


def test_the_settings_section_keeps_its_public_name(ip, magics):
    section = magics.backend_settings["slurm"]
    assert type(section).__name__ == "SlurmBackend" and section in ip.configurables
    ip.run_line_magic("config", "SlurmBackend.partition = 'gpu'")
    try:
        assert section.partition == "gpu"
    finally:
        ip.run_line_magic("config", "SlurmBackend.partition = ''")


def test_on_local_goes_through_the_registry_too(ip, magics):
    cap = magic(ip, "bg", "--on local --name here echo local")
    assert [d[PROVENANCE]["backend"] for d in (o.data for o in cap.outputs) if PROVENANCE in d] == ["local"]
    assert magics.engine.shells.read("here", wait=10).stdout == "local\n"
    assert magics.engine.shells.read("here", wait=10).at_end
    magics.engine.shells.cleanup()
