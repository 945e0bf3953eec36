"""The magics in a real ``InteractiveShell``: options, errors, display, configuration."""

from __future__ import annotations

import io
import itertools
import json
import os
import re
import select
import signal
import sys
import threading
import time

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from execmagic.display import PROVENANCE_MIME as PROVENANCE
from execmagic.engine import Result
from execmagic.magics import CellCommandFailed, CommandInterrupted
from magic_calls import magic

# foreground runs are guarded by the module's watchdog too; notebook_shell's teardown proves it ends
pytestmark = pytest.mark.watchdog_outlives_test

@pytest.fixture(autouse=True)
def fresh_session(ip, fresh_magics):
    yield
    magics = ip.magics_manager.registry["ExecMagics"]  # a new one after %reload_ext, made from %config's values
    for name, default in (("timeout", None), ("raise_on_error", True), ("display_budget", 100_000),
                          ("default_language", "bash"), ("errexit", False)):
        setattr(magics, name, default)


def run(ip, line, cell=None):
    return magic(ip, "exec", line, cell)


def summaries(cap):
    return [o.data for o in cap.outputs if PROVENANCE in o.data]


def test_line_exec_streams_and_shows_summary(ip):
    cap = run(ip, "echo hello; echo oops >&2")
    assert cap.stdout == "hello\n" and cap.stderr == "oops\n"
    (bundle,) = summaries(cap)
    assert set(bundle) >= {"text/plain", "text/html", PROVENANCE}
    assert bundle["text/plain"].startswith("✔ exit 0 · ")
    assert "\nhello" not in bundle["text/plain"]  # streamed output is not repeated
    assert "<details" not in bundle["text/html"]
    assert bundle[PROVENANCE]["command"] == "echo hello; echo oops >&2"


def test_cell_exec_languages(ip):
    assert run(ip, "python", "print(1 + 1)").stdout == "2\n"
    assert run(ip, "sh", "echo from sh").stdout == "from sh\n"
    assert run(ip, "", "echo $0 | grep -c bash").stdout == "1\n"


def test_failed_command_raises_short_error(ip):
    with capture_output() as cap, pytest.raises(CellCommandFailed) as info:
        ip.run_line_magic("exec", "exit 3")
    assert info.value._render_traceback_() == [str(info.value)]  # pytest's stdout is no terminal: no colour
    assert str(info.value) == "command failed (exit 3): the run stops here; --no-raise carries on"
    assert summaries(cap)[0]["text/plain"].startswith("✘ exit 3")


def test_the_red_line_is_red_only_where_colour_is_on(ip, monkeypatch):
    """A kernel's front end renders the colour codes; a terminal gets them unless IPython's colours
    are off; a pipe or a file never (they would show as raw escape codes)."""
    with capture_output(), pytest.raises(CellCommandFailed) as info:
        ip.run_line_magic("exec", "--quiet exit 3")
    red, plain = f"\x1b[31m{info.value}\x1b[0m", str(info.value)
    monkeypatch.setattr(ip, "colors", "neutral")  # the test shell starts with colours off
    assert info.value._render_traceback_() == [plain]  # pytest's stdout is a pipe
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert info.value._render_traceback_() == [red]  # a terminal
    monkeypatch.setattr(sys, "stdout", io.StringIO())  # no terminal, but a kernel's shell:
    monkeypatch.setattr(ip, "kernel", object(), raising=False)
    assert info.value._render_traceback_() == [red]
    monkeypatch.setattr(ip, "colors", "nocolor")
    assert info.value._render_traceback_() == [plain]
    monkeypatch.setattr(ip, "colors", "neutral")
    monkeypatch.setenv("NO_COLOR", "1")
    assert info.value._render_traceback_() == [plain]


