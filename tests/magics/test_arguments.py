"""Bad arguments are one-line errors everywhere (Python API, agent tools, magics), and option values
with quotes work in every magic.  Real processes; the autouse fixture proves none is left."""

from __future__ import annotations

import asyncio
import json
import math
import re
import shlex
import sys

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

import execmagic
from execmagic.agents.tools import Toolbox
from execmagic.engine import UsageProblem
from execmagic.process.errors import shown_value
from magic_calls import magic

# foreground runs are guarded by the magics' watchdog too; notebook_shell's teardown proves it ends
pytestmark = pytest.mark.watchdog_outlives_test

NAN, INF = math.nan, math.inf
ECHO_STDIN_HEX = [sys.executable, "-c", "import sys; sys.stdout.write(sys.stdin.buffer.read().hex())"]


def one_line_problem(call, match: str) -> UsageProblem:
    """``call()`` raises a :class:`UsageProblem` of one line matching ``match``."""
    with pytest.raises(UsageProblem, match=match) as info:
        call()
    assert "\n" not in str(info.value)
    return info.value


# -- the Python API -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"timeout": NAN}, r"^timeout must be a positive number of seconds.*not nan"),
        ({"timeout": INF}, r"^timeout .* not inf"),
        ({"timeout": -1}, r"^timeout .* not -1"),
        ({"timeout": 0}, r"^timeout .* not 0"),
        ({"timeout": 1e12}, r"^timeout .* at most 31536000"),
        ({"timeout": 10**400}, r"^timeout .* at most"),
        ({"timeout": "5"}, r"^timeout must be a number of seconds, not str '5'"),
        ({"timeout": True}, r"^timeout must be a number of seconds, not bool"),
        ({"grace": NAN}, r"^grace must be a number of seconds from 0"),
        ({"grace": INF}, r"^grace .* not inf"),
        ({"env": {"": "1"}}, r"^env name '' is not a variable name"),
        ({"env": {"A=B": "1"}}, r"^env name 'A=B' is not a variable name"),
        ({"env": {"1X": "1"}}, r"^env name '1X'"),
        ({"env": {"A": 1}}, r"^env value of A must be a string, not int"),
        ({"env": {"A": "x\0y"}}, r"^env value of A contains a NUL byte"),
        ({"env": ["A=1"]}, r"^env must be a mapping"),
        ({"cwd": "a\0b"}, r"^cwd contains a NUL byte"),
        ({"cwd": 5}, r"^cwd must be a string"),
        ({"input": "a\0b"}, r"^input contains a NUL byte"),
        ({"input": "a\ud800b"}, r"^input contains a lone surrogate '\\ud800' at position 1"),
        ({"input": 5}, r"^input must be str or bytes, not int"),
    ],
)
def test_run_refuses_bad_arguments_in_one_line(engine, kwargs, match):
    one_line_problem(lambda: execmagic.run("true", engine=engine, **kwargs), match)
    one_line_problem(lambda: execmagic.spawn(["true"], engine=engine, **kwargs), match)


@pytest.mark.parametrize(
    "argv, match",
    [
        (["echo", 5], r"^argv item 1 must be a string, not int 5$"),
        (["echo", b"x"], r"^argv item 1 must be a string, not bytes"),
        (["echo", "a\0b"], r"^argv item 1 contains a NUL byte"),
        ("echo 'unclosed", r"^cannot split argv"),
        ("echo a\0b", r"^argv contains a NUL byte"),
        (5, r"^argv must be a list of strings, not int"),
    ],
)
def test_spawn_names_the_bad_argv_item(engine, argv, match):
    one_line_problem(lambda: execmagic.spawn(argv, engine=engine), match)


def test_command_text_with_nul_is_refused(engine):
    one_line_problem(lambda: execmagic.run("echo a\0b", engine=engine), r"^command contains a NUL byte")
    one_line_problem(lambda: execmagic.start("echo a\0b", engine=engine), r"^command contains a NUL byte")


