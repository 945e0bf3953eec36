"""What the sandbox hides by allow-list: the home folder, the host's ``/run`` and ``/var/lib``, files only root
may read -- with real bwrap, for stores and sockets made before the sandbox is set and after it.

A list of known stores, or a scan when the sandbox is set, misses what it does not name and what appears
later; each test plants both kinds.  The fake home lies under ``/var/tmp`` (inside, ``/tmp`` is private:
a home there would be invisible anyway and prove nothing).  Tests that need bwrap skip when it cannot
run here; tests that plant sockets in ``/run`` or ``/var/lib`` need to be able to write there (root).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile

import psutil
import pytest

from execmagic.process import sandbox as sb
from execmagic.process import sandbox_walls as walls
from waiting import wait_until

READ_ONLY = "Read-only file system"
#: The stores an attacker read through the old list, each with a secret of its own (made before the sandbox).
STORES = (".config/git/credentials", ".claude/.credentials.json", ".codex/auth.json", ".gemini/oauth_creds.json",
          ".config/github-copilot/hosts.json", ".cache/huggingface/stored_tokens", ".config/pip/pip.conf",
          ".config/containers/auth.json", ".gitconfig", ".jupyter/jupyter_server_config.json", ".bash_history",
          ".psql_history", ".ssh/id_ed25519")
#: Stores made after the sandbox was set: the old scan never saw them.
LATER = (".kaggle/kaggle.json", ".cache/huggingface/token", ".newtool/credentials", ".config/newtool/token")
#: What the home folder shows: secret-free settings and caches tools read, and a user's addition.
SHOWN = {".config/git/ignore": "*.pyc\n", ".cache/huggingface/hub/models--x/config.json": "{}\n",
         ".config/tool/settings.toml": "color = 1\n"}


def write(path, text, mode=0o644):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        fh.write(text)
    os.chmod(path, mode)


@pytest.fixture
def place(bwrap_works):
    """A fake home holding the stores and a project (the workspace, inside the home), and another folder."""
    parent = next((p for p in ("/var/tmp", os.path.expanduser("~")) if os.access(p, os.W_OK)), None)
    if parent is None:
        pytest.skip("no writable folder outside the shared temp folder")
    top = os.path.realpath(tempfile.mkdtemp(prefix="execmagic-walls-test-", dir=parent))
    home = f"{top}/home"
    paths = {"top": top, "home": home, "ws": f"{home}/project", "other": f"{top}/other"}
    os.makedirs(paths["ws"])
    os.mkdir(paths["other"])
    for name in STORES:
        write(f"{home}/{name}", f"SECRET {name}\n", 0o600)
    for name, text in SHOWN.items():
        write(f"{home}/{name}", text)
    try:
        yield paths
    finally:
        shutil.rmtree(top, ignore_errors=True)


def plan(place, **fields):
    spec = sb.SandboxSpec(**{"mode": "workspace", "writable_roots": (place["ws"],), **fields})
    return sb.plan_sandbox(spec, home=place["home"])


def run(sandbox, script, cwd):
    env = sandbox.environment({**os.environ, "LC_ALL": "C"})
    return subprocess.run(sandbox.wrap(["sh", "-c", script], cwd), capture_output=True, text=True, timeout=30,
                          env=env, stdin=subprocess.DEVNULL)


def test_the_home_folder_shows_only_what_is_allowed(place):
    home, ws = place["home"], place["ws"]
    box = plan(place, visible=(f"{home}/.config/tool",))
    for name in LATER:
        write(f"{home}/{name}", f"SECRET {name}\n", 0o600)
    # every file the home folder shows, and every secret that leaks: none may
    done = run(box, f"cd {home} && find . -type f | sort; grep -rs SECRET . || echo no-secret", ws)
    assert done.stdout.split() == [f"./{name}" for name in sorted(SHOWN)] + ["no-secret"], done.stdout
    assert run(box, f"cat {home}/.config/tool/settings.toml", ws).stdout == "color = 1\n"
    # the workspace in it stays writable; the home folder itself is read-only (nothing left there vanishes)
    done = run(box, f"echo made > {ws}/f && cat {ws}/f; echo x > {home}/new; mkdir {home}/.ssh2", ws)
    assert done.stdout == "made\n" and done.stderr.count(READ_ONLY) == 2, done.stderr
    assert box.visibility.startswith("hidden: the home folder but the workspace and ~/.cache/huggingface/hub, "
                                "~/.config/git/ignore, ~/.config/tool (read-only); the host's /run"), box.visibility


def test_a_store_inside_a_shown_folder_stays_hidden(place):
    """A user who shows a whole folder (``~/.config``) still does not show the credential stores in it."""
    home, ws = place["home"], place["ws"]
    write(f"{home}/.config/gcloud/credentials.db", "SECRET gcloud\n", 0o600)
    box = plan(place, visible=(f"{home}/.config",))
    done = run(box, f"cat {home}/.config/tool/settings.toml; grep -rs SECRET {home} || echo no-secret", ws)
    assert done.stdout == "color = 1\nno-secret\n", done.stdout


def test_paths_to_show_are_checked(place):
    home = place["home"]
    for bad, why in (("relative", "absolute"), (home, "whole home folder"), (os.path.dirname(home), "whole home"),
                     ("/", "whole home")):
        with pytest.raises(sb.SandboxProblem) as caught:
            plan(place, visible=(bad,))
        assert caught.value.path == bad and why in caught.value.why
    box = plan(place, visible=(f"{home}/not-there",))  # a setting naming what this machine lacks: left out
    assert run(box, "echo ok", place["ws"]).stdout == "ok\n" and "not-there" not in box.visibility


@pytest.mark.parametrize("home", ["/", "/usr", "/nonexistent-home"])
def test_a_home_folder_that_cannot_be_hidden_leaves_the_system_working(place, home):
    """A service user's home may be ``/`` or a system folder, and uid 65534's is ``/nonexistent``: hiding
    those would hide the system (or fail to make a mount point), so their known stores are hidden by name."""
    box = sb.plan_sandbox(sb.SandboxSpec(mode="workspace", writable_roots=(place["ws"],)), home=home)
    assert run(box, "ls /usr/bin/env && echo ok", place["ws"]).stdout.endswith("ok\n")
    assert box.visibility.startswith("hidden: the home folder's known credential stores; the host's /run"), box.visibility


def test_files_only_root_may_read_show_empty(place, monkeypatch):
    """Found when the sandbox is set, in the folders named (the system's ``/etc`` by default): a file others
    may not read, a folder they may not enter; symlinks and what others may read stay as they are."""
    etc = f"{place['top']}/etc"
    write(f"{etc}/passwd", "root:x:0:0\n")
    write(f"{etc}/shadow", "root:$6$HASH\n", 0o600)
    write(f"{etc}/ssl/private/key.pem", "PRIVATE KEY\n", 0o600)
    write(f"{etc}/ssh/ssh_host_ed25519_key", "HOST KEY\n", 0o600)
    os.chmod(f"{etc}/ssl/private", 0o700)
    os.symlink("shadow", f"{etc}/shadow-link")
    monkeypatch.setattr(walls, "ROOT_ONLY_FOLDERS", (etc,))
    box = plan(place)
    done = run(box, f"cat {etc}/passwd; cat {etc}/shadow {etc}/shadow-link {etc}/ssh/ssh_host_ed25519_key; "
                    f"ls -A {etc}/ssl/private", place["ws"])
    assert done.stdout == "root:x:0:0\n", done.stdout
    assert box.visibility.endswith(f"3 files of {etc} only root may read"), box.visibility


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.isfile("/etc/shadow"), reason="a root kernel's /etc/shadow")
def test_etc_shadow_is_empty_for_a_root_kernel(place):
    box = plan(place)
    done = run(box, "cat /etc/shadow /etc/gshadow; echo end", place["ws"])
    assert done.stdout == "end\n" and "root:" not in done.stdout


#: Connects to each Unix socket named, says which it reached.
CONNECT = """
import socket, sys
for path in sys.argv[1:]:
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(path)
        print("reached", path)
    except OSError as exc:
        print("refused", path, exc.strerror)
"""
#: The workspace's own server and client, in one run: sockets made inside work.
OWN_SOCKETS = """
import os, socket
server = socket.socket(socket.AF_UNIX)
server.bind("own.sock")
server.listen(1)
client = socket.socket(socket.AF_UNIX)
client.connect("own.sock")
server.accept()[0].sendall(b"own socket works")
print(client.recv(64).decode())
os.unlink("own.sock")
"""


@contextlib.contextmanager
def listening(path):
    """A Unix socket listening at ``path`` (a connect succeeds without an accept: the backlog takes it)."""
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(path)
        os.chmod(path, 0o777)
        server.listen(4)
        yield path
    finally:
        server.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def host_folders():
    """Folders of host services a test may plant sockets in (root may; an ordinary user's runtime folder)."""
    candidates = ["/run", "/var/lib", f"/run/user/{os.getuid()}"]
    found = [p for p in candidates if os.path.isdir(p) and os.access(p, os.W_OK)]
    if not found:
        pytest.skip("no folder of /run or /var/lib is writable here (root plants the host's sockets)")
    return found


def test_host_sockets_are_out_of_reach_before_and_after_setup(place):
    ws = place["ws"]
    write(f"{ws}/connect.py", CONNECT)
    write(f"{ws}/own.py", OWN_SOCKETS)
    python = os.path.realpath(sys.executable)  # not a venv's link: the venv may be in the hidden home
    made = [tempfile.mkdtemp(prefix="execmagic-socket-test-", dir=folder) for folder in host_folders()]
    try:
        with contextlib.ExitStack() as stack:
            before = [stack.enter_context(listening(f"{folder}/before.sock")) for folder in made]
            box = plan(place)
            after = [stack.enter_context(listening(f"{folder}/after.sock")) for folder in made]
            sockets = [*before, *after]
            outside = subprocess.run([python, f"{ws}/connect.py", *sockets], capture_output=True, text=True,
                                     timeout=30)
            assert outside.stdout.count("reached") == len(sockets), outside  # the host's own processes reach them
            done = run(box, f"{python} connect.py {' '.join(sockets)}; {python} own.py", ws)
        assert "reached" not in done.stdout and done.stdout.count("refused") == len(sockets), done.stdout
        assert done.stdout.endswith("own socket works\n"), done.stderr
    finally:
        for folder in made:
            shutil.rmtree(folder, ignore_errors=True)


#: A server on a Unix socket of the workspace: answers one client, then ends.
SERVER = """
import socket
server = socket.socket(socket.AF_UNIX)
server.bind("served.sock")
server.listen(1)
conn = server.accept()[0]
conn.sendall(b"served across runs")
conn.close()
"""


def test_a_socket_the_workspace_serves_is_reached_from_another_run(place):
    """A program of one sandboxed run (a background shell's server) and a client in the next: both see the
    workspace, and a socket there is a file of it (the network namespaces apart do not matter)."""
    ws = place["ws"]
    write(f"{ws}/server.py", SERVER)
    write(f"{ws}/connect.py", CONNECT)
    python = os.path.realpath(sys.executable)
    box = plan(place)
    server = subprocess.Popen(box.wrap([python, "server.py"], ws), env=box.environment(dict(os.environ)),
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_until(lambda: os.path.exists(f"{ws}/served.sock") or server.poll() is not None, 10, "the server to listen")
        done = run(box, f"{python} -c \"import socket; s = socket.socket(socket.AF_UNIX); s.connect('served.sock');"
                        " print(s.recv(64).decode())\"", ws)
        assert done.stdout == "served across runs\n", (done.stderr, server.poll())
        assert server.wait(10) == 0
    finally:
        if server.poll() is None:  # bwrap and what it started inside, whose pid 1 outlives a killed bwrap
            for proc in [*psutil.Process(server.pid).children(recursive=True), psutil.Process(server.pid)]:
                with contextlib.suppress(psutil.Error):
                    proc.kill()
            server.wait(10)
        server.stderr.close()


def test_run_and_var_lib_are_the_sandboxs_own(place):
    """``/run`` is empty inside (with the network on: only the resolver's file, when it lies there);
    ``/var/lib`` shows only the package databases and user lookups; package tools still answer."""
    box = plan(place)
    assert [run(box, f"ls -A {folder}", place["ws"]).stdout for folder in ("/run", "/var/run")] == ["", ""]
    shown = set(run(box, "ls -A /var/lib", place["ws"]).stdout.split())
    assert shown <= {name.split("/")[0] for name in walls.VAR_LIB_SHOWN}, shown
    if shutil.which("dpkg-query") and os.path.isdir("/var/lib/dpkg"):
        assert run(box, "dpkg-query -W -f '${Status}' bash", place["ws"]).stdout == "install ok installed"
    online = plan(place, network=True)
    resolver = os.path.realpath("/etc/resolv.conf")
    if os.path.isfile(resolver):
        with open(resolver) as fh:
            assert run(online, "cat /etc/resolv.conf", place["ws"]).stdout == fh.read()


AS_NOBODY = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--")


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None or not os.path.isfile("/usr/bin/python3"),
                    reason="acting as an ordinary user needs root, setpriv and the system's Python")
def test_an_ordinary_users_sandbox_keeps_host_sockets_out_of_reach(place, bwrap_works):
    """A socket others may connect to (a docker group's, a database's) is what an ordinary user's agent would
    reach: planted by root in /run before and after setup, refused inside a sandbox bwrap makes as that user."""
    if subprocess.run([*AS_NOBODY, bwrap_works.bwrap, "--unshare-user", "--ro-bind", "/", "/", "true"],
                      capture_output=True, timeout=30).returncode != 0:
        pytest.skip("no unprivileged user namespaces here")
    ws = place["ws"]
    write(f"{ws}/connect.py", CONNECT)
    for folder, dirs, files in os.walk(place["top"]):
        for name in (".", *dirs, *files):
            os.chown(os.path.join(folder, name), 65534, 65534)
    made = tempfile.mkdtemp(prefix="execmagic-socket-test-", dir="/run")
    os.chmod(made, 0o755)
    connect = ["/usr/bin/python3", f"{ws}/connect.py", f"{made}/before.sock", f"{made}/after.sock"]
    try:
        with listening(f"{made}/before.sock"):
            box = plan(place)
            with listening(f"{made}/after.sock"):
                outside = subprocess.run([*AS_NOBODY, *connect], capture_output=True, text=True, timeout=30, cwd="/")
                done = subprocess.run([*AS_NOBODY, *box.wrap(connect, ws)], capture_output=True, text=True,
                                      timeout=30, cwd="/", env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"})
    finally:
        shutil.rmtree(made, ignore_errors=True)
    assert outside.stdout.count("reached") == 2, outside  # outside the sandbox, that user reaches both
    assert done.stdout.count("refused") == 2 and "reached" not in done.stdout, (done.stdout, done.stderr)