def test_a_failure_is_said_once_in_the_cell(ip):
    """The command's own stderr, the ✘ summary with the command, and a last line that does not repeat it."""
    with capture_output() as cap, pytest.raises(CellCommandFailed) as info:
        ip.run_line_magic("exec", "ls /no/such/place/xyz")
    (summary,) = summaries(cap)
    assert cap.stderr.count("/no/such/place/xyz") == 1  # ls said it; nothing of ours repeats it on stderr
    assert summary["text/plain"].startswith("✘ exit 2 · ") and summary["text/plain"].endswith("ls /no/such/place/xyz")
    assert str(info.value) == "command failed (exit 2): the run stops here; --no-raise carries on"


def test_failed_command_in_run_cell_stops_with_one_line(ip):
    with capture_output() as cap:
        result = ip.run_cell("%exec false\nprint('not reached')")
    assert not result.success and isinstance(result.error_in_exec, CellCommandFailed)
    assert "not reached" not in cap.stdout
    assert "Traceback" not in cap.stdout + cap.stderr


def test_no_raise_and_trait(ip):
    """A failed command is shown (✘) without stopping the cell: for one run with ``--no-raise``, for every
    run with the trait off."""
    (summary,) = summaries(run(ip, "--no-raise false"))  # returned: nothing was raised
    assert summary["text/plain"].startswith("✘ exit 1 · ")
    with capture_output():
        assert not ip.run_cell("%exec false\nprint('reached')").success  # the option left the trait on
    ip.run_line_magic("config", "ExecMagics.raise_on_error = False")
    with capture_output() as cap:
        result = ip.run_cell("%exec false\nprint('reached')")
    assert result.success and cap.stdout.endswith("reached\n")
    (summary,) = summaries(cap)
    assert summary["text/plain"].startswith("✘ exit 1 · ")


def test_out_stores_result_even_on_failure(ip):
    with pytest.raises(CellCommandFailed):
        run(ip, "--out res echo partial; exit 4")
    res = ip.user_ns["res"]
    assert isinstance(res, Result) and res.exit_code == 4 and res.stdout == "partial\n"


def test_quiet_shows_result_with_output_at_the_end(ip):
    cap = run(ip, "--quiet echo quiet-output")
    assert cap.stdout == ""
    (bundle,) = summaries(cap)
    assert "quiet-output" in bundle["text/plain"] and "quiet-output" in bundle["text/html"]


def test_timeout_option_and_trait(ip):
    with pytest.raises(CellCommandFailed, match=r"timed out after 0\.3 s"):
        run(ip, "--timeout 0.3 sleep 30")
    ip.run_line_magic("config", "ExecMagics.timeout = 0.3")
    cap = run(ip, "--no-raise sleep 30")
    assert summaries(cap)[0][PROVENANCE]["timed_out"] is True
    with pytest.raises(UsageError, match="positive"):
        run(ip, "--timeout -1 true")


def test_cwd_env_clear_env_options(ip, tmp_path):
    (tmp_path / "d").mkdir()
    assert run(ip, f"--cwd {tmp_path}/d pwd").stdout == f"{tmp_path}/d\n"
    assert run(ip, "--env A=1 --env B=x${A} echo $A$B").stdout == "1x1\n"
    assert run(ip, "--clear-env --env ONLY=1 env | grep -v EXECMAGIC_RUN | sort").stdout.startswith("ONLY=1\n")
    cap = run(ip, "--cwd ghost-dir --no-raise true")
    assert "exec: working directory does not exist 'ghost-dir' (ENOENT)" in summaries(cap)[0]["text/plain"]


def test_params_namespace_quoting_and_raw(ip):
    ip.user_ns["danger"] = "x; echo INJECTED"
    assert run(ip, "echo {danger}").stdout == "x; echo INJECTED\n"
    assert run(ip, "echo {danger!raw}").stdout == "x\nINJECTED\n"
    assert run(ip, "--param danger=safe echo {danger}").stdout == "safe\n"
    assert run(ip, "echo '{exit}' {undefined_name}").stdout == "{exit} {undefined_name}\n"
    assert run(ip, "", "echo a b | awk '{print $2}'").stdout == "b\n"
    with pytest.raises(UsageError, match="--param novalue: the notebook has no variable 'novalue'"):
        run(ip, "--param novalue echo")
    with pytest.raises(UsageError, match="malformed param entry"):
        run(ip, "--param =x echo")