def test_nul_from_templating_is_refused_after_expansion(engine):
    for kwargs in ({"cwd": "{p}"}, {"env": {"A": "{p}"}}, {"input": "{p}"}):
        one_line_problem(lambda kwargs=kwargs: execmagic.run("true", params={"p": "a\0b"}, engine=engine, **kwargs),
                         "NUL byte")


def test_background_calls_refuse_bad_values(engine):
    one_line_problem(lambda: execmagic.start("sleep 30", timeout=NAN, engine=engine), r"^timeout .* not nan")
    one_line_problem(lambda: execmagic.start("sleep 30", timeout=1e12, engine=engine), r"^timeout")
    one_line_problem(lambda: execmagic.start("sleep 30", name=5, engine=engine), r"^name must be a string")
    assert execmagic.shells(engine=engine) == []  # nothing was started
    info = execmagic.start("sleep 30", engine=engine)
    one_line_problem(lambda: execmagic.read(info.id, wait=NAN, engine=engine), r"^wait must be 0 or more seconds")
    one_line_problem(lambda: execmagic.read(info.id, wait=-1, engine=engine), r"^wait must be 0 or more")
    one_line_problem(lambda: execmagic.read(info.id, tail=1.5, engine=engine), r"^tail must be a whole number")
    one_line_problem(lambda: execmagic.read(info.id, max_bytes=0, engine=engine), r"^max_bytes must be 1 or more")
    one_line_problem(lambda: execmagic.kill(info.id, grace=NAN, engine=engine), r"^grace must be a number")
    one_line_problem(lambda: execmagic.kill(info.id, grace=-1, engine=engine), r"^grace")
    assert execmagic.read(info.id, engine=engine).shell.running  # the refusals touched nothing
    assert "stopped with SIGTERM" in execmagic.kill(info.id, engine=engine).message


def test_the_engine_quotes_long_values_cut_with_their_length(engine):
    """The same cut as the magics show, from the Python API: the error keeps the whole value."""
    long = "n" * 10_000
    cut = f"'{'n' * 80}…' (10000 characters)"
    one_line_problem(lambda: execmagic.start("true", name=long, engine=engine), f"^invalid shell name {re.escape(cut)}:")
    one_line_problem(lambda: execmagic.read(long, engine=engine), f"^no background shell {re.escape(cut)} ")
    assert one_line_problem(lambda: execmagic.read("x", filter="(" * 5000, engine=engine), "at most 1,000").pattern \
        == "(" * 5000
    one_line_problem(lambda: execmagic.spawn(["true"], env={"-" + long: "1"}, engine=engine),
                     f"^env name {re.escape(shown_value('-' + long))} is not a variable name")
    result = execmagic.spawn(["true"], cwd=long, engine=engine)
    assert (result.error, result.error_code) == (f"exec: working directory name too long {cut} (ENAMETOOLONG)",
                                                 "ENAMETOOLONG")
    assert shown_value(long, quoted=False) == f"{'n' * 80}… (10000 characters)"
    assert shown_value(b"b" * 100) == f"b'{'b' * 80}…' (100 bytes)"
    assert shown_value(list(range(100))).endswith("… (390 characters)") and shown_value("short") == "'short'"


def test_read_wait_inf_means_until_the_shell_ends(engine):
    info = execmagic.start("sleep 0.3; exit 3", engine=engine)
    out = execmagic.read(info.id, wait=INF, engine=engine)
    assert out.at_end and out.shell.status == "exited 3"
    again = execmagic.start("sleep 0.3; echo late", engine=engine)
    assert execmagic.read(again.id, wait=1e12, engine=engine).stdout == "late\n"


def test_async_forms_refuse_in_one_line(engine):
    async def main():
        for call, match in (
            (execmagic.arun("true", timeout=NAN, engine=engine), r"^timeout"),
            (execmagic.aspawn(["echo", 5], engine=engine), r"^argv item 1 must be a string, not int"),
            (execmagic.astart("sleep 30", timeout=INF, engine=engine), r"^timeout"),
            (execmagic.aread("nope", wait=NAN, engine=engine), r"^wait"),
            (execmagic.akill("nope", grace=NAN, engine=engine), r"^grace"),
        ):
            with pytest.raises(UsageProblem, match=match):
                await call

    asyncio.run(main())


