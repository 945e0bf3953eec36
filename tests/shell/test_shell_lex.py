"""The one reader of shell text, judged by bash where the readings it replaced disagreed with bash.

Templating, the guard and the standby's parse check once read shell text three ways; each table
here is a place where one of those readings and bash parted, and bash is asked every time.
"""

from __future__ import annotations

import random
import subprocess

import pytest

from execmagic.engine.template import expand_params
from execmagic.process.errors import TemplateError
from execmagic.shell.ends import paren_end
from execmagic.shell.lexer import tokenize
from execmagic.shell.sources import source_tokens
from execmagic.shell.words import Op, Word, ansi_end
from work_count import work

PAYLOAD = "x; touch {m}"

# Where a value lands after a ${…} or backticks that the old walk closed in the wrong place.
PLACES = [
    # bash counts no bracket inside ${…}: the first } ends it, and {v} is code, not "…"
    ('printf "<%s>" "${x:-(}" {v}', "<(><x; touch {m}>"),
    ('printf "<%s>" "${x:-{a}b}" {v}', "<{ab}><x; touch {m}>"),
    ("printf '<%s>' ${x:-{a} {v}", "<{a><x; touch {m}>"),
    ("printf '<%s>' ${x:-((} {v}", "<((><x; touch {m}>"),
    # a backtick ends at the next backtick, quotes or not (the substitution fails: a quote left
    # open), and after it "…" is open again
    ("printf '<%s>' \"`printf %s \"(`\" {v}", "<><x; touch {m}>"),
]


@pytest.mark.parametrize(("script", "expected"), PLACES)
def test_a_value_lands_where_bash_reads_it(tmp_path, script, expected):
    marker = tmp_path / "pwned"
    text = expand_params(script, {"v": PAYLOAD.format(m=marker)}, language="bash")
    done = subprocess.run(["bash", "-c", text], capture_output=True, cwd=tmp_path, timeout=10)
    assert done.stdout.decode() == expected.replace("{m}", str(marker))
    assert not marker.exists(), text


def _argv(script: str) -> list[str]:
    """What bash passes ``printf '%s\\0'`` for ``script``'s arguments."""
    done = subprocess.run(["bash", "-c", "printf '%s\\0' " + script], capture_output=True, timeout=10)
    return done.stdout.decode().split("\0")[:-1]


# Substitutions whose end bash finds where the guard's own reading did not.
BODIES = [
    ("$(case x in x) echo hit;; esac)", "case x in x) echo hit;; esac", ["hit"]),
    ("$(echo a # )\n)", "echo a # )\n", ["a"]),
    ("$(cat <<EOF\n)\nEOF\n)", "cat <<EOF\n)\nEOF\n", [")"]),
    ("\"$(echo \"(\")\"", 'echo "("', ["("]),
]


@pytest.mark.parametrize(("script", "body", "argv"), BODIES)
def test_a_substitution_ends_where_bash_ends_it(script, body, argv):
    tokens, _ = tokenize(script)
    assert [t.code for t in tokens] == [(body,)]
    assert _argv(script) == argv


def test_a_backtick_ends_at_the_next_backtick_whatever_is_open():
    script = "`echo ')'` b"
    tokens, _ = tokenize(script)
    assert tokens == ["`echo ')'`", "b"] and tokens[0].code == ("echo ')'",)
    assert _argv(script) == [")", "b"]


def test_paren_end_is_the_walks_answer():
    text = "$(case x in a) b;; esac) tail"
    assert text[paren_end(text, 2):] == ") tail"
    assert paren_end("$(unclosed", 2) == len("$(unclosed")


def test_each_token_keeps_the_text_it_was_read_from():
    pairs = source_tokens("A=1 cmd 'a b'\"c\" 2>&1 | tee log\nnext")
    assert [(type(t).__name__, s) for t, s in pairs] == [
        ("Word", "A=1"), ("Word", "cmd"), ("Word", "'a b'\"c\""), ("Op", ">&"), ("Word", "1"), ("Op", "|"),
        ("Word", "tee"), ("Word", "log"), ("Op", "\n"), ("Word", "next")]
    assert isinstance(pairs[0][0], Word) and isinstance(pairs[3][0], Op) and pairs[2][0] == "a bc"


def _runs(script: str, cwd) -> bool:
    """Whether bash runs ``touch marker`` somewhere in ``script``."""
    subprocess.run(["bash", "-c", script], capture_output=True, cwd=cwd, timeout=10)
    return (cwd / "marker").exists()


def _seen(script: str) -> bool:
    """Whether the words of ``script`` show ``touch marker`` as a command, or in code the shell runs."""
    words = tokenize(script)[0]
    return any(w == "touch" for w in words) or any("touch marker" in body for w in words
                                                     if isinstance(w, Word) for body in w.code)


