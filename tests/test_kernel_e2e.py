"""End to end through a real ipykernel: what a notebook receives on iopub."""

from __future__ import annotations

import gzip
import os
import signal
import threading

import psutil
import pytest

from execmagic.display import PROVENANCE_MIME as PROVENANCE
from execmagic.engine.engine import STANDBYS
from kernel_client import KERNEL_TOKEN_VAR, Kernel, loaded
from processes import assert_none_left, commands_with, idle_standbys_of, processes_with
from waiting import wait_until

pytestmark = pytest.mark.kernel


@pytest.fixture(scope="module")
def kernel():
    yield from loaded(Kernel())


@pytest.fixture(autouse=True)
def nothing_left_by_the_kernel(kernel):
    yield
    # the kernel's watchdog lives as long as the kernel; the module teardown proves it ends
    assert_none_left(KERNEL_TOKEN_VAR, kernel.token, exclude=(kernel.pid,), watchdogs=False)


def test_output_streams_before_the_command_ends(kernel):
    ex = kernel.execute("%%exec\necho first\nsleep 1.5\necho second")
    assert ex.status == "ok"
    arrivals = {m["content"]["text"].strip(): t for t, m in ex.messages if m["msg_type"] == "stream"}
    assert set(arrivals) == {"first", "second"}
    assert arrivals["second"] - arrivals["first"] > 1.0


def test_two_megabytes_of_lines_arrive_in_few_messages(kernel):
    ex = kernel.execute("%%exec\nfor i in $(seq 20000); do printf '%0103d\\n' $i; done")
    assert ex.status == "ok"
    streams = ex.of_type("stream")
    assert len(streams) <= 50, len(streams)
    text = ex.stream_text()
    assert text.rstrip().endswith(f"{20000:0103d}")
    assert "live output paused" in text
    (summary,) = [m for m in ex.of_type("display_data") if PROVENANCE in m["content"]["data"]]
    assert summary["content"]["data"][PROVENANCE]["stdout_bytes"] == 20000 * 104


def test_summary_is_display_data_with_three_mimetypes(kernel):
    ex = kernel.execute("%exec echo hi")
    (summary,) = ex.of_type("display_data")
    data = summary["content"]["data"]
    assert {"text/plain", "text/html", PROVENANCE} <= set(data)
    assert data["text/plain"].startswith("✔ exit 0")
    assert 'class="execmagic-result"' in data["text/html"]
    assert data[PROVENANCE]["exit_code"] == 0


def test_the_summary_is_what_display_would_send_and_comes_in_order(kernel):
    """The summary is sent without waiting on the kernel's IO thread; it is still what ``display()`` of the
    same result sends, and it arrives after what the cell printed before it and before what it prints after."""
    ex = kernel.execute("import sys\nfrom execmagic.display.render import Summary\nprint('before')\n"
                        "print('before on stderr', file=sys.stderr)\n"
                        "%exec --out r echo hi\nprint('after')\ndisplay(Summary(r))")
    assert ex.status == "ok"
    shown = [m for _, m in ex.messages if m["msg_type"] in ("stream", "display_data")]
    summary, again = (m for m in shown if m["msg_type"] == "display_data")
    assert summary["content"] == again["content"]
    at = shown.index(summary)
    before = "".join(m["content"]["text"] for m in shown[:at])
    assert "before\n" in before and "before on stderr\n" in before and "hi\n" in before
    assert "after" not in before