def test_bytes_input_passes_unchanged_and_is_never_templated(engine):
    raw = b"\xff\x00{p} ${HOME}"
    result = execmagic.spawn(ECHO_STDIN_HEX, input=raw, params={"p": "X"}, engine=engine)
    assert bytes.fromhex(result.stdout) == raw
    plan = engine.plan_argv(ECHO_STDIN_HEX, input=bytearray(raw))
    assert plan.command.input == raw and "b'" not in plan.describe()


def test_text_input_with_escaped_surrogates_becomes_the_bytes_they_stand_for(engine):
    text = b"caf\xe9\n".decode("utf-8", "surrogateescape")  # how Python reads undecodable bytes
    assert bytes.fromhex(execmagic.spawn(ECHO_STDIN_HEX, input=text, engine=engine).stdout) == b"caf\xe9\n"


# -- the agent tools ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name, arguments, match",
    [
        ("Bash", {"command": "echo a\0b"}, "command contains a NUL byte"),
        ("Bash", '{"command": "true", "timeout": NaN}', "argument 'timeout' must be integer, not number NaN"),
        ("Bash", '{"command": "true", "timeout": 1e999}', "must be integer, not number Infinity"),
        ("Bash", '{"command": "true", "run_in_background": true, "timeout": -Infinity}', "must be integer"),
        ("Bash", {"command": 5}, "argument 'command' must be string"),
        ("BashOutput", {"bash_id": "nope", "filter": "("}, "invalid filter regex '('"),
        ("BashOutput", {"bash_id": "nope"}, "no background shell 'nope'"),
    ],
)
def test_tools_answer_bad_arguments_with_an_error(engine, name, arguments, match):
    answer = Toolbox(engine, grace=0.3).dispatch(name, arguments)
    assert answer["success"] is False and match in answer["error"] and "\n" not in answer["error"]
    assert "internal error" not in answer["error"]


def test_tool_number_arguments_must_be_finite():
    from execmagic.agents.tools import object_schema, validate

    schema = object_schema({"x": {"type": "number"}})
    assert validate(schema, {"x": NAN}) == "argument 'x' must be a finite number, not nan"
    assert validate(schema, {"x": 1.5}) is None


def test_toolbox_grace_is_checked(engine):
    one_line_problem(lambda: Toolbox(engine, grace=NAN), r"^grace must be a number")


# -- the magics -----------------------------------------------------------------------------
@pytest.fixture
def magics(fresh_magics):
    """Fresh for each test that asks (the Python API's and the tools' tests above need no shell)."""
    return fresh_magics


@pytest.fixture
def job(ip, magics):
    """A running background shell named ``job`` for %bgout/%kill to refer to."""
    magic(ip, "bg", "--name job sleep 30")
    return "job"


def texts(cap):
    return [o.data["text/plain"] for o in cap.outputs if "text/plain" in o.data]


def usage_error(ip, name, line, match, cell=None):
    with pytest.raises(UsageError, match=match) as info:
        magic(ip, name, line, cell)
    assert type(info.value) is UsageError and "\n" not in str(info.value)


