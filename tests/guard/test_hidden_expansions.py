"""What bash makes of a word before it runs it, where the text does not spell the command.

``{rm,-rf,/}`` is ``rm -rf /`` to bash -- brace expansion comes before every other -- and the check read
it as one harmless word; ``r{m,} -rf /`` runs ``rm r -rf /``.  A variable whose value is ``a[$(CMD)]``
runs CMD wherever bash evaluates it as arithmetic (``((x))``, ``$((x))``, ``let x``, ``arr[x]=1``,
``[[ x -eq 1 ]]``, …).  A fork bomb's body may be a subshell, ``:() ( :|:& ); :``.  Each table row was
refused by none of the rules before.

The words brace expansion makes are checked against bash itself (``printf '<%s>'`` of each: inert).
"""

from __future__ import annotations

import importlib
import shutil
import subprocess

import pytest

from execmagic.guard.check import check
from execmagic.guard.commands import WRAPPERS, Command, parse
from execmagic.shell.lexer import tokenize

#: Brace expressions that make a catastrophic command (each refused under guard "catastrophic").
BRACES_REFUSED = [
    "{rm,-rf,/}",
    "echo x; {rm,-rf,/}",
    "{rm,-rf} /",
    "rm -rf {/,x}",
    "rm {-rf,/}",
    "{sudo,rm,-rf,/}",
    "r{m,} -rf /",
    "{r,}m -rf /",
    "r{m..m} -rf /",
    "{r..r}{m..m} -rf /",
    "{{rm,-rf},/}",
    "{rm,-r{f,}} /",
    "{rm,-rf,~}",
    "{rm,--no-preserve-root,-r,/}",
    "bash -c '{rm,-rf,/}'",
    "echo $({rm,-rf,/})",
    "{rm,-rf,/} | cat",
    "if true; then {rm,-rf,/}; fi",
    "FOO=1 {rm,-rf,/}",
    "{mkfs.ext4,/dev/sda}",
    "{dd,if=/dev/zero,of=/dev/sda}",
    "{chmod,-R,777,/}",
    "{rm,-rf,\"$HOME\"}",
    "{rm,-rf,$'\\x2f'}",
    "echo {,$(rm -rf /)}",  # the first word made is empty, and dropped: the code runs all the same
    "echo {,`rm -rf /`}",
    "bash -c {'rm -rf /',}",
    "{eval,rm\\ -rf\\ /}",
]

#: Braces in ordinary work, and brace-shaped text bash does not expand: allowed under guard "all".
BRACES_ALLOWED = [
    "echo {a,b}.txt",
    "mkdir -p src/{lib,bin}",
    "cp config.yaml{,.bak}",
    "for i in {1..100}; do echo $i; done",
    "rm -rf /tmp/{a,b}",
    "rm -rf build/{x,y} dist",
    "rm -rf /{a..c}",
    "echo {rm,-rf,/}",
    "echo '{rm,-rf,/}'",
    "'{rm,-rf,/}'",
    "\\{rm,-rf,/}",
    "X={rm,-rf,/}",
    "X={rm,-rf,/} true",
    "{rm,-rf}\\ /",  # bash runs a program named "rm /": there is none
    "awk '{print $1, $2}' data.txt",
    "echo ${x,,} ${y^^}",
    "find . -name '*.py' -exec grep -l x {} +",
]

