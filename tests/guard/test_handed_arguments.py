"""What ``find -exec`` and ``xargs`` hand a shell's code as its arguments, and what ``pwd`` prints, are followed.

``find / -exec sh -c 'rm -rf "$1"' _ {} \\;`` deletes every file ``find`` finds, as ``find / -exec rm -rf {} +``
does; ``echo / | xargs sh -c 'rm -rf "$1"' _`` gives the code ``/`` as ``$1``; and after a ``cd`` the walk followed,
``$(pwd)`` is where it went (``cd ~ && rm -rf "$(pwd)"``).  Each was passed before.
"""

from __future__ import annotations

import pytest

from guard_rows import assert_allowed, assert_refused

REFUSED = [
    "find / -exec sh -c 'rm -rf \"$1\"' _ {} \\;",
    "find / -mindepth 1 -exec sh -c 'rm -rf \"$@\"' _ {} +",
    "find ~ -type f -exec bash -c 'shred -u \"$0\"' {} \\;",
    "find ~ -exec sh -c 'cd /tmp; sudo rm -r \"$1\"' _ {} \\;",
    "echo / | xargs sh -c 'rm -rf \"$1\"' _",
    "echo ~ | xargs bash -c 'rm -rf $1' _",
    "xargs sh -c 'rm -rf \"$1\"' _ <<< /",
    "cd / && rm -rf $(pwd)",
    "cd ~ && rm -rf \"$(pwd)\"",
    "cd ~ && rm -rf `pwd`",
    "cd /; rm -rf \"$(pwd -L)\"",
]
ALLOWED = [
    "find . -name '*.pyc' -exec sh -c 'rm -f \"$1\"' _ {} \\;",
    "find build -exec sh -c 'echo \"$1\"' _ {} \\;",
    "find / -name core -exec sh -c 'echo removing \"$1\"' _ {} \\;",
    "find data -name '*.csv' -exec sh -c 'wc -l \"$1\" >> counts.txt' _ {} \\;",
    "printf '%s\\n' build dist | xargs sh -c 'rm -rf \"$1\"' _",
    "ls *.csv | xargs -n1 sh -c 'gzip -k \"$0\"'",
    "cd build && rm -rf \"$(pwd)/out\"",
    "cd /tmp/x && rm -rf \"$(pwd)\"",
    "rm -rf \"$(pwd)/build\"",
    "cd ~/proj; rm -rf $(pwd)/dist",
    "echo \"working in $(pwd)\"",
]


@pytest.mark.parametrize("command", REFUSED)
def test_the_arguments_and_the_directory_are_followed(command):
    assert_refused(command)


@pytest.mark.parametrize("command", ALLOWED)
def test_ordinary_uses_pass(command):
    assert_allowed(command)