@pytest.mark.parametrize(
    "name, line, match",
    [
        ("exec", "--timeout nan true", r"^--timeout must be a positive number of seconds.*not nan"),
        ("exec", "--timeout inf true", r"^--timeout .* not inf"),
        ("exec", "--timeout 1e12 true", r"^--timeout .* at most 31536000"),
        ("exec", "--timeout -1 true", "positive"),
        ("exec", "--cwd 'a\0b' pwd", r"^--cwd contains a NUL byte"),
        ("exec", "--env A=x\0y true", r"^--env value of A contains a NUL byte"),
        ("exec", "--env '=1' true", "malformed env entry '=1'"),
        ("exec", "--input a\0b cat", r"^--input contains a NUL byte"),
        ("exec", "--input a\ud800b cat", r"^--input contains a lone surrogate"),
        ("exec", "echo a\0b", r"^the command line contains a NUL byte"),
        ("exec", "--cwd 'my data pwd", r"option '--cwd' has a value with an unclosed quote"),
        ("spawn", "echo a\0b", r"^argv item 1 contains a NUL byte"),
        ("spawn", r'--argv ["echo", "a\u0000b"]', r"^--argv item 1 contains a NUL byte"),
        ("spawn", "--timeout nan true", r"^--timeout"),
        ("spawn", "--env 'A=1 true", "unclosed quote"),
        ("bg", "--timeout nan sleep 1", r"^--timeout .* not nan"),
        ("bg", "--timeout inf sleep 1", r"^--timeout .* not inf"),
        ("bg", "--cwd 'x\0' sleep 1", r"^--cwd contains a NUL byte"),
        ("bgout", "job --wait nan", r"^--wait must be 0 or more seconds \(inf: until the shell ends\), not nan"),
        ("bgout", "job --wait -1", r"^--wait must be 0 or more"),
        ("bgout", "job --filter 'unclosed", "cannot split the line: no closing quotation"),
        ("bgout", "job --tail x", "invalid int value"),
        ("kill", "", r"^%kill needs the id of the shell to stop \((running: job|none is running now; %bg lists them all)\), or --all$"),
        ("kill", "job --all", "not both"),
        ("kill", "job --grace nan", r"^--grace must be a number of seconds from 0"),
        ("kill", "job --grace inf", r"^--grace"),
        ("kill", "'job", "no closing quotation"),
    ],
)
def test_magic_mistakes_are_one_line_usage_errors(ip, job, name, line, match):
    usage_error(ip, name, line, match)
    assert ip.magics_manager.registry["ExecMagics"].engine.shells.info(job).running


LONG = "a" * 10_000
CUT = f"'{'a' * 80}…' (10000 characters)"  # how every message quotes a long value


@pytest.mark.parametrize(
    "name, line, expected",
    [
        ("bg", f"--name {LONG} true", f"invalid shell name {CUT}: use letters, digits, '_', '-' or '.', starting"
                                      " with a letter, at most 64 characters"),
        ("bgout", f"job --wait {LONG}", f"argument --wait: invalid float value: {CUT}"),
        ("bgout", f"job --stream {LONG}", f"argument --stream: invalid choice: {CUT} (choose from 'stdout', 'stderr',"
                                         " 'both')"),
        ("bgout", LONG, f"no background shell {CUT} (known: job)"),
        ("bgout", f"job --filter {LONG}", f"invalid filter regex {CUT}: a filter is at most 1,000 characters"),
        ("kill", f"job --signal {LONG}", f"unknown signal {CUT} (try TERM, INT, HUP or KILL)"),
        ("exec", f"--env {LONG} true", f"malformed env entry {CUT}: expected NAME=VALUE"),
        ("exec", f"--{LONG} true", f"unknown option '--{'a' * 78}…' (10002 characters) (options go before the"
                                   " command; see %exec?)"),
        ("exec", f"--cwd '{LONG}", f"option '--cwd' has a value with an unclosed quote: \"'{'a' * 79}…\" (10001"
                                   " characters)"),
    ],
)
def test_long_values_are_shown_cut_with_their_length(ip, job, name, line, expected):
    """A 10,000-character value in an error is its first 80 characters and its length, in every
    message that echoes one: the magics' own, argparse's, the engine's."""
    usage_error(ip, name, line, f"^{re.escape(expected)}$")


def test_a_cwd_too_long_is_named_too_long_not_missing(ip, magics):
    cap = magic(ip, "exec", f"--no-raise --cwd {LONG} true")
    (summary,) = [o.data["text/plain"] for o in cap.outputs if "text/plain" in o.data]
    assert f"exec: working directory name too long {CUT} (ENAMETOOLONG)" in summary
    with pytest.raises(execmagic.CommandFailed, match=r"^command failed \(exec: working directory name too long"):
        magic(ip, "exec", f"--cwd {LONG} true")