#: Words and what bash makes of each (from ``bash -c "printf '<%s>' WORD"``).
AS_BASH_MAKES = {
    "{rm,-rf}\\ /": ["rm /", "-rf /"],
    "r{m,}": ["rm", "r"],
    "{{rm,-rf},/}": ["rm", "-rf", "/"],
    "{rm,-r{f,}}": ["rm", "-rf", "-r"],
    "/{a..c}": ["/a", "/b", "/c"],
    "/{,}": ["/", "/"],
    "{a}": ["{a}"],
    "{}": ["{}"],
    "{a,b": ["{a,b"],
    "{a,b}}": ["a}", "b}"],
    "{{a,b}": ["{a", "{b"],
    "\\{a,b}": ["{a,b}"],
    "{a\\,b,c}": ["a,b", "c"],
    "{'a,b',c}": ["a,b", "c"],
    "'{'a,b}": ["{a,b}"],
    "{a,$(echo x,y)}": ["a", "$(echo x,y)"],
    "{1..10..3}": ["1", "4", "7", "10"],
    "{a..e..2}": ["a", "c", "e"],
    "{01..3}": ["01", "02", "03"],
    "{3..1}": ["3", "2", "1"],
    "{1..a}": ["{1..a}"],
    "{a...c}": ["{a...c}"],
    "x{a,b}y{c,d}": ["xayc", "xayd", "xbyc", "xbyd"],
    "{a,b}=c": ["a=c", "b=c"],
    "{a,{b}": ["{a,{b}"],
    "{a,{b,c}": ["{a,b", "{a,c"],
    "{a,}{b,}": ["ab", "a", "b"],
    "{a}{b,c}": ["{a}b", "{a}c"],
    "{{a},b}": ["{a}", "b"],
    "x{},a}": ["x}", "xa"],
    "{},a}": ["{},a}"],
    "{a}b,c}": ["a}b", "c"],
    "{a..c}x,y}": ["ax,y}", "bx,y}", "cx,y}"],
    "${x,}{a,b}": ["${x,}a", "${x,}b"],
    "{a,${x:-b,c}}": ["a", "${x:-b,c}"],
    "{a,\"b c\"}": ["a", "b c"],
    "{,a..c}": ["a..c"],
    "{{a..c},x}": ["a", "b", "c", "x"],
    "{a,b}$'\\n'": ["a\n", "b\n"],
}


@pytest.mark.parametrize("command", BRACES_REFUSED)
def test_a_command_made_by_brace_expansion_is_refused(command):
    refusal = check("catastrophic", command)
    assert refusal is not None and refusal.catastrophic, command


@pytest.mark.parametrize("command", BRACES_ALLOWED)
def test_ordinary_braces_are_allowed(command):
    assert check("all", command) is None, command


def test_a_comma_in_an_expansion_makes_a_list_of_one():
    """bash reads ``{/bin/../bin/rm${x:+,}}`` as a list (a ``..`` let the braces close, a comma stands in them), of
    one word once the ``${…}`` is empty: ``/bin/../bin/rm``."""
    assert check("catastrophic", "{/bin/../bin/rm${x:+,}} -rf /", env={}).rule == "rm-recursive-root"
    assert _made("{..'x,'}") == ["..x,"]


def test_a_refusal_quotes_the_braces_as_written():
    assert check("catastrophic", "{rm,-rf,/}").command == "{rm,-rf,/}"


def _made(word: str) -> list[str]:
    commands = [item for item in parse(tokenize("printf '<%s>' " + word)[0]) if isinstance(item, Command)]
    assert len(commands) == 1
    return [str(w) for w in commands[0].words[2:]]


@pytest.mark.parametrize("word", AS_BASH_MAKES)
def test_the_words_brace_expansion_makes(word):
    assert _made(word) == AS_BASH_MAKES[word]


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_the_table_is_what_bash_makes():
    """The table above, asked of bash itself (the words with no ``$`` in them: the check leaves expansions as
    written, bash expands them)."""
    for word, made in AS_BASH_MAKES.items():
        if "$" in word:
            continue
        printed = subprocess.run(["bash", "-c", f"printf '<%s>' {word}"], capture_output=True, text=True,
                                 timeout=10, check=True).stdout
        assert printed == "".join(f"<{w}>" for w in made), word


def test_more_words_than_the_text_can_pay_for_are_refused():
    """Twelve characters make millions of words: the check refuses them as too complex rather than list them."""
    assert check("catastrophic", "echo " + "{1..9}" * 9).rule == "too-deep"
    assert check("catastrophic", "echo {1..99999999999}").rule == "too-deep"
    assert check("catastrophic", "echo {1..1000}") is None


def test_an_assignment_before_the_command_is_not_expanded():
    """``X={a,b} cmd`` sets X to ``{a,b}``; after the command's name, ``x={a,b}`` is two words."""
    commands = [item for item in parse(tokenize("X={a,b} Y={c,d} printf x={e,f}")[0]) if isinstance(item, Command)]
    assert [str(w) for w in commands[0].words] == ["X={a,b}", "Y={c,d}", "printf", "x=e", "x=f"]


