"""The redactions a plan keeps (:mod:`execmagic.engine.redaction`) answer as the guard's ``redact`` does, for
the same text and secrets only."""

from __future__ import annotations

import pytest

from execmagic.engine import redaction
from execmagic.engine.redaction import redacted
from execmagic.guard.secrets import redact

TEXTS = [
    "true",
    "/home/me/data",
    "curl -u admin:hunter2hunter2 https://example.org",
    "export API_TOKEN=abcdef123456; make",
    "echo s3cr3t-value-here",
    "",
]
SECRETS = [{}, {"TOKEN": "s3cr3t-value-here"}, {"TOKEN": "hunter2hunter2"}, {"A": "abcdef123456", "B": "admin"}]


@pytest.fixture(autouse=True)
def empty():
    redaction._DONE.clear()
    yield
    redaction._DONE.clear()


@pytest.mark.parametrize("text", TEXTS)
def test_the_answer_is_redacts_asked_once_or_again_with_any_secrets(text):
    for _ in range(2):
        for secrets in SECRETS:
            assert redacted(text, secrets) == redact(text, secrets)


def test_a_text_redacted_with_a_secret_is_not_answered_so_without_it():
    text = "echo s3cr3t-value-here"
    hidden = redacted(text, {"TOKEN": "s3cr3t-value-here"})
    assert "s3cr3t" not in hidden
    assert redacted(text, {}) == text
    assert redacted(text, {"OTHER": "s3cr3t-value-here"}) == hidden.replace("TOKEN", "OTHER")


def test_what_is_kept_is_bounded_and_a_long_text_is_not_kept():
    for i in range(redaction.KEPT * 3):
        assert redacted(f"echo {i}", {}) == f"echo {i}"
        assert len(redaction._DONE) <= redaction.KEPT
    long = "x" * (redaction.LONGEST + 1)
    redaction._DONE.clear()
    assert redacted(long, {}) == redact(long, {})
    assert not redaction._DONE
