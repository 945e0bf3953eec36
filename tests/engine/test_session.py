"""The persistent shell session."""

from __future__ import annotations

import os

import pytest

from execmagic.engine import RunOptions
from execmagic.engine.session import parse_export_listing, take_state_file
from waiting import wait_until


def test_cd_export_unset_carry_over(engine, tmp_path, monkeypatch):
    monkeypatch.setenv("EXECMAGIC_T_GONE", "here")
    (tmp_path / "sub").mkdir()
    r = engine.run_script(f"cd {tmp_path}/sub && export GREETING='hello world' && unset EXECMAGIC_T_GONE")
    assert r.new_cwd == f"{tmp_path}/sub"
    r = engine.run_script('pwd; echo "$GREETING"; echo "${EXECMAGIC_T_GONE-unset}"')
    assert r.stdout == f"{tmp_path}/sub\nhello world\nunset\n"
    assert r.new_cwd is None  # unchanged this time
    assert os.getcwd() != f"{tmp_path}/sub"  # the kernel's own cwd is not touched


def test_session_env_follows_kernel_env(engine, monkeypatch):
    engine.run_script("export A_SESSION=1")
    monkeypatch.setenv("EXECMAGIC_T_LATER", "from python")
    assert engine.run_script('echo "$A_SESSION $EXECMAGIC_T_LATER"').stdout == "1 from python\n"


def test_plain_shell_variables_do_not_persist(engine):
    engine.run_script("LOCALVAR=1")
    assert engine.run_script('echo "[${LOCALVAR-}]"').stdout == "[]\n"


def test_set_e_and_exit_code_still_save_state(engine, tmp_path):
    r = engine.run_script(f"set -e; cd {tmp_path}; export STEP=1; false; export STEP=2")
    assert r.exit_code == 1
    r2 = engine.run_script("cd /; exit 3")
    assert r2.exit_code == 3 and r2.new_cwd == "/"
    assert engine.run_script('echo "$STEP $PWD"').stdout == "1 /\n"


def test_exec_leaves_state_unchanged_and_says_so(engine, tmp_path):
    r = engine.run_script(f"cd {tmp_path}; export X=1; exec true")
    assert r.exit_code == 0 and r.new_cwd is None
    assert any("session state unchanged" in n and "exec" in n for n in r.notes)
    assert engine.run_script('echo "[${X-}]"').stdout == "[]\n"


def test_timeout_leaves_state_unchanged(engine, tmp_path):
    r = engine.run_script(f"cd {tmp_path}; export Y=1; sleep 30", options=RunOptions(timeout=0.3, grace=0.2))
    assert r.timed_out
    assert any("session state unchanged: the run was stopped" in n for n in r.notes)
    assert engine.run_script('echo "[${Y-}]"; pwd').stdout == f"[]\n{os.getcwd()}\n"


def test_isolated_runs_ignore_and_keep_the_session(engine, tmp_path):
    engine.run_script(f"cd {tmp_path}; export Z=1")
    r = engine.run_script('pwd; echo "[${Z-}]"; cd /', isolated=True)
    assert r.stdout == f"{os.getcwd()}\n[]\n"
    assert engine.run_script("pwd").stdout == f"{tmp_path}\n"


def test_other_languages_read_the_session(engine, tmp_path):
    engine.run_script(f"cd {tmp_path}; export W=2")
    r = engine.run_script("import os; print(os.getcwd(), os.environ['W'])", "python")
    assert r.stdout == f"{tmp_path} 2\n"


def test_cwd_option_is_relative_to_session(engine, tmp_path):
    (tmp_path / "inner").mkdir()
    engine.run_script(f"cd {tmp_path}")
    assert engine.run_argv(["pwd"], cwd="inner").stdout == f"{tmp_path}/inner\n"


@pytest.mark.parametrize(
    "value",
    ['he said "hi" $HOME `x` \\ back', "multi\nline", "tab\there \x01ctl", "é ✓ unicode", "", "a'b"],
)
def test_export_values_round_trip(engine, value):
    r = engine.run_script('export V="$RAW"', env={"RAW": value})
    assert r.exit_code == 0
    assert engine.session.set["V"] == value
    assert engine.run_script('printf %s "$V"').stdout == value


