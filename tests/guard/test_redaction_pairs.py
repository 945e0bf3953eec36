"""Redaction hides exactly the secret: not a placeholder, not the brackets around it; and inline passwords too.

An agent reading ``api_key: [REDACTED]`` believes a key is set when the output said ``none``; one
reading ``mysql -phunter2`` has the password.  Each pair: the line as a tool printed it, the line as
it must be shown.
"""

from __future__ import annotations

import pytest

from execmagic.guard.secrets import redact, sanitize_env

#: Placeholders after a secret-like label: not secrets, left exactly as printed.
PLACEHOLDERS = [
    "secret=[]",
    "api_key: none",
    "token=(unset)",
    "Authorization: Bearer []",
    "Authorization: Bearer <token>",
    "cat: /home/me/.aws/credentials: No such file or directory",
    "password: null",
    "PASSWORD=",
    "token: 0",
    "api_key=12345",
    "secret: (none)",
    "password: Permission denied",
]


@pytest.mark.parametrize("line", PLACEHOLDERS)
def test_a_placeholder_is_not_a_secret(line):
    assert redact(line, {}) == line


#: (printed, shown): a password given inline, whatever it looks like, and only it replaced.
INLINE = [
    ("mysql -phunter2 sales", "mysql -p[REDACTED] sales"),
    ("mysql -u root -p'hunter 2' sales", "mysql -u root -p'[REDACTED]' sales"),
    ("curl -u admin:hunter2 https://api.example.com", "curl -u admin:[REDACTED] https://api.example.com"),
    ("curl --user=admin:hunter2 https://x", "curl --user=admin:[REDACTED] https://x"),
    ("sshpass -p hunter2 ssh me@host", "sshpass -p [REDACTED] ssh me@host"),
    ("machine api.example.com login me password hunter2", "machine api.example.com login me password [REDACTED]"),
    ("  password hunter2", "  password [REDACTED]"),
    ('{"username": "me", "key": "0123456789abcdef0123456789abcdef"}', '{"username": "me", "key": "[REDACTED]"}'),
    ('  "private_key_id": "3f2a9c1d7e3b4a5f6c0d9e8f7a6b5c4d3e2f1a0b",', '  "private_key_id": "[REDACTED]",'),
    ("password=(hunter2x)", "password=([REDACTED])"),
    ("token: [abc123xyz]", "token: [[REDACTED]]"),
]


@pytest.mark.parametrize(("line", "shown"), INLINE)
def test_a_password_given_inline_is_hidden_exactly(line, shown):
    assert redact(line, {}) == shown


def test_a_url_with_an_empty_user_hides_its_password():
    shown = redact("connecting to redis://:s3cretpass@cache:6379/0", {})
    assert "s3cretpass" not in shown and "cache:6379/0" in shown


def test_agents_do_not_get_registry_or_redis_credentials():
    """``REDIS_URL`` with an empty user and ``DOCKER_AUTH_CONFIG`` are held back from an agent's environment."""
    kept, held = sanitize_env({"REDIS_URL": "redis://:s3cretpass@cache:6379/0",
                               "DOCKER_AUTH_CONFIG": '{"auths": {"r.example": {"auth": "dXNlcjpwYXNz"}}}',
                               "DATA_DIR": "/data"})
    assert set(held) == {"REDIS_URL", "DOCKER_AUTH_CONFIG"} and kept == {"DATA_DIR": "/data"}
