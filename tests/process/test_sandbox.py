"""The sandbox holds against the escapes a command would try: real bwrap, real processes, a fake home.

Every folder a test looks at from inside lies outside the shared temp folder (which the sandbox
replaces by a private one): a fake home there would be invisible anyway and prove nothing.  Tests
that need bwrap skip when it is missing or cannot make its namespaces here (probed once).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

import psutil
import pytest

from execmagic.process import sandbox as sb
from execmagic.process.launch import MARKER_VAR, launch
from execmagic.process.spec import Command
from execmagic.process.stop import marked_processes, stop_tree

READ_ONLY = "Read-only file system"



@pytest.fixture
def place(bwrap_works):
    """A fake home (keys, cloud credentials, a start-up file), a workspace and another folder, all
    outside the shared temp folder."""
    parent = next((p for p in ("/var/tmp", os.path.expanduser("~")) if os.access(p, os.W_OK)), None)
    if parent is None:
        pytest.skip("no writable folder outside the shared temp folder")
    top = os.path.realpath(tempfile.mkdtemp(prefix="execmagic-sandbox-test-", dir=parent))
    paths = {name: os.path.join(top, name) for name in ("home", "ws", "other")}
    for folder in paths.values():
        os.mkdir(folder)
    home = paths["home"]
    for name, text in ((".ssh/id_rsa", "PRIVATE KEY"), (".aws/credentials", "aws_secret=1"),
                       (".netrc", "password 1"), (".bashrc", "echo hello"), ("../other/file", "outside")):
        os.makedirs(os.path.dirname(os.path.join(home, name)), exist_ok=True)
        with open(os.path.join(home, name), "w") as fh:
            fh.write(text)
    try:
        yield paths
    finally:
        shutil.rmtree(top, ignore_errors=True)


def workspace(place, **fields):
    spec = sb.SandboxSpec(**{"mode": "workspace", "writable_roots": (place["ws"],), **fields})
    return sb.plan_sandbox(spec, home=place["home"])


def run(sandbox, script, cwd, **wrap):
    env = sandbox.environment({**os.environ, "LC_ALL": "C", "HOME": "/nonexistent"})
    return subprocess.run(sandbox.wrap(["sh", "-c", script], cwd, **wrap), capture_output=True, text=True,
                          timeout=30, env=env, stdin=subprocess.DEVNULL)


def read(path):
    with open(path) as fh:
        return fh.read()


def test_workspace_writes_there_and_nowhere_else(place):
    box = workspace(place)
    ws, home, other = place["ws"], place["home"], place["other"]
    done = run(box, "echo a > f && echo b >> f && cat f && mkdir d && mv f d/g && rm -r d && echo ok", ws)
    assert done.stdout == "a\nb\nok\n" and done.returncode == 0, done.stderr
    for target in (f"{home}/.bashrc", f"{home}/new", f"{other}/file", f"{other}/new"):
        done = run(box, f"echo x >> {target}", ws)
        assert done.returncode != 0 and READ_ONLY in done.stderr, (target, done.stderr)
    done = run(box, "touch /etc/execmagic-sandbox-test", ws)
    assert done.returncode != 0 and (READ_ONLY in done.stderr or "Permission denied" in done.stderr)
    assert read(f"{home}/.bashrc") == "echo hello" and read(f"{other}/file") == "outside"
    # only the empty read-only .git put in a root that had none (see the next test)
    assert os.listdir(ws) == [".git"] and not os.path.exists("/etc/execmagic-sandbox-test")
    assert box.describe() == f"sandbox workspace: writable {ws}, a private /tmp; .git read-only; network off"


def test_the_shared_temp_folder_is_replaced_by_a_private_one(place, tmp_path):
    if not os.path.realpath(tmp_path).startswith("/tmp/"):
        pytest.skip("pytest's temp folder is not below /tmp")
    (tmp_path / "mine").write_text("shared")
    box = workspace(place)
    done = run(box, f"cat {tmp_path}/mine; echo x > {tmp_path}/new", place["ws"])
    assert done.returncode != 0 and done.stdout == "" and not (tmp_path / "new").exists()
    name = f"execmagic-sandbox-test-{os.getpid()}"
    done = run(box, f"echo private > /tmp/{name} && cat /tmp/{name} && echo $TMPDIR", place["ws"])
    assert done.stdout.split()[0] == "private" and not os.path.exists(f"/tmp/{name}"), done.stderr


def test_links_planted_in_the_workspace(place):
    ws, home, other = place["ws"], place["home"], place["other"]
    os.symlink(f"{other}/file", f"{ws}/soft")
    os.symlink(f"{home}/.ssh/id_rsa", f"{ws}/key")
    os.link(f"{other}/file", f"{ws}/hard")  # planted before the sandbox is set: the outside file itself
    box = workspace(place)
    done = run(box, "echo x >> soft", ws)
    assert done.returncode != 0 and READ_ONLY in done.stderr
    assert run(box, "cat key", ws).stdout == ""
    done = run(box, f"ln {other}/file made-inside", ws)  # a bind is a mount of its own: no link across it
    assert done.returncode != 0 and "cross-device" in done.stderr
    # a hard link that was already there is the outside file: it is found and kept read-only
    done = run(box, "echo via-hard-link >> hard; rm hard", ws)
    assert done.stderr.count(READ_ONLY) == 1 and "busy" in done.stderr, done.stderr
    assert read(f"{other}/file") == "outside" and box.notes == ()


def test_hard_links_all_inside_stay_writable_and_many_outside_are_said(place, monkeypatch):
    ws, other = place["ws"], place["other"]
    with open(f"{ws}/a", "w") as fh:
        fh.write("one")
    os.link(f"{ws}/a", f"{ws}/b")  # every link inside: an ordinary file of the workspace
    for i in range(5):
        with open(f"{other}/f{i}", "w") as fh:
            fh.write("outside")
        os.link(f"{other}/f{i}", f"{ws}/l{i}")
    monkeypatch.setattr(sb, "LINK_BIND_LIMIT", 3)
    box = workspace(place)
    assert run(box, "echo two >> a; cat b", ws).stdout == "onetwo\n"
    wrote = [i for i in range(5) if run(box, f"echo x >> l{i}", ws).returncode == 0]
    assert wrote == [3, 4] and box.notes == (
        "2 more files of the workspace share their data with files outside it (hard links) and stay writable;"
        " the first 3 are read-only",)
    assert sb.linked_outside([ws], limit=2)[1] is False  # a walk cut short says so


def test_git_folders_stay_read_only_unless_allowed(place):
    ws = place["ws"]
    files = (".git/hooks/pre-commit", ".git/config", "a/b/.git/config", "wt-data/config")
    for name in files:
        os.makedirs(os.path.dirname(os.path.join(ws, name)), exist_ok=True)
        with open(os.path.join(ws, name), "w") as fh:
            fh.write("[core]\n")
    os.mkdir(f"{ws}/wt")
    with open(f"{ws}/wt/.git", "w") as fh:
        fh.write("gitdir: ../wt-data\n")
    # a worktree of a repository too deep for the scan: its hooks and config are in the common folder
    deep = f"{ws}/x1/x2/x3/x4/repo/.git"
    os.makedirs(f"{deep}/worktrees/wt")
    with open(f"{deep}/worktrees/wt/commondir", "w") as fh:
        fh.write("../..\n")
    os.mkdir(f"{ws}/wt2")
    with open(f"{ws}/wt2/.git", "w") as fh:
        fh.write(f"gitdir: {deep}/worktrees/wt\n")
    box = workspace(place)
    assert set(box.protected) == {f"{ws}/.git", f"{ws}/a/b/.git", f"{ws}/wt/.git", f"{ws}/wt-data", f"{ws}/wt2/.git", deep}
    assert run(box, f"touch {deep}/hooks", ws).returncode != 0
    for name in (*files, "wt/.git"):
        done = run(box, f"echo '[core] fsmonitor = evil' >> {name}", ws)
        assert done.returncode != 0 and READ_ONLY in done.stderr, name
    for escape in ("mv .git moved", "rm -rf .git", "rm wt/.git"):
        assert run(box, escape, ws).returncode != 0, escape
    assert os.path.isfile(f"{ws}/.git/hooks/pre-commit") and read(f"{ws}/wt/.git") == "gitdir: ../wt-data\n"
    assert run(box, "echo ok > file-beside", ws).returncode == 0
    allowed = workspace(place, allow_git_writes=True)
    assert allowed.protected == () and run(allowed, "echo '#x' >> .git/hooks/pre-commit", ws).returncode == 0


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_repository_made_in_a_root_cannot_run_code_at_the_users_next_git_status(place):
    """The notebook folder is a root with no .git of its own, inside a repository one level up: a sandboxed
    `git init .` there would make a repository whose core.fsmonitor the user's next plain `git status` runs."""
    ws, top = place["ws"], os.path.dirname(place["ws"])
    env = {**os.environ, "LC_ALL": "C", "GIT_CONFIG_NOSYSTEM": "1", "HOME": place["home"]}
    subprocess.run(["git", "init", "-q", top], check=True, timeout=30, env=env)
    box = workspace(place)
    planted = os.path.join(place["other"], "fsmonitor-ran")
    done = run(box, f"git init -q . && git config core.fsmonitor 'touch {planted}; false'", ws)
    assert done.returncode != 0 and READ_ONLY in done.stderr, done.stderr
    assert run(box, "git config core.fsmonitor x", ws).returncode != 0  # the repository above: read-only too
    assert run(box, "rmdir .git || mv .git gone", ws).returncode != 0 and os.listdir(f"{ws}/.git") == []
    assert run(box, "echo work > notes.txt", ws).returncode == 0  # the folder itself stays the agent's to write
    status = subprocess.run(["git", "status", "--porcelain"], cwd=ws, capture_output=True, text=True, timeout=30,
                            env=env)
    assert status.returncode == 0 and "ws/" in status.stdout, status.stderr  # the repository above answers
    assert not os.path.exists(planted)


