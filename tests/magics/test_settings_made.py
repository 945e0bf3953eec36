"""What the magics make of their settings for each run -- its limits, the view results are shown with -- is made
once and kept until a setting changes: never a value made from settings that changed since."""

from __future__ import annotations

import pytest
from traitlets import TraitError

#: Each setting a run's limits are made of, a value it does not have by default, and where the limits show it.
RUN_SETTINGS = [
    ("timeout", 12.5, lambda options: options.timeout),
    ("kill_grace", 0.7, lambda options: options.grace),
    ("drain_time", 0.5, lambda options: options.drain),
    ("keep_bytes", 4096, lambda options: options.keep_bytes),
    ("keep_logs", True, lambda options: options.keep_logs),
    ("display_budget", 8000, lambda options: options.log_over),
]


@pytest.fixture
def restore(ip, magics):
    """Puts back every setting a test changes (the shell outlives the test)."""
    before = {name: getattr(magics, name) for name in (*(n for n, _, _ in RUN_SETTINGS), "stable_output")}
    yield
    for name, value in before.items():
        ip.run_line_magic("config", f"ExecMagics.{name} = {value!r}")


def test_a_runs_limits_are_made_once_while_the_settings_stay(magics, restore):
    first = magics.run_options(None)
    assert magics.run_options(None) is first
    assert magics.run_options(3.0).timeout == 3.0  # --timeout: made for that run, the setting's kept
    assert magics.run_options(None) is first


@pytest.mark.parametrize(("name", "value", "shown"), RUN_SETTINGS, ids=[n for n, _, _ in RUN_SETTINGS])
def test_a_setting_changed_with_config_reaches_the_next_runs_limits(ip, magics, restore, name, value, shown):
    before = shown(magics.run_options(None))
    ip.run_line_magic("config", f"ExecMagics.{name} = {value!r}")
    after = shown(magics.run_options(None))
    assert after != before
    assert after == (value if name != "display_budget" else value // 8)


def test_a_setting_set_as_an_attribute_reaches_the_next_runs_limits(magics, restore):
    magics.run_options(None)
    magics.timeout = 99.0
    assert magics.run_options(None).timeout == 99.0


def test_the_view_follows_the_display_settings(ip, magics, restore):
    view = magics.display_view()
    assert magics.display_view() is view
    ip.run_line_magic("config", "ExecMagics.display_budget = 1234")
    assert magics.display_view().budget == 1234
    ip.run_line_magic("config", "ExecMagics.stable_output = True")
    assert magics.display_view().stable is True
    assert magics.display_view().budget == 1234


def test_a_refused_value_leaves_the_limits_as_they_were(ip, magics, restore):
    first = magics.run_options(None)
    with pytest.raises(TraitError):
        magics.kill_grace = -1.0
    assert magics.run_options(None).grace == first.grace
