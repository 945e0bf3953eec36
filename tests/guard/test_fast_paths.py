"""The check's shortcuts on ordinary scripts give the refusals and the commands that the walk without them gives.

A notebook's shell cells are tens of thousands of commands a MB, and each paid the walk's whole way: a command of
plain assignments (``N=5``) walked as a pipeline, a ``$(basename "$f")`` in a loop walked again at every turn, each
word of ``ls -la *.csv > out.txt`` expanded where no rule looks at them, ``ls 2>/dev/null`` put to all nineteen
matchers (its ``2>/dev/null`` looked at again each time), the same body parsed again and again, and read for
what it prints though it runs no printer.  Each shortcut is turned off here in turn, and all at once, on
random scripts made of ordinary lines and hostile pieces: what is refused, in what order, and every simple command
must stay the same.
"""

from __future__ import annotations

import importlib
import random
import re

import pytest

from execmagic.guard import commands as guard_commands
from execmagic.guard import forks, paths, readings
from execmagic.guard import names as guard_names
from execmagic.guard import walk as guard_walk
from execmagic.guard import writes as guard_writes
from execmagic.guard.check import _refusals, check, find_danger
from execmagic.guard.commands import _LITERAL, WRAPPERS, Command, Simple, literal
from execmagic.guard.forks import DEFINES_FUNCTION, defines_function
from execmagic.guard.inert import ACTIVE, CHANGERS, HANDING
from execmagic.guard.listed import simple_commands
from execmagic.guard.options import DOWNLOADERS, INTERPRETER, SHELLS, SOURCES
from execmagic.guard.printers import emitted, may_emit
from execmagic.guard.rules import JUDGED_NAMES, MATCHERS, WRITE_MATCHERS, match, refuse
from execmagic.guard.word_starts import at_word_start
from execmagic.shell.lexer import tokenize
from execmagic.shell.words import Word
from execmagic.shell.work import uncollected
from work_count import work

guard_check = importlib.import_module("execmagic.guard.check")  # (the package's name check is the function)

#: What ordinary data work is made of, and what hides a refusal in it.
_LINES = ["N=123", 'N="data/raw.csv"  # where', "OUT=out/x.csv; D=/", "sort a.csv | uniq -c | head -20 > out/c.txt",
          'echo "rows: $N in ${N}" >> log.txt', "mkdir -p out/1 && cd out || exit 1", "cd /tmp",
          'python3 prep.py --in "$N" --out r.tsv 2> err.log &', 'export PATH="$HOME/bin:$PATH"; ls -la *.csv 2>/dev/null',
          "grep -c ERROR a.csv || true", "wait; test -s a.csv && wc -l < a.csv", "cat > out.txt <<EOF\nn: $N\nEOF",
          'for f in data/*.csv; do\n  sort "$f" > "out/$(basename "$f" .csv).txt"\ndone', 'n=$((N + 1)); echo "$n"',
          'if [ -s a.csv ]; then\n  echo "$(wc -l < a.csv) rows"\nfi', "while read -r line; do echo \"$line\"; done < a"]
