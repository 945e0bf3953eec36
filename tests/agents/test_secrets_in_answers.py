"""Secrets in agent answers: a token printed in two pieces is redacted across two BashOutput reads,
and an answer is cut to exactly its budget -- one character over it, not at it."""

from __future__ import annotations

import pytest

from execmagic.agents.shaping import Part, shape
from execmagic.agents.tools import MAX_OUTPUT_CHARS, Toolbox
from waiting import wait_until

TOKEN = "ghp_" + "a1B2c3D4e5" * 4


@pytest.fixture
def box(engine):
    return Toolbox(engine, grace=0.3, sandbox="off")  # the test's files are in the host's /tmp


def _printed(box, shell, until):
    """Wait (on a reader of our own, which does not move the agent's) until the shell printed ``until``."""
    seen = ""
    while until not in seen:
        out = box.engine.shells.read(shell, reader="test-probe", wait=10)
        assert out.stdout or out.shell.running, seen
        seen += out.stdout
    return seen


def _ended(box, shell):
    """Wait until the shell ended and all it printed was read (by our own reader)."""
    wait_until(lambda: box.engine.shells.read(shell, reader="test-probe", wait=10).at_end, 30, f"{shell} to end",
               interval=0)


def test_a_token_printed_in_two_pieces_is_redacted_across_two_reads(box, tmp_path):
    """Twenty characters, a pause, the rest: each read alone shows nothing shaped like a token."""
    go = tmp_path / "go"
    command = (f"echo starting; printf %s {TOKEN[:20]}; while [ ! -e {go} ]; do sleep 0.01; done; "
               f"echo {TOKEN[20:]}; echo done")
    shell = box.dispatch("Bash", {"command": command, "run_in_background": True})["shell_id"]
    _printed(box, shell, TOKEN[:20])
    first = box.dispatch("BashOutput", {"bash_id": shell})
    assert first["output"] == "starting\n" and first["running"]
    assert "the last 20 characters are held back until the next read" in first["notes"][0]
    go.touch()
    _ended(box, shell)
    second = box.dispatch("BashOutput", {"bash_id": shell})
    assert second["output"] == "[REDACTED]\ndone\n" and second["finished_and_read"] and "notes" not in second
    for piece in (TOKEN[:12], TOKEN[8:20], TOKEN[20:32], TOKEN[-12:]):
        assert piece not in first["output"] + second["output"]


def test_a_named_secret_and_a_known_value_wait_for_their_whole(box, tmp_path, monkeypatch):
    """A name with its value still to come, and the start of a known secret value, are held back too."""
    monkeypatch.setenv("DB_PASSWORD", "correct horse battery")  # held back from the shell; its value still known
    go1, go2 = tmp_path / "go1", tmp_path / "go2"
    wait = "while [ ! -e {} ]; do sleep 0.01; done"
    command = (f"printf 'config loaded\\n  password: '; {wait.format(go1)}; printf 'Tr0ub4dor3xyz\\nthe phrase: "
               f"correct horse'; {wait.format(go2)}; echo ' battery'")
    shell = box.dispatch("Bash", {"command": command, "run_in_background": True})["shell_id"]
    _printed(box, shell, "password: ")
    assert box.dispatch("BashOutput", {"bash_id": shell})["output"] == "config loaded\n  "
    go1.touch()
    _printed(box, shell, "correct horse")
    assert box.dispatch("BashOutput", {"bash_id": shell})["output"] == "password: [REDACTED]\nthe phrase: "
    go2.touch()
    _ended(box, shell)
    assert box.dispatch("BashOutput", {"bash_id": shell})["output"] == "[REDACTED:DB_PASSWORD]\n"


def test_what_is_held_back_is_released_when_the_shell_ends(box):
    shell = box.dispatch("Bash", {"command": "printf 'no newline at the end'", "run_in_background": True})["shell_id"]
    _ended(box, shell)
    answer = box.dispatch("BashOutput", {"bash_id": shell})
    assert answer["output"] == "no newline at the end" and answer["finished_and_read"]


def test_without_redaction_nothing_is_held_back(engine):
    box = Toolbox(engine, grace=0.3, redact_secrets=False)
    shell = box.dispatch("Bash", {"command": f"printf %s {TOKEN[:20]}; sleep 30", "run_in_background": True})
    try:
        _printed(box, shell["shell_id"], TOKEN[:20])
        assert box.dispatch("BashOutput", {"bash_id": shell["shell_id"]})["output"] == TOKEN[:20]
    finally:
        box.dispatch("KillShell", {"shell_id": shell["shell_id"]})


@pytest.mark.parametrize("size", [29_999, 30_000, 30_001, 1_000_000])
def test_an_answer_is_cut_to_exactly_its_budget(size):
    """30,000 characters or fewer: not cut; more: cut to exactly 30,000, stdout and stderr alike."""
    text = ("x" * 99 + "\n") * (size // 100) + "y" * (size % 100)
    one = shape([Part(text)], MAX_OUTPUT_CHARS)
    two = shape([Part(text[: size // 2]), Part(text[size // 2:], header="[stderr]\n")], MAX_OUTPUT_CHARS)
    if size <= MAX_OUTPUT_CHARS:
        assert one == text
    else:
        assert len(one) == MAX_OUTPUT_CHARS and "omitted from the middle" in one
        assert one.startswith(text[:1000]) and one.endswith(text[-1000:])
        assert len(two) == MAX_OUTPUT_CHARS and "[stderr]\n" in two


def test_a_bash_answer_of_exactly_the_budget_is_whole(box):
    answer = box.dispatch("Bash", {"command": f"head -c {MAX_OUTPUT_CHARS} /dev/zero | tr '\\0' x"})
    assert answer["output"] == "x" * MAX_OUTPUT_CHARS
    over = box.dispatch("Bash", {"command": f"head -c {MAX_OUTPUT_CHARS + 1} /dev/zero | tr '\\0' x"})
    assert len(over["output"]) == MAX_OUTPUT_CHARS and "1 characters omitted" not in over["output"]
