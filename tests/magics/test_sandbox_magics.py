"""``--sandbox``, ``--sandbox-mode`` and ``ExecMagics.sandbox`` in a real ``InteractiveShell``, real bwrap.

Every folder a sandboxed command looks at lies outside the shared temp folder (the sandbox replaces
``/tmp`` by a private one): the fake home, the workspace and the other folder are under ``/var/tmp``.
The workspace is the writable root through ``ExecMagics.allowed_dirs`` (else it would be the folder
the engine started in); each test has its own, so each sets a sandbox of its own (the engine keeps
one per setting).  Tests that need bwrap skip when it cannot make its namespaces here.
"""

from __future__ import annotations

import contextlib
import html
import os
import shutil
import tempfile

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from execmagic.display import PROVENANCE_MIME as PROVENANCE
from execmagic.magics import CellCommandFailed
from execmagic.process import sandbox as sb
from magic_calls import magic
from waiting import wait_until

pytestmark = pytest.mark.watchdog_outlives_test


@pytest.fixture(autouse=True)
def fresh_session(ip, magics, tmp_path):
    """Every setting at its default (the module's shell keeps what another module's %config left: an
    errexit or a timeout there would change what these cells do), a log folder of the test's own."""
    for name in sorted(set(magics.traits(config=True)) - {"log_dir"}):
        ip.run_line_magic("config", f"ExecMagics.{name} = {magics.trait_defaults(name)!r}")
    ip.run_line_magic("config", f"ExecMagics.log_dir = {str(tmp_path / 'logs')!r}")
    ip.run_line_magic("config", "ExecMagics.kill_grace = 0.3")
    magics.engine.session.reset()
    magics.engine.sandbox_session.reset()
    yield
    magics.engine.session.reset()
    magics.engine.sandbox_session.reset()


@pytest.fixture
def place(ip, magics, monkeypatch, bwrap_works):
    """A fake home (with a key), a workspace (the session's cwd and the one allowed dir) and another folder,
    all under /var/tmp; the allowed dirs are emptied again at the end."""
    if not os.access("/var/tmp", os.W_OK):
        pytest.skip("/var/tmp is not writable: no folder outside the shared temp folder")
    top = os.path.realpath(tempfile.mkdtemp(prefix="execmagic-sandbox-magics-", dir="/var/tmp"))
    paths = {"home": f"{top}/home", "ws": f"{top}/ws", "other": f"{top}/other"}
    os.makedirs(f"{top}/home/.ssh")
    os.mkdir(paths["ws"])
    os.mkdir(paths["other"])
    with open(f"{top}/home/.ssh/id_rsa", "w") as fh:
        fh.write("PRIVATE KEY")
    monkeypatch.setenv("HOME", paths["home"])  # read when the sandbox is set, and by the commands
    magic(ip, "exec", f"cd {paths['ws']}")
    ip.run_line_magic("config", f"ExecMagics.allowed_dirs = [{paths['ws']!r}]")
    try:
        yield paths
    finally:
        ip.run_line_magic("config", "ExecMagics.allowed_dirs = []")
        shutil.rmtree(top, ignore_errors=True)


@contextlib.contextmanager
def setting(ip, magics, name, value):
    """``%config ExecMagics.name = value`` for the block; the module's shell gets the old value back."""
    before = getattr(magics, name)
    ip.run_line_magic("config", f"ExecMagics.{name} = {value!r}")
    try:
        yield
    finally:
        ip.run_line_magic("config", f"ExecMagics.{name} = {before!r}")


def run(ip, line, cell=None):
    return magic(ip, "exec", line, cell)


def summary(cap):
    (bundle,) = [o.data for o in cap.outputs if PROVENANCE in o.data]
    return bundle


def test_sandbox_writes_only_in_the_workspace_and_hides_keys(ip, place):
    ws, home, other = place["ws"], place["home"], place["other"]
    script = (f"touch {ws}/made; for f in ~/x /etc/execmagic-x {other}/x; do touch $f 2>/dev/null && echo wrote $f;"
              " done; cat ~/.ssh/id_rsa 2>/dev/null; echo end")
    cap = run(ip, f"--sandbox {script}")
    assert cap.stdout == "end\n"
    assert os.path.isfile(f"{ws}/made") and os.listdir(home) == [".ssh"] and os.listdir(other) == []
    bundle = summary(cap)
    line = bundle[PROVENANCE]["sandbox"]  # the /tmp's size and the limits follow, with what this machine allows
    assert line.startswith(f"sandbox workspace: writable {ws}, a private /tmp") and "; .git read-only; network off" in line
    assert f"\n  {line}" in bundle["text/plain"] and html.escape(line) in bundle["text/html"]
    plain = summary(run(ip, "true"))  # no flag, setting off: not confined, and no sandbox line
    assert "sandbox" not in plain["text/plain"] and "sandbox" not in plain[PROVENANCE]


