"""Catastrophic commands spelled so that the quick look or a rule read them as something else.

A backslash-newline inside a name (``r\\⏎m``) is the name to bash, which drops the pair; a wrapper runs a name
made of expansions (``coproc $x$y``); a substitution that prints nothing (``$()``, ``$(true)``) leaves the rest of
its word; ``kill`` reads a pid as a number (``-01``, `` -1``, ``+1``); ``pkill`` matches a pattern anywhere in a
name, so one that matches the empty text, or one inverted, matches every process; ``while [ 1 ]``, ``((1))``, ``until ! :``
and ``for ((i=0;;i++))`` never end, as ``while true`` does not; GNU programs take a long option cut short
(``rm --r``); ``cryptsetup luksFormat``, ``badblocks -w`` and ``nvme format`` erase a disk; ``cp x/sda -t /dev`` (or into ``/dev/``) writes ``/dev/sda``; brace expansion drops an
empty first word (``{,"rm"} -rf /`` runs ``rm``); ``X=/ env -S "sh -c 'rm -rf \\$X' a b"`` hands ``X`` on, however
many words the string splits into.  Each row of the first table was
let through by the guard before; the second holds what must still run.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from execmagic.guard.check import check

REFUSED = [
    ("r\\\nm -rf ~", "rm-recursive-root"),
    ("r\\\nm -rf /", "rm-recursive-root"),
    ("kil\\\nl -9 -1", "kill-all"),
    ("chmo\\\nd -R 777 /", "chmod-recursive-root"),
    ("func\\\ntion f { f|f& }; f", "fork-bomb"),
    ("x=r; y=m; coproc $x$y -rf ~", "rm-recursive-root"),
    ("x=r; y=m; chronic $x$y -rf ~", "rm-recursive-root"),
    ("x=r; y=m; fakeroot $x$y -rf ~", "rm-recursive-root"),
    ("rm -rf /$()", "rm-recursive-root"),
    ("rm -rf /$(:)", "rm-recursive-root"),
    ('rm -rf "/$(true)"', "rm-recursive-root"),
    ("rm -rf /``", "rm-recursive-root"),
    ("rm -rf /$( # nothing\n)", "rm-recursive-root"),
    ("kill -9 -01", "kill-all"),
    ("kill -9 -- -01", "kill-all"),
    ("kill -9 ' -1'", "kill-all"),
    ("kill -9 01", "kill-init"),
    ("kill -9 +1", "kill-init"),
    ("pkill -9 -uroot", "kill-user"),
    ("killall -9 -uroot", "kill-user"),
    ("pkill -v zzzzzz", "kill-user"),
    ("pkill 'x*'", "kill-user"),
    ("pkill '.+'", "kill-user"),
    ("pkill 'a|'", "kill-user"),
    ("killall -r .", "kill-user"),
    ("while [ 1 ]; do sleep 1000 & done", "fork-bomb"),
    ("while ((1)); do sleep 1000 & done", "fork-bomb"),
    ("until ! :; do sleep 1000 & done", "fork-bomb"),
    ("while /bin/true; do sleep 1000 & done", "fork-bomb"),
    ("while test 1; do sleep 1000 & done", "fork-bomb"),
    ("while [[ x ]]; do sleep 1000 & done", "fork-bomb"),
    ("for ((i=0;;i++)); do sleep 1000 & done", "fork-bomb"),
    ("rm --r -f /", "rm-recursive-root"),
    ("rm --recur -f ~", "rm-recursive-root"),
    ("chmod --rec 777 /", "chmod-recursive-root"),
    ("chown --recu x /", "chown-recursive-root"),
    ("cryptsetup -q luksFormat /dev/sda", "wipe-device"),
    ("badblocks -wsv /dev/sdb", "wipe-device"),
    ("nvme format /dev/nvme0n1", "wipe-device"),
    ("nvme sanitize /dev/nvme0 -a 2", "wipe-device"),
    ("cp x/sda -t /dev", "write-device"),
    ("cp x/sda /dev/", "write-device"),
    ("cp x/sda /dev", "write-device"),
    ("cp -t /etc x/passwd", "clobber-system-file"),
    ("cp x/passwd /etc/", "clobber-system-file"),
    ("mv x/passwd /etc", "clobber-system-file"),
    ("cp --target-directory=/etc x/shadow", "clobber-system-file"),
    ('{,"rm"} -rf /', "rm-recursive-root"),
    ('{,,"rm"} -rf /', "rm-recursive-root"),
    ("{,'mkfs.ext4'} /dev/sda", "mkfs-device"),
    ('{,"kill"} -9 -1', "kill-all"),
    # env -S splits its string into more words than the command had (or as many): X is still handed on
    ("X=/ env -S \"sh -c 'rm -rf \\$X' a b c d e f\"", "rm-recursive-root"),
    ("X=/ env -S \"sh -c 'rm -rf \\$X' a\"", "rm-recursive-root"),
    ("env -S \"Y=/ sh -c 'rm -rf \\$Y'\"", "rm-recursive-root"),
    ("env -S \"Y=/ sh -c 'rm -rf \\$Y' a b c d e f\"", "rm-recursive-root"),
]

ALLOWED = [
    "X=/tmp/x env -S \"sh -c 'rm -rf \\$X' a b c d e f\"",
    "env -S \"Y=/tmp/y sh -c 'rm -rf \\$Y' a b c d e f\"",
    "echo 'a\\\nb'",
    "ls -la \\\n  /tmp",
    "x=1; coproc $x",
    "kill -9 12345",
    "kill -1 12345",
    "kill -9 -12345",
    "kill -0 1",
    "kill %1",
    "pkill -f myserver",
    "pkill python",
    "pkill 'jupyter.*'",
    "killall node",
    "killall -r 'node.*'",
    "pkill -u $USER jupyter",
    "pkill '" + "(" * 300 + "'",  # too long to compile, and no pattern Python can read: judged by the list alone
    "echo $(true)",
    "x=$(:)",
    "rm -rf ./build$()",
    "while [ -f lock ]; do sleep 1 & wait; done",
    "while [ $x ]; do work & done",
    "while read line; do work & done < list",
    "for ((i=0;i<3;i++)); do work & done",
    "while ((0)); do work & done",
    "while [ 1 ]; do sleep 1; done",
    "rm --force build.log",
    "ls --r /",
    "chmod --reference=a b",
    "badblocks -sv /dev/sda",
    "cryptsetup open /dev/sda data",
    "cryptsetup luksDump /dev/sda",
    "nvme list",
    "nvme smart-log /dev/nvme0",
    "cp a.txt /tmp/",
    "cp -r src/ dst/",
    "cp x/notes.txt /etc/",
    "cp -t out a b",
    "install -m 755 tool /usr/local/bin/",
    "mkdir -p {" + ",".join(f"d{i}" for i in range(300)) + "}",  # each alternative was charged the rest of the
    "mkdir -p {" + ",".join(f"run{i}/{{in,out}}" for i in range(300)) + "}",  # word: too complex at 300
]


@pytest.mark.parametrize(("text", "rule"), REFUSED)
def test_refused(text, rule):
    refusal = check("catastrophic", text)
    assert refusal is not None and refusal.rule == rule, (text, refusal)


@pytest.mark.parametrize("text", ALLOWED)
def test_allowed(text):
    assert check("catastrophic", text) is None


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize(("text", "runs"), [
    ("r\\\nm -rf /", "RM -rf /"),
    ("rm -rf /$(true)", "RM -rf /"),
    ("rm -rf /$( # nothing\n)", "RM -rf /"),
    ('{,"rm"} -rf /', "RM -rf /"),
])
def test_bash_runs_the_catastrophic_command(text, runs):
    """The rows are what they claim: bash, with ``rm`` a function that only prints (inert), runs it as ``rm``."""
    out = subprocess.run(["bash", "-c", 'rm(){ echo RM "$@"; }; ' + text], capture_output=True, text=True,
                         stdin=subprocess.DEVNULL, timeout=30)
    assert out.stdout.strip() == runs


@pytest.mark.parametrize(("text", "rule"), [
    ("kill -9 " + "1" * 5000, None),
    ("kill -9 -" + "0" * 5000 + "1", "kill-all"),
    ("kill -9 " + "0" * 5000 + "1", "kill-init"),
    ("echo {1.." + "9" * 5000 + "}", None),
    ("rm -rf {" + "0" * 5000 + "1..2}", None),
    ("X=abc; echo ${X:" + "9" * 5000 + "}", None),
])
def test_numbers_of_thousands_of_digits_are_read_without_error(text, rule):
    """Python refuses to read an integer of more than 4,300 digits; bash reads one with zeros before it as the
    number they end in, and a longer one as no pid, no sequence, a value not known here."""
    refusal = check("catastrophic", text)
    assert (refusal.rule if refusal else None) == rule