def test_a_run_flushes_only_a_stream_that_holds_text(kernel):
    """Text the cell printed before the magic is flushed as the run starts (it goes out first); a stream that
    holds none is not flushed: that would only wake the IO thread, to take the GIL from the run.  (The stream's
    own timer, every 0.2 s, would flush the text first on a busy machine: it is put off for the cell.)"""
    ex = kernel.execute("import sys\nsys.stdout.flush(); sys.stderr.flush()\n"
                        "sys.stdout.flush_interval = sys.stderr.flush_interval = 3600\n"
                        "thread = sys.stdout.pub_thread\nscheduled = []\nreal = thread.schedule\n"
                        "thread.schedule = lambda f: (scheduled.append(getattr(f, '__name__', '')), real(f))[1]\n"
                        "try:\n    get_ipython().run_line_magic('exec', 'true')\n"
                        "    quiet = scheduled.count('_flush')\n    print('x', end='')\n"
                        "    get_ipython().run_line_magic('exec', 'true')\n"
                        "finally:\n    del thread.schedule\n"
                        "    sys.stdout.flush_interval = sys.stderr.flush_interval = 0.2\n"
                        "print('', quiet, scheduled.count('_flush') - quiet)")
    assert ex.status == "ok", ex.reply
    assert ex.stream_text() == "x 0 1\n"


def test_a_captured_cell_keeps_its_summary(kernel):
    """``%%capture`` swaps the streams and the display publisher: the summary goes where display() would send
    it, into the capture, not to the notebook."""
    ex = kernel.execute("%%capture captured\n%exec echo hi")
    assert ex.status == "ok" and not ex.of_type("display_data", "stream")
    ex = kernel.execute("print(captured.stdout, captured.outputs[0].data['text/plain'][:8])")
    assert ex.stream_text() == "hi\n ✔ exit 0\n"


def test_a_hook_on_the_display_publisher_takes_the_summary(kernel):
    """What an Output widget does: a hook registered on the publisher takes display messages instead of
    IOPub.  The summary goes through the hooks as display() would."""
    ex = kernel.execute("taken = []\nhook = lambda msg: taken.append(msg['content']['data']) or None\n"
                        "get_ipython().display_pub.register_hook(hook)\n"
                        "try:\n    get_ipython().run_line_magic('exec', 'echo hi')\n"
                        "finally:\n    get_ipython().display_pub.unregister_hook(hook)\n"
                        "print(len(taken), taken[0]['text/plain'][:8])")
    assert ex.status == "ok" and not ex.of_type("display_data")
    assert ex.stream_text().endswith("1 ✔ exit 0\n")


def test_command_reading_stdin_does_not_hang(kernel):
    ex = kernel.execute('%exec read -r line; echo "rc=$?"', timeout=20)
    assert ex.status == "ok" and ex.stream_text() == "rc=1\n"


def test_failed_command_is_an_error_reply_without_traceback(kernel):
    ex = kernel.execute("%exec exit 5")
    assert ex.status == "error"
    (error,) = ex.of_type("error")
    assert error["content"]["ename"] == "CellCommandFailed"
    assert len(error["content"]["traceback"]) == 1 and "exit 5" in error["content"]["traceback"][0]


def test_interrupt_with_backgrounded_grandchild_leaves_nothing(kernel):
    started = threading.Event()

    def watch(msg):
        if msg["msg_type"] == "stream" and "started" in msg["content"]["text"]:
            started.set()

    def interrupt_when_started():
        if started.wait(20):
            kernel.manager.interrupt_kernel()

    helper = threading.Thread(target=interrupt_when_started)
    helper.start()
    ex = kernel.execute("%%exec\nsleep 300 &\n(sleep 301 &)\necho started\nwait", timeout=30, on_message=watch)
    helper.join()
    assert started.is_set()
    assert ex.status == "error"
    assert ex.of_type("error")[0]["content"]["ename"] == "CommandInterrupted"
    assert_none_left(KERNEL_TOKEN_VAR, kernel.token, exclude=(kernel.pid,), watchdogs=False)
    again = kernel.execute("%exec echo still alive")
    assert again.status == "ok" and again.stream_text() == "still alive\n"


