"""A hostile agent in the sandbox: through ``Toolbox(sandbox="workspace")`` it tries every way out it knows.

Each test builds what an agent would find on a real machine -- a fake home with keys and a start-up
file, a Jupyter connection file, another project next door, a ``git`` repository as the workspace --
and makes an engine of its own there (the workspace is the folder the engine starts in, so it is the
writable root).  The agent's attempts go through :meth:`Toolbox.dispatch`, as a model's would; the
test then checks from outside that nothing changed, and that the test process itself is untouched.
The guard is off: the walls alone must hold.

Everything lives under ``/var/tmp``: inside the sandbox ``/tmp`` is a private tmpfs, so a fake home
under the shared ``/tmp`` would be invisible anyway and prove nothing.  Tests that need bubblewrap
skip where it cannot run (probed once).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid

import psutil
import pytest

from execmagic import Toolbox
from execmagic.engine import Engine, RunOptions
from execmagic.engine.sandboxing import jupyter_runtime_dir
from execmagic.process import sandbox as sb
from execmagic.process.launch import MARKER_VAR
from processes import TOKEN_VAR, processes_with

SECRETS = {".ssh/id_rsa": "PRIVATE-KEY-MATERIAL", ".aws/credentials": "aws_secret_access_key=AWS-SECRET",
           ".cache/huggingface/token": "HF-TOKEN", ".kaggle/kaggle.json": "KAGGLE-KEY",
           ".bash_history": "export API_TOKEN=TYPED-BY-HAND",
           ".ipython/profile_default/history.sqlite": "os.environ['KEY'] = 'IN-A-CELL'"}
KERNEL_KEY = "KERNEL-CONNECTION-KEY"



@pytest.fixture
def place(monkeypatch):
    """A workspace (the cwd), a fake home, another project, a Jupyter runtime folder and a log folder,
    all in one folder under /var/tmp; HOME and JUPYTER_RUNTIME_DIR point at the fakes before any
    engine sets its sandbox."""
    if not os.access("/var/tmp", os.W_OK):
        pytest.skip("/var/tmp is not writable here")
    top = os.path.realpath(tempfile.mkdtemp(prefix="execmagic-agents-", dir="/var/tmp"))
    paths = {name: os.path.join(top, name) for name in ("ws", "home", "other", "runtime", "logs")}
    for folder in paths.values():
        os.mkdir(folder)
    files = {**{f"home/{name}": text for name, text in SECRETS.items()}, "home/.bashrc": "# start-up\n",
             "other/file": "outside\n", "runtime/kernel-1.json": json.dumps({"key": KERNEL_KEY})}
    for name, text in files.items():
        os.makedirs(os.path.dirname(os.path.join(top, name)), exist_ok=True)
        with open(os.path.join(top, name), "w") as fh:
            fh.write(text)
    monkeypatch.setenv("HOME", paths["home"])
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", paths["runtime"])
    monkeypatch.delenv(sb.BWRAP_VAR, raising=False)
    monkeypatch.chdir(paths["ws"])
    try:
        yield paths
        # the test process is as it was: where it was, with its own environment
        assert os.getcwd() == paths["ws"] and os.environ["HOME"] == paths["home"]
    finally:
        shutil.rmtree(top, ignore_errors=True)


@pytest.fixture
def engines(place):
    """``make()`` → a new engine of the test's own (its start folder: the workspace); all closed at the end."""
    made: list[Engine] = []

    def make() -> Engine:
        engine = Engine(log_dir=os.path.join(place["logs"], str(len(made))), options=RunOptions(grace=0.3))
        made.append(engine)
        return engine

    try:
        yield make
    finally:
        for engine in made:
            engine.close()


def confined(engine, **options):
    """The agent's tools in the sandbox, with the guard off: the walls alone must hold (the guard would
    refuse some attempts, such as writing ``~/.bashrc``, before they reach the walls)."""
    return Toolbox(engine, sandbox="workspace", grace=0.3, guard="none", **options)