_PIECES = ["rm -rf ", "$N ", "$D ", "$OUT ", "/ ", "~ ", "* ", "; ", "&& ", "| ", "\n", "N=/ ", "N=/tmp/x ", "D=~ ",
           "X={a,b} ", "{rm,-rf,/} ", "x='a[$(rm -rf /)]' ", "((x)) ", "a[$(reboot)]=1 ", "N= ", "N=\"$HOME\" ",
           "> /etc/passwd ", ">> /dev/sda ", "2>/dev/null ", "> ~/.bashrc ", "> $OUT ", "> /proc/sysrq-trigger ",
           "$(rm -rf /) ", "$(echo /) ", "`reboot` ", "$(date +%F) ", '$(basename "$f") ', "$(cat > /dev/sda) ",
           "$(N=/; rm -rf $N) ", "$(cd /; rm -rf *) ", "$(((reboot)); x) ", "((reboot)) ", "((N=/)) ", "((w1)) ",
           "( ", ") ", "cd / ", "cd ", "curl -o f u ", "sh f ", "eval ", "'rm -rf /' ", "sh -c ", "| sh ",
           "f(){ f|f& }; f ", "cat <<'EOF' | sh\nrm -rf /\nEOF\n", "<<E\n$(rm -rf ~)\nE\n", "w1 ", "ls ", "echo ",
           "tee /dev/sda ", "cp a /etc/shadow ", "shred -u ~/.ssh/id_rsa ", "sed -i s/a/b/ ~/.bashrc ", "kill -9 -1 ",
           "IFS=, ", "x=rm,-rf,/ ", "$x ", "declare -n r=D ", "$r ", "unset D ", "read D ", "for D in / ~; do ",
           "done ", "'", '"', "$'\\x72m' ", "/bin/rm ", "sudo ", "env ", "xargs ", "echo / | ", "$() ", "`` ",
           "/$(true) ", "/$(:) ", "$(false)/ ", "/`true` ", "x=( ", "x=(/ ~) ", "N=1 | ", "r=/ ", "N=1 N=/ ",
           "N=/;", "N=1&& ", "N=2 & ", ";; ", "(N=/) ", "N=/ ((w1)) ", "export D=/ ", "export N=$D ", "printf -v D / ",
           "set -- / ~ ", "$1 ", "let D=1 ", "pushd / ", "popd ", "chdir / ", "read -r D <<< / ", "cd $(rm -rf /) ",
           "export X=$(curl u) ", "cd /dev; echo > sda ", "N=$((1)) ", "N=$D ", "D=$(echo /) ", "N=`reboot` ",
           "((cd /)) ", "((N=$D)) ", "((read D)) ", "cd > /etc/passwd ", "read D > /dev/sda ", "N=é ", "é=1 ",
           "N=a[1] ", "a[1]=/ ", "N=\\$D ", "N='$D' ", "N==/ ", "_N9=/ ", "9N=/ ", "declare -a D ", "unset -f D ",
           "trap 'rm -rf /' EXIT ", "alias x='rm -rf ~' ", "su -c 'rm -rf /' ", "find / -exec rm -rf {} + ", "watch ",
           "python3 -c 'import shutil; shutil.rmtree(\"/\")' ", "script -c ", "flock f -c ", "source <(echo ", "awk ",
           "/usr/bin/python3 - ", "perl -e 'fork while fork' ", "N=/ sh -c 'rm -rf $N' ", "env N=/ sh -c ", "runuser ",
           "$(curl u) ", "bash <(curl u) ", "sh -c \"$(wget -O- u)\" ", "`curl u` ", "$(sudo curl u) ", "mkfs.ext4 ",
           "/dev/sda ", "$(mkfs.ext4 /dev/sda) "]
_ENVS = [None, {"HOME": "/home/me", "D": "/home/me", "PATH": "/usr/bin"}]


def _script(seed: int) -> str:
    rng = random.Random(seed)
    parts = [rng.choice(_LINES) if rng.random() < 0.5 else "".join(rng.choice(_PIECES) for _ in range(rng.randrange(
        1, 8))) for _ in range(rng.randrange(1, 10))]
    return "\n".join(parts)


def _judged(text: str, env: dict[str, str] | None) -> tuple[object, ...]:
    """Every refusal a check's walk finds, in order; the first under each level; every simple command."""
    try:
        with uncollected():
            refusals: object = list(_refusals(text, None, env))
    except Exception as exc:  # a text too complex to read is an answer too
        refusals = type(exc).__name__
    every = list(simple_commands(text)) if env is None else None
    return refusals, check("all", text, env=env), check("catastrophic", text, env=env), find_danger(text, env=env), every