# -- fork bombs whose body is a subshell ---------------------------------------------------------------
FORK_BOMBS = [
    ":() ( :|:& ); :",
    "f() ( f | f & ); f",
    "function f ( f|f & ); f",
    "function f() ( f|f& ); f",
    "bomb() ( bomb | bomb & ); bomb",
    "f() ( f & f ); f",
    "f() ( f&f& ); f",
    "f () ( f |& f & )\nf",
    "f ( ) ( f|f& ); f",
    "f ( ) { f|f& }; f",
    "bash -c ':() ( :|:& ); :'",
]
NOT_FORK_BOMBS = [
    "f() ( cd /tmp; ls ); f",
    "f() ( f ); f",  # runs itself forever, one at a time: no more processes than one
    "f() ( f & ); f",
    "g() ( f|f& ); g",
    "f() ( ls | f ); f",
    "echo ':() ( :|:& ); :'",
    "f() ( f|f& )",  # never called
]
#: Endless loops that start a process in the background at every turn, never waited for: the same flood.
LOOP_FLOODS = [
    "while :; do bash & done",
    "while true; do sh -c 'sleep 100' & done",
    "for ((;;)); do sleep 1 & done",
    "until false; do x & done",
    "while true\ndo\n  sleep 100 &\ndone",
    "while true; do cmd & done & wait",
    "bash -c 'while :; do bash & done'",
]
NOT_LOOP_FLOODS = [
    "while true; do ./server & sleep 5; done",
    "while :; do (work) & wait; done",
    "while true; do make && break; done",
    "while read -r f; do gzip \"$f\" & done < list",
    "for i in 1 2 3; do sleep 1 & done; wait",
    "while true; do echo hi >&2; done",
    "echo 'while :; do bash & done'",
]


@pytest.mark.parametrize("command", LOOP_FLOODS)
def test_an_endless_loop_of_background_processes_is_refused(command):
    refusal = check("catastrophic", command)
    assert refusal is not None and refusal.rule == "fork-bomb", command


@pytest.mark.parametrize("command", NOT_LOOP_FLOODS)
def test_loops_that_wait_sleep_or_end_are_allowed(command):
    assert check("all", command) is None, command


@pytest.mark.parametrize("command", FORK_BOMBS)
def test_a_fork_bomb_whose_body_is_a_subshell_is_refused(command):
    refusal = check("catastrophic", command)
    assert refusal is not None and refusal.rule == "fork-bomb", command


@pytest.mark.parametrize("command", NOT_FORK_BOMBS)
def test_a_function_in_a_subshell_is_no_fork_bomb(command):
    assert check("all", command) is None, command


# -- a value whose subscript runs code where bash reads it as a number -----------------------------------
#: Each runs the command in the subscript in bash 5.2 (tried with ``touch`` in its place).
SUBSCRIPTS_REFUSED = [
    "x='a[$(rm -rf /)]'; ((x))",
    "x='a[$(rm -rf /)]'; echo $((x))",
    "x='a[$(rm -rf /)]'; echo $[x]",
    "x='a[$(rm -rf /)]'; ((x+1))",
    "x='a[$(rm -rf /)]'; let x",
    "x='a[$(rm -rf /)]'; declare -i y; y=x",
    "x='a[$(rm -rf /)]'; arr[x]=1",
    "x='a[$(rm -rf /)]'; echo ${a[x]}",
    "x='a[$(rm -rf /)]'; [[ x -eq 1 ]]",
    "x='a[$(rm -rf /)]'; for ((i=x;i<1;i++)); do :; done",
    "x='a[`rm -rf /`]'; ((x))",
    'x="a[\\$(rm -rf /)]"; ((x))',
    "y='a[$(rm -rf /)]'; x=y; ((x))",
    "x='a[1]+b[$(rm -rf /)]'; ((x))",
    "x=\"a['\\$(rm -rf ~)']\"; ((x))",
    "export x='a[$(rm -rf /)]'; ((x))",
    "declare -i y='a[$(rm -rf /)]'",
    "let 'y=a[$(rm -rf /)]'",
    "[[ 'a[$(rm -rf /)]' -eq 1 ]]",
    "test -v 'a[$(rm -rf /)]'",
    "[ -v 'a[$(rm -rf /)]' ]",
    "arr['$(rm -rf /)']=1",
    "printf -v 'a[$(rm -rf /)]' x",
    "printf -v x 'a[$(rm -rf /)]'; ((x))",
    "read 'a[$(rm -rf /)]' <<< x",
    "read x <<< 'a[$(rm -rf /)]'; ((x))",
    "declare 'a[$(rm -rf /)]=1'",
    "declare -n r='a[$(rm -rf /)]'; r=1",
    "x=$(echo 'a[$(rm -rf /)]'); ((x))",
    "x='a[$({rm,-rf,/})]'; ((x))",
]
#: Values like these that bash never reads as a number here, and ordinary arithmetic.
SUBSCRIPTS_ALLOWED = [
    "x=3; ((x+1))",
    "arr=(1 2); echo ${arr[0]}",
    "i=0; echo ${arr[$i]}; arr[i+1]=2",
    "echo 'a[$(rm -rf /)]'",
    "printf '%s\\n' 'a[$(rm -rf /)]'",
    "git commit -m 'x=a[$(rm -rf /)] is refused'",
    "x='$(rm -rf /)'; ((x))",  # no subscript: arithmetic does not expand $( ) in a value
    "x='a[$(date)]'; ((x))",
    "[[ $x -eq 1 ]] && echo one",
    "declare -A m; m[key]=1; echo ${m[key]}",
]
#: (the session's variables, a command that reaches a value with a subscript's code in it)
SESSION_SUBSCRIPTS = [
    ({"x": "a[$(rm -rf /)]"}, "((x))"),
    ({"x": "a[$(rm -rf /)]"}, "echo $((x+1))"),
    ({"x": "y", "y": "a[`rm -rf ~`]"}, "let x"),
]