def test_long_run_shows_a_status_line_updated_in_place(kernel):
    ex = kernel.execute("%config ExecMagics.status_delay = 0.2\n%exec sleep 1.6; echo done")
    kernel.execute("%config ExecMagics.status_delay = 2.0")
    shown = [m for m in ex.of_type("display_data") if "⏳" in m["content"]["data"].get("text/plain", "")]
    updates = ex.of_type("update_display_data")
    assert len(shown) == 1 and updates
    display_id = shown[0]["content"]["transient"]["display_id"]
    assert all(u["content"]["transient"]["display_id"] == display_id for u in updates)
    assert updates[-1]["content"]["data"]["text/plain"] == ""  # cleared when the command ended


def test_interrupting_a_foreground_cell_leaves_background_shells_alone(kernel):
    assert kernel.execute("%bg --name keeper sleep 300").status == "ok"
    started = threading.Event()

    def interrupt_when_running(msg):
        if msg["msg_type"] == "stream" and "fg" in msg["content"]["text"]:
            started.set()

    helper = threading.Thread(target=lambda: started.wait(20) and kernel.manager.interrupt_kernel())
    helper.start()
    ex = kernel.execute("%exec echo fg; sleep 30", timeout=30, on_message=interrupt_when_running)
    helper.join()
    assert ex.status == "error"
    status = kernel.execute("%bgout keeper")
    assert status.of_type("display_data")[0]["content"]["data"][PROVENANCE]["shell"]["status"] == "running"
    assert kernel.execute("%kill keeper").status == "ok"


def test_background_output_never_shows_in_another_cell(kernel):
    kernel.execute("%bg --name chatty while true; do echo noise; sleep 0.05; done")
    # its first sleep comes after its first noise: from there on it prints while the next cell runs
    wait_until(lambda: "sleep 0.05" in commands_with(KERNEL_TOKEN_VAR, kernel.token), 10, "the chatty shell to print")
    ex = kernel.execute("print('mine')")
    assert ex.stream_text() == "mine\n"
    kernel.execute("%kill chatty")


STUBBORN_SHELLS = (
    "%config ExecMagics.kill_grace = 0.5\n"
    "%bg sleep 300\n"
    "%bg trap '' TERM; sleep 301\n"
    "%bg bash -c '(sleep 302 &); setsid sleep 303 & sleep 304'\n"
)


@pytest.mark.parametrize("how", ["shutdown", "shutdown-now", "restart"])
def test_kernel_shutdown_and_restart_leave_no_shell(how):
    k = Kernel()
    try:
        assert k.execute("%load_ext execmagic\n" + STUBBORN_SHELLS).status == "ok"
        old_pid = k.pid
        # every shell up (its trap set before its sleep starts), or there would be nothing to leave behind
        sleeps = {f"sleep {n}" for n in range(300, 305)}
        wait_until(lambda: sleeps <= commands_with(KERNEL_TOKEN_VAR, k.token), 10, "the stubborn shells' five sleeps")
        if how == "restart":
            k.manager.restart_kernel(now=False)
            k.client.wait_for_ready(timeout=60)
            assert k.execute("%load_ext execmagic\n%exec echo back").stream_text() == "back\n"
            # the standbys started after that run (a moment later): waited for, so that they are known below
            assert k.execute("import execmagic; execmagic.default_engine().warm.wait_full(10)").status == "ok"
            # the new kernel's own watchdog (it guards foreground runs too) and standby shells are all that is left
            new_watchdogs = tuple(p.pid for p in processes_with("EXECMAGIC_WATCHDOG", str(k.pid)))
            assert_none_left(KERNEL_TOKEN_VAR, k.token, exclude=(k.pid, *new_watchdogs, *idle_standbys_of(k.pid)),
                             wait=3)
        else:
            k.shutdown(now=(how == "shutdown-now"))
            assert not psutil.pid_exists(old_pid) or psutil.Process(old_pid).status() == psutil.STATUS_ZOMBIE
            assert_none_left(KERNEL_TOKEN_VAR, k.token, wait=3)
    finally:
        if how == "restart":
            k.shutdown()