# Commands the old readings hid inside an arithmetic expression: bash counts parentheses there,
# reads no ${…}, and runs the substitutions inside it.
HIDDEN = [
    "echo $(( ${x:-\\} ))\ntouch marker\necho }",
    "(( ${x:-\\} ))\ntouch marker\necho }",
    "cat <<EOF\n$(( $(touch marker) ))\nEOF",
    "for ((i=0; i<${#a}; i++)); do :; done; touch marker",
    # bash's parser reads '…' in arithmetic as a quote (its expansion then fails, but false && skips it), counts
    # "[" in $[ … ] (not parentheses), and reads no comment in arithmetic
    "echo $( false && echo $[ ' ] ) ' ] ; touch marker )",
    "echo $( false && echo $(( ' )) ) ' )) ; touch marker )",
    "echo $( false && (( ' )) ) ' )) ; touch marker )",
    "echo $( false && echo \"$[ ' ] ) ' ]\" ; touch marker )",
    "echo $( false && echo $[ [ ] ) ] ; touch marker )",
    "false && echo $[ # ] ; touch marker",
    "false && (( # )) ; touch marker",
    "false && echo $[ ( ] ; touch marker",
    "false && echo $[ ${ ] ; touch marker ; ]",      # (nor a ${…} in $[ … ], as in $(( … )))
    "false && echo $[ 1 <<EOF ]\ntouch marker\n",   # a "<<" in arithmetic is a shift: no heredoc follows
    "false && (( 1 <<EOF ))\ntouch marker\n",
    "echo $((touch marker) | cat)",                  # a ")" that closes no "(": a command substitution after all
    "$((#${1EOF\n|)echo1>)\ntouch marker\n",
]


@pytest.mark.parametrize("script", ["echo $[ ; touch marker ; ]", "echo $[# ; touch marker ]",
                                    "echo $[ \" ]\" ; touch marker ]"])
def test_what_dash_runs_where_bash_reads_arithmetic_is_seen(tmp_path, script):
    """dash has no ``$[ … ]``: it runs the commands bash reads as arithmetic there (the guard reads both)."""
    subprocess.run(["dash", "-c", script], capture_output=True, cwd=tmp_path, timeout=10)
    assert (tmp_path / "marker").exists()
    assert _seen(script)


@pytest.mark.parametrize("script", ["`|<<`x ; touch marker ; ", "echo `cat <<E`; touch marker",
                                    "echo `cat <<E`x; touch marker", "`cat <<`x\ntouch marker\n"])
def test_what_bash_runs_after_a_heredoc_word_in_backticks_is_code(tmp_path, script):
    """In backticks bash ends a heredoc's word at the backtick and runs what follows them; the reading takes the
    backtick into the word and the rest into a substitution in it: that code is kept, not dropped with the word."""
    assert _runs(script, tmp_path)
    assert _a_command(script, "touch", 3)


def _a_command(text: str, name: str, depth: int) -> bool:
    """Whether ``name`` is a word of ``text`` or of the code in it, followed ``depth`` levels down."""
    words = tokenize(text)[0]
    return name in words or (depth > 0 and any(_a_command(body, name, depth - 1) for w in words
                                              if isinstance(w, Word) for body in w.code))


@pytest.mark.parametrize("script", HIDDEN)
def test_what_bash_runs_after_arithmetic_is_seen(tmp_path, script):
    assert _runs(script, tmp_path)
    assert _seen(script)


# Places the old walk misread, each found by running random templates through bash with a payload.
MISREAD = [
    # $$ is the shell's pid: the quote after it is an ordinary '…', not $'…'
    ("x=$$'{v}'; printf '<%s>' \"${x#$$}\"", "'; touch {m}; '", "<'; touch {m}; '>"),
    # bash ends a heredoc's body at its delimiter line whatever is open in it ("${x:-"… here: cat
    # fails on it, a bad substitution)
    ("cat <<EOF\n${x:-\"\nEOF\nprintf '<%s>' {v}", "x; touch {m}", "<x; touch {m}>"),
]


@pytest.mark.parametrize(("script", "payload", "expected"), MISREAD)
def test_places_the_old_walk_misread(tmp_path, script, payload, expected):
    marker = tmp_path / "pwned"
    text = expand_params(script, {"v": payload.replace("{m}", str(marker))}, language="bash")
    done = subprocess.run(["bash", "-c", text], capture_output=True, cwd=tmp_path, timeout=10)
    assert done.stdout.decode() == expected.replace("{m}", str(marker))
    assert not marker.exists(), text


def test_a_value_never_ends_a_heredoc_it_is_nested_in():
    """A line of the literal equal to the delimiter would end the body early, even inside a $(…) there."""
    for script in ("cat <<EOF\n$(echo {v})\nEOF", "cat <<EOF\n\"${x:-{v}}\"\nEOF"):
        with pytest.raises(TemplateError, match="which would end the heredoc early"):
            expand_params(script, {"v": "\nEOF\ntouch pwned #"}, language="bash")