def test_credentials_and_hidden_paths_are_not_readable(place):
    ws, home, other = place["ws"], place["home"], place["other"]
    runtime = f"{other}/runtime"
    os.mkdir(runtime)
    for name, text in (("kernel-1.json", '{"key": "secret"}'), ("prelude.sh", "echo prelude"),
                       ("run.state", ""), ("run.script", "echo script")):
        with open(f"{runtime}/{name}", "w") as fh:
            fh.write(text)
    with open(f"{other}/audit.jsonl", "w") as fh:
        fh.write("audit")
    hidden = (runtime, f"{other}/audit.jsonl", f"{other}/not-there")  # what does not exist is skipped
    box = workspace(place, hidden=hidden, readable=(f"{runtime}/prelude.sh",))
    script = (f"cat {home}/.ssh/id_rsa {home}/.aws/credentials {home}/.netrc {runtime}/kernel-1.json "
              f"{other}/audit.jsonl; ls -A {home}/.ssh {home}/.aws {runtime}")
    done = run(box, script, ws)
    assert "PRIVATE" not in done.stdout and "secret" not in done.stdout and "audit" not in done.stdout
    listed = done.stdout.split()
    assert "id_rsa" not in listed and "credentials" not in listed and "kernel-1.json" not in listed
    assert run(box, f"cat {home}/.bashrc", ws).stdout == ""  # the home folder is hidden whole, not by a list
    # the run's own files: the prelude and script readable only, the state file writable
    extra = {"readable": (f"{runtime}/run.script",), "writable": (f"{runtime}/run.state",)}
    done = run(box, f". {runtime}/prelude.sh; . {runtime}/run.script; echo saved > {runtime}/run.state", ws, **extra)
    assert done.stdout == "prelude\nscript\n" and done.returncode == 0, done.stderr
    assert read(f"{runtime}/run.state") == "saved\n"
    for target in ("prelude.sh", "run.script"):
        done = run(box, f"echo evil >> {runtime}/{target}", ws, **extra)
        assert done.returncode != 0 and READ_ONLY in done.stderr, target
    assert read(f"{runtime}/prelude.sh") == "echo prelude"


