"""The repository stands alone: nothing in it cites a document that is not in it.

Whoever clones the repository must find the reasoning inside it: in the docstrings, the README
and the architecture page beside the reference.  A citation of an outside document ("design §3.4",
"seed 003", "the seed's rule"), of a tracker's numbers and pages ("issue 8", "the issue's rule") or
of how the work was organised (a brief and its tables, a tester and their rounds of testing, the
session that filed a case) sends the reader to a page they do not have; a test says what it checks,
not who found the case or when.
"""

from __future__ import annotations

import os
import re
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARCHITECTURE = os.path.join("src", "execmagic", "ARCHITECTURE.md")
#: Citations of documents outside the repository.  Put together so this file does not match itself.
OUTSIDE = re.compile("|".join([
    r"design\s*" + "§", r"\bseed\s+\d{3}\b", r"\bthe\s+" + r"seed",
    r"\bissue\s*#?" + r"\d+",  # a tracker's number
    # a brief and its tables, a tester and their rounds, in words and in names (test_what_a_tester_found, BRIEF)
    r"\bthe\s+" + r"brief\b", r"(?<![a-z])brief" + r"'s\b", r"(?-i:(?<![A-Za-z])BRIEF(?![A-Za-z]))",
    r"(?<![a-z])test" + r"ers?(?![a-z])",
    # the tracker's page itself ("the rule") and who filed it ("filed by a session")
    r"\bthe\s+" + r"issue(?:'s)?\b", r"\b(?:found|filed|reported|raised)\s+by\s+(?:a|the|an?\s+\w+)\s+" + r"session\b",
    # rounds of testing, in words and in names (a second round of attacks, SECOND_ROUND, test_what_a_round_found)
    r"(?<![a-z])rounds?[\s_]+" + r"of[\s_]+(?:attacks|testing|tests|review)",
    r"(?<![a-z])(?:first|second|third|fourth|later|earlier|next|last|previous)[\s_]+" + r"round(?![a-z])",
    r"(?<![a-z])a[\s_]+" + r"round[\s_]+found",
]), re.I)


def _tracked_text_files():
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    for name in listed.decode().split("\0"):
        path = os.path.join(ROOT, name)
        if not name or os.path.abspath(path) == os.path.abspath(__file__) or not os.path.isfile(path):
            continue
        with open(path, "rb") as fh:
            data = fh.read()
        if b"\0" not in data:  # binary files (images) cite nothing
            yield name, data.decode("utf-8", errors="replace")


def test_no_file_cites_a_document_outside_the_repository():
    found = [f"{name}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}"
             for name, text in _tracked_text_files() for m in OUTSIDE.finditer(text)]
    assert not found, "citations of documents outside the repository:\n" + "\n".join(found)


def test_the_pattern_finds_what_it_is_for():
    for cited in ("see design " + "§3.2", "(seed " + "003)", "as " + "the seed does", "The " + "seed's rule",
                  "(issue" + " 8)", "Issue" + " #28", "the" + " brief's table", "as the" + " Brief says",
                  "spell." + "BRIEF + x", "a" + " tester's round", "both" + " testers' rounds",
                  "what a" + " tester found", "test_what_a_" + "testers_round", "By the" + " issue's rule",
                  "as the" + " issue asks", "filed by a" + " session", "found by an earlier" + " session",
                  "a round" + " of attacks", "both rounds" + " of testing", "SECOND" + "_ROUND = [",
                  "test_what_a_round" + "_of_attacks_found", "a first" + " round", "what a" + " round found"):
        assert OUTSIDE.search(cited), cited
    for fine in ("random.Random(seed)", "a seed of 42", "--seed-file=munged.seed", "seeds=3", "pytest", "a brief pause",
                 "briefly", "issues: none", "the lead byte", "tests/", "a session's exports", "the contest",
                 "exec: <issue> (CODE)", "the services that issue it", "found by its marker", "go round",
                 "rounds of the 200 MB comparison", "round past pid_max", "each time round", "round $round of 3",
                 "Rounds of \"sweep, signal\"", "round_trip", "a session found by number"):
        assert not OUTSIDE.search(fine), fine


def test_the_architecture_page_exists_and_the_readme_links_it():
    with open(os.path.join(ROOT, ARCHITECTURE), encoding="utf-8") as fh:
        page = fh.read()
    for part in ("## The layers", "## The life of a cell", "## The session", "## The standby shell",
                 "## The watchdog", "## Background shells and backends", "## The sandbox", "## Trust boundaries"):
        assert part in page, part
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as fh:
        assert f"]({ARCHITECTURE})" in fh.read()


def test_the_architecture_page_names_modules_that_exist():
    with open(os.path.join(ROOT, ARCHITECTURE), encoding="utf-8") as fh:
        page = fh.read()
    named = set(re.findall(r"`((?:[a-z_]+/)+[a-z_]+\.(?:py|md))`", page))
    assert len(named) >= 20
    base = os.path.join(ROOT, "src", "execmagic")
    missing = [name for name in sorted(named)
               if not os.path.exists(os.path.join(base, name))
               and not os.path.exists(os.path.join(base, "background", "backends", name))
               and not os.path.exists(os.path.join(ROOT, name))]
    assert not missing, missing
