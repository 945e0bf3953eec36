"""Interpreter one-liners: what python, perl, node or ruby code hands to a shell, and what it deletes.

Code in another language is not parsed; it is searched for two shapes, enough to see an accident
coming in ``python -c``/``perl -e``/``node -e``/``ruby -e`` code (or a heredoc fed to one):

* a string handed to something that runs a command -- ``os.system('…')``, ``subprocess.run([...])``,
  ``system("…")``, ``execSync('…')``, and in perl and ruby backticks, ``qx{…}`` and ``%x(…)``.  One
  string is shell text, several (``system("rm", "-rf", "/")``, a list) are an argv; the walk
  (:mod:`.walk`) judges either as it judges any command;
* a recursive delete -- ``shutil.rmtree``, perl's ``rmtree``/``remove_tree``, ruby's
  ``FileUtils.rm_rf``, node's ``fs.rmSync(…, {recursive: true})`` -- of a literal path or of the home
  directory (``os.path.expanduser('~')``, ``Path.home()``, ``$ENV{HOME}``, ``Dir.home``, …).

``print "rm -rf /"`` is data and stays data; a path held in a variable is not followed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .paths import Path, critical_target
from .words import unescape

__all__ = ["MAX_CALLS", "shell_calls", "tree_deleted"]

#: How many distinct commands in one piece of interpreter code are judged; later ones are not looked at.
MAX_CALLS = 200

_STRING = r"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`"""
_ARGS = rf"(?:{_STRING})(?:\s*,\s*(?:{_STRING}))*"
_RUNS = re.compile(
    r"\b(?:system|popen[23]?|spawn|exec|execSync|getoutput|getstatusoutput|check_output|check_call|call|run|Popen"
    r"|capture2e?|capture3|popen3|shell_exec|passthru)\s*(?:\(\s*|\s+)"
    rf"(?P<args>{_ARGS}|\[\s*{_ARGS}\s*,?\s*\])")
_BACKTICKS = re.compile(r"`(?P<a>[^`]*)`|(?:\bqx|%x)\s*(?:\((?P<b>[^)]*)\)|\{(?P<c>[^}]*)\}|/(?P<d>[^/]*)/)")
_HOME_CODE = (r"os\.path\.expanduser\(\s*['\"]~/?['\"]\s*\)|(?:pathlib\.)?Path\.home\(\)|Path\(\s*['\"]~['\"]\s*\)"
              r"\.expanduser\(\)|os\.environ\[\s*['\"]HOME['\"]\s*\]|os\.(?:environ\.get|getenv)\(\s*['\"]HOME['\"]\s*\)"
              r"|Dir\.home|ENV\[\s*['\"]HOME['\"]\s*\]|\$ENV\{\s*['\"]?HOME['\"]?\s*\}|(?:os\.)?homedir\(\)"
              r"|process\.env\.HOME|File\.expand_path\(\s*['\"]~['\"]\s*\)")
_DELETES_TREE = re.compile(
    r"\b(?P<name>rmtree|remove_tree|rm_rf|rm_r|remove_dir|remove_entry(?:_secure)?|rimraf(?:\.sync)?|rmSync|rmdirSync"
    r"|rm|rmdir)\s*(?:\(\s*|\s+)(?:(?:pathlib\.)?Path\(\s*)?"
    rf"(?:(?P<home>{_HOME_CODE})|(?P<literal>{_STRING}))")
#: These delete a directory only when told to recurse (``fs.rmSync(p, {recursive: true})``).
_NEEDS_RECURSIVE = {"rm", "rmdir", "rmSync", "rmdirSync"}


def _text(literal: str) -> str:
    """The text of a string literal: quotes off, escapes (``\\n``) made."""
    return unescape(literal[1:-1])


def _calls(code: str, language: str) -> Iterator[str | tuple[str, ...]]:
    for found in _RUNS.finditer(code):
        strings = tuple(_text(s.group()) for s in re.finditer(_STRING, found.group("args")))
        bracketed = found.group("args").startswith("[")
        yield strings if bracketed or len(strings) > 1 else strings[0]
    if language.startswith(("perl", "ruby")):  # in python there are none, in node they are template strings
        for found in _BACKTICKS.finditer(code):
            yield unescape(next(g for g in found.groups() if g is not None))


def shell_calls(code: str, language: str) -> Iterator[str | list[str]]:
    """The commands ``code`` runs: shell text (one string) or an argv (several, or a list).

    Each distinct one once, and at most :data:`MAX_CALLS` of them, so that a long script stays quick to judge.
    """
    seen: set[str | tuple[str, ...]] = set()
    for call in _calls(code, language):
        if call not in seen:
            seen.add(call)
            yield call if isinstance(call, str) else list(call)
        if len(seen) >= MAX_CALLS:
            return


def tree_deleted(code: str, cwd: Path | None) -> str | None:
    """The critical place (``'the root directory'``, ``'a home directory'``) ``code`` deletes recursively, if any."""
    for found in _DELETES_TREE.finditer(code):
        if found.group("name") in _NEEDS_RECURSIVE and "recursive" not in code:
            continue
        if found.group("home"):
            return "a home directory"
        path = _text(found.group("literal"))
        where = critical_target(path, cwd) if path[:1] not in ("~", "$") else None
        if where:
            return where
    return None
