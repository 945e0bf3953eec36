"""The standby shell follows the process: whatever Python changed since it started (groups, capabilities,
no-new-privs, seccomp, namespaces, scheduling...), the next run shows what a cold start shows.

Each change is made in a child Python of its own (most cannot be undone, and would stay with the test
process), in its main thread, between two runs of an engine whose standby is on; a second engine with
the standby off says what a cold start shows.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import textwrap

import pytest

from execmagic.process.inherit import inherited

#: Seconds a child may take (a hang is what one test is about).
CHILD_TIMEOUT = 60

CHILD = textwrap.dedent(r"""
    import ctypes, json, os, sys
    from execmagic.engine import Engine, RunOptions

    libc = ctypes.CDLL(None, use_errno=True)

    def check(rc):
        if rc != 0:
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))

    logs, change, show = sys.argv[1:4]
    warm = Engine(log_dir=logs + "/warm", options=RunOptions(grace=0.3))
    cold = Engine(log_dir=logs + "/cold", options=RunOptions(grace=0.3))
    warm.standby, cold.standby = True, False
    warm.run_script("true")
    assert warm.warm.wait_ready(10) is not None
    before = warm.run_script(show)
    standbys = warm.warm.wait_full(10)  # every one waiting started before the change
    assert standbys
    exec(change)
    after = warm.run_script(show + "; echo $$")
    expected = cold.run_script(show)
    warm.close()
    cold.close()
    *shown, pid, _ = after.stdout.split("\n")
    print(json.dumps({"before": before.stdout, "after": "\n".join(shown) + "\n", "expected": expected.stdout,
                      "in_standby": pid in [str(standby.runner.pid) for standby in standbys]}))
""")

SECCOMP_ALLOW_ALL = textwrap.dedent("""
    class Filter(ctypes.Structure):
        _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]
    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Filter))]
    allow = (Filter * 1)(Filter(0x06, 0, 0, 0x7FFF0000))  # BPF_RET|BPF_K: SECCOMP_RET_ALLOW
    program = Program(1, allow)
    if os.geteuid() != 0:  # without CAP_SYS_ADMIN a filter needs no-new-privs first
        check(libc.prctl(38, 1, 0, 0, 0))
    check(libc.prctl(22, 2, ctypes.byref(program), 0, 0))  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
""")

ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not ROOT, reason="needs root")

#: name -> (the change, made in the child's main thread; a script that shows it; marks)
CHANGES = {
    "setgroups": ("os.setgroups([4242])", "grep Groups /proc/$$/status", [needs_root]),
    "no-new-privs": ("check(libc.prctl(38, 1, 0, 0, 0))", "grep NoNewPrivs /proc/$$/status", []),  # PR_SET_NO_NEW_PRIVS
    "capability-bounding-set": ("check(libc.prctl(24, 13, 0, 0, 0))",  # PR_CAPBSET_DROP, CAP_NET_RAW
                                "grep -e CapBnd -e CapEff /proc/$$/status", [needs_root]),
    "seccomp": (SECCOMP_ALLOW_ALL, "grep Seccomp /proc/$$/status", []),
    "uts-namespace": ("check(libc.unshare(0x04000000)); check(libc.sethostname(b'execmagic-t', 11))",  # CLONE_NEWUTS
                      "uname -n", [needs_root]),
    "net-namespace": ("check(libc.unshare(0x40000000))", "readlink /proc/$$/ns/net", [needs_root]),  # CLONE_NEWNET
    "oom-score-adj": ("open('/proc/self/oom_score_adj', 'w').write('500')", "cat /proc/$$/oom_score_adj", []),
    "scheduler-policy": ("os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))",
                         "cut -d ' ' -f 40,41 /proc/$$/stat", []),
    "io-priority": ("check(libc.syscall(251, 1, 0, (2 << 13) | 7))",  # ioprio_set (x86_64): best effort, 7
                    "ionice -p $$", [pytest.mark.skipif(platform.machine() != "x86_64", reason="x86_64's number")]),
    "timer-slack": ("check(libc.prctl(29, 123457, 0, 0, 0))", "cat /proc/self/timerslack_ns", []),  # PR_SET_TIMERSLACK
    "niceness": ("os.setpriority(os.PRIO_PROCESS, 0, os.getpriority(os.PRIO_PROCESS, 0) + 1)", "nice", []),
}


def child(tmp_path, code, *args):
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path), *args], capture_output=True, text=True,
                          timeout=CHILD_TIMEOUT)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.timeout(CHILD_TIMEOUT + 30)
@pytest.mark.parametrize("name", [pytest.param(name, marks=marks) for name, (_, _, marks) in CHANGES.items()])
def test_a_change_python_made_since_the_standby_started_shows_in_the_next_run(name, tmp_path):
    change, show, _ = CHANGES[name]
    seen = child(tmp_path, CHILD, change, show)
    assert seen["expected"] != seen["before"], seen  # the change shows in a cold start
    assert seen["after"] == seen["expected"], seen  # and in the run after it, standby on
    assert not seen["in_standby"]  # which started cold: the standby was stale


DROP_ROOT = textwrap.dedent("""
    import json, os, sys, time
    from execmagic.engine import Engine, RunOptions

    engine = Engine(log_dir=sys.argv[1], options=RunOptions(grace=0.3))
    engine.standby = True
    engine.run_script("true")
    standbys = engine.warm.wait_full(10)  # root's, every one
    assert standbys
    os.setgroups([])
    os.setgid(65534)
    os.setuid(65534)
    start = time.monotonic()
    r = engine.run_script("id -u; echo $$")
    took = time.monotonic() - start
    engine.close()
    print(json.dumps({"stdout": r.stdout, "stderr": r.stderr, "error": r.error, "exit_code": r.exit_code,
                      "took": took, "standbys": [standby.runner.pid for standby in standbys]}))
""")


@needs_root
@pytest.mark.timeout(CHILD_TIMEOUT + 30)
def test_a_run_after_dropping_root_answers_at_once(tmp_path):
    """The standby is root's: it can no longer be killed, and must not be waited for with its pipe open (it
    ends by itself once the pipe is closed).  The run starts cold as the new user (a short output needs no
    log file in root's folder), or fails in one line where it cannot do without."""
    seen = child(tmp_path, DROP_ROOT)
    assert seen["took"] < 5, seen
    assert not set(map(str, seen["standbys"])) & set(seen["stdout"].split("\n")), seen
    if seen["exit_code"] == 0:
        assert seen["stdout"].split("\n")[0] == "65534", seen
    else:
        assert "\n" not in (seen["error"] or seen["stderr"]).strip(), seen


def test_reading_what_a_child_inherits_is_stable():
    """Nothing in it changes by itself (a standby would never fit)."""
    assert inherited() == inherited()