def test_processes_outside_are_invisible_and_out_of_reach(place):
    me = os.getpid()
    done = run(workspace(place), f"test -e /proc/{me} && echo visible; kill -0 {me} && echo reachable; ls /proc",
               place["ws"])
    assert "visible" not in done.stdout and "reachable" not in done.stdout
    pids = [int(name) for name in done.stdout.split() if name.isdigit()]
    assert pids and max(pids) < 10, pids  # bwrap's pid 1, the shell, ls


def _serve_once(server: socket.socket, accepted: list[bytes]) -> None:
    try:
        conn, _ = server.accept()
        with conn:
            accepted.append(conn.recv(16))
    except OSError:  # the test closed the server: nobody came
        pass


@pytest.mark.parametrize("network", [False, True])
def test_the_network_is_off_unless_asked_for(place, network):
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(30)  # the bound, should the shutdown below not wake it
    accepted: list[bytes] = []
    thread = threading.Thread(target=_serve_once, args=(server, accepted))
    thread.start()
    try:
        port = server.getsockname()[1]
        client = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5).sendall(b'hello')"
        python = os.path.realpath(sys.executable)  # not a venv's link: the venv may live under the hidden /tmp
        done = run(workspace(place, network=network), f"{python} -c \"{client}\"", place["ws"])
    finally:
        if network:
            thread.join(10)
        with contextlib.suppress(OSError):
            server.shutdown(socket.SHUT_RDWR)  # wakes the accept (closing alone does not)
        server.close()
        thread.join(10)
    assert not thread.is_alive()
    assert (done.returncode == 0) is network, done.stderr
    assert accepted == ([b"hello"] if network else [])