def test_ipython_var_expansion_is_off(ip):
    ip.user_ns["HOME"] = "python-home"
    try:
        out = run(ip, "echo $HOME").stdout
    finally:
        del ip.user_ns["HOME"]
    assert out == os.environ["HOME"] + "\n"


def test_input_option(ip):
    ip.user_ns["payload"] = "from namespace"
    # (the newline after output that does not end with one is added for the summary's sake)
    assert run(ip, '--input "{payload}" cat').stdout == "from namespace\n"
    assert run(ip, "--input hello cat").stdout == "hello\n"


def test_isolated_option(ip, tmp_path):
    run(ip, f"cd {tmp_path}")
    assert run(ip, "--isolated pwd").stdout == os.getcwd() + "\n"
    assert run(ip, "pwd").stdout == f"{tmp_path}\n"


def test_dry_run_shows_expansion_and_runs_nothing(ip, tmp_path):
    marker = tmp_path / "created"
    ip.user_ns["target"] = str(marker)
    cap = run(ip, "--dry-run --env K=v touch {target}")
    assert not marker.exists()
    assert cap.stdout.splitlines()[0] == f"touch {marker}"
    assert "# env: K=v" in cap.stdout


def test_spawn_no_shell(ip):
    with capture_output() as cap:
        ip.run_line_magic("spawn", "printf %s| 'a b' $HOME '*' {x}")
    assert cap.stdout.startswith("a b|$HOME|*|{x}|")
    ip.user_ns["words"] = ["one two", "three"]
    with capture_output() as cap:
        ip.run_line_magic("spawn", "--argv [\"printf\", \"%s|\", \"a  b\", \"${HOME}\"]")
        ip.run_line_magic("spawn", "printf %s| {words}")
    assert cap.stdout.startswith(f"a  b|{os.environ['HOME']}|")
    assert "one two|three|" in cap.stdout


def test_spawn_not_found_is_a_short_failure(ip):
    with pytest.raises(CellCommandFailed, match=r"exec: nosuch-cmd not found in PATH \(ENOENT\)"), capture_output():
        ip.run_line_magic("spawn", "nosuch-cmd arg")


@pytest.mark.parametrize(
    "magic, line, message",
    [
        ("exec", "--bogus ls", "unknown option '--bogus'"),
        ("exec", "--timout 5 ls", "unknown option '--timout'; did you mean --timeout?"),
        ("exec", "--timeout", "needs a value"),
        ("exec", "--timeout abc ls", "invalid float value"),
        ("exec", "", "needs a command line"),
        ("exec", "--env NOEQ ls", "malformed env entry 'NOEQ'"),
        ("exec", "--out 1bad ls", "--out needs a variable name"),
        ("spawn", "--argv [1, 2]", "JSON array of strings"),
        ("spawn", "--argv not json", "JSON array"),
        ("spawn", "'unclosed", "cannot split"),
        ("spawn", "", "needs a command"),
    ],
)
def test_usage_errors_are_one_line(ip, magic, line, message):
    with pytest.raises(UsageError, match=message) as info:
        ip.run_line_magic(magic, line)
    assert type(info.value) is UsageError and "\n" not in str(info.value)


def test_unknown_language_is_usage_error(ip):
    with pytest.raises(UsageError, match="unknown language 'nolang-x'"):
        ip.run_cell_magic("exec", "nolang-x", "hi")


def test_default_language_trait(ip):
    ip.run_line_magic("config", "ExecMagics.default_language = 'python'")
    assert run(ip, "", "import sys; print(sys.version_info[0])").stdout == "3\n"


