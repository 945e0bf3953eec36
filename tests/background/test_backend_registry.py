"""The backends by name: ``--on NAME``, ``start(on=NAME)`` and the agent tools find a backend, its
options and their checks through the registry, never by knowing it."""

from __future__ import annotations

import pytest

import execmagic
from execmagic.background.backends import LocalBackend, Option, registry
from execmagic.background.backends.registry import BackendSpec, resolve
from execmagic.process.errors import UsageProblem


class Elsewhere(LocalBackend):
    """A local backend under another name: what a new backend looks like to every caller."""

    name = "elsewhere"

    def __init__(self, values):
        self.values = values


def _words(text):
    if "!" in text:
        raise UsageProblem(f"--extra may not contain '!': {text}")
    return tuple(text.split())


def _positive(value):
    if value < 1:
        raise UsageProblem(f"--slots needs at least 1, not {value}")
    return value


SPEC = BackendSpec(
    name="elsewhere", help="a test's backend", make=lambda values, grace: Elsewhere(values),
    options=(Option("slots", "how many", kind=int, default=0, flag="--slots", metavar="N", parse=_positive),
             Option("queue", "which queue", flag="--queue"),
             Option("extra", "more words", flag="--extra", parse=_words, adds_to_setting=True),
             Option("folder", "a setting only")),
    settings_name="ElsewhereBackend")


@pytest.fixture
def elsewhere():
    registry.register(SPEC)
    yield SPEC
    registry.unregister(SPEC.name)


def test_the_shipped_backends_are_there_local_first():
    assert registry.names()[:2] == ("local", "slurm")
    assert registry.get("slurm").settings_name == "SlurmBackend"
    assert {o.flag for o in registry.get("slurm").options} >= {"--partition", "--cpus", "--mem", "--gpus", "--time"}


def test_an_unknown_name_is_one_line_naming_those_there_are():
    with pytest.raises(UsageProblem, match=r"^unknown backend 'nope': use 'local' or 'slurm'"):
        registry.get("nope")


def test_the_line_wins_over_the_setting_and_empty_means_the_default(elsewhere):
    assert resolve(SPEC, {"slots": 2, "queue": None}, {"slots": 5, "queue": "fast"})["slots"] == 2
    values = resolve(SPEC, {"slots": None, "queue": None}, {"slots": 5, "queue": "fast", "folder": ""})
    assert values == {"slots": 5, "queue": "fast", "extra": None, "folder": None}
    assert resolve(SPEC, {}, {})["slots"] is None  # 0, the setting's default: the site's default


def test_a_value_is_checked_from_the_line_and_from_the_setting(elsewhere):
    with pytest.raises(UsageProblem, match="--slots needs at least 1, not 0"):
        resolve(SPEC, {"slots": 0}, {})
    with pytest.raises(UsageProblem, match="--slots needs at least 1, not -1"):
        resolve(SPEC, {}, {"slots": -1})


def test_an_option_that_adds_to_its_setting_gets_both(elsewhere):
    assert resolve(SPEC, {"extra": "c"}, {"extra": "a b"})["extra"] == ("a", "b", "c")
    assert resolve(SPEC, {}, {"extra": "a"})["extra"] == ("a",)
    with pytest.raises(UsageProblem, match="may not contain"):
        resolve(SPEC, {"extra": "x!"}, {})


def test_a_flag_two_backends_share_must_read_the_same(elsewhere):
    clash = BackendSpec(name="clash", help="", make=SPEC.make,
                        options=(Option("slots", "as text", flag="--slots"),))
    with pytest.raises(ValueError, match="reads --slots unlike backend 'elsewhere'"):
        registry.register(clash)
    assert "clash" not in registry.names()


def test_start_and_the_agent_tools_reach_a_registered_backend_by_name(elsewhere, engine):
    info = execmagic.start("echo hi", on="elsewhere", engine=engine)
    assert info.backend == "elsewhere"
    assert execmagic.read(info.id, wait=10, engine=engine).stdout == "hi\n"
    from execmagic import Toolbox

    box = Toolbox(engine, background_on="elsewhere")
    assert isinstance(box.background_on, Elsewhere) and box.background_on.values["slots"] is None
    with pytest.raises(UsageProblem, match="unknown backend 'nope'"):
        Toolbox(engine, background_on="nope")


def test_spec_backend_parses_what_it_is_given(elsewhere):
    backend = SPEC.backend({"slots": 3, "extra": "a b"})
    assert backend.values["slots"] == 3 and backend.values["extra"] == ("a", "b")


@pytest.mark.parametrize("bad", [42, object(), b"slurm", ["slurm"], {"name": "slurm", "remote": True}])
def test_a_value_that_is_neither_a_name_nor_a_backend_is_one_line(engine, bad):
    """Not a Python error from deep inside the engine: the caller's mistake, named where it was made."""
    from execmagic import Toolbox

    with pytest.raises(UsageProblem, match=r"^on must be a backend's name \('local', 'slurm'.*\) or a backend, not"):
        execmagic.run("true", on=bad, engine=engine)
    with pytest.raises(UsageProblem, match=r"^on must be a backend's name"):
        execmagic.start("true", on=bad, engine=engine)
    with pytest.raises(UsageProblem, match=r"^background_on must be a backend's name"):
        Toolbox(engine, background_on=bad)
    assert engine.shells.list() == []


def test_none_runs_here_as_local_does(engine):
    assert execmagic.run("echo here", on=None, engine=engine).stdout == "here\n"
    info = execmagic.start("echo here", on=None, engine=engine)
    assert info.backend == "local" and execmagic.read(info.id, wait=30, engine=engine).stdout == "here\n"