def _slow(monkeypatch: pytest.MonkeyPatch, shortcut: str) -> None:
    """Turn one of the check's shortcuts off (or all of them: ``"all"``)."""
    if shortcut in ("assignments", "all"):  # each walked as a pipeline: no run of them, no ((N=5)) passed
        monkeypatch.setattr(guard_commands, "_pairs", lambda words: None)
        monkeypatch.setattr(guard_walk, "assigns_plainly", lambda command: False)
    if shortcut in ("quiet texts", "all"):
        monkeypatch.setattr(guard_walk, "_quiet", lambda text, kept: False)
    if shortcut in ("redirections first", "all"):
        monkeypatch.setattr(guard_walk, "judged_writes", lambda redirects, cwd: True)
    if shortcut in ("commands kept", "all"):  # every text parsed anew, as if each made a brace expression
        grouped = readings.grouped
        monkeypatch.setattr(readings, "grouped", lambda tokens, allowance, runs: (grouped(tokens, allowance, runs)[0],
                                                                                  True))
    if shortcut in ("paths kept", "all"):
        monkeypatch.setattr(paths, "_PATH_KEPT", -1)
    if shortcut in ("writes kept", "all"):
        monkeypatch.setattr(guard_writes, "writes_break", lambda redirects, cwd: True)
    if shortcut in ("printing told first", "all"):
        monkeypatch.setattr(guard_names, "may_emit", lambda command: True)
    if shortcut in ("changes only", "all"):  # read -r line, cd out, n=$((n + 1)): each walked as any pipeline
        monkeypatch.setattr(guard_walk, "_only_changes", lambda command: False)
    if shortcut in ("runs told at once", "all"):  # each assignment of a run looked at by _ended and _pairs
        monkeypatch.setattr(guard_commands, "_AT_ONCE", False)
    if shortcut in ("handing told first", "all"):  # every command put to _handed_on
        monkeypatch.setattr(guard_walk, "_hands_on", lambda name: True)
    if shortcut in ("commands held back", "all"):  # every simple command a pipeline walked yields
        monkeypatch.setattr(guard_walk, "_looked_at", lambda name: True)
    if shortcut in ("names that hold", "all"):  # a name given the value it holds: a copy, what was printed forgotten
        monkeypatch.setattr(guard_names.Names, "_holds", lambda names, changes, refs: False)
    if shortcut in ("words kept", "all"):  # each word expanded anew
        monkeypatch.setattr(guard_names.Names, "word", lambda names, word: [word] if (
            texts := names._texts(word)) is None else names._made(word, texts))


@pytest.mark.parametrize("shortcut", ["assignments", "quiet texts", "redirections first", "commands kept",
                                      "paths kept", "printing told first", "writes kept", "changes only",
                                      "runs told at once", "names that hold", "words kept", "handing told first",
                                      "commands held back", "all"])
@pytest.mark.parametrize("seed", range(60))
def test_a_shortcut_finds_what_the_whole_walk_finds(seed, shortcut, monkeypatch):
    text = _script(seed)
    fast = [_judged(text, env) for env in _ENVS]
    _slow(monkeypatch, shortcut)
    assert [_judged(text, env) for env in _ENVS] == fast, text


@pytest.mark.parametrize("text", ["x=(/ ~); rm -rf $x", "x=(/ ~) rm -rf $x", "declare -n r=D; r=/; rm -rf $D",
                                  "D=/tmp; (D=/); rm -rf $D", "curl -o f u; N=1; sh f", "curl -o f u\nN=1 M=2\n./f",
                                  "N=/ | rm -rf $N", "rm -rf $N | N=/", "(N=/; M=1); rm -rf $N", "N=/ ((rm -rf $N))",
                                  "N=/tmp\nN=/\nrm -rf $N", "N=/ && M=1 || rm -rf $N/", "N=/ >x; rm -rf $N",
                                  "N=/ & wait; rm -rf $N", "case x in x) N=/;; esac; rm -rf $N", "a[$(reboot)]=1; N=1",
                                  'echo "$(N=/; rm -rf $N)"', "N=$(echo /); M=1; rm -rf $N", "N=/ M=$N; rm -rf $M"])
