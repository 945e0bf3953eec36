"""JSON-line plugin tools (seed 003): any executable becomes a tool through a manifest.

Protocol, one line each way::

    host → plugin stdin:   {"device": "pico0", "pin": 5}\\n      (then stdin is closed)
    plugin → stdout:       {"success": true, "output": "done", "error": null}\\n

The call has a timeout, reads stderr at the same time as stdout (a plugin that
fills stderr first cannot stall), stops the plugin's whole process tree, and a
non-zero exit overrides a success line.  Empty or unparseable output is a
clear error with an excerpt of stderr.

A manifest is TOML or JSON::

    [tool]
    name = "gpio_write"
    version = "1.0.0"
    description = "Set a GPIO pin"

    [exec]
    binary = "gpio_write.py"     # relative to the manifest's folder, or on PATH
    timeout = 10                 # seconds (the seed's default)

    [[parameters]]
    name = "pin"
    type = "integer"
    description = "Pin number"
    required = true
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sys
from collections.abc import Mapping
from typing import Any

from .errors import UsageProblem
from .runner import Engine
from .tools import ToolSpec

#: Seconds a plugin call may take when its manifest names no timeout (the seed's 10 s).
DEFAULT_PLUGIN_TIMEOUT = 10.0
#: Characters of stderr quoted in an error (the seed quotes up to 512 bytes).
STDERR_EXCERPT = 512
_TYPES = {"string", "integer", "number", "boolean", "object", "array"}

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib


@dataclasses.dataclass(frozen=True)
class PluginParameter:
    name: str
    type: str
    description: str = ""
    required: bool = False
    default: Any = None


@dataclasses.dataclass(frozen=True)
class PluginManifest:
    name: str
    version: str
    description: str
    binary: str
    parameters: tuple[PluginParameter, ...] = ()
    timeout: float = DEFAULT_PLUGIN_TIMEOUT


def parse_manifest(data: Mapping[str, Any], base_dir: str = ".") -> PluginManifest:
    """Check a manifest's structure; every problem is one :class:`UsageProblem` line naming the field."""
    tool = data.get("tool")
    if not isinstance(tool, Mapping):
        raise UsageProblem("plugin manifest needs a [tool] table with name, version and description")
    name = tool.get("name")
    if not isinstance(name, str) or not name.replace("_", "").replace("-", "").isalnum():
        raise UsageProblem(f"plugin manifest: tool.name must be a word (letters, digits, '_', '-'), not {name!r}")
    exec_table = data.get("exec")
    if not isinstance(exec_table, Mapping) or not isinstance(exec_table.get("binary"), str):
        raise UsageProblem(f"plugin {name!r}: manifest needs [exec] binary = \"…\"")
    binary = exec_table["binary"]
    local = os.path.join(base_dir, binary)
    resolved = os.path.abspath(local) if ("/" in binary or os.path.exists(local)) else shutil.which(binary)
    if resolved is None or not os.path.exists(resolved):
        raise UsageProblem(f"plugin {name!r}: binary {binary!r} not found (next to the manifest or on PATH)")
    timeout = exec_table.get("timeout", DEFAULT_PLUGIN_TIMEOUT)
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0:
        raise UsageProblem(f"plugin {name!r}: exec.timeout must be a positive number of seconds")
    params = []
    for i, raw in enumerate(data.get("parameters") or []):
        if not isinstance(raw, Mapping) or not isinstance(raw.get("name"), str):
            raise UsageProblem(f"plugin {name!r}: parameters[{i}] needs a name")
        if raw.get("type") not in _TYPES:
            raise UsageProblem(f"plugin {name!r}: parameter {raw['name']!r} has type {raw.get('type')!r};"
                               f" use one of {', '.join(sorted(_TYPES))}")
        params.append(PluginParameter(raw["name"], raw["type"], str(raw.get("description", "")),
                                      bool(raw.get("required", False)), raw.get("default")))
    return PluginManifest(name, str(tool.get("version", "0")), str(tool.get("description", "")), resolved,
                          tuple(params), float(timeout))


def load_manifest(path: str) -> PluginManifest:
    """Read a ``.toml`` or ``.json`` manifest file."""
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh) if path.endswith(".toml") else json.load(fh)
    except FileNotFoundError:
        raise UsageProblem(f"plugin manifest {path!r} does not exist") from None
    except (tomllib.TOMLDecodeError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UsageProblem(f"plugin manifest {path!r} cannot be parsed: {exc}") from None
    return parse_manifest(data, os.path.dirname(os.path.abspath(path)))


class PluginTool:
    """A manifest made callable: its JSON Schema, and :meth:`call` speaking the one-line protocol."""

    def __init__(self, manifest: PluginManifest, engine: Engine | None = None, grace: float = 2.0) -> None:
        from .api import default_engine

        self.manifest = manifest
        self.engine = engine or default_engine()
        self.grace = grace

    def schema(self) -> dict[str, Any]:
        """JSON Schema of the arguments, built from the manifest's parameters."""
        properties: dict[str, Any] = {}
        for p in self.manifest.parameters:
            prop: dict[str, Any] = {"type": p.type, "description": p.description}
            if p.default is not None:
                prop["default"] = p.default
            properties[p.name] = prop
        return {"type": "object", "properties": properties,
                "required": [p.name for p in self.manifest.parameters if p.required]}

    def spec(self) -> ToolSpec:
        return ToolSpec(self.manifest.name, self.manifest.description, self.schema(), self.call)

    def _fail(self, what: str, stderr: str = "") -> dict[str, Any]:
        excerpt = stderr.strip()[:STDERR_EXCERPT]
        return {"success": False, "output": "",
                "error": f"plugin '{self.manifest.name}' {what}" + (f"; stderr: {excerpt}" if excerpt else "")}

    def call(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Send ``arguments`` as one JSON line; return the plugin's ``{success, output, error}`` answer."""
        args = {p.name: p.default for p in self.manifest.parameters if not p.required and p.default is not None}
        args.update(arguments)
        plan = self.engine.plan_argv([self.manifest.binary], input=json.dumps(args) + "\n", isolated=True)
        options = dataclasses.replace(self.engine.options, timeout=self.manifest.timeout, grace=self.grace)
        result = self.engine.run(plan, options=options, guard="none")
        if result.error:
            return self._fail(f"could not start: {result.error}")
        line = result.stdout.split("\n", 1)[0].strip() if result.stdout else ""
        if not line:
            if result.timed_out:
                return self._fail(f"timed out after {self.manifest.timeout:g}s", result.stderr)
            return self._fail("wrote nothing on stdout (empty output)", result.stderr)
        try:
            answer = json.loads(line)
        except json.JSONDecodeError as exc:
            shown = line if len(line) <= 200 else line[:200] + "…"
            return self._fail(f"output is not a result line: {exc} (got: {shown!r})", result.stderr)
        if not isinstance(answer, Mapping) or not isinstance(answer.get("success"), bool):
            return self._fail(f"output has no boolean 'success' (got: {line[:200]!r})", result.stderr)
        if not result.timed_out and result.exit_code != 0:
            return self._fail(f"exited with {result.outcome()}", result.stderr)  # non-zero exit wins
        return {"success": answer["success"], "output": str(answer.get("output") or ""),
                "error": answer.get("error")}
