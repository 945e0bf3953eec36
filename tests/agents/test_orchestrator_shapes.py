"""The contracts orchestrators rely on, example by example, over real processes.

``execute``/``SubprocessPrimitive`` (a config dict in, a result record out), argv runs without a
shell, and JSON-line plugins.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import stat
import sys
import time

import pytest

from execmagic.agents.execute import SubprocessPrimitive, execute
from execmagic.agents.plugins import PluginManifest, PluginParameter, PluginTool, load_manifest
from execmagic.engine import RunOptions


# -- execute / SubprocessPrimitive ---------------------------------------------------------------
def run_async(config, params=None, engine=None):
    return asyncio.run(SubprocessPrimitive(engine).execute(config, params or {}))


def test_execute_simple_command(engine):
    result = run_async({"command": "echo", "args": ["Hello world"]}, {}, engine)
    assert result.success is True and result.stdout == "Hello world\n" and result.return_code == 0
    assert isinstance(result.duration_ms, int) and result.duration_ms >= 0


def test_execute_python_script_with_cwd_env_timeout(engine, tmp_path):
    (tmp_path / "script.py").write_text("import os, sys; print(sys.argv[1:], os.environ['DEBUG'])")
    result = execute({"command": sys.executable, "args": ["script.py", "--input", "data.json"],
                      "cwd": str(tmp_path), "env": {"DEBUG": "1"}, "timeout": 60}, {}, engine=engine)
    assert result.success and result.stdout == "['--input', 'data.json'] 1\n"


def test_execute_env_variables(engine):
    result = run_async({"command": "bash", "args": ["-c", "echo $MESSAGE"], "env": {"MESSAGE": "Hello from env"}},
                       {}, engine)
    assert result.stdout == "Hello from env\n"


def test_execute_input_data(engine):
    result = execute({"command": "grep", "args": ["pattern"], "input_data": "line1\npattern\nline3"}, {}, engine=engine)
    assert "pattern" in result.stdout


def test_execute_templating_env_then_params(engine, tmp_path, monkeypatch):
    monkeypatch.setenv("EXECMAGIC_T_PY", sys.executable)
    result = execute({
        "command": "${EXECMAGIC_T_PY:-python3}",
        "args": ["-c", "import sys; print(sys.argv[1:])", "--file", "{input_file}", "{unknown}", "${MISSING:-dflt}"],
        "cwd": "{project}", "input_data": "{query}",
    }, {"input_file": "data.csv", "project": str(tmp_path), "query": "SELECT 1"}, engine=engine)
    assert result.stdout == "['--file', 'data.csv', '{unknown}', 'dflt']\n"
    assert execute({"command": "cat", "input_data": "{query}"}, {"query": "SELECT *"}, engine=engine).stdout == "SELECT *"


def test_execute_env_merge_rule(engine, monkeypatch):
    monkeypatch.setenv("EXECMAGIC_T_OUTER", "outer")
    small = execute({"command": "sh", "args": ["-c", 'echo "[$EXECMAGIC_T_OUTER] $X"'], "env": {"X": "${EXECMAGIC_T_OUTER:-none}"}},
                    {}, engine=engine)
    assert small.stdout == "[outer] outer\n"  # fewer than 50 variables: merged over os.environ
    complete = {f"V{i}": str(i) for i in range(50)} | {"PATH": os.environ["PATH"]}
    big = execute({"command": "sh", "args": ["-c", 'echo "[$EXECMAGIC_T_OUTER] $V7"'], "env": complete}, {}, engine=engine)
    assert big.stdout == "[] 7\n"  # 50 or more: taken as the complete environment


def test_execute_capture_output_false_goes_to_parent(engine, capfd):
    result = execute({"command": "echo", "args": ["to parent"], "capture_output": False}, {}, engine=engine)
    assert result.success and result.stdout == ""
    assert "to parent" in capfd.readouterr().out


def test_execute_command_not_found(engine):
    result = run_async({"command": "nonexistent_command"}, {}, engine)
    assert result.success is False and "not found" in result.stderr.lower() and result.return_code == -1


def test_execute_timeout(engine):
    begin = time.monotonic()
    result = execute({"command": "sleep", "args": ["30"], "timeout": 1}, {}, engine=engine)
    assert result.success is False and "timed out" in result.stderr.lower()
    assert time.monotonic() - begin < 5


def test_execute_permission_denied(engine, tmp_path):
    script = tmp_path / "private_script"
    script.write_text("#!/bin/sh\necho secret\n")
    script.chmod(0o600)
    result = execute({"command": str(script)}, {}, engine=engine)
    assert result.success is False and "Permission denied" in result.stderr


def test_execute_start_failure_reason_comes_from_the_error_code_field(engine, monkeypatch):
    """The OS reason is looked up from ``Result.error_code``, never read back out of the error text."""
    import dataclasses

    real_run = engine.run

    def run_with_other_code(*args, **kwargs):
        return dataclasses.replace(real_run(*args, **kwargs), error_code="EACCES")

    monkeypatch.setattr(engine, "run", run_with_other_code)
    result = execute({"command": "nonexistent_command"}, {}, engine=engine)
    assert result.stderr == "exec: nonexistent_command not found in PATH (ENOENT): Permission denied"
    assert (result.success, result.return_code) == (False, -1)


def test_execute_start_failure_without_an_error_code_says_io_error(engine, monkeypatch):
    import dataclasses

    real_run = engine.run
    monkeypatch.setattr(engine, "run", lambda *a, **k: dataclasses.replace(real_run(*a, **k), error_code=None))
    result = execute({"command": "nonexistent_command"}, {}, engine=engine)
    assert result.stderr.endswith(f": {os.strerror(errno.EIO)}")


def test_execute_never_raises_on_bad_config(engine):
    assert execute({}, {}, engine=engine).success is False
    assert "args" in execute({"command": "echo", "args": "not a list"}, {}, engine=engine).stderr
    assert execute({"command": "echo", "args": ["${unclosed"]}, {}, engine=engine).success is False


# -- argv runs, no shell -------------------------------------------------------------------------
def test_argv_echo(engine):
    r = engine.run_argv(["/bin/echo", "hello"])
    assert r.success and r.stdout.strip() == "hello"


def test_argv_stdin(engine):
    assert engine.run_argv(["/bin/cat"], input="hello world").stdout == "hello world"


def test_argv_env_with_clear_env(engine):
    r = engine.run_argv(["/usr/bin/env"], env={"MY_TEST_VAR": "test_value"}, clear_env=True)
    assert r.success and "MY_TEST_VAR=test_value" in r.stdout and "PATH=" not in r.stdout


def test_argv_missing_command(engine):
    r = engine.run_argv([])
    assert not r.success and r.error == "exec: empty command (EINVAL)"


def test_argv_nonexistent_path_is_127(engine):
    r = engine.run_argv(["/nonexistent/command/path"])
    assert not r.success and r.exit_code == 127


def test_argv_path_resolution(engine):
    r = engine.run_argv(["echo", "hello", "from", "PATH"])
    assert r.success and "hello from PATH" in r.stdout


def test_argv_cwd(engine, tmp_path):
    assert engine.run_argv(["pwd"], cwd=str(tmp_path)).stdout == f"{tmp_path}\n"


def test_argv_timeout_is_124_and_kills(engine):
    r = engine.run_argv(["sleep", "10"], options=RunOptions(timeout=1, grace=0.3))
    assert not r.success and r.exit_code == 124 and "timed out" in r.outcome()


def test_argv_fast_command_under_long_timeout(engine):
    begin = time.monotonic()
    r = engine.run_argv(["echo", "quick"], options=RunOptions(timeout=60))
    assert r.success and time.monotonic() - begin < 1


def test_argv_string_is_one_argument(engine):
    assert engine.run_argv(["printf", "[%s]", "a b  c"]).stdout == "[a b  c]"


# -- JSON-line plugins -----------------------------------------------------------------------------
def make_plugin(tmp_path, body, name="tool", params=(), timeout=None, fmt="toml"):
    script = tmp_path / f"{name}.sh"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    lines = ["[tool]", f'name = "{name}"', 'version = "1.0.0"', f'description = "Test tool: {name}"', "",
             "[exec]", f'binary = "{script.name}"']
    if timeout is not None:
        lines.append(f"timeout = {timeout}")
    for p in params:
        lines += ["", "[[parameters]]", f'name = "{p[0]}"', f'type = "{p[1]}"', f'description = "param {p[0]}"',
                  f"required = {'true' if p[2] else 'false'}"]
    manifest = tmp_path / f"{name}.toml"
    manifest.write_text("\n".join(lines) + "\n")
    if fmt == "json":
        from execmagic.agents.manifest import tomllib  # the standard one, or tomli before Python 3.11

        data = tomllib.loads(manifest.read_text())
        manifest = tmp_path / f"{name}.json"
        manifest.write_text(json.dumps(data))
    return load_manifest(str(manifest))


def test_plugin_name_description_and_schema(engine, tmp_path):
    m = make_plugin(tmp_path, "cat >/dev/null\n", "gpio_write",
                    [("device", "string", True), ("pin", "integer", True), ("value", "integer", False)])
    tool = PluginTool(m, engine)
    assert (tool.spec().name, tool.spec().description) == ("gpio_write", "Test tool: gpio_write")
    schema = tool.schema()
    assert schema["type"] == "object"
    assert schema["properties"]["device"]["type"] == "string" and schema["properties"]["pin"]["type"] == "integer"
    assert set(schema["required"]) == {"device", "pin"}


def test_plugin_parameterless_tool_has_empty_required(engine, tmp_path):
    assert PluginTool(make_plugin(tmp_path, "true\n", "noop", fmt="json"), engine).schema()["required"] == []


def test_plugin_successful_gets_args_as_one_json_line(engine, tmp_path):
    m = make_plugin(tmp_path, 'read -r line\nprintf \'{"success":true,"output":"%s","error":null}\\n\' "$(echo "$line" | tr -d \'"\')"\n',
                    "echo_tool", [("pin", "integer", True)])
    answer = PluginTool(m, engine).call({"pin": 5})
    assert answer == {"success": True, "output": "{pin: 5}", "error": None}


def test_plugin_hanging_times_out_and_is_stopped(engine, tmp_path):
    m = make_plugin(tmp_path, "echo starting >&2\nsleep 60 & sleep 61\n", "sleep_tool", timeout=0.5)
    begin = time.monotonic()
    answer = PluginTool(m, engine, grace=0.3).call({})
    assert time.monotonic() - begin < 5
    assert answer["success"] is False and "timed out" in answer["error"] and "stderr: starting" in answer["error"]


def test_plugin_nonzero_exit_overrides_success_line(engine, tmp_path):
    m = make_plugin(tmp_path, 'echo \'{"success":true,"output":"ok","error":null}\'\necho boom >&2\nexit 3\n', "liar")
    answer = PluginTool(m, engine).call({})
    assert answer["success"] is False and "exited with exit 3" in answer["error"] and "boom" in answer["error"]


def test_plugin_empty_and_unparseable_output(engine, tmp_path):
    empty = PluginTool(make_plugin(tmp_path, "echo only-stderr >&2\n", "empty"), engine).call({})
    assert empty["success"] is False and "empty output" in empty["error"] and "only-stderr" in empty["error"]
    bad = PluginTool(make_plugin(tmp_path, "echo not json\n", "bad"), engine).call({})
    assert bad["success"] is False and "not a result line" in bad["error"] and "'not json'" in bad["error"]


def test_plugin_stderr_flood_does_not_stall(engine, tmp_path):
    body = "head -c 1000000 /dev/zero | tr '\\0' x >&2\necho '{\"success\":true,\"output\":\"fine\",\"error\":null}'\n"
    answer = PluginTool(make_plugin(tmp_path, body, "noisy", timeout=10), engine).call({})
    assert answer == {"success": True, "output": "fine", "error": None}


def test_plugin_manifest_errors_are_one_line(tmp_path):
    from execmagic.engine import UsageProblem

    (tmp_path / "broken.toml").write_text("[tool\n")
    with pytest.raises(UsageProblem, match="cannot be parsed"):
        load_manifest(str(tmp_path / "broken.toml"))
    (tmp_path / "nobin.json").write_text(json.dumps({"tool": {"name": "x"}, "exec": {"binary": "no-such-binary-x"}}))
    with pytest.raises(UsageProblem, match="binary 'no-such-binary-x' not found"):
        load_manifest(str(tmp_path / "nobin.json"))
    assert PluginManifest("x", "1", "", "/bin/true", (PluginParameter("a", "string"),)).parameters[0].required is False