def test_a_run_of_assignments_is_judged_as_its_commands_are(text, monkeypatch):
    """Plain assignments one after another are one item of a check's reading, given their values at once: what is
    refused, where, and every simple command are as when each is walked as a pipeline of its own."""
    fast = [_judged(text, env) for env in _ENVS]
    _slow(monkeypatch, "assignments")
    assert [_judged(text, env) for env in _ENVS] == fast, text


def test_a_run_of_assignments_is_one_item_and_no_stage_of_a_pipeline():
    tokens = tokenize("A=1; B=2 && C=/\nx | D=1; E=$x; F=1 >f; G=(a); H=2 (I=3)")[0]
    items = guard_commands.grouped(tokens, runs=True)[0]
    runs = [item.pairs for item in items if isinstance(item, guard_commands.Assignments)]
    assert runs == [[("A", ("1",)), ("B", ("2",)), ("C", ("/",))], [("G", None)], [("H", ("2",))], [("I", ("3",))]]
    commands = [item for item in items if isinstance(item, Command)]
    assert [(str(item.words[0]), item.values) for item in commands] == [
        ("x", False), ("D=1", False), ("E=$x", False), ("F=1", False), ("a", True)]  # (G=( a ): an array's values)
    assert guard_commands.grouped(tokens)[0] == guard_commands.parse(tokens)


#: What a command that only changes names or the directory is made of, and what may follow it.
_CHANGING = ["read ", "read -r ", "mapfile ", "for ", "select ", "in ", "do ", "done ", "cd ", "pushd ", "popd ",
             "chdir ", "/usr/bin/cd ", "export ", "declare -n ", "local ", "readonly ", "typeset ", "printf -v ",
             "getopts ab ", "let ", "unset ", "set -- ", "set -e ", "D ", "N ", "r ", "D=/ ", "N=$D ", "D=$(echo /) ",
             "N=$((1 + 2)) ", "D=`echo ~` ", "N=$(curl u) ", "a[$(reboot)]=1 ", "a[1]=/ ", "x='a[$(reboot)]' ",
             "$D ", "$N ", "${D%/} ", "$(echo cd) ", "$(rm -rf /) ", "<(rm -rf ~) ", "<<< / ", "<<< $D ",
             "> /etc/passwd ", "> $D/passwd ", "2>/dev/null ", "< x ", "; ", "&& ", "| ", "\n", "( ", ") ", "((cd /)) ",
             "((read D)) ", "((N=$D)) ", "rm -rf $D ", "rm -rf $N/ ", "rm -rf * ", "sh -c \"rm -rf $D\" ", "/ ", "~ ",
             "/etc ", "curl -o f u ", "sh f ", "echo / | ", "xargs ", "$1 ", "rm -rf $1 ", "eval ", "'", '"']


@pytest.mark.parametrize("seed", range(300))
def test_a_command_that_only_changes_names_is_judged_as_when_walked_whole(seed, monkeypatch):
    """``read -r line``, ``cd out``, ``n=$((n + 1))``, ``export PATH=…``: what such a command changes is all it does
    (no rule judges it by name, it hands nothing on, downloads nothing); walked as any pipeline, it gives the same."""
    rng = random.Random(seed)
    text = "".join(rng.choice(_CHANGING) for _ in range(rng.randrange(2, 24)))
    fast = [_judged(text, env) for env in _ENVS]
    _slow(monkeypatch, "changes only")
    assert [_judged(text, env) for env in _ENVS] == fast, text