def test_privileges_cannot_be_regained(place):
    box = workspace(place)
    for tool, script in (("unshare", "unshare -r true"), ("unshare", "unshare -U true"), ("nsenter", "nsenter -t 1 -m true"),
                         ("mount", f"mount -t tmpfs none {place['other']}")):
        if shutil.which(tool) is None:
            continue
        assert run(box, script, place["ws"]).returncode != 0, script
    assert run(box, "grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status", place["ws"]).stdout.split()[1::2] == ["0" * 16] * 3


AS_NOBODY = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--")


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                    reason="acting as an ordinary user needs root and setpriv")
def test_an_ordinary_user_gets_the_same_sandbox(place, bwrap_works):
    """Most users run Jupyter as themselves: bwrap then works through an unprivileged user namespace."""
    if subprocess.run([*AS_NOBODY, bwrap_works.bwrap, "--unshare-user", "--ro-bind", "/", "/", "true"],
                      capture_output=True, timeout=30).returncode != 0:
        pytest.skip("no unprivileged user namespaces here")
    top = os.path.dirname(place["ws"])
    for folder, dirs, files in os.walk(top):
        for name in (".", *dirs, *files):
            os.chown(os.path.join(folder, name), 65534, 65534)
    home, ws = place["home"], place["ws"]
    script = (f"touch made && echo wrote; echo x >> {home}/.bashrc; cat {home}/.ssh/id_rsa; unshare -U true; "
              "grep -E '^Cap(Eff|Bnd)' /proc/self/status")
    argv = workspace(place).wrap(["sh", "-c", script], ws)
    done = subprocess.run([*AS_NOBODY, *argv], capture_output=True, text=True, timeout=30,
                          env={**os.environ, "LC_ALL": "C"}, cwd="/")
    assert done.stdout.split() == ["wrote", "CapEff:", "0" * 16, "CapBnd:", "0" * 16], done.stderr
    assert READ_ONLY in done.stderr and os.path.exists(f"{ws}/made")


def test_read_only_mode_writes_only_the_private_temp(place):
    box = sb.plan_sandbox(sb.SandboxSpec(mode="read-only", writable_roots=(place["ws"],)), home=place["home"])
    done = run(box, "echo x > f", place["ws"])
    assert done.returncode != 0 and READ_ONLY in done.stderr
    assert run(box, "echo x > /tmp/f && cat /tmp/f", place["ws"]).stdout == "x\n"
    assert box.describe() == "sandbox read-only: writable a private /tmp; network off"


def test_a_folder_of_the_callers_can_be_the_private_temp(place):
    box = workspace(place, temp=place["other"])
    assert run(box, "echo kept > /tmp/t", place["ws"]).returncode == 0
    assert read(f"{place['other']}/t") == "kept\n"


