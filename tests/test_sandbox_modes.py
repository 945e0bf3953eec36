"""Every sandbox mode's record reaches every help text and list of choices, so a mode is added in one place.

The help texts are made when their modules load; a mode added to the records before that (in a fresh
interpreter) must show in all of them with no other edit, and a word that is no mode is refused as before.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from execmagic.engine import sandbox_modes
from execmagic.engine.sandbox_modes import RECORDS, SANDBOX_MODES, describe_modes, mode_named
from execmagic.process.sandbox import MODES as WALLS_MODES
from execmagic.process.sandbox import SandboxProblem

#: Run in a fresh interpreter: every place a mode's help is shown, as ``{place: (choices, help)}``.
HELPS = """
import json, sys
from execmagic.engine import sandbox_modes
from execmagic.engine.sandbox_modes import SandboxMode
toy = sys.argv[1:]
if toy:  # one more record, before any help text is made: nothing else is edited
    sandbox_modes.RECORDS += (SandboxMode(toy[0], toy[1]),)
    sandbox_modes.SANDBOX_MODES += (toy[0],)
from execmagic.magics.exec_magics import ExecMagics
from execmagic.magics.mcp_magics import McpMagics
from execmagic.mcp import parser

def option(p, flag):
    found = next(a for a in p._actions if flag in a.option_strings)
    return list(found.choices), found.help

trait = ExecMagics.class_traits()["sandbox"]
print(json.dumps({
    "ExecMagics.sandbox": [list(trait.values), trait.help],
    "%exec --sandbox-mode": option(ExecMagics.exec_line.parser, "--sandbox-mode"),
    "%%exec --sandbox-mode": option(ExecMagics.exec_cell.parser, "--sandbox-mode"),
    "%spawn --sandbox-mode": option(ExecMagics.spawn.parser, "--sandbox-mode"),
    "%mcp --sandbox": option(McpMagics.mcp.parser, "--sandbox"),
    "execmagic-mcp --sandbox": option(parser(), "--sandbox"),
}))
"""


def helps(*toy: str) -> dict[str, list]:
    done = subprocess.run([sys.executable, "-c", HELPS, *toy], capture_output=True, text=True, timeout=120, check=True)
    return json.loads(done.stdout)


def test_every_mode_reaches_every_help_text():
    found = helps()
    for place, (choices, text) in found.items():
        assert tuple(choices) == SANDBOX_MODES, place
        for mode in RECORDS:
            assert mode.name in text, (place, mode.name)
    # the long helps say what each mode does, from its record; the short ones point to the long one
    for place in ("ExecMagics.sandbox", "%mcp --sandbox", "execmagic-mcp --sandbox"):
        for mode in RECORDS:
            said = mode.says.split("{roots}")[0]
            assert f"{mode.name} (" in found[place][1] and said in found[place][1], (place, mode.name)
    assert "see ExecMagics.sandbox" in found["%exec --sandbox-mode"][1]


def test_a_new_mode_is_its_record():
    found = helps("scratch", "only a scratch folder writable")
    for place, (choices, text) in found.items():
        assert choices[-1] == "scratch" and "scratch" in text, place
    for place in ("ExecMagics.sandbox", "%mcp --sandbox", "execmagic-mcp --sandbox"):
        assert "scratch (only a scratch folder writable)" in found[place][1], place


def test_the_default_is_marked_where_the_help_has_no_default_column():
    text = describe_modes("the roots", default="auto")
    assert "auto (the default: workspace where" in text and text.count("the default") == 1
    assert "also writable: the roots;" in text
    assert "the default" not in describe_modes("the roots")


def test_a_word_that_is_no_mode_is_a_usage_problem():
    for word in ("sealed", "", "AUTO", "off ", "workspace\n", "{roots}"):
        with pytest.raises(SandboxProblem, match="unknown sandbox mode"):
            mode_named(word)
    assert mode_named("auto").lenient and not mode_named("workspace").lenient


def test_the_walls_build_what_the_modes_choose():
    """Each record chooses among the walls :mod:`execmagic.process.sandbox` builds: nothing (``off``), a
    read-only system, or one with writable roots -- all of which the walls know by name."""
    assert {"off", "read-only", "workspace"} == set(WALLS_MODES)
    assert set(WALLS_MODES) <= set(SANDBOX_MODES)
    assert [m.name for m in RECORDS if not m.confines] == ["off"]
    assert len(set(SANDBOX_MODES)) == len(SANDBOX_MODES) == len(RECORDS)
    names = sandbox_modes.mode_names()
    assert [names.index(name) for name in SANDBOX_MODES] == sorted(names.index(name) for name in SANDBOX_MODES)


def test_the_command_line_refuses_a_word_that_is_no_mode():
    from execmagic.mcp import parser

    with pytest.raises(SystemExit):
        parser().parse_args(["--sandbox", "sealed"])
    assert parser().parse_args([]).sandbox == "auto"