def test_sandbox_readable_shows_a_tools_settings_in_the_hidden_home(ip, magics, place):
    """The home folder is hidden whole; ``ExecMagics.sandbox_readable`` shows a path of it, read-only (``~``
    is the home folder the sandbox hides), and the home folder itself is refused in one line."""
    home = place["home"]
    os.makedirs(f"{home}/.config/tool")
    with open(f"{home}/.config/tool/settings", "w") as fh:
        fh.write("shown\n")
    assert run(ip, "--sandbox cat ~/.config/tool/settings 2>&1; echo").stdout.startswith("cat: ")
    with setting(ip, magics, "sandbox_readable", ["~/.config/tool"]):
        cap = run(ip, "--sandbox cat ~/.config/tool/settings; touch ~/.config/tool/x 2>/dev/null || echo refused;"
                      " cat ~/.ssh/id_rsa 2>/dev/null; echo end")
        assert cap.stdout == "shown\nrefused\nend\n"
    with setting(ip, magics, "sandbox_readable", ["~"]), pytest.raises(UsageError) as caught:
        run(ip, "--sandbox true")
    assert "whole home folder" in str(caught.value) and "\n" not in str(caught.value)


def test_a_dry_run_says_it_would_be_sandboxed(ip, place):
    cap = run(ip, f"--sandbox --dry-run touch {place['ws']}/never")
    assert f"# sandbox workspace: writable {place['ws']}, a private /tmp" in cap.stdout + str(cap.outputs)
    assert not os.path.exists(f"{place['ws']}/never")


def test_cd_and_export_stay_among_sandboxed_cells(ip, place):
    ws = place["ws"]
    os.mkdir(f"{ws}/sub")
    with open(f"{ws}/evil.sh", "w") as fh:
        fh.write(f"touch {ws}/evil-ran\n")
    run(ip, f"--sandbox cd sub && export BASH_ENV={ws}/evil.sh PATH=/evil:$PATH STAGE=boxed")
    assert run(ip, "--sandbox pwd; echo $STAGE ${PATH%%:*}").stdout == f"{ws}/sub\nboxed /evil\n"
    os.remove(f"{ws}/evil-ran")  # the sandboxed cell ran it: BASH_ENV reached its own session
    cap = run(ip, 'pwd; echo "[$STAGE] [$BASH_ENV] $PATH"')
    assert cap.stdout.startswith(f"{ws}\n[] [] /") and "/evil" not in cap.stdout
    assert not os.path.exists(f"{ws}/evil-ran")


def test_read_only_cell_writes_nowhere_but_its_tmp(ip, place):
    ws = place["ws"]
    cap = run(ip, "--sandbox-mode read-only", f"touch {ws}/x 2>/dev/null || echo refused\necho kept > /tmp/t\ncat /tmp/t")
    assert cap.stdout == "refused\nkept\n" and os.listdir(ws) == []
    assert "sandbox read-only: writable a private /tmp" in summary(cap)["text/plain"]


def test_tmp_is_kept_between_cells_with_the_size_the_setting_gives(ip, magics, place):
    with setting(ip, magics, "sandbox_tmp_size", 3 << 20):
        run(ip, "--sandbox echo plan > /tmp/plan")
        cap = run(ip, "--sandbox cat /tmp/plan; df -k /tmp | tail -1")
        assert cap.stdout.startswith("plan\n") and cap.stdout.split()[2] == "3072", cap.stdout
        assert "a private /tmp of 3 MiB kept for the session" in summary(cap)["text/plain"]
        ip.run_line_magic("config", "ExecMagics.sandbox_tmp_size = 1000")  # refused, with a line saying why
        assert magics.sandbox_tmp_size == 3 << 20


def test_the_setting_confines_plain_cells(ip, magics, place):
    other = place["other"]
    with setting(ip, magics, "sandbox", "workspace"):
        cap = run(ip, "--no-raise", f"touch {other}/x")
        assert "sandbox workspace" in summary(cap)["text/plain"] and os.listdir(other) == []
        with capture_output():
            ip.run_line_magic("spawn", f"--no-raise touch {other}/y")  # %spawn as well
        assert os.listdir(other) == []
        run(ip, f"--sandbox-mode off touch {other}/z")  # a cell may still step out, by name
        assert os.listdir(other) == ["z"]