def test_parse_export_listing_forms():
    data = b'declare -x A="1"\ndeclare -x B\ndeclare -rx C=$\'x\\ny\\303\\251\'\nexport D="q\\"z"\n'
    assert parse_export_listing(data) == {"A": "1", "C": "x\nyé", "D": 'q"z'}


def test_repeated_identical_runs_still_see_every_change(engine, monkeypatch):
    # the state parse is skipped when nothing changed; changes right after such runs must still count
    engine.run_script("true")
    engine.run_script("true")
    engine.run_script("export A=1")
    engine.run_script("true")
    assert engine.run_script('echo "${A-unset}"').stdout == "1\n"
    engine.run_script("unset A")
    engine.run_script("true")
    assert engine.run_script('echo "${A-unset}"').stdout == "unset\n"
    monkeypatch.setenv("EXECMAGIC_T_FROM_KERNEL", "k")
    engine.run_script("true")
    engine.run_script("export EXECMAGIC_T_FROM_KERNEL=shell")
    assert engine.session.set["EXECMAGIC_T_FROM_KERNEL"] == "shell"


# -- what the user sees of the session machinery: nothing --------------------------------------
def test_a_syntax_error_reads_as_bash_wrote_it_for_the_users_lines(engine, tmp_path):
    r = engine.run_script("echo one\nif then\necho never")
    assert r.stdout == "one\n" and r.exit_code == 2
    assert r.stderr.startswith("bash: -c: line 2: syntax error near unexpected token `then'")
    assert "trap" not in r.stderr and ".state" not in r.stderr and str(engine.logs.path) not in r.stderr
    assert not any("replaced itself" in note for note in r.notes)
    r = engine.run_script("if then")  # on the first line too: the prelude is not part of the script
    assert r.stderr.startswith("bash: -c: line 1: syntax error near unexpected token `then'")
    assert "trap" not in r.stderr


@pytest.mark.parametrize("standby", [True, False], ids=["standby", "cold"])
def test_the_prelude_is_in_no_folder_and_no_run_can_change_or_keep_it(engine, standby):
    """bash reads the prelude from a descriptor the engine hands it (a sealed memory file): there is no path
    another user could swap between a check and bash's read, a run cannot rewrite what the next run sources
    (even through the kernel's own descriptor, which a run of the same user can open), and the shell's copy
    is closed before the script starts."""
    engine.standby = standby
    plan = engine.plan_script("true")
    prelude = plan.command.env["BASH_ENV"]
    assert prelude.startswith("/dev/fd/") and int(prelude[8:]) in plan.command.pass_fds
    engine.run_script("export BEFORE=1")
    if standby:
        assert engine.warm.wait_ready(10) is not None
    kernel_copy = f"/proc/{os.getpid()}/fd/{prelude[8:]}"
    r = engine.run_script(f"ls /proc/$$/fd; echo 'touch planted' >> {kernel_copy}; export AFTER=$BEFORE")
    assert sorted(r.stdout.split(), key=int) == ["0", "1", "2"], r.stdout  # nothing of the engine's left open
    assert "Operation not permitted" in r.stderr, r.stderr
    with open(kernel_copy) as fh:
        assert "touch planted" not in fh.read()
    r = engine.run_script('echo "$_" | grep -c bash; echo "$AFTER"')
    assert r.stdout == "1\n1\n", r.stdout  # the session works, and $_ starts as bash -c starts it


def test_state_notes_name_what_really_happened(engine, tmp_path):
    replaced = engine.run_script("exec true")
    assert "session state unchanged: the shell replaced itself (exec)" in replaced.notes
    redirected = engine.run_script(f"exec 2>&1; cd {tmp_path}")
    assert redirected.new_cwd == str(tmp_path) and not redirected.notes
    trapped = engine.run_script("trap 'echo bye' EXIT; cd /")
    assert trapped.stdout == "bye\n"
    assert "session state unchanged: the script set its own EXIT trap" in trapped.notes