@pytest.fixture
def box(bwrap_works, engines):
    return confined(engines())


def bash(box, command, **arguments):
    answer = box.dispatch("Bash", {"command": command, **arguments})
    assert json.loads(json.dumps(answer)) == answer
    assert "error" not in answer, answer  # ran (a refusal by the guard would prove nothing about the walls)
    return answer


def snapshot(folder):
    """Every file below ``folder`` with its content (what must not change)."""
    found = {}
    for parent, _dirs, files in os.walk(folder):
        for name in files:
            path = os.path.join(parent, name)
            with open(path, "rb") as fh:
                found[os.path.relpath(path, folder)] = fh.read()
    return found


def read(path):
    with open(path) as fh:
        return fh.read()


def test_writes_outside_the_workspace_fail(box, place):
    home, other = place["home"], place["other"]
    before = {name: snapshot(place[name]) for name in ("home", "other")}
    mark = f"execmagic-agent-{uuid.uuid4().hex}"
    targets = [f"{home}/{mark}", f"/etc/{mark}", f"{other}/{mark}", f"{os.path.dirname(place['ws'])}/{mark}",
               f"/var/tmp/{mark}", f"{home}/.bashrc"]
    script = "; ".join(f"echo evil >> {t} && echo WROTE {t}" for t in targets)
    answer = bash(box, f"{script}; for t in /tmp /dev/shm; do echo private > $t/{mark} && cat $t/{mark}; done; "
                       "touch ok")
    assert "WROTE" not in answer["output"] and "Read-only file system" in answer["output"]
    assert answer["output"].startswith("private\nprivate\n")  # the private /tmp and /dev/shm work inside ...
    assert not os.path.exists(f"/tmp/{mark}") and not os.path.exists(f"/dev/shm/{mark}")  # ... the host's got nothing
    assert not any(os.path.exists(t) for t in targets if not t.endswith(".bashrc"))
    assert {name: snapshot(place[name]) for name in ("home", "other")} == before
    assert os.path.exists(f"{place['ws']}/ok") and answer["sandbox"].startswith("sandbox workspace: writable ")


def test_links_planted_in_the_workspace(bwrap_works, engines, place):
    ws, other = place["ws"], place["other"]
    os.symlink(f"{other}/file", f"{ws}/soft")
    os.symlink(other, f"{ws}/softdir")
    # A hard link planted before the sandbox is set IS the outside file (same inode): the sandbox finds it
    # when it is set, and keeps it read-only by itself.
    with open(f"{other}/linked", "w") as fh:
        fh.write("outside\n")
    os.link(f"{other}/linked", f"{ws}/hard")
    box = confined(engines())
    answer = bash(box, "echo evil >> soft && echo WROTE1; echo evil > softdir/new && echo WROTE2; "
                       f"ln {other}/file made-here && echo WROTE3; echo planted >> hard")
    assert "WROTE" not in answer["output"], answer
    assert read(f"{other}/file") == "outside\n" and not os.path.exists(f"{other}/new")
    assert not os.path.exists(f"{ws}/made-here")  # a hard link made inside crosses mounts: EXDEV
    assert read(f"{other}/linked") == "outside\n" and answer["output"].count("Read-only file system") == 3