@pytest.mark.parametrize(
    "line, cell, match",
    [
        ("--timeout nan", "true", r"^--timeout .* not nan"),
        ("--cwd 'my data", "true", "cannot split the line: no closing quotation"),
        ("--env MSG=\"a\0b\"", "true", r"^--env value of MSG contains a NUL byte"),
        ("--bg --timeout nan", "sleep 1", r"^--timeout .* not nan"),
        ("", "echo a\0b", r"^the cell contains a NUL byte"),
    ],
)
def test_cell_magic_mistakes_are_one_line_usage_errors(ip, magics, line, cell, match):
    usage_error(ip, "exec", line, match, cell)
    assert magics.engine.shells.list() == []


@pytest.fixture
def my_data(tmp_path):
    folder = tmp_path / "my data"
    folder.mkdir()
    return folder


def test_quoted_option_values_in_cell_exec(ip, magics, my_data):
    cap = magic(ip, "exec", f"--cwd '{my_data}' --env MSG=\"hi there\" --param who='a b' --timeout '30'",
                'echo "$MSG" {who}; pwd')
    assert cap.stdout == f"hi there a b\n{my_data}\n"
    cap = magic(ip, "exec", "python --input 'x y' --out 'res'", "import sys; print(sys.stdin.read())")
    assert cap.stdout == "x y\n" and ip.user_ns["res"].stdout == "x y\n"


def test_quoted_option_values_in_line_exec_and_spawn(ip, magics, my_data):
    line = f"--cwd '{my_data}' --env MSG=\"hi there\" --param who='a b' --timeout '30' --input 'x y'"
    assert magic(ip, "exec", line + ' echo "$MSG" {who} "$(cat)"; pwd').stdout == f"hi there a b x y\n{my_data}\n"
    cap = magic(ip, "spawn", line + " " + shlex.join(ECHO_STDIN_HEX))
    assert cap.stdout.rstrip("\n") == b"x y".hex()  # the cell gets a final newline
    cap = magic(ip, "spawn", f"--cwd '{my_data}' --param who='a b' printf '%s|' {{who}} \"$MSG\"")
    assert cap.stdout.rstrip("\n") == "a b|$MSG|"  # one word each, nothing of a shell
    cap = magic(ip, "spawn", "--json-args '{\"pin\": \"a b\"}' cat")
    assert json.loads(cap.stdout) == {"pin": "a b"}


def test_quoted_option_values_in_background_magics(ip, magics, my_data):
    magic(ip, "bg", f"--name 'q1' --cwd '{my_data}' --env MSG=\"hi there\" --param who='a b' --timeout '30'"
                    ' echo "$MSG" {who}; pwd; echo "loss 1"; echo "error 2"; echo other')
    out = magic(ip, "bgout", "'q1' --follow --filter \"loss|error\" --stream 'stdout'")
    assert out.stdout == "loss 1\nerror 2\n"
    assert magic(ip, "bgout", "q1 --all --filter 'hi there'").stdout == "hi there a b\n"
    assert magic(ip, "bgout", "q1 --tail '1'").stdout == "other\n"
    magic(ip, "exec", f"--bg --name 'q2' --cwd '{my_data}' --env MSG=\"x y\"", 'echo "$MSG $(pwd)"')
    assert magic(ip, "bgout", "q2 --wait 1e12").stdout == f"x y {my_data}\n"  # one write: one wake
    magic(ip, "bg", "--name q3 sleep 30")
    cap = magic(ip, "kill", "'q3' --signal 'TERM' --grace '0.3'")
    assert texts(cap) == ["■ q3 stopped with SIGTERM"]


def test_bgout_wait_inf_waits_until_the_shell_ends(ip, magics):
    magic(ip, "bg", "--name w sleep 0.3; exit 3")
    cap = magic(ip, "bgout", "w --wait inf")
    assert texts(cap)[0].startswith("■ w · exited 3")


def test_prefer_kernel_env_trait_reaches_the_engine(ip, magics):
    assert magics.prefer_kernel_env is True and magics.engine.prefer_kernel_env is True
    try:
        ip.run_line_magic("config", "ExecMagics.prefer_kernel_env = False")
        assert magics.engine.prefer_kernel_env is False
    finally:
        ip.run_line_magic("config", "ExecMagics.prefer_kernel_env = True")
    assert magics.engine.prefer_kernel_env is True


