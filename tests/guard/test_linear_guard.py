"""The guard's work is linear in the command's length, and what it cannot follow it refuses.

A 32,000-character argument with a trigger word in it (``python3 -c '…' {b64}``) took 9.25 s before
anything ran, a 300,000-character one over a minute (the fork-bomb pattern tried a function name at
every offset of the word).  Work is counted, not timed (``tests/work_count.py``); the long word is a
hang check: the suite's own timeout is what it would hit.
"""

from __future__ import annotations

import base64
import gc
import random

import pytest

from execmagic.guard.check import CommandRefused, check, find_danger
from execmagic.guard.listed import simple_commands
from execmagic.guard.secrets import redact
from execmagic.shell.lexer import tokenize
from work_count import growth, work

LINEAR = 2.6


def _word(n: int) -> str:
    return base64.b64encode(random.Random(n).randbytes(n * 3 // 4)).decode()


GUARDED = {
    "a long word after a trigger": lambda n: "python3 -c 'import os' " + _word(n),
    "a long word then ()": lambda n: "rm " + "a" * n + "()",
    "function and a long name": lambda n: "rm; function " + "a" * n,
    "many functions never called": lambda n: ("f(){ f|f; }; " * (n // 13 + 1))[:n] + " rm",
    "many functions of other names never called": lambda n: "".join(f"f{i}(){{ f{i}|f{i}; }} " for i in range(n // 10))[:n] + " rm",
    "many subshell functions never called": lambda n: ("f() ( f|f ); " * (n // 13 + 1))[:n] + " rm",
    "brace words": lambda n: "rm " + ("{a,b} " * (n // 6 + 1))[:n],
    "sequence words": lambda n: "rm " + ("{1..99} " * (n // 8 + 1))[:n],
    "braces glued": lambda n: "rm " + ("{a,b}" * (n // 5 + 1))[:n],
    "one long brace list": lambda n: "rm {" + ",".join(f"d{i}" for i in range(n // 6 + 1))[:n] + "}",
    "a long list of brace lists": lambda n: "rm {" + ("{a,b}," * (n // 6 + 1))[:n] + "c}",
    "braces opened, never closed": lambda n: "rm " + "{" * n + ",}",
    "assignments with braces": lambda n: ("X={a,b} " * (n // 8 + 1))[:n] + " rm",
    "endless loops never closed": lambda n: "rm; " + ("while :; do x & " * (n // 16 + 1))[:n],
    "endless loops closed": lambda n: "rm; " + ("while :; do x; done; " * (n // 21 + 1))[:n],
    "values with code in a subscript": lambda n: ("x='a[$(b)]'; " * (n // 13 + 1))[:n] + " rm",
    "a subscript's code nested": lambda n: "rm; x='" + "a[$(x=a[$(" * (n // 10) + "'",
    "a glob of unclosed brackets where a command stands": lambda n: "/bin/r" + "[" * n + " -rf /",
    "a script added to and run again": lambda n: "rm; " + ("echo 'rm -f x' >> s.sh; sh s.sh\n" * (n // 32 + 1))[:n],
    "a long script run again and again": lambda n: "rm; echo '" + "x" * (n // 2) + "' > s.sh\n" + "sh s.sh\n" * (n // 16),
    "a long script copied again and again": lambda n: "rm; echo '" + "x" * (n // 2) + "' > s.sh\n" + (
        "cp s.sh t.sh; sh < t.sh\n" * (n // 48)),
    "a long script teed again and again": lambda n: "rm; echo '" + "x" * (n // 2) + "' > s.sh\n" + (
        "cat s.sh | tee t.sh; cat t.sh | sh\n" * (n // 64)),
    "copies of copies of a long script": lambda n: "rm; echo '" + "x" * (n // 2) + "' > s0\n" + "".join(
        f"cp s{i} s{i + 1}\n" for i in range(n // 24)),
    "a loud script copied and run again and again": lambda n: "rm; echo '" + "rm -f x;" * (n // 16) + "' > s.sh\n" + (
        "cp s.sh t.sh; sh t.sh\n" * (n // 44)),
    "a file doubled into itself": lambda n: "rm; echo ls > a; " + "cat a a | tee a; " * (n // 17),
    "three loops of many values": lambda n: "rm; " + ("for A in a b c d e f g h i j k l m n o p; do for B in a b c d "
                                                     "e f g h i j k l m n o p; do $A $B -f; done; done\n"
                                                     * (n // 110 + 1))[:n],
    "a glob of brackets and stars, no rule's word": lambda n: "x" + "[*?]" * (n // 4) + " -rf /",
    "a long test of subscripts": lambda n: "rm; [[ '" + "a[" * (n // 2) + "$(b)' ]]",
    "$( nested": lambda n: "rm -rf $(" + "echo $(" * (n // 7),
    "quotes": lambda n: "rm " + "'" * n,
    "backslashes": lambda n: "rm " + "\\" * n,
}


@pytest.mark.parametrize("command", GUARDED)
def test_twice_the_command_is_twice_the_work(command):
    assert growth(GUARDED[command], lambda text: check("all", text), 400) < LINEAR


@pytest.mark.parametrize("text", ["password=" * 200, "token: " * 200, '"key": "' * 200, "a://" + "a:" * 200,
                                  "Bearer " * 200, "a:" * 200])
def test_redaction_work_is_linear(text):
    assert growth(lambda n: (text * (n // len(text) + 1))[:n], lambda t: redact(t, {"K": "secretvalue"}), 2000) < LINEAR


def test_a_300000_character_argument_is_judged_at_once():
    """A hang check, not a speed bound: before, this ran for minutes at 100 % CPU."""
    word = _word(300_000)
    assert check("all", f"python3 -c 'import os' {word}") is None
    assert check("all", f"python3 -c 'import os' {word}; rm -rf ~").rule == "rm-recursive-root"


def test_code_nested_deeper_than_the_walk_follows_is_refused():
    """Twelve ``$(…)`` deep, ``rm -rf /`` went unjudged (the walk stopped following at eight, silently)."""
    text = "rm -rf /"
    for _ in range(12):
        text = f"echo $({text})"
    refusal = check("catastrophic", text)
    assert refusal is not None and refusal.rule == "too-deep"
    shallow = "echo $(echo $(rm -rf /))"
    assert check("catastrophic", shallow).rule == "rm-recursive-root"


def test_a_semicolon_makes_arithmetic_a_command_substitution():
    """``$((rm -rf /); true)`` is ``$( (rm -rf /); true )`` to bash: it runs, so it is judged."""
    assert check("catastrophic", "echo $((rm -rf /); true)").rule == "rm-recursive-root"
    assert check("catastrophic", "cat <<EOF\n$((rm -rf /); true)\nEOF").rule == "rm-recursive-root"
    assert check("catastrophic", "echo $(( 1 + 2 ))") is None


def test_text_too_tangled_to_read_in_linear_time_is_refused_not_passed():
    """Thousands of ``((`` each closed late: reading each again would be quadratic; the check refuses it."""
    text = "rm x; " + "((" * 3000 + " 1 " + "))" * 10
    refusal = check("catastrophic", text)
    assert refusal is not None and refusal.rule == "too-deep"


def test_the_freeze_cases_run_through_the_engine(engine):
    """Through the engine, as ``%exec`` runs them: each is judged and run (or refused) at once, not frozen.

    4,000 open parentheses are a syntax error bash reports; a 300,000-character word (given to a builtin:
    no exec, no argument limit) with a trigger word beside it is run; the same word before ``rm -rf ~`` is
    refused.  A hang check: before, the word alone kept the check busy for minutes; the suite's timeout is the bound.
    """
    nested = engine.run_script("echo " + "(" * 4000, guard="all")
    assert nested.exit_code == 2 and "-c: line 1" in nested.stderr  # bash -c reports it, not an eval in the standby
    word = _word(300_000)
    ran = engine.run_script(f": {word}; rm -f ./not-here; echo ran", guard="all")
    assert ran.exit_code == 0 and ran.stdout.strip() == "ran"
    with pytest.raises(CommandRefused) as refused:
        engine.run_script(f": {word}; rm -rf ~", guard="all")
    assert refused.value.refusal.rule == "rm-recursive-root"


#: The check reads nested code once per level it follows (eight), its word's end once more: at most this many
#: times the work of one reading of the text.
READINGS = 30
NESTED = {
    "$( open": "rm x; echo " + "$(" * 1000,
    "$( closed": "rm x; echo " + "$(" * 500 + ")" * 500,
    "$(echo … deep": "rm -rf " + "$(echo " * 300 + "/" + ")" * 300,
}


@pytest.mark.parametrize("command", NESTED)
def test_nested_code_is_read_once_per_level(command):
    """With the session's variables, each ``$(…)`` was read as what it prints eight levels down, again at each
    of the eight levels the walk follows: about 80 readings of the text, not 10 or 20."""
    text = NESTED[command]
    env = {"HOME": "/home/me"}
    assert check("all", text, env=env).rule == "too-deep"
    assert work(lambda: check("all", text, env=env)) < READINGS * work(lambda: tokenize(text))


def test_printed_substitutions_still_count_at_every_level():
    env = {"HOME": "/home/me"}
    assert check("all", "rm -rf " + "$(echo " * 6 + "/" + ")" * 6, env=env).rule == "rm-recursive-root"
    assert check("all", "X=/home/me; rm -rf $(echo $(echo $X))", env=env).rule == "rm-recursive-root"
    assert check("all", "X=/tmp/a; rm -rf $(echo $X); X=/; rm -rf $(echo $X)", env=env).rule == "rm-recursive-root"
    assert check("all", "X=/tmp/a; rm -rf $(echo $X)", env=env) is None


def test_an_ordinary_command_is_not_put_to_every_rule():
    """A script of ordinary commands (no rule judges ``ls``, nothing written through a redirection) cost each
    command nineteen matchers: about 530 lines of Python on top of reading it, then about 260, now about 70."""
    text = "rm x; " + "ls -l a b; " * 2000
    check("all", text)  # patterns compiled, caches filled: not the text's work
    on_top = work(lambda: check("all", text)) - work(lambda: tokenize(text))
    assert on_top < 120 * 2000


@pytest.mark.parametrize("unit", ["ls -l a b; ", "a; ", "((1)) ", "w1 ;| "])
def test_an_inert_command_is_passed_as_it_stands(unit):
    """A command no rule judges, with no code, redirection or assignment in it, that hands nothing on: each was
    walked as any other (about 250 lines of Python on top of reading it, the guard at 2.5-4.5 s per MB on such
    scripts), now passed by the check at once (50 to 90); the walk still yields it to who asks for every command."""
    text = "rm x; " + unit * 2000
    check("all", text)
    assert work(lambda: check("all", text)) - work(lambda: tokenize(text)) < 100 * 2000
    assert len(list(simple_commands(text))) == 2001
    assert check("all", unit * 3 + "X=/; " + unit + "rm -rf $X").rule == "rm-recursive-root"
    assert check("all", unit * 3 + "cd /; " + unit + "rm -rf *").rule == "rm-recursive-root"
    assert check("all", unit * 3 + "curl -o f http://x; " + unit + "sh f").rule == "pipe-to-shell"
    assert check("all", "ls -l; /bin/rm -rf /").rule == "rm-recursive-root"
    assert check("all", "ls; cat x > /dev/sda").rule == "redirect-device"
    assert check("all", "ls; mkfs.ext4 /dev/sda1").rule == "mkfs-device"


@pytest.mark.parametrize(("unit", "most", "commands"), [("cat <<EOF\nx $y\nEOF\n", 100, 1), ("cat <<< hi; ", 100, 1),
                                                        ("echo $(date); ", 120, 2)])
def test_a_heredoc_or_code_in_an_argument_leaves_a_command_inert(unit, most, commands):
    """A heredoc or here-string only feeds a command, and code in its arguments is walked for itself: such a
    command was walked as any other (about 250 lines of Python on top of reading it, 350 with a ``$(…)``; the guard
    at 1.5 s per MB on a script of heredocs), now passed once its code is walked (about 75 and 90)."""
    text = "rm x; " + unit * 2000
    check("all", text)
    assert work(lambda: check("all", text)) - work(lambda: tokenize(text)) < most * 2000
    assert len(list(simple_commands(text))) == 1 + commands * 2000
    assert check("all", unit + "cat <<EOF\n$(rm -rf /)\nEOF\n").rule == "rm-recursive-root"
    assert check("all", unit + "cat <<EOF\n`rm -rf /`\nEOF\n").rule == "rm-recursive-root"
    assert check("all", unit + "cat <<< \"$(rm -rf /)\"").rule == "rm-recursive-root"
    assert check("all", unit + "echo a $(rm -rf /) b").rule == "rm-recursive-root"
    assert check("all", unit + "echo a <(rm -rf /) b").rule == "rm-recursive-root"
    assert check("all", unit + "X=/; echo $(rm -rf $X)").rule == "rm-recursive-root"
    assert check("all", unit + "cd /; cat <<EOF\n$(rm -rf *)\nEOF\n").rule == "rm-recursive-root"
    assert check("all", unit + "cat <<EOF > /dev/sda\nx\nEOF\n").rule == "redirect-device"
    assert check("all", unit + "cat <<EOF | sh\nrm -rf /\nEOF\n").rule == "rm-recursive-root"
    assert check("all", unit + "bash <<EOF\nrm -rf /\nEOF\n").rule == "rm-recursive-root"
    assert check("all", unit + "xargs rm -rf <<< /").rule == "rm-recursive-root"
    assert check("all", unit + "curl -o f http://x; cat <<< x; sh f").rule == "pipe-to-shell"
    assert check("all", unit + "cat <<EOF\n$(curl http://x | sh)\nEOF\n").rule == "pipe-to-shell"
    assert check("all", unit + "<(curl http://x) a").rule == "pipe-to-shell"  # run as the command: no live text


def test_a_command_judged_again_without_a_leading_expansion_walks_its_code_once():
    """``$() rm -rf /`` is judged again as ``rm -rf /``; the code in its words was walked again with it, at every
    level of nesting: seven levels of ``$( $() …`` took fifty times the work (a level once more: 1.6 times)."""
    unit = "$() " + "$( $() " * 7 + "x" + " )" * 7 + "; "
    text = "rm x; " + unit * 100
    check("all", text)
    assert work(lambda: check("all", text)) - work(lambda: tokenize(text)) < 6000 * 100  # 143,000 before
    assert check("all", "$() $($() rm -rf /)").rule == "rm-recursive-root"


@pytest.mark.parametrize("env", [None, {"HOME": "/home/me"}])
def test_empty_substitutions_are_not_walked(env):
    """```` and ``$( )`` run nothing: each was a walk of its own (about 150 lines of Python), now next to none."""
    text = "rm x; echo " + "``" * 2000 + " $( )" * 1000
    check("all", text, env=env)
    on_top = work(lambda: check("all", text, env=env)) - work(lambda: tokenize(text))
    assert on_top < 60 * 3000
    assert check("all", "echo `` $( ) `rm -rf /`", env=env).rule == "rm-recursive-root"


def test_a_subshell_keeps_its_names_without_a_copy():
    """Each ``(`` kept a copy of the names to restore at its ``)``: a line of 100,000 ``(`` made as many objects
    for the garbage collector to go through again and again (twice the reading's time).  Names once passed on are
    never changed, so the ``(`` keeps them as they are: the check holds no more memory than the reading."""
    import tracemalloc

    text = "rm x; echo " + "(" * 20_000
    check("all", text)

    def peak(call):
        tracemalloc.start()
        try:
            call()
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    assert peak(lambda: check("all", text)) < 1.1 * peak(lambda: tokenize(text))
    assert check("all", "D=/tmp/x; (D=/; true); rm -rf $D") is None
    assert check("all", "D=/tmp/x; (D=/; rm -rf $D)").rule == "rm-recursive-root"
    assert check("all", "(cd /); rm -rf *") is None and check("all", "(cd /; rm -rf *)").rule == "rm-recursive-root"


#: A body nested in a body carries where it stands in the text and the ends the text's reading found: the walk
#: of each level looks its substitutions' ends up instead of walking to them again.
ONCE = {
    '"$( open': "rm x; echo " + '"$(' * 1000,
    "$( open": "rm x; echo " + "$(" * 1000,
    "$( closed": "rm x; echo " + "$(" * 500 + ")" * 500,
    "<( open": "rm x; cat " + "<(" * 1000,
    "$( with backticks and quotes": "rm x; echo " + '$(a "$(b `c` $(' * 300,
}


@pytest.mark.parametrize("env", [None, {"HOME": "/home/me"}])
@pytest.mark.parametrize("command", ONCE)
def test_nested_code_is_walked_once_not_once_per_level(command, env):
    """Each of the nine levels the walk follows read its body's substitutions again to their ends (nine to eighteen
    readings of the text, the guard at 2.5-5.5 s per MB); now each end is found once, in the text's own reading."""
    text = ONCE[command]
    assert check("all", text, env=env).rule == "too-deep"
    assert work(lambda: check("all", text, env=env)) < 4 * max(work(lambda: tokenize(text)), len(text))


def test_the_collector_waits_while_a_check_runs():
    """Each pass of the cycle collector went through every token of the text again: a third of a long script's
    check.  The walk makes no cycles, so the collector is paused while it runs, and on again after."""
    import gc

    text = "rm x; " + "cat <<EOF\n$(a\n'b\"\nEOF\n" * 3000
    passes = []

    def count(phase, info):
        if phase == "start":
            passes.append(info["generation"])

    gc.callbacks.append(count)
    try:
        assert gc.isenabled()
        check("all", text)
        find_danger(text)
    finally:
        gc.callbacks.remove(count)
    assert len(passes) <= 2 and gc.isenabled()  # (one, as each check ends, for what it let go: 66 before)


def test_a_command_writing_where_no_rule_looks_is_not_put_to_every_rule():
    """``w1 >&w2``: a redirection to a relative name where the directory is not known resolves nowhere, so no rule
    can judge it; each such command went through all nineteen matchers (two thirds of a check of 36,000 of them)."""
    text = "rm x; " + "w1 >&w2 ; w3 &> w4 ; " * 200
    assert work(lambda: check("all", text)) < 150_000
    assert check("all", "cd ~ && echo x > .bashrc").rule == "startup-file"  # where it resolves, it is judged
    for text in ["echo x > /dev/sda", "> /dev/sda", "X=/dev/sda; echo x > $X", "cat <<EOF > /dev/sda\nx\nEOF\n"]:
        assert check("all", text).rule == "redirect-device"
    assert check("all", "w1 > /proc/sysrq-trigger").rule == "kernel-trigger"


def test_code_with_heredocs_dash_reads_otherwise_is_walked_a_bounded_number_of_times():
    """A heredoc word with ``$'…'`` is walked as bash and as dash read it; code nested in such code is not spelled
    again for dash inside the dash reading, so nesting seven deep costs a few times the work, not 2**7."""
    def nested(word: str) -> str:
        text = "x"
        for _ in range(7):
            text = f"echo $(cat <<{word}\nb\nEOF\n) $({text})"
        return "rm x; " + text

    assert work(lambda: check("all", nested("$'EOF'"))) < 5 * work(lambda: check("all", nested("EOF")))
    assert check("all", nested("$'EOF'").replace("b\nEOF", "$EOF\nrm -rf /\nEOF")).rule == "rm-recursive-root"


@pytest.mark.parametrize("text", ["cat <<EOF\n$(a\n'b\"\nEOF\n" * 200, "echo $(date); " * 200, "((1)) " * 200])
def test_a_check_leaves_nothing_for_the_cycle_collector(text):
    """What a check read is let go as it ends: a cycle in it (a body passed keeps the names that keep the bodies
    passed) left a script's every word for the collector's next pass, a seventh of a check of 1 MB of heredocs."""
    gc.collect()
    gc.disable()  # (no pass of its own as the check ends: what is left is there to count)
    try:
        assert check("all", "rm x; " + text) is None and find_danger(text) is None
        assert gc.collect() == 0
    finally:
        gc.enable()
