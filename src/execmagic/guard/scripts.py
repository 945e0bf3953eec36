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

import functools
import re
from collections.abc import Iterator

from ..shell.patterns import lazy_pattern
from ..shell.words import unescape
from .forks import FORK_CALLS
from .options import AWKS, SHELLS
from .paths import Path, critical_target

__all__ = ["MAX_CALLS", "analysed", "readable", "shell_calls", "tree_deleted"]

#: How many distinct commands in one piece of interpreter code are judged; later ones are not looked at.
MAX_CALLS = 200

_STRING = r"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`"""
_ARGS = rf"(?:{_STRING})(?:\s*,\s*(?:{_STRING}))*"
_LIST = rf"(?:\[|c\(|\{{\s*args\s*:\s*\[)\s*{_ARGS}\s*,?\s*[\])]"  # [...], R's c(...), deno's {args: [...]}
_RUNS = lazy_pattern(
    r"\b(?:system2?|popen[23]?|spawn(?:Sync)?|exec|execSync|execFile(?:Sync)?|execute|getoutput|getstatusoutput"
    r"|check_output|check_call|call|run|Popen|Command|capture2e?|capture3|popen3|shell_exec|passthru"
    r"|shell\s+script)\s*(?:\(\s*|\s+)"  # osascript's do shell script "…"
    rf"(?P<args>{_ARGS}|{_LIST})(?:\s*,\s*(?P<more>{_LIST}))?")
_AWK_PIPES = lazy_pattern(rf"(?P<got>{_STRING})\s*\|\s*getline|\bprintf?\b\s*\(?\s*(?P<printed>{_STRING})\s*\)?\s*\|\s*"
                          rf"(?P<to>{_STRING})")
_BACKTICKS = lazy_pattern(r"`(?P<a>[^`]*)`|(?:\bqx|%x)\s*(?:\((?P<b>[^)]*)\)|\{(?P<c>[^}]*)\}|/(?P<d>[^/]*)/)")
_HOME_CODE = (r"(?:os\.path\.)?expanduser\(\s*['\"]~/?['\"]\s*\)|(?:pathlib\.)?Path\.home\(\)|Path\(\s*['\"]~['\"]\s*\)"
              r"\.expanduser\(\)|os\.environ\[\s*['\"]HOME['\"]\s*\]|(?:os\.environ\.get|(?:os\.)?getenv|Sys\.getenv"
              r"|Deno\.env\.get)\(\s*['\"]HOME['\"]\s*\)|Dir\.home|ENV(?:IRON)?\[\s*['\"]HOME['\"]\s*\]"
              r"|\$ENV\{\s*['\"]?HOME['\"]?\s*\}|(?:require\(\s*['\"](?:node:)?os['\"]\s*\)\.|os\.|Deno\.)?homedir\(\)|process\.env(?:\.HOME|\[\s*['\"]HOME['\"]\s*\])"
              r"|(?:File\.expand_path|path\.expand|normalizePath)\(\s*['\"]~['\"]\s*\)")
#: The home directory written into a string: ruby's #{…}, a JS template's ${…}, julia's $(…), an f-string's {…}.
_HOME_IN_STRING = lazy_pattern(rf"(?:#\{{|\$\{{|\{{)\s*(?:{_HOME_CODE})\s*\}}|\$\(\s*(?:{_HOME_CODE})\s*\)")
_HOME_EXPRESSION = lazy_pattern(_HOME_CODE)
_PERL_HOME = lazy_pattern(r'"(?:[^"\\\n]|\\.)*\$ENV\{HOME\}(?:[^"\\\n]|\\.)*"')
#: Two strings made one: "a" + "b", "a" . "b" (perl), "a" .. "b" (lua), "a" "b" (awk, python), paste("a", "b") (R).
_JOINED = lazy_pattern(rf"(?P<paste>\bpaste0?\(\s*)?(?P<a>{_STRING})(?(paste)\s*,\s*|\s*(?:\+|\.\.?|(?<=\s))\s*)"
                       rf"(?P<b>{_STRING})(?(paste)\s*\))")
_DELETES_TREE = lazy_pattern(
    r"\b(?P<name>rmtree|remove_tree|rm_rf|rm_r|remove_dir|remove_entry(?:_secure)?|rimraf(?:\.sync)?|rmSync|rmdirSync"
    r"|rm|rmdir|unlink|removeSync|remove|dir_delete)\s*(?:\(\s*|\s+)(?:(?:pathlib\.)?Path\(\s*)?"
    rf"(?:(?P<home>{_HOME_CODE})|(?P<literal>{_STRING}))")