def test_every_setting_is_checked_on_its_own(ip, magics, tmp_path):
    """A bad %config value is one line and the previous value stays; it keeps no other setting from
    applying (a rejected log_dir once disabled allowed_dirs and audit_log)."""
    (tmp_path / "ok").mkdir()
    good = {
        "timeout": 30.0, "kill_grace": 0.4, "drain_time": 0.1, "display_budget": 5000, "keep_bytes": 4000,
        "log_dir": str(tmp_path / "logs2"), "default_language": "sh", "raise_on_error": False,
        "max_background_shells": 3, "guard": "all", "allowed_dirs": [str(tmp_path / "ok")],
        "audit_log": str(tmp_path / "audit.jsonl"), "status_delay": 1.0, "prefer_kernel_env": False,
        "redact_provenance": False, "keep_logs": True, "log_retention_days": 3.0, "log_quota": 10_000,
        "errexit": True, "standby": False, "mcp_idle_timeout": 60.0, "mcp_max_sessions": 5, "sandbox": "auto",
        "sandbox_network": True, "stable_output": True, "sandbox_readable": ["~/.config/tool", "/opt/data"],
        "sandbox_tmp_size": 64 << 20, "sandbox_processes": 256, "sandbox_memory": 1 << 30,
    }
    bad = {
        "timeout": "float('nan')", "kill_grace": "-1.0", "drain_time": "float('inf')", "display_budget": "0",
        "keep_bytes": "-5", "log_dir": "'/proc/x'", "default_language": "' '", "raise_on_error": "'yes'",
        "max_background_shells": "0", "guard": "'some'", "allowed_dirs": "['/no/such/dir']",
        "audit_log": "'/proc/x/audit.jsonl'", "status_delay": "float('nan')", "prefer_kernel_env": "'no'",
        "redact_provenance": "2", "keep_logs": "'x'", "log_retention_days": "-1.0", "log_quota": "0",
        "errexit": "'on'", "standby": "'sometimes'", "mcp_idle_timeout": "0.0", "mcp_max_sessions": "0",
        "sandbox": "'sandboxed'", "sandbox_network": "'off'", "stable_output": "'yes'",
        "sandbox_readable": "['relative/path']", "sandbox_tmp_size": "1000", "sandbox_processes": "3",
        "sandbox_memory": "-2",
    }
    configurable = set(magics.traits(config=True))
    assert set(good) == configurable == set(bad), configurable ^ set(good)
    before = {name: getattr(magics, name) for name in good}
    try:
        for name, literal in bad.items():
            with capture_output() as cap:
                ip.run_line_magic("config", f"ExecMagics.{name} = {literal}")
            assert getattr(magics, name) == before[name], name  # the previous value stays
            shown = (cap.stdout + cap.stderr).strip()
            assert shown and name in shown and shown.count("\n") == 0, (name, shown)
        for name, value in good.items():
            ip.run_line_magic("config", f"ExecMagics.{name} = {value!r}")
            assert getattr(magics, name) == value, name
        engine = magics.engine
        assert engine.logs.path == good["log_dir"] and engine.policy.allowed_roots == (str(tmp_path / "ok"),)
        assert engine.policy.audit_log == good["audit_log"] and engine.prefer_kernel_env is False
        assert engine.redact_display is False and (engine.log_retention_days, engine.log_quota) == (3.0, 10_000)
        assert engine.standby is False and engine.warm.ready is None
        options = magics.run_options(None)
        assert (options.timeout, options.grace, options.drain, options.keep_bytes, options.keep_logs) == (
            30.0, 0.4, 0.1, 4000, True)
    finally:  # through %config, which also keeps the values for a later load of the extension
        before["log_dir"] = str(tmp_path / "logs")
        for name, value in before.items():
            ip.run_line_magic("config", f"ExecMagics.{name} = {value!r}")