def test_asyncio_api_in_a_notebook_cell(kernel):
    ex = kernel.execute(
        "import asyncio, execmagic\n"
        "results = await asyncio.gather(execmagic.arun('echo one'), execmagic.aspawn(['echo', 'two']))\n"
        "print([r.stdout for r in results])"
    )
    assert ex.status == "ok", ex.reply
    assert ex.stream_text() == "['one\\n', 'two\\n']\n"


@pytest.mark.parametrize("start", ["cold", "standby"])
def test_a_sigkilled_kernel_leaves_nothing_of_a_foreground_command(start):
    """The OOM killer takes the kernel mid-%exec: the watchdog stops the command, its setsid daemon
    and its double-forked child within 3 s -- run in a new bash or in the standby (and the next standby too)."""
    k = Kernel(extra_env={"EXECMAGIC_STANDBY": "1"})
    try:
        assert k.execute("%load_ext execmagic" + ("\n%exec true" if start == "standby" else "")).status == "ok"
        k.client.execute("%exec (setsid sleep 311 >/dev/null 2>&1 &); ( (sleep 312 &) & ); sleep 313")
        sleeps = {"sleep 311", "sleep 312", "sleep 313"}
        wait_until(lambda: sleeps <= commands_with(KERNEL_TOKEN_VAR, k.token), 20, "the command's three sleeps")
        os.kill(k.pid, signal.SIGKILL)
        assert_none_left(KERNEL_TOKEN_VAR, k.token, wait=3)
    finally:
        k.shutdown(now=True)


@pytest.mark.parametrize("end", ["sigkill", "shutdown"])
def test_a_standby_never_outlives_its_kernel(end):
    k = Kernel(extra_env={"EXECMAGIC_STANDBY": "1"})
    try:
        assert k.execute("%load_ext execmagic\n%exec true").status == "ok"
        standbys = wait_until(lambda: found if len(found := idle_standbys_of(k.pid)) == STANDBYS else (), 20,
                              "both standbys to start")
        if end == "sigkill":
            os.kill(k.pid, signal.SIGKILL)
        else:
            k.shutdown()
        assert_none_left(KERNEL_TOKEN_VAR, k.token, wait=3)
        assert not any(psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
                       for pid in standbys)
    finally:
        k.shutdown(now=True)


def test_a_cells_run_takes_the_standby_with_sigint_as_a_cell_gives_it():
    """A kernel ignores SIGINT between cells, when the standby is started, and a bash cannot undo an
    ignored signal: the standby gets SIGINT back at its default first, as a run started in a cell has it.
    So cell after cell runs in the standby, and Ctrl-C reaches a command there as it reaches a cold one."""
    k = Kernel(extra_env={"EXECMAGIC_STANDBY": "1"})
    try:
        assert k.execute("%load_ext execmagic\nimport execmagic\n%exec true").status == "ok"
        masks = []
        for _ in range(3):
            ex = k.execute("print(execmagic.default_engine().warm.wait_ready(10).runner.pid)")
            pid = int(ex.stream_text())
            ex = k.execute("%exec echo $$; grep SigIgn /proc/$$/status")
            ran_in, mask = ex.stream_text().split("\n", 1)
            assert int(ran_in) == pid  # the standby ran it
            masks.append(mask)
        cold = k.execute("%config ExecMagics.standby = False\n%exec grep SigIgn /proc/$$/status\n"
                         "%config ExecMagics.standby = True").stream_text()
        assert masks == [cold] * 3
        started = threading.Event()
        helper = threading.Thread(target=lambda: started.wait(20) and k.manager.interrupt_kernel())
        helper.start()
        k.execute("execmagic.default_engine().warm.wait_ready(10)")
        ex = k.execute("%exec echo started; sleep 300", timeout=30,
                       on_message=lambda msg: msg["msg_type"] == "stream" and started.set())
        helper.join()
        assert ex.of_type("error")[0]["content"]["ename"] == "CommandInterrupted"
        assert not any("SIGKILL" in m["content"]["data"]["text/plain"] for m in ex.of_type("display_data"))
    finally:
        k.shutdown(now=True)