def test_auto_says_what_it_could_not_confine(ip, magics, place):
    """``auto`` never takes the home folder as a writable root: read-only there, and the cell says so."""
    home = place["home"]
    with setting(ip, magics, "allowed_dirs", []):
        magic(ip, "exec", f"cd {home}")
    with setting(ip, magics, "allowed_dirs", [home]), setting(ip, magics, "sandbox", "auto"):
        cap = run(ip, "--no-raise touch ~/x")
        text = summary(cap)["text/plain"]
        assert "sandbox read-only" in text and "is not writable (it is the home folder" in text
        assert "is not writable (it is the home folder" in summary(cap)["text/html"]
        assert os.listdir(home) == [".ssh"]
        with capture_output() as cap:  # a background shell has no result: its notes are printed
            ip.run_line_magic("bg", "--name noted true")
            ip.run_line_magic("bgout", "noted --wait inf")
        assert "note: sandbox: " in cap.stdout and "is not writable (it is the home folder" in cap.stdout
        with pytest.raises(UsageError, match="allowed_dirs") as info:  # named, the same root is an error
            run(ip, "--sandbox-mode workspace touch ~/x")
        assert "\n" not in str(info.value) and os.listdir(home) == [".ssh"]


def test_sandbox_mistakes_are_one_line_before_anything_runs(ip, place):
    marker = os.path.join(place["ws"], "ran")
    for line, message in (
        (f"--sandbox-mode sealed touch {marker}", "invalid choice: 'sealed'"),
        (f"--sandbox --sandbox-mode read-only touch {marker}", "give one of them"),
        (f"--sandbox --on slurm touch {marker}", "does not go with --on slurm"),
        (f"--sandbox-mode read-only --on slurm touch {marker}", "does not go with --on slurm"),
    ):
        with pytest.raises(UsageError, match=message) as info:
            run(ip, line)
        assert "\n" not in str(info.value), line
    for name, line in (("bg", f"--sandbox --on slurm touch {marker}"), ("spawn", f"--sandbox-mode x touch {marker}")):
        with pytest.raises(UsageError, match=r"does not go with --on slurm|invalid choice"):
            ip.run_line_magic(name, line)
    with pytest.raises(UsageError, match="invalid choice"):
        ip.run_cell_magic("exec", "--bg --sandbox-mode x", f"touch {marker}")
    assert not os.path.exists(marker)


def test_the_setting_refuses_a_cluster_run(ip, magics, place):
    with setting(ip, magics, "sandbox", "read-only"), pytest.raises(
            UsageError, match=r"ExecMagics\.sandbox 'read-only' does not go with --on slurm") as info:
        run(ip, "--on slurm true")
    assert "--sandbox-mode off" in str(info.value)


def test_no_sandbox_here_is_one_line_naming_the_fix(ip, place, monkeypatch):
    """Where no bubblewrap can be had (here: the kernel's environment names none), a named mode is one line
    that says so and names the way out; nothing runs, confined or not."""
    monkeypatch.setenv(sb.BWRAP_VAR, "")
    with pytest.raises(UsageError) as info:
        run(ip, f"--sandbox-mode workspace touch {place['ws']}/ran")
    message = str(info.value)
    assert message.startswith(f"exec: no sandbox here: {sb.BWRAP_VAR} is set empty") and "\n" not in message
    assert message.endswith("; or run it unconfined with --sandbox-mode off")
    assert not os.path.exists(f"{place['ws']}/ran")


def test_background_sandbox_is_confined_and_killed(ip, place):
    ws, other = place["ws"], place["other"]
    with capture_output() as cap:
        ip.run_line_magic("bg", f"--sandbox --name boxed touch {other}/x; touch {ws}/started; exec sleep 60")
    try:
        (info,) = cap.outputs
        assert "boxed" in info.data["text/plain"]
        wait_until(lambda: os.path.exists(f"{ws}/started"), 10, "the boxed shell to start")
        assert os.listdir(other) == []
    finally:
        with capture_output():
            ip.run_line_magic("kill", "boxed")  # the autouse fixture proves nothing is left


def test_timeout_stops_a_sandboxed_sleep(ip, place):
    cap = run(ip, "--sandbox --timeout 0.5 --no-raise sleep 60")
    bundle = summary(cap)
    assert bundle[PROVENANCE]["timed_out"] is True and "sandbox workspace" in bundle["text/plain"]
    with pytest.raises(CellCommandFailed):
        run(ip, "--sandbox-mode read-only --timeout 0.3", "sleep 60 & sleep 60")