def test_settings_refuse_bools_huge_values_and_unknown_languages(ip, magics):
    before = (magics.timeout, magics.display_budget, magics.drain_time, magics.default_language)
    for line in ("timeout = True", "display_budget = 10**30", "drain_time = 1e12",
                 "default_language = 'no-such-interpreter'"):
        with capture_output() as cap:
            ip.run_line_magic("config", f"ExecMagics.{line}")
        assert "refused" in cap.stderr and cap.stderr.count("\n") == 1, cap.stderr
    assert (magics.timeout, magics.display_budget, magics.drain_time, magics.default_language) == before
    for name in ("__builtins__", "if", "class"):
        with pytest.raises(UsageError, match="--out needs a variable name") as info:
            ip.run_line_magic("exec", f"--out {name} true")
        assert type(info.value) is UsageError


def test_a_setting_of_the_wrong_type_is_refused_with_the_value_cut(ip, magics):
    before = magics.kill_grace
    with capture_output() as cap:
        ip.run_line_magic("config", f"ExecMagics.kill_grace = {LONG!r}")
    assert cap.stderr == f"ExecMagics.kill_grace = {CUT} refused: it must be a float; the previous value stays\n"
    assert magics.kill_grace == before


def test_api_and_tools_refuse_empty_commands_and_unknown_shells_in_their_own_words(engine):
    from execmagic.agents.tools import Toolbox

    one_line_problem(lambda: execmagic.spawn([], engine=engine), r"^argv is empty")
    one_line_problem(lambda: execmagic.spawn("", engine=engine), r"^argv is empty")
    one_line_problem(lambda: execmagic.read("nope", engine=engine), r"^no background shell 'nope' \(known: none yet\)$")
    box = Toolbox(engine)
    for command in ("", "   \n"):
        answer = box.dispatch("Bash", {"command": command})
        assert answer["success"] is False and answer["error"].startswith("command is empty")
    answer = box.dispatch("BashOutput", {"bash_id": "nope"})
    assert answer["error"] == "no background shell 'nope' (known: none yet); start one with Bash and run_in_background"
    for text in ('{"command": "true", "timeout": ' + "9" * 5000 + "}", "[" * 100_000):
        answer = box.dispatch("Bash", text)
        assert answer["success"] is False and answer["error"].startswith("arguments are not valid JSON")


def test_magics_word_an_unknown_shell_for_a_notebook(ip, magics):
    with pytest.raises(UsageError, match=r"^no background shell 'nope' \(known: none yet\); start one with %bg$"):
        ip.run_line_magic("bgout", "nope")


def test_a_refused_config_is_said_once_and_none_means_no_limit(ip, magics, caplog):
    """One line in the cell, nothing logged besides (%config logs what a configurable raises: ERROR:root:);
    ``None``, the default of a setting that allows it, can be set back."""
    try:
        with capture_output() as cap:
            ip.run_line_magic("config", "ExecMagics.timeout = -3")
        assert cap.stderr.count("\n") == 1 and "refused" in cap.stderr
        assert not [r for r in caplog.records if r.levelname == "ERROR"], caplog.text
        ip.run_line_magic("config", "ExecMagics.timeout = 300")
        ip.run_line_magic("config", "ExecMagics.timeout = None")
        assert magics.timeout is None
    finally:
        ip.run_line_magic("config", "ExecMagics.timeout = None")


def test_an_option_line_parsed_again_gives_a_namespace_of_its_own_and_a_mistake_again():
    """Option lines are parsed once per parser and kept (a notebook repeats them); each call still gets its own
    namespace and lists, and a line argparse refuses is refused every time."""
    import argparse

    from IPython.core.error import UsageError

    from execmagic.magics.options import parse_line

    parser = argparse.ArgumentParser(prog="t")
    parser.add_argument("--env", action="append", default=[])
    parser.add_argument("--timeout", type=float)
    first, rest = parse_line("--env A=1 --timeout 2 echo hi", parser, command_follows=True)
    first.env.append("B=2")
    first.timeout = 9.0
    again, rest_again = parse_line("--env A=1 --timeout 2 echo there", parser, command_follows=True)
    assert (again.env, again.timeout, rest, rest_again) == (["A=1"], 2.0, "echo hi", "echo there")
    for _ in range(2):
        with pytest.raises((UsageError, SystemExit)):
            parse_line("--timeout soon echo", parser, command_follows=True)