def test_a_standby_never_runs_with_stale_state(kernel, tmp_path):
    (tmp_path / "sub").mkdir()
    steps = [
        (f"%exec cd {tmp_path} && export EXECMAGIC_T_A=one", ""),
        ('%exec echo "$PWD $EXECMAGIC_T_A"', f"{tmp_path} one\n"),
        ("%exec cd sub; unset EXECMAGIC_T_A", ""),
        ('%exec echo "$PWD ${EXECMAGIC_T_A-unset}"', f"{tmp_path}/sub unset\n"),
        ("import os; os.environ['EXECMAGIC_T_B'] = 'from python'", ""),
        ('%exec echo "$EXECMAGIC_T_B"', "from python\n"),
        ("%exec --env EXECMAGIC_T_B=option echo $EXECMAGIC_T_B", "option\n"),
        ('%exec echo "$EXECMAGIC_T_B"', "from python\n"),
        ("del os.environ['EXECMAGIC_T_B']", ""),
        ('%exec echo "${EXECMAGIC_T_B-unset}"', "unset\n"),
        ("%exec --cwd / pwd", "/\n"),
        ("%exec pwd", f"{tmp_path}/sub\n"),
    ]
    start = kernel.execute("%exec pwd").stream_text().strip()
    try:
        for code, expected in steps:
            ex = kernel.execute(code)
            assert ex.status == "ok", (code, ex.reply)
            assert ex.stream_text() == expected, code
    finally:
        kernel.execute(f"%exec cd {start}")  # the module's other tests run where they started


def test_a_setsid_daemon_is_stopped_when_its_cell_ends(kernel):
    ex = kernel.execute("%exec (setsid sleep 315 >/dev/null 2>&1 </dev/null &); sleep 0.3")
    assert ex.status == "ok"
    assert "setsid or a double fork" in str(ex.of_type("display_data"))
    assert not [p for p in processes_with(KERNEL_TOKEN_VAR, kernel.token) if "sleep 315" in " ".join(p.cmdline())]


def test_a_preview_through_head_under_errexit_names_its_line_and_sigpipe(kernel, tmp_path):
    with gzip.open(tmp_path / "sorted.csv.gz", "wt") as fh:
        fh.writelines(f"{i},row {i}\n" for i in range(300_000))
    ex = kernel.execute(f"%%exec --errexit\ncd {tmp_path}\nzcat sorted.csv.gz | head -3\necho after")
    kernel.execute("%exec cd -")
    assert ex.status == "error" and ex.stream_text() == "0,row 0\n1,row 1\n2,row 2\n"
    (error,) = ex.of_type("error")
    assert "exit 141" in error["content"]["traceback"][0]
    assert ex.stream_text("stderr").startswith("--errexit stopped the cell at line 2: exit 141: SIGPIPE, a reader"
                                               " such as head closed the pipe early")


def test_an_isolated_cell_and_a_background_shell_name_the_line_that_failed(kernel):
    ex = kernel.execute("%%exec --isolated --no-raise\ncd /\necho a\nfalse\nls /no/such/execmagic-path 2>/dev/null")
    assert ex.stream_text() == "a\n" and "✘ exit 2 at line 4" in str(ex.of_type("display_data"))
    assert kernel.execute("%exec pwd").stream_text() != "/\n"  # its cd stayed its own: the session is untouched
    kernel.execute("%%exec --bg --name lined\nfalse\nls /no/such/execmagic-path 2>/dev/null\necho b; false")
    read = kernel.execute("%bgout lined --follow")  # to its end: a wait ends with the first news, "b"
    assert read.stream_text() == "b\n" and "exited 1 at line 3" in str(read.of_type("display_data"))
    listed = kernel.execute("%bg").of_type("display_data")[0]["content"]["data"]
    assert "exited 1 at line 3" in listed["text/plain"]
    assert [row.get("failed_line") for row in listed[PROVENANCE] if row["id"] == "lined"] == [3]