def test_unsafe_roots_are_an_error_when_asked_for_and_read_only_when_chosen(tmp_path):
    home = str(tmp_path / "home")
    os.makedirs(f"{home}/project")
    for root in ("/", home, str(tmp_path), "/tmp"):
        with pytest.raises(sb.UnsafeRoot) as caught:
            sb.resolve_roots([root], home=home, explicit=True)
        assert caught.value.path == root and caught.value.why
        chosen = sb.resolve_roots([root], home=home, explicit=False)
        assert chosen.roots == () and len(chosen.notes) == 1 and root in chosen.notes[0]
        with pytest.raises(sb.UnsafeRoot):
            sb.plan_sandbox(sb.SandboxSpec(mode="workspace", writable_roots=(root,)), home=home)
    for bad in ("relative", f"{home}/missing"):
        with pytest.raises(sb.SandboxProblem) as caught:
            sb.resolve_roots([bad], home=home, explicit=True)
        assert caught.value.path == bad and not isinstance(caught.value, sb.UnsafeRoot)
    nested = sb.resolve_roots([f"{home}/project/sub/..", f"{home}/project"], home=home, explicit=True)
    assert nested == sb.RootChoice(roots=(os.path.realpath(f"{home}/project"),))
    for spec in (sb.SandboxSpec(mode="no-such-mode"), sb.SandboxSpec(mode="workspace"),
                 sb.SandboxSpec(mode="read-only", readable=(f"{home}/missing",)),
                 sb.SandboxSpec(mode="read-only", writable_paths=("relative",)),
                 sb.SandboxSpec(mode="read-only", hidden=("relative",))):
        with pytest.raises(sb.SandboxProblem):
            sb.plan_sandbox(spec, home=home)


def test_without_bwrap_availability_says_why(tmp_path):
    empty = sb.availability(path=str(tmp_path))
    assert not empty.ok and empty.bwrap is None and "install" in (empty.reason or "")
    assert sb.availability(path=str(tmp_path)) is empty  # decided once
    missing = sb.availability(str(tmp_path / "bwrap"))
    assert not missing.ok and str(tmp_path / "bwrap") in (missing.reason or "")
    with pytest.raises(sb.SandboxUnavailable) as caught:
        sb.plan_sandbox(sb.SandboxSpec(mode="read-only"), home=str(tmp_path), bwrap=str(tmp_path / "bwrap"))
    assert caught.value.reason == missing.reason
    off = sb.plan_sandbox(sb.SandboxSpec(), home=str(tmp_path), bwrap=str(tmp_path / "bwrap"))
    assert off.wrap(["true"], "/") == ("true",) and off.describe() == "sandbox off"
    assert off.environment({"TMPDIR": "/x"}) == {"TMPDIR": "/x"}


def test_bwrap_is_found_in_system_folders_before_path(tmp_path, monkeypatch):
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")
    found = sb.find_bwrap()
    assert found != str(fake) and (found is None or os.path.dirname(found) in sb.SYSTEM_DIRS)


def _wait_for_sleeps(pid: int, count: int) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            sleeps = [p for p in psutil.Process(pid).children(recursive=True) if _names([p]) == {"sleep"}]
        except psutil.NoSuchProcess:
            sleeps = []
        if len(sleeps) >= count:
            return
        time.sleep(0.01)
    raise AssertionError("the sandboxed sleeps did not start")


def test_the_engines_stop_ends_a_sandboxed_tree(place):
    box = workspace(place)
    argv = box.wrap(["sh", "-c", "sleep 30 & sleep 30 & wait"], place["ws"])
    proc = launch(Command(argv, place["ws"], dict(os.environ), "sleeps"), "sandbox-stop-test")
    try:
        _wait_for_sleeps(proc.pid, 2)
        report = stop_tree(proc.pid, leader=proc, marker="sandbox-stop-test", grace=0.5)
        assert report.survivors == () and proc.returncode is not None
    finally:
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def _names(procs):
    names = set()
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            names.add(proc.name())
    return names


def test_what_a_sandboxed_command_leaves_behind_is_found_by_its_marker(place):
    box = workspace(place)
    argv = box.wrap(["sh", "-c", "sleep 30 >/dev/null 2>&1 &"], place["ws"])
    env = {**os.environ, MARKER_VAR: "sandbox-leftover-test"}
    # bwrap's pid 1 holds the command's streams until the last process inside ends: no pipes here
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, timeout=30, env=env, start_new_session=True)
    assert done.returncode == 0
    deadline = time.monotonic() + 10
    while "sleep" not in _names(marked_processes("sandbox-leftover-test")):  # it may be forked and not yet exec'd
        assert time.monotonic() < deadline, "the background sleep ended with bwrap"
        time.sleep(0.01)
    assert stop_tree(None, marker="sandbox-leftover-test", grace=0.5).survivors == ()
