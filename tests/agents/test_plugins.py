"""Plugin manifests checked against their schema, binaries kept in their folder, and calls over real plugins.

The protocol's plain examples are in ``test_orchestrator_shapes.py``; these are the harder cases.
"""

from __future__ import annotations

import json
import os
import stat
import sys

import pytest

from execmagic.agents.plugins import (
    MAX_RESULT_LINE,
    ManifestError,
    PluginTool,
    load_manifest,
    parse_manifest,
)
from execmagic.agents.tools import Toolbox
from execmagic.engine import UsageProblem

RESULT_OK = '{"success": true, "output": "ok", "error": null}'


def executable(path, body):
    path.write_text(body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def python_plugin(folder, name, code):
    """A plugin written in Python (the interpreter running the tests)."""
    return executable(folder / name, f"#!{sys.executable}\n{code}")


def manifest(folder, *, tool=None, exec_=None, parameters=None, name="tool.json"):
    """Write a JSON manifest (``None`` parts get sensible values) and return its path."""
    data = {"tool": tool if tool is not None else {"name": "t", "version": "1", "description": "a test tool"},
            "exec": exec_ if exec_ is not None else {"binary": "tool.sh"}}
    if parameters is not None:
        data["parameters"] = parameters
    path = folder / name
    path.write_text(json.dumps(data))
    return str(path)


@pytest.fixture
def folder(tmp_path):
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    executable(plugins / "tool.sh", f"#!/bin/sh\ncat >/dev/null\necho '{RESULT_OK}'\n")
    return plugins


def problem(path):
    """The one-line error loading ``path`` gives."""
    with pytest.raises(ManifestError) as caught:
        load_manifest(path)
    error = caught.value
    assert isinstance(error, UsageProblem) and "\n" not in str(error)
    assert str(error).startswith(f"plugin manifest {path}")
    return error


# -- the schema --------------------------------------------------------------------------------------
@pytest.mark.parametrize(("parameters", "field", "reason"), [
    (5, "parameters", "must be a list, not the integer 5"),
    ([5], "parameters[0]", "must be a table, not the integer 5"),
    ([{"name": "pin", "type": "integer", "required": "no"}], "parameters[0].required",
     "must be true or false, not the string 'no'"),
    ([{"name": "pin", "type": "integer", "required": 1}], "parameters[0].required",
     "must be true or false, not the integer 1"),
    ([{"name": "pin", "type": "int"}], "parameters[0].type", "must be one of string, integer, number, boolean"),
    ([{"name": "pin"}], "parameters[0].type", "is missing"),
    ([{"name": "my pin", "type": "integer"}], "parameters[0].name", "must match ^[a-zA-Z0-9_-]{1,64}$"),
    ([{"name": "pin", "type": "integer", "requried": True}], "parameters[0].requried", "is not a field here"),
    ([{"name": "pin", "type": "integer", "description": 7}], "parameters[0].description", "must be a string"),
    ([{"name": "tags", "type": "array"}], "parameters[0].items", "is missing"),
    ([{"name": "tags", "type": "array", "items": {"type": "list"}}], "parameters[0].items.type", "must be one of"),
    ([{"name": "grid", "type": "array", "items": {"type": "array"}}], "parameters[0].items.items", "is missing"),
    ([{"name": "pin", "type": "integer", "default": "5"}], "parameters[0].default",
     "must be an integer, not the string '5' (the parameter's type is integer)"),
    ([{"name": "on", "type": "integer", "default": True}], "parameters[0].default", "must be an integer"),
    ([{"name": "pin", "type": "integer"}, {"name": "pin", "type": "string"}], "parameters[1].name",
     "'pin' is already the name of parameters[0]"),
])
def test_parameter_problems_name_file_and_field(folder, parameters, field, reason):
    error = problem(manifest(folder, parameters=parameters))
    assert error.field == field and reason in error.reason, str(error)
    assert str(error) == f"plugin manifest {error.path}: {field}: {error.reason}"


@pytest.mark.parametrize(("tool", "exec_", "field", "reason_part"), [
    ({"name": "a b"}, None, "tool.name", "must match"),
    ({"name": "x" * 65}, None, "tool.name", "must match"),
    ({"name": "ok\n"}, None, "tool.name", "must match"),
    ({"name": ""}, None, "tool.name", "must match"),
    ({"name": 5}, None, "tool.name", "must be a string, not the integer 5"),
    ({"name": "t", "version": 1.0}, None, "tool.version", "must be a string, not the number 1.0"),
    ({"name": "t", "description": None}, None, "tool.description", "must be a string, not null"),
    ({"name": "t", "author": "me"}, None, "tool.author", "is not a field here (known: name, version, description)"),
    ({"version": "1"}, None, "tool.name", "is missing"),
    ({"name": "t"}, {}, "exec.binary", "is missing"),
    ({"name": "t"}, {"binary": ""}, "exec.binary", "must not be empty"),
    ({"name": "t"}, {"binary": "tool.sh", "timeout": "soon"}, "exec.timeout", "must be a number"),
    ({"name": "t"}, {"binary": "tool.sh", "timeout": True}, "exec.timeout", "must be a number, not the boolean true"),
    ({"name": "t"}, {"binary": "tool.sh", "timeout": 0}, "exec.timeout", "must be more than 0"),
    ({"name": "t"}, {"binary": "tool.sh", "timeout": float("nan")}, "exec.timeout", "must be a number"),
])
def test_tool_and_exec_problems(folder, tool, exec_, field, reason_part):
    error = problem(manifest(folder, tool=tool, exec_=exec_))
    assert error.field == field and reason_part in error.reason, str(error)


def test_tables_themselves_are_checked(folder):
    path = folder / "m.json"
    for data, field, reason in [
        ([1, 2], None, "must be a table of [tool], [exec] and [[parameters]], not a list"),
        ({"exec": {"binary": "tool.sh"}}, "tool", "is missing"),
        ({"tool": "t", "exec": {"binary": "tool.sh"}}, "tool", "must be a table, not the string 't'"),
        ({"tool": {"name": "t"}, "exec": {"binary": "tool.sh"}, "transport": {}}, "transport", "is not a field here"),
    ]:
        path.write_text(json.dumps(data))
        error = problem(str(path))
        assert (error.field, error.reason[:len(reason)]) == (field, reason), str(error)


def test_files_that_cannot_be_read_are_one_line(folder, tmp_path):
    assert problem(str(folder)).reason == "is a directory, not a manifest file"
    assert problem(str(tmp_path / "ghost.toml")).reason == "does not exist"
    (tmp_path / "plain").write_text("")
    assert problem(str(tmp_path / "plain" / "m.toml")).reason == "cannot be read: Not a directory"
    (tmp_path / "loop.toml").symlink_to(tmp_path / "loop.toml")
    assert problem(str(tmp_path / "loop.toml")).reason == "cannot be read: Too many levels of symbolic links"
    (folder / "bad.toml").write_text('[tool]\nname = "t"\n[tool]\n')
    assert problem(str(folder / "bad.toml")).reason.startswith("cannot be parsed as TOML: ")
    (folder / "latin.json").write_bytes(b'{"tool": {"name": "caf\xe9"}}')
    assert problem(str(folder / "latin.json")).reason.startswith("cannot be parsed as JSON: ")


def test_a_valid_toml_manifest_with_every_field(folder):
    (folder / "full.toml").write_text(
        '[tool]\nname = "tagger"\nversion = "2.1"\ndescription = "Tag things"\n\n'
        '[exec]\nbinary = "tool.sh"\ntimeout = 3\n\n'
        '[[parameters]]\nname = "tags"\ntype = "array"\nitems = { type = "string" }\nrequired = true\n\n'
        '[[parameters]]\nname = "limit"\ntype = "integer"\ndescription = "at most"\ndefault = 10\n')
    m = load_manifest(str(folder / "full.toml"))
    assert (m.name, m.version, m.description, m.timeout) == ("tagger", "2.1", "Tag things", 3.0)
    assert m.binary == str((folder / "tool.sh").resolve())
    assert PluginTool(m).schema() == {"type": "object", "required": ["tags"], "properties": {
        "tags": {"type": "array", "description": "", "items": {"type": "string"}},
        "limit": {"type": "integer", "description": "at most", "default": 10}}, "additionalProperties": False}


def test_parse_manifest_names_a_stand_in_when_there_is_no_file(folder):
    with pytest.raises(ManifestError, match=r"^plugin manifest <manifest>: parameters: must be a list"):
        parse_manifest({"tool": {"name": "t"}, "exec": {"binary": "tool.sh"}, "parameters": 5}, str(folder))


# -- where the binary may be -----------------------------------------------------------------------
def test_binary_must_stay_in_the_manifest_folder(folder, tmp_path):
    outside = executable(tmp_path / "outside.sh", "#!/bin/sh\necho hi\n")
    error = problem(manifest(folder, exec_={"binary": "../../bin/sh"}))
    assert error.field == "exec.binary" and "outside the manifest's folder" in error.reason
    assert "give an absolute path" in error.reason
    assert "outside the manifest's folder" in problem(manifest(folder, exec_={"binary": "../outside.sh"})).reason
    (folder / "sneaky").symlink_to(outside)  # a link inside pointing out is resolved, and refused
    assert "outside the manifest's folder" in problem(manifest(folder, exec_={"binary": "sneaky"})).reason
    (folder / "bin").mkdir()
    (folder / "bin" / "inner").symlink_to(folder / "tool.sh")  # a link that stays inside is fine
    assert load_manifest(manifest(folder, exec_={"binary": "bin/inner"})).binary == str((folder / "tool.sh").resolve())
    assert load_manifest(manifest(folder, exec_={"binary": str(outside)})).binary == str(outside)  # absolute: allowed


def test_binary_not_found_or_not_executable(folder):
    error = problem(manifest(folder, exec_={"binary": "sh"}))  # not looked up on PATH
    assert "binary 'sh' not found in" in error.reason and "not on PATH" in error.reason
    assert "binary '/no/such/tool' not found" in problem(manifest(folder, exec_={"binary": "/no/such/tool"})).reason
    (folder / "data.txt").write_text("not a program")
    assert "is not an executable file" in problem(manifest(folder, exec_={"binary": "data.txt"})).reason
    assert "is not an executable file" in problem(manifest(folder, exec_={"binary": "."})).reason


# -- calls -------------------------------------------------------------------------------------------
def test_arguments_arrive_as_sent_without_defaults(engine, folder):
    python_plugin(folder, "echo.py", "import json, sys\nline = sys.stdin.readline()\n"
                  "print(json.dumps({'success': True, 'output': line, 'error': None}))\n")
    tool = PluginTool(load_manifest(manifest(folder, exec_={"binary": "echo.py"}, parameters=[
        {"name": "pin", "type": "integer", "default": 5}, {"name": "mode", "type": "string", "default": "out"}])), engine)
    assert tool.schema()["properties"]["pin"]["default"] == 5  # advertised ...
    assert tool.call({})["output"] == "{}\n"  # ... but not filled in
    assert json.loads(tool.call({"mode": "in", "note": "é ✓"})["output"]) == {"mode": "in", "note": "é ✓"}


def test_a_large_result_line_is_delivered(engine, folder):
    python_plugin(folder, "big.py", "import json, sys\nsys.stdin.read()\n"
                  "sys.stdout.write(json.dumps({'success': True, 'output': 'x' * 5_000_000, 'error': None}) + '\\n')\n"
                  "sys.stdout.write('trailing chatter\\n')\n")
    answer = PluginTool(load_manifest(manifest(folder, exec_={"binary": "big.py"})), engine).call({})
    assert answer["success"] is True and answer["output"] == "x" * 5_000_000


def test_a_result_line_past_the_limit_is_too_large_not_malformed(engine, folder):
    python_plugin(folder, "huge.py", "import json, sys\nsys.stdin.read()\n"
                  f"sys.stdout.write(json.dumps({{'success': True, 'output': 'x' * {MAX_RESULT_LINE}}}) + '\\n')\n")
    answer = PluginTool(load_manifest(manifest(folder, exec_={"binary": "huge.py"})), engine).call({})
    assert answer["success"] is False and "result too large" in answer["error"] and "not a result line" not in answer["error"]


def test_binary_output_is_not_a_result_line(engine, folder):
    executable(folder / "bin.sh", "#!/bin/sh\nprintf 'a\\000b\\n'\n")
    answer = PluginTool(load_manifest(manifest(folder, exec_={"binary": "bin.sh"})), engine).call({})
    assert answer["success"] is False and "binary output" in answer["error"]


def test_a_plugin_is_a_toolbox_tool(engine, folder):
    box = Toolbox(engine, grace=0.3)
    box.add(PluginTool(load_manifest(manifest(folder, parameters=[{"name": "pin", "type": "integer",
                                                                     "required": True}])), engine).spec())
    assert box.dispatch("t", {"pin": 3}) == {"success": True, "output": "ok", "error": None}
    assert "missing required argument 'pin'" in box.dispatch("t", {})["error"]
    assert os.path.exists(folder / "tool.sh")
