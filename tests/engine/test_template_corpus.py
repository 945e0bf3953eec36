"""Random templates through real interpreters: no payload, in a param or a notebook variable, ever runs.

Each case nests a few pieces of a language (quotes, heredocs, substitutions, comments, f-strings,
template literals…) around a template -- ``{v}`` (a param: fills everywhere), ``{w}`` (a notebook
variable: fills only where a shell expands ``$VAR``), their ``{{…}}`` escapes, an unknown name --
fills it with a payload that creates a marker file if it ever runs as code, and runs the result.
A refusal (:class:`TemplateError`) is a fine answer; a marker is not.  Seeded, so a failure is
reproducible: the assertion names the script.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import sys

import pytest

from execmagic.engine.template import expand_params
from execmagic.process.errors import TemplateError

SLOT = "\u00a4"  # where the next piece, or the template, goes

SHELL_PIECES = [
    "echo ¤", 'echo "¤"', "echo '¤'", "echo $'¤'", "cat <<EOF\n¤\nEOF", "cat <<'EOF'\n¤\nEOF",
    "cat <<-E\n\t¤\n\tE", "true # ¤", "echo $(echo ¤)", 'echo "$(echo "¤")"', "echo `echo ¤`",
    'echo "`echo ¤`"', "echo ${X:-¤}", 'echo "${X:-¤}"', "x=( ¤ ); echo \"${x[*]}\"", "f() { echo ¤; }; f",
    "case ¤ in *) echo c;; esac", "[[ ¤ == x ]] || echo no", "echo ¤ >/dev/null", "echo ¤ | cat", "(echo ¤)",
    "{ echo ¤; }", "cat <<< ¤", "printf '%s\\n' ¤ && echo ok", "echo $(( 1 ))¤", "echo a¤b", "echo \\¤",
    "echo \"a'¤'b\"", "echo 'a\"¤\"b'", "awk '{print}' <<< \"¤\"", "echo $(cat <<EOF\n¤\nEOF\n)",
]
SHELL_PAYLOADS = [
    "$(touch {m})", "`touch {m}`", "'; touch {m}; '", '"; touch {m}; "', "\ntouch {m}\n", "x; touch {m}",
    "EOF\ntouch {m}", "\tE\ntouch {m}", "')\ntouch {m} #", "}; touch {m}; {", "$'\\'; touch {m}; '",
    "\\\"; touch {m} #", "EOF)\ntouch {m}",
]
PYTHON_PIECES = [
    "out(¤)", "out('¤')", 'out("¤")', "out(f'¤')", 'out(f"{1}¤")', "out(rf'¤')", "out(b'¤')", "out('''¤''')",
    "out([¤])", "out({'k': ¤})", "# ¤\nout(1)", "out(f'{(¤)}')", "out(f'{1:>{3}}¤')", "out(r'¤')",
    'out(f"{\'¤\'}")', "x = 1  # ¤\nout(x)", "out(\"\"\"¤\"\"\")",
]
PYTHON_PAYLOADS = [
    "__import__('os').system('touch {m}')", "'); __import__('os').system('touch {m}'); ('",
    '"); __import__(\'os\').system(\'touch {m}\'); ("', "\r__import__('os').system('touch {m}')",
    "\n__import__('os').system('touch {m}')", "''' + __import__('os').system('touch {m}') + '''",
    "{__import__('os').system('touch {m}')}",
]
NODE_PIECES = [
    "out(¤)", "out('¤')", 'out("¤")', "out(`¤`)", "out(`${¤}`)", "out(/¤/)", "// ¤\nout(1)", "/* ¤ */ out(1)",
    "out([¤])", "out({k: ¤})", "if (1) out(¤)", "out(`a${'¤'}b`)", "let a = (4) / 2; out('¤' + a)",
]
NODE_PAYLOADS = [
    "require('child_process').execSync('touch {m}')", "'+require('child_process').execSync('touch {m}')+'",
    "${require('child_process').execSync('touch {m}')}", "*/require('child_process').execSync('touch {m}')/*",
    "\u2028require('child_process').execSync('touch {m}')", "`+require('child_process').execSync('touch {m}')+`",
]
TEMPLATES = ["{v}", "{w}", "{{v}}", "{{w}}", "{unknown}", "{v}{w}"]
PRELUDES = {"python": "import sys\nout = print\n", "node": "const out = v => console.log(String(v));\n"}
LANGUAGES = {
    "bash": (SHELL_PIECES, SHELL_PAYLOADS), "dash": (SHELL_PIECES, SHELL_PAYLOADS),
    "python": (PYTHON_PIECES, PYTHON_PAYLOADS), "node": (NODE_PIECES, NODE_PAYLOADS),
}
CASES_PER_SEED = 30


def random_script(rng: random.Random, pieces: list[str]) -> str:
    """One to three pieces nested around one template, sometimes after an unrelated line."""
    text = SLOT
    for _ in range(rng.randint(1, 3)):
        text = text.replace(SLOT, rng.choice(pieces).replace("¤", SLOT), 1)
    text = text.replace(SLOT, rng.choice(TEMPLATES), 1)
    if rng.random() < 0.3:
        text = rng.choice(pieces).replace("¤", "x") + "\n" + text
    return text


def _argv(language: str, text: str) -> list[str]:
    if language == "python":
        return [sys.executable, "-c", text]
    if language == "node":
        return ["node", "-e", text]
    return [language, "-c", text]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("language", list(LANGUAGES))
def test_random_templates_never_run_a_payload(tmp_path, language, seed):
    if shutil.which(_argv(language, "")[0]) is None:
        pytest.skip(f"{language} is not installed")
    pieces, payloads = LANGUAGES[language]
    rng = random.Random(f"{language}-{seed}")
    marker = tmp_path / "pwned"
    ran = 0
    for _ in range(CASES_PER_SEED):
        script = PRELUDES.get(language, "") + random_script(rng, pieces)
        payload = rng.choice(payloads).replace("{m}", str(marker))
        try:
            text = expand_params(script, {"v": payload}, language=language, variables={"w": payload})
        except TemplateError:
            continue  # refused: no literal of that place can hold the payload
        subprocess.run(_argv(language, text), capture_output=True, cwd=tmp_path, timeout=30,
                       stdin=subprocess.DEVNULL)
        ran += 1
        assert not marker.exists(), (script, payload, text)
    assert ran >= CASES_PER_SEED // 3  # most cases are filled and run, not refused