@pytest.mark.parametrize("command", SUBSCRIPTS_REFUSED)
def test_code_in_a_subscript_of_a_value_is_refused(command):
    refusal = check("catastrophic", command)
    assert refusal is not None and refusal.catastrophic, command


@pytest.mark.parametrize("command", SUBSCRIPTS_ALLOWED)
def test_subscripts_bash_does_not_run_are_allowed(command):
    assert check("all", command) is None, command


@pytest.mark.parametrize(("env", "command"), SESSION_SUBSCRIPTS)
def test_a_session_value_with_code_in_a_subscript_is_refused_where_named(env, command):
    refusal = check("catastrophic", command, env=env)
    assert refusal is not None and refusal.catastrophic, command
    assert check("all", "echo hi", env=env) is None  # a command that does not name it runs


# -- neighbouring expansions: what else spells a command the text does not ------------------------------
#: Each refused under guard "catastrophic" (ANSI-C quoting, ${X…} operators, names built in command position,
#: aliases, values given by printf -v, read and mapfile, arrays whose values hold a subscript's code).
NEIGHBOURS_REFUSED = [
    "$'\\x72m' -rf /",
    "$'\\162m' -rf /",
    "$'\\u0072m' -rf /",
    "r$'\\x6d' -rf /",
    "x=ab; ${x/ab/rm} -rf /",
    "x=RM; ${x,,} -rf /",
    "x=xrm; ${x#x} -rf /",
    "x=arm; ${x:1} -rf /",
    "x=rmx; ${x:0:2} -rf /",
    "x=rm; y=x; ${!y} -rf /",
    "x=/tmp; rm -rf ${x/tmp/}",
    "x=/tmp; rm -rf ${x//tmp}",
    "x=/tmp; rm -rf ${x/%tmp/}",
    "x=r; y=m; $x$y -rf /",
    "x=r; y=m; sudo $x$y -rf /",
    "x=r; y=m; if true; then $x$y -rf /; fi",
    "x=r; y=m; { $x$y -rf /; }",
    "alias x='rm -rf /'; x",
    "shopt -s expand_aliases; alias x='rm -rf ~'\nx",
    "printf -v x 'rm'; $x -rf /",
    "printf -v x '%s' rm; $x -rf /",
    "read x <<< 'rm'; $x -rf /",
    "read -r x y <<< 'rm /'; $x -rf $y",
    "mapfile -t x <<< 'rm'; $x -rf /",
    "x=('a[$(rm -rf /)]'); ((x[0]))",
    "x+='a[$(rm -rf /)]'; ((x))",
    "declare -a x=(1 'a[$(rm -rf /)]'); ((x[1]))",
    "IFS=,; x=rm,-rf,/; $x",
    "IFS=_; x=rm_-rf_/; $x",
    "set -- rm -rf /; \"$@\"",
    "IFS=:; set -- rm -rf /; \"$@\"",
    "set -- rm -rf /; $*",
    "set -- /; rm -rf \"$1\"",
    "set -- a; rm -rf \"$2\"/",
    "set -- a / b; for f in \"$@\"; do rm -rf \"$f\"; done",
    "cat <(echo 'rm -rf /') | sh",
    "declare -n r=x; x=rm; $r -rf /",
    "declare -n r=x; r=/; rm -rf $x",
    "typeset -n r=d; d=~; rm -rf \"$r\"",
    "`printf r`m -rf /",
    "`printf '\\x72m'` -rf /",
    "(`printf '\\x72m'` -rf /)",
    "eval $(printf '\\x72m') -rf /",
    "X=1 $(printf '\\x72m') -rf /",
    "X=\"a b\" $(printf '\\x72m') -rf /",
    "$(true) $(printf '\\x72m') -rf /",
    "$(sudo printf '\\x72m') -rf /",
    "$(/bin/printf '\\x72m') -rf /",
    "$(\\printf '\\x72m') -rf /",
    "$(timeout 1 printf '\\x72m') -rf /",
    "$({ printf '\\x72m'; }) -rf /",
    "$(\nprintf '\\x72m') -rf /",
    "$(cat <<E\nr\nE\n)m -rf /",
    "echo $($(printf '\\x72m') -rf /)",
    "echo `$(printf '\\x72m') -rf /`",
]
NEIGHBOURS_ALLOWED = [
    "x=rm; ${x^^} -rf /",  # RM: no such program
    "echo $'\\x72m -rf /'",
    "x=/tmp/a; rm -rf ${x/a/b}",
    "x=/tmp/a; rm -rf ${x:0:6}",
    "alias ll='ls -la'",
    "printf -v pad '%5s' x; echo \"$pad\"",
    "read -r line < notes.txt; echo \"$line\"",
    "read x <<< '/tmp/x'; rm -rf $x",
    "x=(1 2 3); echo ${x[@]}",
    "y=HOME; echo ${!y}",
    "$CC -o prog prog.c",
    "IFS=,; read -r a b <<< 'x,y'; echo $a",
    "IFS=; x='a b'; echo $x",
    "rm -rf \"$1\"/build",  # the arguments a script was given are not known: not empty
    "set -e; rm -rf \"$1\"/",
    "set -- /tmp/x; rm -rf \"$1\"",
    "cat <(echo 'ls') | sh",
    "declare -n r=x; x=/tmp/x; rm -rf \"$r\"",
    "declare -n r=x; r=build; rm -rf \"$x\"",
]