def test_what_only_changes_names_is_no_program_a_rule_or_the_walk_does_more_with():
    handed = {"eval", "watch", "trap", "alias", "su", "runuser", "sg", "script", "flock", "find", "tmux"}  # (_handed_on)
    assert {*SHELLS, *SOURCES, *handed} == HANDING
    others = JUDGED_NAMES | SHELLS | SOURCES | DOWNLOADERS | WRAPPERS | handed
    assert CHANGERS <= ACTIVE and not CHANGERS & others
    assert not any(name.startswith("mkfs") or INTERPRETER.fullmatch(name) for name in CHANGERS)


#: The same words again and again, quoted and not, under names that change between them, and what changes them.
_EXPANDING = ["rm -rf ", "echo ", "ls ", "$D ", '"$D" ', "$D/ ", '"$D"/ ', "'$D' ", "${D} ", "${D:-/} ", "${!R} ", "$1 ",
              "$@ ", '"$@" ', "$HOME ", "$HOME/ ", "/home/me ", "~ ", "$X/ ", "${X}/ ", "D='a b' ", "D=/ ", "D=/tmp ",
              "D= ", "R=D ",
              "IFS=, ", "D=a,/ ", "HOME=/ ", "source x; ", "eval x; ", "unset D; ", "read D; ", "set -- / ~; ",
              "declare -n D=E; ", "E=/ ", "cd $D; ", "> $D/passwd ", "<<< $D ", "sh -c ", "$(echo $D) ", "; ", "\n",
              "&& ", "| ", "( ", ") "]


@pytest.mark.parametrize("seed", range(300))
def test_a_word_kept_expands_as_one_expanded_anew(seed, monkeypatch):
    """A word's expansion is kept under names as they are (``Names.word``), and names given what they hold are kept
    as they are (``Names._holds``): the same word quoted or not, after ``IFS``, ``declare -n``, ``source`` or a new
    value, expands as when each is expanded anew under names copied at every change."""
    rng = random.Random(seed)
    text = "".join(rng.choice(_EXPANDING) for _ in range(rng.randrange(2, 30)))
    fast = [_judged(text, env) for env in _ENVS]
    _slow(monkeypatch, "words kept")
    _slow(monkeypatch, "names that hold")
    assert [_judged(text, env) for env in _ENVS] == fast, text


@pytest.mark.parametrize("text", ["rm -rf $X/; source x; rm -rf $X/", "ls $X/; eval x; rm -rf $X/", "ls $X; . x; rm -rf $X/",
                                  "source x; source x; rm -rf $X/", "echo \"$D\"; rm -rf $D", "D='a /'; echo \"$D\"; rm -rf $D",
                                  "ls $D; IFS=,; D=a,/; ls $D; rm -rf $D", "ls $D; declare -n D=E; E=/; rm -rf $D",
                                  "ls $HOME/x; HOME=/; rm -rf $HOME/x", "read D; read D; rm -rf $D/", "D=/; D=/; (rm -rf $D)"])
def test_names_that_hold_and_words_kept_are_what_the_walk_finds_anew(text, monkeypatch):
    fast = [_judged(text, env) for env in _ENVS]
    _slow(monkeypatch, "words kept")
    _slow(monkeypatch, "names that hold")
    assert [_judged(text, env) for env in _ENVS] == fast, text


def _items(text: str) -> list[object]:
    items = guard_commands.grouped(tokenize(text)[0], runs=True)[0]
    return [(item.commands, item.pairs) if isinstance(item, guard_commands.Assignments) else item for item in items]


