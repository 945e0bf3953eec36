"""The SLURM backend's own checks, which need no cluster: options the backend owns, the logs folder."""

from __future__ import annotations

import os

import pytest

from execmagic.background.backends.slurm import SlurmBackend, SlurmOptions, checked_logs_dir, sbatch_words
from execmagic.process.errors import UsageProblem


@pytest.mark.parametrize(("text", "owned"), [
    ("--output=/tmp/x", "--output"), ("-o /tmp/x", "--output"), ("-o/tmp/x", "--output"),
    ("--error=/dev/null", "--error"), ("--job-name=foo", "--job-name"), ("-J foo", "--job-name"),
    ("--chdir=/", "--chdir"), ("--wrap='id'", "--wrap"), ("--array=1-2", "--array"), ("--test-only", "--test-only"),
    ("--version", "--version"), ("--help", "--help"), ("--parsable", "--parsable"), ("--export=NONE", "--export"),
    ("--qos=debug --comment=x", "--comment"), ("--wait", "--wait"),
])
def test_sbatch_args_may_not_override_what_the_backend_sets(text, owned):
    with pytest.raises(UsageProblem, match=f"^--sbatch-args may not set {owned}: execmagic sets it itself"):
        sbatch_words(text)
    with pytest.raises(UsageProblem, match=f"may not set {owned}"):
        SlurmOptions(extra=tuple(text.split())).sbatch_args()


def test_other_sbatch_args_pass_as_words():
    assert sbatch_words("--qos=debug --constraint='a100 80gb' -N 1") == ("--qos=debug", "--constraint=a100 80gb",
                                                                          "-N", "1")


def test_the_logs_folder_is_absolute_and_has_no_percent(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert checked_logs_dir("rel-logs") == str(tmp_path / "rel-logs")
    assert checked_logs_dir("~/x") == os.path.join(os.path.expanduser("~"), "x")
    with pytest.raises(UsageProblem, match="may not contain '%'"):
        SlurmBackend(logs_dir=str(tmp_path / "pct%x"))


def test_an_unmakeable_logs_folder_is_one_line(tmp_path):
    from execmagic.process.spec import Command

    (tmp_path / "afile").write_text("")
    backend = SlurmBackend(logs_dir=str(tmp_path / "afile" / "sub"))
    with pytest.raises(UsageProblem, match=r"^cannot make the SLURM logs folder .*afile/sub: Not a directory$"):
        backend.start(Command(argv=("true",), cwd=str(tmp_path), env={}, display="true"), marker="m", log_paths={})