def test_bgout_waits_for_a_line_its_filter_keeps(kernel):
    kernel.execute("%bg --name noisy for i in $(seq 1 10); do echo step $i; sleep 0.1; done; echo ERROR late; sleep 30")
    ex = kernel.execute("%bgout noisy --wait 30 --filter ERROR")
    assert ex.status == "ok" and ex.stream_text() == "ERROR late\n"
    assert kernel.execute("%kill noisy").status == "ok"


def test_reload_ext_keeps_the_background_shells(kernel):
    kernel.execute("%bg --name kept echo before; sleep 300")
    assert "before" in kernel.execute("%bgout kept --wait 10").stream_text()
    assert kernel.execute("%reload_ext execmagic").status == "ok"
    listed = kernel.execute("%bg").of_type("display_data")[0]["content"]["data"][PROVENANCE]
    assert [row["status"] for row in listed if row["id"] == "kept"] == ["running"]
    kernel.execute("%exec echo again")
    ended = kernel.execute("%kill kept")
    assert ended.status == "ok" and "kept stopped with SIGTERM" in str(ended.of_type("display_data"))
    assert not [p for p in processes_with(KERNEL_TOKEN_VAR, kernel.token) if "sleep 300" in " ".join(p.cmdline())]


def test_the_kernels_own_python_is_said_once_per_kernel():
    k = Kernel(extra_env={"PATH": "/usr/local/bin:/usr/bin:/bin"})  # as a Jupyter elsewhere starts it
    try:
        assert k.execute("%load_ext execmagic").status == "ok"
        notes = [str(k.execute("%exec python3 -c pass; pip --version >/dev/null").of_type("display_data"))
                 for _ in range(3)]
        assert "python3 is the kernel's own" in notes[0] and "pip is the kernel's own" in notes[0]
        assert not any("kernel's own" in shown for shown in notes[1:])
    finally:
        k.shutdown()
    assert_none_left(KERNEL_TOKEN_VAR, k.token, wait=3)


def test_the_line_that_failed_a_multi_line_cell_is_named_with_or_without_errexit(kernel):
    ex = kernel.execute("%%exec\necho a\nls /no/such/execmagic-path 2>/dev/null\necho b\nfalse")
    assert ex.status == "error" and ex.stream_text() == "a\nb\n"
    (error,) = ex.of_type("error")
    assert "exit 1 at line 4" in error["content"]["traceback"][0]
    assert "✘ exit 1 at line 4" in str(ex.of_type("display_data"))
    stopped = kernel.execute("%%exec --errexit\necho a\nls /no/such/execmagic-path 2>/dev/null\necho b\nfalse")
    assert stopped.stream_text("stderr") == "--errexit stopped the cell at line 2: exit 2\n"
    assert "exit 2 at line 2" in stopped.of_type("error")[0]["content"]["traceback"][0]
    ended = kernel.execute("%%exec --no-raise\necho a\n[ -f /no/such/execmagic-path ] || exit 3\necho never")
    assert ended.stream_text() == "a\n" and "✘ exit 3 at line 2" in str(ended.of_type("display_data"))
    piped = kernel.execute("%%exec --errexit --no-raise\necho a\nseq 1 1000000 | head -1\necho never")
    assert "✘ exit 141 at line 2 (SIGPIPE: a reader such as head closed the pipe early)" in str(
        piped.of_type("display_data"))
    passed = kernel.execute("%%exec\nfalse\ntrue")  # a cell that succeeded says nothing new
    assert passed.status == "ok" and " line " not in str(passed.of_type("display_data"))