@pytest.mark.parametrize("seed", range(40))
def test_a_run_told_at_once_is_the_run_each_command_of_it_ends(seed, monkeypatch):
    """The next plain assignment of a run is told by a few looks at its word (``commands._AT_ONCE``): the items are
    those :func:`~execmagic.guard.commands._pairs` makes of each command."""
    rng = random.Random(seed)
    names = ["N", "n_1", "_", "A9", "9", "é", "Ｎ", "a[1]", "", "N N", "$D", "'N'"]
    values = ["", "/", "x", "=", "$D", "${D}", "`x`", "$(x)", "'$D'", '"/"', "\\$", "[", "a[1]", "{a,b}", "$HOME", "é",
              "<(x)", "'`'", " x"]
    ends = ["; ", "\n", "&& ", "|| ", "& ", ";; ", ";& ", "| ", "(", ")", " > f; ", " <<<x; ", " x; ", "\n\n"]
    for _ in range(300):
        text = "".join(rng.choice(names) + "=" * (rng.random() < 0.9) + "".join(rng.choice(values) for _ in range(
            rng.randrange(3))) + rng.choice(ends) for _ in range(rng.randrange(1, 8)))
        told = _items(text)
        monkeypatch.setattr(guard_commands, "_AT_ONCE", False)
        assert _items(text) == told, text
        monkeypatch.setattr(guard_commands, "_AT_ONCE", True)


@pytest.mark.parametrize("text", ["N=/; rm -rf $N", "N=/tmp; N=/; rm -rf $N/", "(N=/; rm -rf $N)",
                                  'for f in a b; do echo "$(basename "$f")"; done; echo $(basename x; rm -rf /)',
                                  "ls 2>/dev/null; ls > /dev/sda", "D=/dev; ls > $D/sda", "echo x >> ~/.bashrc",
                                  'N="$(echo /)"; rm -rf $N', "N=/ sh -c 'rm -rf $N'", "x=a; x[$(rm -rf /)]=1"])
def test_what_the_shortcuts_pass_by_still_refuses_where_it_should(text):
    assert check("all", text) is not None


@pytest.mark.parametrize("name", ["echo", "printf", "cat", ":", "true", "false", "/bin/echo", "ls", "basename",
                                  "date", "sudo", "env", "nice", "x=1", "command", "builtin", "exec", "yes"])
@pytest.mark.parametrize("args", [[], ["/"], ["%s", "/"], ["-n", "x"]])
def test_a_command_told_to_print_nothing_known_prints_nothing_known(name, args):
    """A ``$(…)`` whose command plainly prints nothing the walk knows is not expanded to find out: whatever
    :func:`~execmagic.guard.commands.emitted` knows what it prints of must be let through."""
    command = Command([Word(word) for word in [name, *args]])
    if emitted(command) is not None:
        assert may_emit(command), command
    assert check("all", f"rm -rf /$({' '.join([name, *args])})") is not None or emitted(command) not in ("", "/")


def _simples(seed: int) -> list[Simple]:
    rng = random.Random(seed)
    names = [*sorted(JUDGED_NAMES), "mkfs.ext4", "ls", "w1", "echo", "", "/bin/cat", "python3", "tee2"]
    words = ["-rf", "-R", "/", "~", "/etc/passwd", "/dev/sda", "of=/dev/sda", "-u", "root", "1", "-1", "-9", "-i",
             "x", "clean", "-fdx", "--delete", "--remove-files", "-m", ".", "*", "~/.bashrc", "-r", "/usr", "init"]
    targets = ["/dev/sda", "/etc/passwd", "/proc/sysrq-trigger", "~/.bashrc", "/dev/null", "x", "2", "/boot/x"]
    ops = [">", ">>", ">|", "&>", "&>>", "<>", ">&", "<", "<<<"]
    made = []
    for _ in range(200):
        name = rng.choice(names)
        argv = [name] * bool(name) + [rng.choice(words) for _ in range(rng.randrange(4))]
        redirects = tuple((rng.choice(ops), Word(rng.choice(targets))) for _ in range(rng.randrange(3)))
        made.append(Simple(tuple(Word(w) for w in argv), redirects, rng.choice([None, (), ("etc",), ("home", "~")])))
    return made


def _every_matcher(simple: Simple) -> object:
    for matcher in MATCHERS:
        hit = matcher(simple)
        if hit:
            return refuse(hit[0], simple.display, **hit[1])
    return None