def _markers(text):
    return [line for line in text.splitlines() if line.startswith("… [")]


def test_display_budget_cuts_live_output_and_shows_tail(ip):
    """The output a cell receives, the head while it runs and the tail at its end, keeps within the budget,
    on whole lines, with where the rest is."""
    ip.run_line_magic("config", "ExecMagics.display_budget = 2000")
    cap = run(ip, "", "seq 1 20000")
    paused, end = _markers(cap.stdout)
    assert "live output paused" in paused and "full output in " in end
    assert len(cap.stdout) - len(paused) - len(end) - 2 <= 2000
    numbers = [int(line) for line in cap.stdout.splitlines() if not line.startswith("… [")]
    assert numbers[0] == 1 and numbers[-1] == 20000
    gaps = [(a, b) for a, b in itertools.pairwise(numbers) if b != a + 1]
    assert len(gaps) == 1  # whole lines: the head, then the tail


def test_persistent_session_through_magics(ip, tmp_path):
    run(ip, f"cd {tmp_path}; export FROM_CELL=yes")
    assert run(ip, "", 'echo "$FROM_CELL"; pwd').stdout == f"yes\n{tmp_path}\n"


def test_interrupt_stops_the_command(ip):
    timer = threading.Timer(0.4, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    start = time.monotonic()
    try:
        with pytest.raises(CommandInterrupted) as stopped, capture_output() as cap:
            ip.run_line_magic("exec", "sleep 30 & sleep 31")
    finally:
        timer.cancel()
    assert time.monotonic() - start < 5
    # the status is said once: the summary says what was interrupted, the red line only what is new
    (summary,) = [o.data["text/plain"] for o in cap.outputs]
    assert re.match(r"✘ interrupted · .* · sleep 30 & sleep 31\n  note: stopped \d+ process", summary), summary
    assert str(stopped.value) == "the run stops here"


def test_reload_ext(ip):
    ip.run_line_magic("reload_ext", "execmagic")
    assert run(ip, "echo again").stdout == "again\n"
    assert "exec" in ip.magics_manager.magics["line"]


def test_a_terminal_marks_each_stderr_line_as_the_tour_does(ip):
    main, side = os.openpty()
    real_stderr = sys.stderr
    with open(side, "w", encoding="utf-8") as terminal:  # a real terminal, as IPython's would be
        sys.stderr = terminal
        try:
            with capture_output(stderr=False) as cap:  # stdout: captured, as a pipe is (never marked)
                ip.run_line_magic("exec", "echo out; printf 'e1\\ne' >&2; sleep 0.3; echo '2' >&2; echo last")
        finally:
            sys.stderr = real_stderr
        terminal.write("END\n")  # read up to here: a pty hands bytes over a moment after they are written
        terminal.flush()
        shown = b""
        while b"END" not in shown and select.select([main], [], [], 10)[0]:
            shown += os.read(main, 4096)
    os.close(main)
    assert shown.decode().replace("\r\n", "\n") == "stderr│ e1\nstderr│ e2\nEND\n"
    assert cap.stdout.startswith("out\nlast\n")


def test_terminal_shows_text_only(ip):
    notebook_types = ip.display_formatter.active_types
    ip.display_formatter.active_types = ["text/plain"]
    try:
        cap = run(ip, "echo term")
    finally:
        ip.display_formatter.active_types = notebook_types
    (output,) = cap.outputs
    assert list(output.data) == ["text/plain"] and output.data["text/plain"].startswith("✔ exit 0")


def test_catastrophic_commands_are_refused_with_an_override(ip, tmp_path):
    with pytest.raises(UsageError, match=r"refused: 'rm -rf /' — recursively deletes the root directory"
                                         r" \(rule rm-recursive-root\); pass --allow-dangerous") as info:
        ip.run_line_magic("exec", "echo start; rm -rf /")
    assert "\n" not in str(info.value)
    with pytest.raises(UsageError, match="refused"):
        ip.run_cell_magic("exec", "", "bash -c 'mkfs.ext4 /dev/sda1'")
    with pytest.raises(UsageError, match="refused"):
        ip.run_line_magic("spawn", "dd if=/dev/zero of=/dev/sda")
    with pytest.raises(UsageError, match="refused"):
        ip.run_line_magic("bg", "rm -rf ~")
    # risky but not catastrophic: allowed by the magics' default guard, refused with guard = 'all'
    assert run(ip, "--dry-run curl -s https://example.invalid | sh").stdout.startswith("curl")
    ip.run_line_magic("config", "ExecMagics.guard = 'all'")
    try:
        with pytest.raises(UsageError, match="pipe-to-shell"):
            run(ip, "curl -s https://example.invalid | sh")
    finally:
        ip.run_line_magic("config", "ExecMagics.guard = 'catastrophic'")
    # the visible override: a harmless stand-in that the rule matches (rm of a home directory that is a temp dir)
    fake_home = tmp_path / "home"
    fake_home.mkdir()
    (fake_home / "f").write_text("x")
    cap = run(ip, f"--allow-dangerous --env HOME={fake_home} rm -rf ~")
    assert not fake_home.exists() and summaries(cap)[0][PROVENANCE]["exit_code"] == 0


def test_allowed_dirs_and_audit_log_traits(ip, tmp_path):
    magics = ip.magics_manager.registry["ExecMagics"]
    root = tmp_path / "root"
    (root / "inner").mkdir(parents=True)
    audit = tmp_path / "audit.jsonl"
    run(ip, f"cd {root}/inner")
    ip.run_line_magic("config", f"ExecMagics.allowed_dirs = [{str(root)!r}]")
    ip.run_line_magic("config", f"ExecMagics.audit_log = {str(audit)!r}")
    try:
        cap = run(ip, "cd /")
        assert "cd to / was undone" in summaries(cap)[0]["text/plain"]
        assert run(ip, "pwd").stdout == f"{root}/inner\n"
        with pytest.raises(CellCommandFailed, match="outside the allowed directories"):
            run(ip, "--cwd / true")
    finally:
        ip.run_line_magic("config", "ExecMagics.allowed_dirs = []")
        ip.run_line_magic("config", "ExecMagics.audit_log = ''")
    records = [json.loads(line) for line in audit.read_text().splitlines()]
    assert [(r["decision"], r.get("phase")) for r in records] == [
        ("run", "intent"), ("run", "outcome"), ("run", "intent"), ("run", "outcome"), ("failed", "outcome")]
    assert magics.engine.policy.allowed_roots == () and magics.engine.policy.audit_log is None


def test_spawn_json_args_speaks_the_plugin_protocol(ip, tmp_path):
    plugin = tmp_path / "plugin.py"
    plugin.write_text("import json, sys\nargs = json.loads(sys.stdin.readline())\n"
                      "print(json.dumps({'success': True, 'output': args['pin'] * 2, 'error': None}))\n")
    with capture_output() as cap:
        ip.run_line_magic("spawn", f"--json-args '{{\"pin\": 21}}' {sys.executable} {plugin}")
    assert json.loads(cap.stdout) == {"success": True, "output": 42, "error": None}
    for bad, message in (("'[1]'", "JSON object, not list"), ("'{oops'", "needs a JSON object"),
                         ("'{}' --input x", "both set stdin")):
        with pytest.raises(UsageError, match=message):
            ip.run_line_magic("spawn", f"--json-args {bad} cat")


def test_execmagic_run_shares_the_magics_session(ip, tmp_path):
    import execmagic

    run(ip, f"cd {tmp_path}")
    assert execmagic.run("pwd").stdout == f"{tmp_path}\n"


def test_a_thousand_small_exec_runs_leave_no_foreground_logs(ip):
    magics = ip.magics_manager.registry["ExecMagics"]
    for i in range(1000):
        with capture_output() as cap:
            ip.run_line_magic("exec", f"echo {i}")
        assert cap.stdout == f"{i}\n"
    left = sorted(os.listdir(magics.engine.logs.path))  # (a prelude, in the default location: see LogDir)
    assert [n for n in left if not n.startswith("session-prelude-")] == [], left[:5]


def test_a_cells_status_is_its_last_commands_unless_errexit(ip, tmp_path):
    # as in bash: without set -e a failure in the middle is forgotten
    cap = run(ip, "", "echo a; false; echo b")
    assert cap.stdout == "a\nb\n" and summaries(cap)[0]["text/plain"].startswith("✔ exit 0")
    # --errexit stops at the failed command, and the cell fails with its status
    with pytest.raises(CellCommandFailed) as failed:
        run(ip, "--errexit", f"cd {tmp_path}\necho a\nfalse\necho b")
    assert failed.value.result.exit_code == 1 and failed.value.result.stdout == "a\n"
    assert run(ip, "pwd").stdout == f"{tmp_path}\n"  # the session state was still saved on the way out
    # pipefail: a failure inside a pipeline fails it
    with pytest.raises(CellCommandFailed):
        run(ip, "--errexit", "false | cat\necho not-reached")
    # the trait turns it on for every cell; --no-errexit turns it off for one
    ip.run_line_magic("config", "ExecMagics.errexit = True")
    with pytest.raises(CellCommandFailed):
        run(ip, "false; echo not-reached")
    assert run(ip, "--no-errexit false; echo reached").stdout == "reached\n"
    cap = run(ip, "sh --errexit --no-raise", "false\necho not-reached")  # sh: set -e (dash has no pipefail)
    assert cap.stdout == ""
    assert run(ip, "python", "print('python ignores the trait')").stdout == "python ignores the trait\n"


def test_errexit_shows_in_dry_run_and_is_refused_where_it_means_nothing(ip):
    assert "# run by: bash -e -o pipefail -c SCRIPT" in run(ip, "--errexit --dry-run", "echo a").stdout
    with pytest.raises(UsageError, match="--errexit applies to bash and sh cells"):
        run(ip, "python --errexit", "print(1)")


def test_errexit_in_a_big_cell_that_goes_through_a_file(ip):
    big = "# padding\n" * 12_000 + "echo a\nfalse\necho b\n"
    cap = run(ip, "--errexit --no-raise", big)
    assert cap.stdout == "a\n"
    assert cap.stderr == "--errexit stopped the cell at line 12002: exit 1\n"


def test_errexit_names_the_line_that_stopped_the_cell_and_says_sigpipe(ip):
    cap = run(ip, "--errexit --no-raise", "echo a\nf() { false; }\nf\necho b")
    assert cap.stdout == "a\n" and cap.stderr == "--errexit stopped the cell at line 2: exit 1\n"
    cap = run(ip, "--errexit --no-raise", "seq 1 1000000 | head -2\necho b")
    assert cap.stdout == "1\n2\n"
    assert cap.stderr.startswith("--errexit stopped the cell at line 1: exit 141: SIGPIPE, a reader such as head"
                                 " closed the pipe early, and pipefail counts that as a failure")
    # a failure set +e lets pass is not named, nor one inside a command substitution (no -e there)
    cap = run(ip, "--errexit --no-raise", "set +e\nfalse\nx=$(false; echo in)\nset -e\necho $x")
    assert cap.stdout == "in\n" and cap.stderr == ""
    # a failed subshell is named once, by its own line
    cap = run(ip, "--errexit --no-raise", "(\n  false\n)")
    assert cap.stderr == "--errexit stopped the cell at line 3: exit 1\n"
    # a secret stays out of the recorded argv, trap or not
    cap = run(ip, "--errexit --param api_token=s3cr3t-value-42 echo {api_token} >/dev/null")
    argv = summaries(cap)[0][PROVENANCE]["argv"]
    assert argv[:4] == ["bash", "-e", "-o", "pipefail"] and "s3cr3t-value-42" not in json.dumps(argv)
    assert argv[-1].startswith("set -E; trap ") and argv[-1].endswith("ERR; echo '[REDACTED:api_token]' >/dev/null")
    # a set -x trace shows the script's commands, not the trap's
    cap = run(ip, "--errexit --no-raise", "set -x\nfalse")
    assert cap.stderr == "+ false\n--errexit stopped the cell at line 2: exit 1\n"


def test_a_mistyped_language_gets_a_suggestion(ip):
    with pytest.raises(UsageError, match=r"^unknown language 'pyhton': no interpreter of that name on PATH;"
                                         r" did you mean 'python'\?$"):
        run(ip, "pyhton", "print(1)")
    with pytest.raises(UsageError, match=r"unknown language 'qwzx'[^;]*$"):  # nothing close: no guess
        run(ip, "qwzx", "print(1)")


def test_a_printer_of_the_users_own_for_the_summary_is_used(ip):
    """The summary's bundle is made by calling the renderers directly; a printer the user registered wins."""
    from execmagic.display.render import Summary

    plain = ip.display_formatter.formatters["text/plain"]
    plain.for_type(Summary, lambda obj, p, cycle: p.text("my summary"))
    try:
        (bundle,) = summaries(run(ip, "true"))
    finally:
        plain.pop(Summary)
    assert bundle["text/plain"] == "my summary" and 'class="execmagic-result"' in bundle["text/html"]
    (bundle,) = summaries(run(ip, "true"))
    assert bundle["text/plain"].startswith("✔ exit 0")  # the renderers' own again


def test_a_formatter_switched_off_leaves_its_type_out_of_the_summary(ip):
    html = ip.display_formatter.formatters["text/html"]
    html.enabled = False
    try:
        (bundle,) = summaries(run(ip, "true"))
    finally:
        html.enabled = True
    assert "text/html" not in bundle and bundle["text/plain"].startswith("✔ exit 0")


def test_a_printer_of_the_users_own_for_another_type_is_in_the_summary(ip):
    from execmagic.display.render import Summary

    markdown = ip.display_formatter.formatters["text/markdown"]
    enabled, markdown.enabled = markdown.enabled, True
    markdown.for_type(Summary, lambda summary: "**ran**")
    try:
        (bundle,) = summaries(run(ip, "true"))
    finally:
        markdown.pop(Summary)
        markdown.enabled = enabled
    assert bundle["text/markdown"] == "**ran**" and bundle["text/plain"].startswith("✔ exit 0")


def test_secret_names_are_hidden_in_the_saved_command_and_others_shown(ip):
    """``--param stripe_key=…`` and a notebook variable ``encryption_key`` are secrets; ``max_tokens``,
    ``author`` and ``tokenizer`` are not, so the notebook shows and saves them as they are."""
    ip.user_ns.update(encryption_key="k3y-v4lue-123", max_tokens=512, author="jdoe", tokenizer="bpe")
    cap = run(ip, "--param stripe_key=sk_t3st_value --env DB_PWD=pw-value-1 echo {stripe_key} {encryption_key}"
                  " {max_tokens} {author} {tokenizer} $DB_PWD")
    assert cap.stdout == "sk_t3st_value k3y-v4lue-123 512 jdoe bpe pw-value-1\n"  # ran with the real values
    (bundle,) = summaries(cap)
    assert bundle[PROVENANCE]["command"] == \
        "echo '[REDACTED:stripe_key]' '[REDACTED:encryption_key]' 512 jdoe bpe $DB_PWD"
    dry = run(ip, "--dry-run --env DB_PWD=pw-value-1 --env MAX_TOKENS=512 true").stdout
    assert "# env: DB_PWD=[REDACTED]" in dry and "# env: MAX_TOKENS=512" in dry