def test_the_word_after_dup_is_expanded_twice_by_bash(tmp_path):
    """``>&WORD`` that is not a number means ``&>WORD``, and bash expands WORD again: quotes do not hold."""
    subprocess.run(["bash", "-c", "x >&'$(touch marker)'"], capture_output=True, cwd=tmp_path, timeout=10)
    assert (tmp_path / "marker").exists()
    for script in ("echo hi >&{v}", "echo hi 1>& \"{v}\"", "echo hi >&$(echo {v})"):
        with pytest.raises(TemplateError, match=r"in the word after >&, which bash expands a second time"):
            expand_params(script, {"v": "$(touch pwned)"}, language="bash")
    assert expand_params("echo hi >&{v} 2>&{w}", {"v": "out.log", "w": "$(x)"}) == "echo hi >&out.log 2>&'$(x)'"
    assert tokenize("echo >&'$(touch marker)'")[0][-1].code == ("touch marker",)


# Backticks nested in quotes, substitutions and heredocs (each judged by bash, or dash where named).
NESTED_BACKTICKS = [
    # in a `…` that stands in "…", \" is a quote of the command inside
    ('printf "<%s>" "`printf %s \\"{v}\\"`"', "$(touch {m})", "<$(touch {m})>"),
    # but not in a `…` inside "${…}": bash keeps \" as written there
    ('printf "<%s>" "${x:-`printf %s {v}`}"', "'; touch {m}; '", "<'; touch {m}; '>"),
    # \` in a heredoc body inside `…` is a command substitution of the command inside
    ("printf '<%s>' \"`cat <<F\n\\`printf %s {v}\\`\nF\n`\"", "x; touch {m}", "<x; touch {m}>"),
]


@pytest.mark.parametrize(("script", "payload", "expected"), NESTED_BACKTICKS)
@pytest.mark.parametrize("shell", ["bash", "dash"])
def test_values_in_nested_backticks_stay_values(tmp_path, shell, script, payload, expected):
    marker = tmp_path / "pwned"
    text = expand_params(script, {"v": payload.replace("{m}", str(marker))}, language=shell)
    done = subprocess.run([shell, "-c", text], capture_output=True, cwd=tmp_path, timeout=10)
    assert done.stdout.decode() == expected.replace("{m}", str(marker)), text
    assert not marker.exists(), text


def test_a_value_cannot_end_a_heredoc_inside_a_substitution():
    """Inside $( … ) bash ends a heredoc's body at a line "EOF)" too."""
    with pytest.raises(TemplateError, match=r"holds a line 'EOF\)', which would end the heredoc early"):
        expand_params("echo $(cat <<EOF\n{v}\nEOF\n)", {"v": "EOF)\ntouch pwned"}, language="bash")


@pytest.mark.parametrize("script", [
    "(( x='$(touch marker)' ))",                    # (( … )) reads '…' as no quote: the $( … ) runs
    "true\r#; touch marker",                        # "\r" is a letter to bash, so "#" starts no comment
    "true\x0b#; touch marker",
])
def test_what_bash_runs_the_words_show(tmp_path, script):
    assert _runs(script, tmp_path)
    assert _seen(script)


def test_a_locale_string_is_a_quote_and_an_odd_escape_is_kept():
    assert tokenize('rm -rf $""/')[0] == ["rm", "-rf", "/"]
    assert tokenize("echo $'\\x' $'\\x41'")[0] == ["echo", "\\x", "A"]


@pytest.mark.parametrize("script", [
    "cat <<EOF\n$(true) $(touch marker)\nEOF",      # a heredoc's body: every $( … ) in it runs
    "echo ${x:-$(true)$(touch marker)}",            # so in ${…}
    "echo >&'$(true)$(touch marker)'",              # and in the word after >&, expanded twice
])
def test_every_substitution_after_the_first_is_seen(tmp_path, script):
    """Reading on after a ``$( … )`` once stopped the search at its end: the second was never seen."""
    assert _runs(script, tmp_path)
    assert _seen(script)


def _ansi_end_a_character_at_a_time(text: str, start: int) -> int:
    """Where a ``$'…'`` ends, as the reader found it before: a character a turn."""
    end = start
    while end < len(text) and text[end] != "'":
        end += 2 if text[end] == "\\" else 1
    return end


def test_an_ansi_c_string_ends_where_a_character_at_a_time_found_it():
    """One match finds the closing ``'`` (a backslash taking the character after it, the last one's past the end)."""
    rng = random.Random(7)
    for _ in range(20_000):
        text = "".join(rng.choice(["a", "'", "\\", "\n", "é", "\\'", "$'"]) for _ in range(rng.randrange(0, 12)))
        start = rng.randrange(0, len(text) + 1)
        assert ansi_end(text, start) == _ansi_end_a_character_at_a_time(text, start), (text, start)


def test_a_long_ansi_c_string_is_read_at_once():
    """Its end was found a character a turn of Python; now by one match, whatever its length."""
    text = "echo $'" + "a" * 20_000 + "' x"
    tokenize(text)  # (the first reading compiles what it needs)
    assert work(lambda: tokenize(text)) < 2000
    assert tokenize(text)[0][1] == "a" * 20_000