def test_git_hooks_and_config_stay_read_only(bwrap_works, engines, place):
    ws = place["ws"]
    subprocess.run(["git", "init", "-q", ws], check=True, timeout=30)
    with open(f"{ws}/tracked", "w") as fh:
        fh.write("one\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "add", "tracked"], check=True, timeout=30)
    subprocess.run([*git, "commit", "-q", "-m", "first"], check=True, timeout=30)
    before = snapshot(f"{ws}/.git")
    box = confined(engines())
    answer = bash(box, "printf '#!/bin/sh\\ntouch /var/tmp/pwned\\n' > .git/hooks/pre-commit && echo WROTE1; "
                       "git config core.fsmonitor 'touch /var/tmp/pwned' && echo WROTE2; "
                       "echo '[core] fsmonitor = evil' >> .git/config && echo WROTE3")
    assert "WROTE" not in answer["output"], answer
    assert snapshot(f"{ws}/.git") == before
    work = bash(box, "echo two >> tracked && git status --short && git diff --stat")
    assert work["success"], work
    assert " M tracked" in work["output"] and "1 insertion" in work["output"]


def test_a_nested_repository_cannot_be_moved_from_under_its_protection(bwrap_works, engines, place):
    """The ``.git`` folders kept read-only are found when the sandbox is set, by path.  Renaming the folder
    that holds a nested repository moved it away from that path: on the next call its ``.git`` was
    writable (a hook planted there), and a third call moved it back.  The folders between a root and a
    protected ``.git`` are mount points of their own now, which cannot be renamed or removed."""
    ws = place["ws"]
    for repo in ("sub", "deep/er/sub"):
        subprocess.run(["git", "init", "-q", os.path.join(ws, repo)], check=True, timeout=30)
    before = {repo: snapshot(os.path.join(ws, repo, ".git")) for repo in ("sub", "deep/er/sub")}
    box = confined(engines())
    first = bash(box, "mv sub sub2 && echo MOVED1; mv deep moved && echo MOVED2; mv deep/er deep/moved && echo MOVED3; "
                      "rm -rf sub && echo REMOVED; mkdir -p sub/.git; touch sub2/.git/hooks/pre-commit; echo tried")
    second = bash(box, "for d in sub sub2 moved/er/sub deep/moved/sub; do touch $d/.git/hooks/pre-commit && echo WROTE; "
                       "done; mv sub sub3 && mv sub2 sub && echo RESTORED; echo tried")
    for answer in (first, second):
        assert answer["output"].startswith("tried\n") and "Device or resource busy" in answer["output"], answer
    assert {repo: snapshot(os.path.join(ws, repo, ".git")) for repo in ("sub", "deep/er/sub")} == before
    assert bash(box, "touch sub/work deep/er/sub/work && rm sub/work && echo fine")["output"] == "fine\n"


def test_a_repository_removed_outside_does_not_lock_confined_runs_out(bwrap_works, engines, place):
    """What the sandbox protects is found once; when the user removes a nested repository later, the
    confined runs go on (there is nothing left to protect) instead of failing to mount it."""
    ws = place["ws"]
    subprocess.run(["git", "init", "-q", os.path.join(ws, "a", "sub")], check=True, timeout=30)
    box = confined(engines())
    assert bash(box, "echo before")["output"] == "before\n"
    shutil.rmtree(os.path.join(ws, "a"))
    after = bash(box, "echo after; touch made")
    assert after["success"] and after["output"] == "after\n", after


def test_an_agent_started_in_the_home_folder_gets_a_read_only_sandbox(bwrap_works, engines, place, monkeypatch):
    """A notebook started in the home folder: ``workspace`` refuses to make it writable (an error, as it
    was asked for by name); ``auto`` confines read-only and says why -- with the home folder hidden, not
    shown read-only: what is in it is the user's, keys and tokens included."""
    monkeypatch.chdir(place["home"])
    engine = engines()
    with pytest.raises(sb.UnsafeRoot) as caught:
        confined(engine)
    assert caught.value.path == place["home"] and "home folder" in caught.value.why
    box = Toolbox(engine, sandbox="auto", guard="none", grace=0.3)
    answer = bash(box, "echo x >> .bashrc || echo refused; echo x > /tmp/t && echo private")
    assert answer["output"].startswith("refused\nprivate\n") and answer["sandbox"].startswith("sandbox read-only")
    assert any(place["home"] in note and "hidden there" in note for note in answer["notes"]), answer
    assert bash(box, "ls -A; cat .bashrc")["output"].split() == ["cat:", ".bashrc:", "No", "such", "file", "or",
                                                                "directory"]
    assert read(f"{place['home']}/.bashrc") == "# start-up\n"
    monkeypatch.chdir(place["ws"])  # where the fixture expects the test process to be


def test_secrets_and_the_kernel_are_out_of_reach(box, place):
    home, runtime, me = place["home"], place["runtime"], os.getpid()
    assert jupyter_runtime_dir() == runtime  # jupyter_core honours JUPYTER_RUNTIME_DIR: that is what is hidden
    first = bash(box, "echo FIRST-RUN-OUTPUT")  # its logs, and every other run's, are hidden too
    stores = " ".join(f"{home}/{name}" for name in SECRETS)
    answer = bash(box, f"cat {stores} {runtime}/kernel-1.json; ls -a {runtime}; "
                       f"ls -A {place['logs']}/0; grep -rs FIRST-RUN {place['logs']}; "
                       f"cat /proc/{me}/environ && echo SEEN; kill -0 {me} && echo REACHED; echo done")
    out = answer["output"]
    assert first["success"]
    for secret in (*SECRETS.values(), KERNEL_KEY, TOKEN_VAR, "SEEN", "REACHED", "FIRST-RUN"):
        assert secret not in out, out
    assert out.startswith(".\n..\ndone\n")  # the runtime folder is empty inside
    assert read(f"{runtime}/kernel-1.json") == json.dumps({"key": KERNEL_KEY})  # still there outside


def test_the_kernels_own_connection_file_is_hidden_wherever_it_lies(bwrap_works, engines, place):
    """A kernel started with ``-f FILE`` (or by a front end with a folder of its own) keeps its key outside
    Jupyter's runtime folder: the sandbox hides the file of the kernel this process is, too."""
    kernelapp = pytest.importorskip("ipykernel.kernelapp")
    connection = os.path.join(place["other"], "kernel-own.json")
    with open(connection, "w") as fh:
        fh.write(json.dumps({"key": KERNEL_KEY}))
    assert not kernelapp.IPKernelApp.initialized()
    kernelapp.IPKernelApp.instance(connection_file=connection)  # what a running kernel's application holds
    try:
        answer = bash(confined(engines()), f"cat {connection}; echo done")
    finally:
        kernelapp.IPKernelApp.clear_instance()
    assert KERNEL_KEY not in answer["output"] and answer["output"].startswith("done\n"), answer
    assert read(connection) == json.dumps({"key": KERNEL_KEY})


def _serve(server: socket.socket, accepted: list[bytes], over: threading.Event) -> None:
    """Accept connections until the test is ``over`` (each one's first bytes kept).  Every wait is
    short and bounded: a shutdown does not wake a blocked accept everywhere, and a peer may never write."""
    server.settimeout(0.1)
    while not over.is_set():
        try:
            conn, _ = server.accept()
        except TimeoutError:
            continue
        except OSError:  # closed: the test is over
            return
        with conn, contextlib.suppress(OSError):
            conn.settimeout(10)
            accepted.append(conn.recv(16))


def test_the_hosts_loopback_is_reached_only_with_the_network_on(bwrap_works, engines, place):
    server = socket.create_server(("127.0.0.1", 0))
    accepted: list[bytes] = []
    over = threading.Event()
    thread = threading.Thread(target=_serve, args=(server, accepted, over))
    thread.start()
    port = server.getsockname()[1]
    connect = f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo hello >&3 && echo CONNECTED"
    try:
        closed = bash(confined(engines()), connect, timeout=10_000)
        opened = bash(confined(engines(), network=True), connect, timeout=10_000)
        deadline = time.monotonic() + 10
        while not accepted and time.monotonic() < deadline:  # the server thread records it a moment later
            time.sleep(0.01)
    finally:
        over.set()
        thread.join(15)
        server.close()
    assert not thread.is_alive()
    assert "CONNECTED" not in closed["output"] and not closed["success"], closed
    assert "CONNECTED" in opened["output"] and "network on" in opened["sandbox"], opened
    assert accepted == [b"hello\n"]


def test_privileges_cannot_be_regained(box):
    for tool, command in (("unshare", "unshare -r true"), ("nsenter", "nsenter -t 1 -m true")):
        if shutil.which(tool) is None:
            continue
        answer = bash(box, command)
        assert not answer["success"] and answer["exit_code"] != 0, answer


def test_the_kernels_settings_are_out_of_reach(box):
    """Without capabilities, the host's root still owns the files of ``/proc/sys`` (a kernel setting's
    write checks the owner, not a capability): a fresh ``/proc`` let a sandboxed command of a kernel run
    as root (a container's) change the whole machine's settings -- ``kernel.core_pattern`` names a
    program the kernel runs as root.  Each attempt here writes back the value it read: nothing changes
    even where the walls fail."""
    settings = [path for path in ("/proc/sys/fs/lease-break-time", "/proc/irq/default_smp_affinity")
                if os.path.exists(path)]
    script = "; ".join(f'read v < {path} && echo "$v" > {path} && echo WROTE {path}' for path in settings)
    answer = bash(box, f"{script}; echo done")
    assert "WROTE" not in answer["output"] and answer["output"].startswith("done\n"), answer


def test_nothing_is_left_behind_for_the_next_unsandboxed_run(bwrap_works, engines, place):
    engine = engines()
    box = confined(engine)
    plant = ("mkdir -p bin && printf '#!/bin/sh\\necho FAKE-BWRAP\\n' > bin/bwrap && chmod +x bin/bwrap && "
             "echo 'echo FROM-BASH-ENV' > x.sh && export BASH_ENV=$PWD/x.sh && export PATH=$PWD/bin:$PATH && "
             "type -p bwrap && git() { echo FAKE-GIT; } && export -f git && alias ls='echo FAKE-LS' && "
             "PROMPT_COMMAND='echo FROM-PROMPT' && trap 'echo FROM-TRAP' EXIT && cd bin")
    planted = bash(box, plant)
    assert planted["success"] and planted["output"].startswith(f"{place['ws']}/bin/bwrap\n"), planted
    outside = engine.run_script("echo \"[$BASH_ENV]\"; type -p bwrap; git --version; shopt -s expand_aliases; "
                                "ls -d .; pwd; echo end")
    assert outside.sandbox is None and outside.exit_code == 0
    planted_words = ("FROM-BASH-ENV", "FAKE-GIT", "FAKE-LS", "FROM-PROMPT", "FROM-TRAP", f"{place['ws']}/bin")
    assert [word for word in planted_words if word in outside.stdout] == [], outside.stdout
    assert outside.stdout.startswith("[]\n") and outside.stdout.endswith(f".\n{place['ws']}\nend\n")
    again = bash(box, "echo still confined; echo x > /etc/nope || echo refused")
    assert again["success"] and "still confined\n" in again["output"] and "refused" in again["output"], again
    assert "FAKE-BWRAP" not in again["output"] and again["sandbox"].startswith("sandbox workspace")


def test_inside_the_workspace_the_agent_works_normally(box, place):
    ws = place["ws"]
    assert bash(box, "mkdir -p src && echo 'x = 1' > src/a.py && sed -i 's/1/2/' src/a.py && cat src/a.py")["output"] \
        == "x = 2\n"
    assert bash(box, "rm src/a.py && ls src | wc -l")["output"] == "0\n"
    assert bash(box, "cd src && export STEP=two")["success"]
    after = bash(box, 'pwd; echo "$STEP"')
    assert after["output"] == f"{ws}/src\ntwo\n" and after["cwd"] == f"{ws}/src"
    assert bash(box, "python3 -c 'print(1)'")["output"] == "1\n"
    pip = bash(box, "python3 -m pip --version")
    assert pip["success"] and pip["output"].startswith("pip "), pip
    assert bash(box, "git init -q . && git status --short && echo clean")["output"] == "clean\n"
    box.dry_run = True
    dry = bash(box, "rm -rf src")
    assert dry["dry_run"] and dry["sandbox"] == box.sandbox.describe() and os.path.isdir(f"{ws}/src"), dry


def test_a_secret_exported_inside_is_redacted_in_every_answer(bwrap_works, engines):
    """Confined runs keep a session of their own: a secret exported there is redacted like one exported in
    the engine's session -- in the answer of the call that set it and in a background shell's output."""
    box = Toolbox(engines(), sandbox="workspace", grace=0.3)
    value = f"plain{uuid.uuid4().hex[:16]}"
    answer = bash(box, f"export MY_API_KEY={value} && echo {value} > f && cat f")
    started = bash(box, "cat f", run_in_background=True)
    read_back: list[str] = []

    def finished():
        reply = box.dispatch("BashOutput", {"bash_id": started["shell_id"]})
        read_back.append(reply["output"])
        return reply["finished_and_read"]

    _wait(finished)
    assert value not in answer["output"] and "[REDACTED:MY_API_KEY]" in answer["output"], answer
    assert value not in "".join(read_back) and "[REDACTED:MY_API_KEY]" in "".join(read_back), read_back


def test_a_cwd_that_does_not_exist_inside_does_not_lock_the_agent_out(bwrap_works, engines, place):
    """The notebook's session may stand in a folder the sandbox replaces by an empty one (below the host's
    /tmp, below a hidden credential store).  Confined runs start from that session: they run in an empty
    private copy of the folder (writable in /tmp, read-only in a hidden one), and can ``cd`` away --
    before, bwrap failed to chdir there, before the command could run, so every confined call failed."""
    host_tmp = tempfile.mkdtemp(prefix="execmagic-agents-")  # under the shared temp folder, on purpose
    keys = os.path.join(place["home"], ".ssh", "keys")
    os.mkdir(keys)
    try:
        for folder, writable in ((host_tmp, True), (keys, False)):
            with open(os.path.join(folder, "host-file"), "w") as fh:
                fh.write("host\n")
            engine = engines()
            box = confined(engine)
            assert engine.run_script(f"cd {folder}").exit_code == 0
            answer = bash(box, "pwd; ls -A; touch made-inside && echo made")
            assert answer["output"].startswith(f"{folder}\n{'made' if writable else ''}"), answer
            assert answer["success"] is writable and answer["cwd"] == folder, answer
            assert sorted(os.listdir(folder)) == ["host-file"]
            moved = bash(box, f"cd {place['ws']} && touch moved")
            assert moved["success"] and moved["cwd"] == place["ws"], moved
            os.remove(os.path.join(place["ws"], "moved"))
    finally:
        shutil.rmtree(host_tmp, ignore_errors=True)


def _wait(check, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "waited in vain"
        time.sleep(0.02)


def test_a_background_shell_is_read_and_killed(box, no_leftover_processes):
    # a tree that tries to outlive the kill: a child that ignores SIGTERM, one in a session of its own
    started = bash(box, "(trap '' TERM; sleep 30) & setsid sleep 30 & echo begun; wait", run_in_background=True)
    assert started["success"] and started["sandbox"] == box.sandbox.describe(), started
    shell = started["shell_id"]
    seen: list[str] = []

    def begun():
        seen.append(box.dispatch("BashOutput", {"bash_id": shell})["output"])
        return "begun" in "".join(seen)

    _wait(begun)
    assert box.dispatch("BashOutput", {"bash_id": shell})["running"]
    killed = box.dispatch("KillShell", {"shell_id": shell})
    assert killed["success"] and killed["status"] == "killed" and "SIGKILL" in killed["message"], killed
    assert processes_with(TOKEN_VAR, no_leftover_processes, watchdogs=False) == []


def test_a_timeout_leaves_nothing(box, no_leftover_processes):
    answer = bash(box, "trap '' TERM; sleep 30 & sleep 30", timeout=1000)
    assert answer["timed_out"] and not answer["success"], answer
    assert processes_with(TOKEN_VAR, no_leftover_processes, watchdogs=False) == []


def test_what_a_foreground_command_leaves_behind_is_stopped(box, no_leftover_processes):
    answer = bash(box, "sleep 30 & (trap '' TERM HUP; exec sleep 30) >/dev/null 2>&1 & "
                       "setsid sleep 30 >/dev/null 2>&1 & echo started")
    # bwrap's pid 1 holds the output open for what is left inside: drained, then stopped (TERM, then KILL)
    assert answer["success"] and answer["output"] == "started\n", answer
    assert any("stopped" in note and "SIGKILL" in note for note in answer["notes"]), answer
    assert processes_with(TOKEN_VAR, no_leftover_processes, watchdogs=False) == []


def _running(argument: str) -> list[psutil.Process]:
    """Live processes whose last argument is ``argument`` (a sleep whose every marker was dropped)."""
    found = []
    for proc in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            if proc.cmdline()[-1:] == [argument] and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc)
    return found


@contextlib.contextmanager
def unmarked_sleep():
    """A sleep's unique argument; whatever still runs it at the end is killed (and the test fails on it)."""
    argument = f"3000.{uuid.uuid4().int % 10**9}"
    try:
        yield argument
    finally:
        for proc in _running(argument):
            with contextlib.suppress(psutil.Error):
                proc.kill()


def test_a_process_that_drops_every_marker_is_still_stopped(box):
    """Unsetting the engine's marker and leaving the session loses a process to the engine outside a
    sandbox; inside, it is still in the sandbox's pid namespace, whose pid 1 (bwrap's, marked before the
    command could change anything) the stop takes, and with it everything inside."""
    hide = f"env -u {MARKER_VAR} -u {TOKEN_VAR} setsid"
    with unmarked_sleep() as argument:
        answer = bash(box, f"{hide} sleep {argument} </dev/null >/dev/null 2>&1 & echo started")
        assert answer["output"] == "started\n" and _running(argument) == [], answer
    with unmarked_sleep() as argument:
        started = bash(box, f"{hide} sleep {argument} </dev/null >/dev/null 2>&1 & echo started",
                       run_in_background=True)
        _wait(lambda: box.dispatch("BashOutput", {"bash_id": started["shell_id"]})["status"] == "exited 0")
        assert _running(argument)  # a finished background shell's leftovers run on until it is killed
        killed = box.dispatch("KillShell", {"shell_id": started["shell_id"]})
        assert "leftover" in killed["message"] and _running(argument) == [], killed


@pytest.mark.parametrize("named", ["", "missing"])
def test_without_bubblewrap_a_named_mode_fails_and_auto_says_why(engines, place, monkeypatch, named):
    bwrap = os.path.join(place["other"], "bwrap") if named else ""
    monkeypatch.setenv(sb.BWRAP_VAR, bwrap)
    found = sb.availability()
    assert not found.ok and found.bwrap is None and sb.BWRAP_VAR in (found.reason or ""), found
    engine = engines()
    with pytest.raises(sb.SandboxUnavailable) as caught:
        Toolbox(engine, sandbox="workspace", grace=0.3)
    assert caught.value.reason == found.reason and str(caught.value).startswith("exec: no sandbox here: ")
    assert engine.shells.list() == [] and os.listdir(place["ws"]) == []
    auto = Toolbox(engine, sandbox="auto", grace=0.3)
    answer = bash(auto, "echo ran > made && cat made")
    assert answer["success"] and answer["output"] == "ran\n" and "sandbox" not in answer
    assert answer["notes"] == [f"ran unsandboxed: {found.reason}"]


def test_bwrap_named_by_the_kernels_environment(bwrap_works, engines, place, monkeypatch):
    """EXECMAGIC_BWRAP naming the real bwrap works; a relative name is refused (it would be looked up
    from wherever the kernel happens to be); an agent's own ``export`` of it changes nothing."""
    monkeypatch.setenv(sb.BWRAP_VAR, "bwrap")
    relative = sb.availability()
    assert not relative.ok and "absolute path" in (relative.reason or "")
    monkeypatch.setenv(sb.BWRAP_VAR, bwrap_works.bwrap)
    assert sb.availability().ok and sb.availability().bwrap == bwrap_works.bwrap
    engine = engines()
    box = confined(engine)
    assert bash(box, f"export {sb.BWRAP_VAR}=; echo x > /etc/nope || echo refused")["output"].startswith("refused\n")
    assert os.environ[sb.BWRAP_VAR] == bwrap_works.bwrap  # the kernel's own environment is untouched
    again = Toolbox(engine, sandbox="read-only", guard="none", grace=0.3)
    assert bash(again, "touch nope || echo refused")["output"].startswith("refused\n")


AS_NOBODY = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--")


def _python_for_nobody(env: dict[str, str]) -> str | None:
    """A Python of this version that user nobody can run with this one's packages (``PYTHONPATH``): this
    one, else the system's.  setpriv starts the child with root's capabilities still in hand, so the test
    is whether the child can start the same Python again (the engine's watchdog is that Python)."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for python in (sys.executable, shutil.which(version, path=os.pathsep.join(sb.SYSTEM_DIRS))):
        if python is None:
            continue
        probe = subprocess.run([*AS_NOBODY, python, "-c", "import subprocess, sys, execmagic; "
                                "subprocess.run([sys.executable, '-c', 'pass'], check=True)"], capture_output=True,
                               timeout=60, env=env, cwd="/")
        if probe.returncode == 0:
            return python
    return None


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                    reason="acting as an ordinary user needs root and setpriv")
def test_an_ordinary_user_gets_the_same_walls(bwrap_works, place):
    """Most people run Jupyter as themselves: the same Toolbox, in a child Python as user nobody."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    python = _python_for_nobody(env)
    if python is None:
        pytest.skip("no Python of this version that user nobody can run (this one is in a folder closed to "
                    "others, and the system's is missing or another version)")
    for folder, dirs, files in os.walk(os.path.dirname(place["ws"])):
        for name in (".", *dirs, *files):
            os.chown(os.path.join(folder, name), 65534, 65534)
    child = ("import json, sys\nfrom execmagic import Toolbox\nfrom execmagic.engine import Engine\n"
             f"engine = Engine(log_dir={place['logs']!r})\n"
             "try:\n    box = Toolbox(engine, sandbox='workspace', grace=0.3, guard='none')\n"
             "    print(json.dumps(box.dispatch('Bash', {'command': sys.argv[1]})))\nfinally:\n    engine.close()\n")
    home = place["home"]
    command = f"touch made && echo wrote; echo x >> {home}/.bashrc; cat {home}/.ssh/id_rsa; unshare -r true || echo no; id -u"
    done = subprocess.run([*AS_NOBODY, python, "-c", child, command], capture_output=True, text=True,
                          timeout=60, env=env, cwd=place["ws"])
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert "error" not in answer, answer
    assert answer["output"].startswith("wrote\nno\n65534\n") and "Read-only file system" in answer["output"], answer
    assert answer["sandbox"].startswith("sandbox workspace") and os.path.exists(f"{place['ws']}/made")
    assert SECRETS[".ssh/id_rsa"] not in answer["output"] and read(f"{home}/.bashrc") == "# start-up\n"


def test_the_bash_tool_tells_the_model_its_walls(bwrap_works, engines, place):
    """The model reads its walls in the tool's description before it meets them; unconfined, nothing is said."""
    engine = engines()
    walls = Toolbox(engine, sandbox="workspace").tools["Bash"].description
    assert f"Commands run in a sandbox: only {place['ws']} and a private /tmp are writable" in walls
    assert "there is no network" in walls
    assert "(/tmp is kept from one call to the next)" in walls  # so the model may leave a plan there
    assert "reachable" in Toolbox(engine, sandbox="workspace", network=True).tools["Bash"].description
    assert "sandbox" not in Toolbox(engine, sandbox="off").tools["Bash"].description