def test_a_users_own_bash_env_still_applies(engine, tmp_path):
    rc = tmp_path / "rc.bash"
    rc.write_text("FROM_RC=loaded\n")
    engine.run_script(f"export BASH_ENV={rc}")
    r = engine.run_script('echo "$FROM_RC $BASH_ENV"; export AFTER=1')
    assert r.stdout == f"loaded {rc}\n"
    assert engine.run_script('echo "$AFTER"').stdout == "1\n"
    assert "EXECMAGIC_STATE" not in engine.session.set and "EXECMAGIC_STATE" not in engine.session.unset


def test_a_ten_megabyte_cell_runs_with_the_session(engine, tmp_path):
    """Linux refuses one argument over 128 KiB; a big cell goes through a file, as if inline."""
    lines = 100_000
    data = ("x" * 99 + "\n") * lines
    r = engine.run_script(f"cat <<'EOF' | wc -c\n{data}EOF\necho \"$0 $#\"\ncd {tmp_path}\nexport BIG=yes")
    assert r.exit_code == 0, r.stderr
    assert r.stdout.split() == [str(100 * lines), "bash", "0"]
    assert r.new_cwd == str(tmp_path)
    assert engine.run_script('echo "$BIG"').stdout == "yes\n"


@pytest.mark.parametrize("language", ["sh", "python"])
def test_big_scripts_in_other_languages(engine, language):
    body = "# " + "y" * 200_000 + "\n"
    line = "echo ok" if language == "sh" else "print('ok')"
    r = engine.run_script(body + line, language)
    assert (r.exit_code, r.stdout) == (0, "ok\n"), r.stderr


# -- runs that overlap ---------------------------------------------------------------------------
def test_a_run_that_ends_later_does_not_undo_anothers_cd(engine, tmp_path):
    import threading

    flag = tmp_path / "flag"
    (tmp_path / "d").mkdir()
    slow = {}

    def export_after_the_flag():
        slow["r"] = engine.run_script(f"touch {tmp_path}/started; while [ ! -e {flag} ]; do sleep 0.01; done;"
                                      " export SLOW=1")

    thread = threading.Thread(target=export_after_the_flag)
    thread.start()
    wait_until((tmp_path / "started").exists, 20, "the slow run to start", interval=0.01)
    fast = engine.run_script(f"cd {tmp_path}/d && touch {flag}")
    thread.join(10)
    assert fast.new_cwd == f"{tmp_path}/d" and slow["r"].new_cwd is None
    assert engine.run_script('echo "$PWD $SLOW"').stdout == f"{tmp_path}/d 1\n"