@pytest.mark.parametrize("command", NEIGHBOURS_REFUSED)
def test_a_command_spelled_by_a_neighbouring_expansion_is_refused(command):
    refusal = check("catastrophic", command)
    assert refusal is not None and refusal.catastrophic, command


@pytest.mark.parametrize("command", NEIGHBOURS_ALLOWED)
def test_ordinary_uses_of_those_expansions_are_allowed(command):
    assert check("all", command) is None, command


#: Substitutions where a command's name stands whose bodies print nothing the walk could know (empty, a plain
#: name, another substitution, arithmetic): no rule can apply, and the text is passed without reading it.
PRINTING_NOTHING_KNOWN = [
    "echo " + "$(" * 4000 + ")" * 4000,
    "echo " + "`" * 4001,
    "cat <<EOF\n$(a\n'b\"\nEOF\n" * 500,
    "echo " + "$((" * 2000,
    "$(a) -rf /",
]


def test_the_quick_look_reads_a_substitution_behind_every_wrapper():
    """What a ``$(…)`` prints is known behind a wrapper (``$(sudo printf …)``): the quick look names each one."""
    printers = set(importlib.import_module("execmagic.guard.check")._PRINTERS.split("|"))
    assert WRAPPERS - printers == set()


@pytest.mark.parametrize("command", PRINTING_NOTHING_KNOWN)
def test_substitutions_that_print_nothing_known_are_passed_unread(command):
    assert check("all", command) is None


def test_a_command_of_many_assignments_is_judged_at_once():
    """A hang check, not a speed bound: the assignments before a command's name were taken off one at a time, each
    copying the rest (200,000 of them took most of a minute)."""
    assert check("catastrophic", "x=ab " * 200_000 + "rm -rf /").rule == "rm-recursive-root"