#: These delete a directory only when told to recurse (``fs.rmSync(p, {recursive: true})``, R's ``unlink``).
_NEEDS_RECURSIVE = {"rm", "rmdir", "rmSync", "rmdirSync", "unlink", "removeSync", "remove"}
#: Languages whose file functions expand ``~`` themselves (R's ``unlink("~", recursive = TRUE)``).
_TILDE_LANGUAGES = {"R", "Rscript"}


def _text(literal: str) -> str:
    """The text of a string literal: quotes off, escapes (``\\n``) made."""
    return unescape(literal[1:-1])


def readable(code: str) -> str:
    """``code`` with the home directory as the string ``"$HOME"`` however it is asked for, and strings joined.

    ``os.system("rm -rf " + os.path.expanduser("~"))``, ``system("rm -rf #{Dir.home}")`` and
    ``run(`rm -rf $(homedir())`)`` all become a string holding ``rm -rf $HOME``, which the walk reads.
    """
    code = _PERL_HOME.sub(lambda m: m.group().replace("$ENV{HOME}", "$HOME"), code)
    code = _HOME_EXPRESSION.sub('"$HOME"', _HOME_IN_STRING.sub("$HOME", code))
    for _ in range(8):  # "rm -rf " + "$HOME": one string (a few joins deep)
        joined = _JOINED.sub(_join, code)
        if joined == code:
            break
        code = joined
    return code


def _join(found: re.Match[str]) -> str:
    space = " " if found["paste"] and not found["paste"].startswith("paste0") else ""
    return '"' + (_text(found["a"]) + space + _text(found["b"])).replace('"', '\\"') + '"'


def _calls(code: str, language: str) -> Iterator[str | tuple[str, ...]]:
    for found in _RUNS.finditer(code):
        args = found.group(0)[found.start("args") - found.start():]
        strings = tuple(_text(s.group()) for s in re.finditer(_STRING, args))
        bracketed = found.group("args")[0] in "[c{" or found.group("more") is not None
        yield strings if bracketed or len(strings) > 1 else strings[0]
    if language.startswith(("perl", "ruby", "julia")):  # python has none; in node they are template strings
        for found in _BACKTICKS.finditer(code):
            yield unescape(next(g for g in found.groups() if g is not None))
    if language in AWKS:  # "cmd" | getline, print "…" | "sh"
        for found in _AWK_PIPES.finditer(code):
            to = _text(found["to"]) if found["to"] else ""
            shell = to.split()[:1] and to.split()[0] in SHELLS
            yield _text(found["got"] or (found["printed"] if shell else found["to"]))


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


def tree_deleted(code: str, cwd: Path | None, language: str = "") -> str | None:
    """The critical place (``'the root directory'``, ``'a home directory'``) ``code`` deletes recursively, if any."""
    for found in _DELETES_TREE.finditer(code):
        if found.group("name") in _NEEDS_RECURSIVE and "recursive" not in code:
            continue
        if found.group("home"):
            return "a home directory"
        path = _text(found.group("literal"))
        # "~" is a file named ~ unless the language expands it; "$HOME" is what readable() made of the home directory
        literal = path[:1] not in ("~", "$") or language in _TILDE_LANGUAGES or path.startswith("$HOME")
        where = critical_target(path, cwd) if literal else None
        if where:
            return where
    return None


#: Code up to this length has what it does kept (:func:`analysed`).
_KEPT = 4096
Calls = tuple[str | list[str], ...]


def analysed(code: str, cwd: Path | None, language: str) -> tuple[bool, str | None, Calls]:
    """What ``code`` in ``language`` run in ``cwd`` does, as the walk asks it: whether it forks in an endless loop
    (:data:`.forks.FORK_CALLS`), the critical place it deletes (:func:`tree_deleted` of its :func:`readable` text),
    and the commands it runs (:func:`shell_calls`).  Kept for short code: a script feeds the same heredoc to
    ``python3 -`` again and again, and each look was five searches of it.  Read only."""
    if len(code) > _KEPT:
        return _analysed(code, cwd, language)
    return _kept(str(code), cwd, language)


@functools.lru_cache(maxsize=256)
def _kept(code: str, cwd: Path | None, language: str) -> tuple[bool, str | None, Calls]:
    return _analysed(code, cwd, language)


def _analysed(code: str, cwd: Path | None, language: str) -> tuple[bool, str | None, Calls]:
    text = readable(code)
    return FORK_CALLS.search(code) is not None, tree_deleted(text, cwd, language), tuple(shell_calls(text, language))