def test_fifty_threads_mixing_cd_and_export_all_stick(engine, tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    (tmp_path / "last").mkdir()
    jobs = [f"export T_{i}=v{i}" if i % 2 else f"unset T_GONE_{i}; cd {tmp_path}" for i in range(49)]
    for i in range(0, 49, 2):
        os.environ[f"T_GONE_{i}"] = "x"
    try:
        with ThreadPoolExecutor(8) as pool:
            results = list(pool.map(engine.run_script, jobs))
        assert all(r.exit_code == 0 for r in results)
        engine.run_script(f"cd {tmp_path}/last")  # the fiftieth: the last to end wins the cwd
        env = engine.session.environment()
        assert all(env.get(f"T_{i}") == f"v{i}" for i in range(1, 49, 2))
        assert not any(f"T_GONE_{i}" in env for i in range(0, 49, 2))
        assert engine.session.current_cwd() == f"{tmp_path}/last"
    finally:
        for i in range(0, 49, 2):
            os.environ.pop(f"T_GONE_{i}", None)


@pytest.mark.parametrize("script", [
    "trap 'echo D' DEBUG; cd /; export EXECMAGIC_T_TRAPPED=1",
    "export BASH_XTRACEFD=1; set -x; cd /; export EXECMAGIC_T_TRAPPED=1",
    "set -x; cd /; export EXECMAGIC_T_TRAPPED=1",
    "printf() { echo hijacked; }; export() { :; }; unset() { :; }; cd /; builtin export EXECMAGIC_T_TRAPPED=1",
])
def test_the_scripts_traces_traps_and_functions_never_reach_the_state(engine, script):
    r = engine.run_script(script)
    assert r.exit_code == 0 and r.new_cwd == "/"
    assert "export -p" not in r.stderr and "EXECMAGIC_RUN" not in r.stderr + r.stdout  # no trace of the machinery
    assert engine.run_script('echo "$PWD $EXECMAGIC_T_TRAPPED"').stdout == "/ 1\n"
    engine.run_script("unset EXECMAGIC_T_TRAPPED")


def test_a_state_file_that_cannot_be_read_is_a_note_not_a_crash(engine):
    """A script that finds the state file (its path is in ``trap -p``) and writes garbage there."""
    find = """f=$(trap -p EXIT | sed -n "s/.*} >> \\(.*\\)'.*/\\1/p"); """
    for garbage in ("echo garbage", "printf '/\\0junk'"):
        r = engine.run_script(find + f'trap "{garbage} > $f" EXIT; cd /')
        assert r.exit_code == 0, r.stderr
        assert any(note.startswith("session state unchanged: the shell's state could not be read") for note in r.notes)
        assert engine.run_script("pwd").stdout == os.getcwd() + "\n"


def test_a_state_file_is_read_back_whole_or_to_one_byte_past_the_limit_and_removed(tmp_path):
    """What a run's prelude wrote comes back as written; one past the limit says it is too large to be a state;
    either way the file is gone."""
    small, big = tmp_path / "small.state", tmp_path / "big.state"
    written = b"\0/work\0" + b"declare -x A=\"1\"\n" * 5000  # over one read's 64 KB
    small.write_bytes(written)
    big.write_bytes(b"x" * 300_000)
    assert take_state_file(str(small), 1 << 20) == written
    assert take_state_file(str(big), 100_000) == b"x" * 100_001
    assert not small.exists() and not big.exists()
    assert take_state_file(str(small), 1 << 20) is None


def test_the_kernel_environment_is_read_anew_after_every_change(engine, monkeypatch):
    """What Python sets, changes or removes in ``os.environ`` between runs reaches the next run -- a name or
    value that is not UTF-8 included -- though the decoded environment is kept between runs."""
    monkeypatch.setenv("EXECMAGIC_T_ENV", "one")
    assert engine.run_script('echo "${EXECMAGIC_T_ENV-unset}"').stdout == "one\n"
    monkeypatch.setenv("EXECMAGIC_T_ENV", "two")
    assert engine.run_script('echo "${EXECMAGIC_T_ENV-unset}"').stdout == "two\n"
    odd = os.fsdecode(b"caf\xe9")
    monkeypatch.setenv("EXECMAGIC_T_ENV", odd)
    assert engine.run_script('printf %s "$EXECMAGIC_T_ENV" | od -An -tx1').stdout.split() == ["63", "61", "66", "e9"]
    monkeypatch.delenv("EXECMAGIC_T_ENV")
    assert engine.run_script('echo "${EXECMAGIC_T_ENV-unset}"').stdout == "unset\n"


def test_each_copy_of_the_kernel_environment_is_its_own(monkeypatch):
    from execmagic.process.environ import environ_copy

    first = environ_copy()
    assert first == dict(os.environ) and list(first) == list(os.environ)
    first["EXECMAGIC_T_ADDED"] = "x"
    assert "EXECMAGIC_T_ADDED" not in environ_copy() and environ_copy() is not environ_copy()


def test_a_secret_set_in_the_kernel_between_runs_is_hidden_from_the_next(engine, monkeypatch):
    """The secret-named variables are kept from run to run: one set, or changed, since is still found."""
    assert "0123456789ab" in engine.run_script("echo 0123456789ab").command
    monkeypatch.setenv("EXECMAGIC_T_API_TOKEN", "0123456789ab")
    shown = engine.run_script("echo 0123456789ab").command
    assert "0123456789ab" not in shown and "REDACTED" in shown
    monkeypatch.setenv("EXECMAGIC_T_API_TOKEN", "ba9876543210")
    shown = engine.run_script("echo 0123456789ab ba9876543210").command
    assert "0123456789ab" in shown and "ba9876543210" not in shown