@pytest.mark.parametrize("seed", range(20))
def test_a_program_no_rule_names_is_put_to_the_matchers_of_writes_alone(seed):
    """``ls 2>/dev/null`` is put to the four matchers that judge what any program writes: every other matcher asks
    for a name in the judged names first, so it finds nothing in such a command."""
    for simple in _simples(seed):
        assert match(simple) == _every_matcher(simple), simple
        if simple.name not in JUDGED_NAMES and not simple.name.startswith("mkfs"):
            assert all(matcher(simple) is None for matcher in MATCHERS if matcher not in WRITE_MATCHERS), simple
            assert guard_writes.writes_break(simple.redirects, simple.cwd) == (match(simple) is not None), simple
            assert guard_writes.judged(simple) == match(simple)


@pytest.mark.parametrize("path", ["/", "/usr/..", "//etc/./passwd/", "~", "~/", "$HOME/x", "${HOME:?}/", "a/../..",
                                  "$X/y", "`x`/y", "*", "/*", "/.*", "~root/x", "", "x" * 300, "/" + "../" * 200])
@pytest.mark.parametrize("cwd", [None, (), ("etc",), ("home", "~")])
def test_a_path_kept_resolves_as_one_resolved_anew(path, cwd):
    for globs in (True, False):
        assert paths.resolve(Word(path), cwd, globs=globs) == paths._resolve(path, cwd, globs)
        assert paths.resolve(path, cwd, globs=globs) == paths._resolve(path, cwd, globs)


@pytest.mark.parametrize("seed", range(20))
def test_a_function_defined_is_found_as_the_one_pattern_finds_it(seed):
    rng = random.Random(seed)
    pieces = ["f", "()", "( )", "(\t)", "{", "(", ")", "}", " ", "\n", "function", "function ", "functions", "x", ";"]
    for _ in range(200):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 12)))
        assert defines_function(text) == (DEFINES_FUNCTION.search(text) is not None), text


#: The patterns as they were written, each starting with ``\b`` (what :mod:`execmagic.guard.word_starts` respells).
_WRITTEN = {
    "triggers": re.compile(r"\b(" + "|".join(guard_check._TRIGGER_WORDS) + r")\b|" + guard_check._TRIGGER_PLACES),
    "built target": re.compile(r"[$`]|\b(?:cd|pushd)\b"),
    "endless": re.compile(r"\b(?:" + "|".join(forks._LOOPS) + r")[ \t]*(?:[;\n][\s;]*)?do\b"),
    "done": re.compile(r"\bdone\b"),
    "keyword": re.compile(rf"\bfunction\s+{forks._NAME_CHAR}+"),
}
_SPELLED = {"triggers": guard_check._TRIGGERS, "built target": guard_check._BUILT_TARGET, "endless": forks.ENDLESS,
            "done": forks._DONE, "keyword": forks._KEYWORD}
_SHAPES = ["f", "()", "( )", "(\t)", "{", "(", ")", "}", " ", "\n", "function", "function ", "functions", "x", ";", "|",
           "&", "while", "until", "for", "do", "done", "true", ":", "false", "((", "))", "1", "0", "[", "]", "test",
           "!", "_", "é", "\u00a0", "rm", "env", "/etc", ".bashrc", "7z", "cd", "pushd", "$", "`", "-", "a.f", "x1",
           "/bin/", "killall5", "remove_x", "mkfs.ext4"]


