"""At the agents' guard level a refusal is for what destroys a system, a home or a disk, not an ordinary file."""

from __future__ import annotations

import pytest

from execmagic.guard.check import check


@pytest.mark.parametrize("command", ["shred -u scratch.tmp", "shred -n 3 -z notes.txt", "srm /tmp/old.csv",
                                     "cd data && shred -u part-0001.csv", "wipe ./build/cache.bin"])
def test_shredding_an_ordinary_file_is_allowed(command):
    assert check("all", command) is None


@pytest.mark.parametrize("command", ["shred -u ~/.ssh/id_rsa", "srm ~/.aws/credentials", "shred -u $HOME/.gnupg/x",
                                     "wipe /etc/passwd", "shred -u /home/me/.netrc"])
def test_shredding_a_key_or_a_system_file_is_refused(command):
    refusal = check("all", command, env={"HOME": "/home/me"})
    assert refusal is not None and refusal.rule in ("shred-file", "clobber-system-file")