@pytest.mark.parametrize("seed", range(20))
def test_a_pattern_spelled_to_start_with_a_character_finds_what_the_one_written_finds(seed, monkeypatch):
    """Each pattern that looked for a word from ``\\b`` on, and each function defined, is found where it was and as it
    was (a search that skips to the next place a match may start: see ``guard.word_starts``)."""
    rng = random.Random(seed)
    for _ in range(2000):
        text = "".join(rng.choice(_SHAPES) for _ in range(rng.randrange(1, 16)))
        for name, written in _WRITTEN.items():
            assert [m.span() for m in _SPELLED[name].finditer(text)] == [m.span() for m in written.finditer(text)], (
                name, text)
        written = [(m.span(), m.groups()) for m in forks._FUNCTION.finditer(text)]
        monkeypatch.setattr(forks, "_SPARSE", 0)  # each place a function may start tried, however many
        assert [(m.span(), m.groups()) for m in forks._functions(text)] == written, text
        monkeypatch.setattr(forks, "_SPARSE", 10**9)  # the pattern tried at every offset
        assert [(m.span(), m.groups()) for m in forks._functions(text)] == written, text


def test_a_word_start_is_asked_of_alternatives_that_start_with_a_word_character():
    assert re.fullmatch(at_word_start(["rm", "rsync", "cp"], after=r"\b"), "rsync")
    assert not re.search(at_word_start(["rm"], after=r"\b"), "xrm rmx _rm")
    for alternative in [r"\brm", "(rm)", "[r]m", "é", "-rf"]:
        with pytest.raises(ValueError):
            at_word_start([alternative])


@pytest.mark.parametrize(("unit", "most"), [("N=123\n", 60), ("ls -la *.csv 2>/dev/null\n", 300),
                                            ('f=$RANDOM; echo "$(basename "$f" .csv)"\n', 570)])
def test_an_ordinary_command_costs_a_little_on_top_of_its_reading(unit, most):
    """Lines of Python on top of reading each: a plain assignment was a pipeline walked (about 320, then 80 as a
    command passed at once, now 40 as one of a run of them given at once: ``commands.Assignments``), a write
    to ``/dev/null`` was put to every matcher of writes (570, now 180), a ``$(basename …)`` read again for what it
    prints and walked again after every change of a name (620, now 520)."""
    text = "rm x; " + unit * 300
    check("all", text)
    assert work(lambda: check("all", text)) - work(lambda: tokenize(text)) < most * 300


@pytest.mark.parametrize("value", ["x", "$x", "$(date)", "${HOME}/x"])
def test_a_script_of_many_assignments_changes_its_names_without_copying_them(value, monkeypatch):
    """Each ``NAME=`` copied every name given so far (20,000 such lines took 1.7 s, 200,000 characters of them 3.3 s):
    names nothing keeps -- no ``(`` to restore them at its ``)``, no body found quiet under them -- are changed as
    they are.  What is kept stays as it was."""
    copies = []
    copy = guard_names.Names.copy
    monkeypatch.setattr(guard_names.Names, "copy", lambda names: copies.append(1) or copy(names))
    text = "".join(f"v{i}={value}\n" for i in range(2000)) + "rm -rf $v1999"
    check("all", text, env={"HOME": "/home/me", "x": "/"})
    assert len(copies) < 100
    for text in ["D=/; (D=/tmp/a); rm -rf $D", "D=/; (D=/tmp/a; N=1); rm -rf $D", "D=/tmp/a; (D=/; rm -rf $D)",
                 'D=/; for f in a; do echo "$(basename "$f")"; done; D=/tmp; rm -rf $D; D=/; rm -rf $D']:
        assert check("all", text).rule == "rm-recursive-root", text
    assert check("all", "D=/tmp/a; (D=/); rm -rf $D") is None


@pytest.mark.parametrize("seed", range(20))
def test_a_value_is_told_literal_as_the_pattern_tells_it(seed):
    rng = random.Random(seed)
    pieces = ["$HOME", "${HOME}", "$HOMEx", "$HOME_", "$HOMEé", "$HOME/", "${HOME", "$", "`", "a", "/", "{", "}", "é",
              "$x", "HOME", "\\", " ", "$HOME-", "${HOME}x"]
    for _ in range(300):
        value = "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 8)))
        assert literal(value) == (_LITERAL.fullmatch(value) is not None), value
