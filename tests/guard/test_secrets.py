"""Secrets: one rule for secret names, credential shapes in real output, ordinary output left alone,
and the end of a read held back when it may be a secret cut short."""

from __future__ import annotations

import time

import pytest

from execmagic.guard.secret_names import secret_name
from execmagic.guard.secrets import SECRET_NAME, looks_secret, redact, sanitize_env, secret_env, secret_tail

SECRET_NAMES = [
    # names people give credentials
    "ENCRYPTION_KEY", "MASTER_KEY", "SSH_KEY", "stripe_key", "API_KEY", "SECRET_KEY", "AWS_SECRET_ACCESS_KEY",
    "DB_PASSWD", "DB_PWD", "SESSION_SECRET", "GOOGLE_CREDENTIALS", "auth_token", "COOKIE_SECRET",
    # more of our own: camelCase, dots and dashes, plurals of the noun itself, last-word nouns
    "GITHUB_TOKEN", "HF_TOKEN", "OPENAI_API_KEY", "apiKey", "AWSSecretKey", "privateKey", "TOKEN", "token",
    "SENTRY_DSN", "BASIC_AUTH", "HTTP_AUTHORIZATION", "SMTP_PASS", "GITHUB_PAT", "secret_id", "access_token",
    "refresh_token", "id_token", "spark.hadoop.fs.s3a.secret.key", "client-secret", "MYSQL_ROOT_PASSWORD", "JWT",
    "SESSION_COOKIE", "API_KEY_PROD", "AccountKey", "db_password", "Passphrase", "LICENSE_KEY", "API_KEYS",
    "WEBHOOK_SECRET", "AWS_SESSION_TOKEN", "x-api-key", "clientSecret", "tok_secret", "my.password",
    "PGPASSWORD", "MYSQL_PWD", "NGROK_AUTHTOKEN", "JUPYTER_TOKEN", "KAGGLE_KEY", "GCP_SA_KEY", "HTPASSWD",
]
NOT_SECRET_NAMES = [
    # names of data work that say key, token or pwd
    "primary_key", "foreign_key", "sort_key", "partition_key", "cache_key", "join_key", "object_key", "PUBLIC_KEY",
    "hotkey", "AWS_ACCESS_KEY_ID", "KEYBOARD", "PWD", "OLDPWD", "author", "tokenizer", "max_tokens", "AUTH_METHOD",
    # more of our own: keys of data work, tokens of tokenizers, names *about* a credential
    "key", "keys", "sortKey", "PRNGKey", "rng_key", "key_proj", "num_keys", "dict_keys", "hash_key", "row_key",
    "pad_token", "eos_token", "next_token", "token_count", "num_tokens", "TOKENIZERS_PARALLELISM", "input_ids",
    "TOKEN_URL", "SECRET_NAME", "SECRETS_DIR", "PASSWORD_FILE", "PASSWORD_MIN_LENGTH", "GPG_KEY_ID",
    "api_key_header", "private_key_path", "COOKIE_DOMAIN", "SSH_AUTH_SOCK", "XAUTHORITY", "first_pass", "bypass",
    "monkey", "client_id", "LS_COLORS", "authority", "authors", "passage", "compass", "keynote", "tokens",
    "STRIPE_PUBLISHABLE_KEY", "GIT_ASKPASS", "BASIC_AUTH_USER", "NEXTAUTH_URL", "KUBECONFIG", "PIP_KEYRING_PROVIDER",
]


@pytest.mark.parametrize("name", SECRET_NAMES)
def test_a_name_that_holds_a_secret(name):
    """Every kind of name goes through the one rule: an environment name, a template's, a field in output."""
    assert secret_name(name) and SECRET_NAME.search(name)
    assert looks_secret(name, "plain value") and secret_env({name: "value123"}) == {name: "value123"}
    assert redact(f"{name}=value123", {}) == f"{name}=[REDACTED]"


@pytest.mark.parametrize("name", NOT_SECRET_NAMES)
def test_a_name_that_does_not(name):
    assert not secret_name(name) and not SECRET_NAME.search(name)
    assert secret_env({name: "value123"}) == {}
    assert redact(f"{name}=value123", {}) == f"{name}=value123"


def test_the_quick_no_for_a_name_without_a_noun_is_the_rules_no():
    """A name in which no credential noun appears is passed by one search; the rule word by word agrees, on the
    tables above and on names made of their words and of pieces of nouns, joined every way."""
    import random

    from execmagic.guard import secret_names

    rng = random.Random(7)
    pieces = [w for name in SECRET_NAMES + NOT_SECRET_NAMES for w in secret_names.name_words(name)]
    pieces += ["pass", "word", "sec", "ret", "tok", "en", "Key", "AUTH", "v1", "x", "count", "PWD", "jw", "t"]
    names = SECRET_NAMES + NOT_SECRET_NAMES + [
        rng.choice(["", "_", "-", "."]).join(rng.choice([str.lower, str.upper, str.title])(rng.choice(pieces))
                                               for _ in range(rng.randint(1, 4))) for _ in range(3000)]
    for name in names:
        words = secret_names.name_words(name)
        assert secret_name(name) == any(secret_names._holds(words, i) for i in range(len(words))), name


def test_env_names_are_held_back_by_the_rule():
    env = dict.fromkeys(SECRET_NAMES + NOT_SECRET_NAMES, "value123")
    kept, held = sanitize_env(env)
    assert set(held) == set(SECRET_NAMES) and set(kept) == set(NOT_SECRET_NAMES)


# (kind, a line as it appears in real output, with made-up values; a piece of the secret that must go)
CREDENTIAL_LINES = [
    ("aws access key id", "  aws_access_key_id = AKIAIOSFODNN7EXAMPLQ", "IOSFODNN7EXAMPLQ"),
    ("aws secret key, INI", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI"),
    ("github", "remote: using token ghp_" + "a1B2c3D4e5" * 4, "a1B2c3D4e5"),
    ("slack", "SLACK_BOT=xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "AbCdEfGhIj"),
    ("openai", 'client = OpenAI(api_key="sk-proj-' + "Ab3De6Gh9J" * 5 + '")', "Ab3De6Gh9J"),
    ("hugging face", "Token is valid. Your token hf_" + "AbCdEfGhIj" * 3 + "KlMn has been saved", "AbCdEfGhIj"),
    ("password in a url", "Cloning from postgres://admin:s3cr3tpass@db.internal:5432/app", "s3cr3tpass"),
    ("jwt bearer", "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
                   "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "dozjgNryP4J3"),
    ("export", "export MY_API_KEY=Zq8xWv2LmN4pRt6Y", "Zq8xWv2LmN4pRt6Y"),
    ("stripe", "stripe: using key sk_live_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc"),
    ("sendgrid", "mail backend: 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", "TwL2iGABf9"),
    ("twilio", "twilio: SK" + "0123456789abcdef" * 2 + " loaded", "0123456789abcdef0123"),
    ("azure storage", "DefaultEndpointsProtocol=https;AccountName=mystore;AccountKey=" + "Ab12Cd34Ef56" * 7
     + "Ab==;EndpointSuffix=core.windows.net", "Ab12Cd34Ef56"),
    ("databricks", "databricks configure: host=https://adb-1.azuredatabricks.net token dapi" + "0123456789abcdef" * 2,
     "0123456789abcdef0123"),
    ("telegram", "bot started: 1234567890:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1 polling", "AAHdqTcvCH1vGWJx"),
    ("yaml", "    password: Tr0ub4dor&3xyz", "Tr0ub4dor"),
    ("json", '  "client_secret": "GOCSPX-AbCdEfGhIjKlMnOpQrStUv",', "AbCdEfGhIjKlMn"),
    ("private key in json", '  "private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC'
     + ("Zm9vYmFy" * 8 + "\\n") * 20 + 'AbCd==\\n-----END PRIVATE KEY-----\\n",', "Zm9vYmFy"),
    # more of detect-secrets' formats
    ("pem", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA" + ("Zm9vYmFy" * 8 + "\n") * 5
     + "-----END RSA PRIVATE KEY-----", "Zm9vYmFy"),
    ("basic auth header", "> Authorization: Basic dXNlcjpwYXNzd29yZDEyMw==", "dXNlcjpwYXNz"),
    ("opaque bearer", "curl -H 'Authorization: Bearer 8f2a9c1d7e3b4a5f6c0d9e8f7a6b5c4d'", "8f2a9c1d7e3b"),
    ("slack webhook", "POST https://hooks.slack.com/services/T0ABCDEFG/B0ABCDEFG/AbCdEfGhIjKlMnOpQrStUvWx", "AbCdEfGhIj"),
    ("pypi", "password = pypi-AgEIcHlwaS5vcmc" + "Ab3De6Gh9J" * 6, "Ab3De6Gh9J"),
    ("url query", "GET /api/items?api_key=Zq8xWv2LmN4pRt6Y&page=2", "Zq8xWv2LmN4pRt6Y"),
    ("azure sas", "https://acct.blob.core.windows.net/c/f?sv=2022-11-02&sig=AbCdEfGhIjKlMnOpQrStUvWxYz0123%3D",
     "AbCdEfGhIjKl"),
    ("cli flag", "mysql --password=Tr0ub4dor3xyz -u root", "Tr0ub4dor3xyz"),
]


@pytest.mark.parametrize(("kind", "line", "piece"), CREDENTIAL_LINES, ids=[c[0] for c in CREDENTIAL_LINES])
def test_credential_shapes_in_real_output_are_redacted(kind, line, piece):
    shown = redact(line, {})
    assert piece not in shown and "[REDACTED]" in shown


def test_redaction_keeps_what_is_around_a_secret():
    assert redact('{"client_secret": "abcdef123", "client_id": "app-42"}', {}) == \
        '{"client_secret": "[REDACTED]", "client_id": "app-42"}'
    assert redact("Authorization: Bearer abcdefgh12345678", {}) == "Authorization: Bearer [REDACTED]"
    assert redact("AccountName=x;AccountKey=" + "A1b2" * 11 + "==;EndpointSuffix=core", {}) == \
        "AccountName=x;AccountKey=[REDACTED];EndpointSuffix=core"
    assert redact("export API_KEY=$OTHER_KEY; token=${T}", {}) == "export API_KEY=$OTHER_KEY; token=${T}"
    assert redact("pw=hunter2x and PW=hunter2x", {"PW": "hunter2x"}) == "pw=[REDACTED:PW] and PW=[REDACTED:PW]"


ORDINARY_OUTPUT = """\
commit 3f786850e387550fdab836ed7e6dc881de23001b
Merge: 1a2b3c4 5d6e7f8
git rev-parse HEAD: 9fceb02d0ae598e95dc970b74767f19372d61af8
sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  data.csv
md5sum: d41d8cd98f00b204e9800998ecf8427e  empty.txt
docker pull python@sha256:2bb4c1e8c95d5d9ffae7e3a5b2b0b6d8f0d6f5c4a3b2c1d0e9f8a7b6c5d4e3f2
container 4f2a1c3b5d6e started; image digest sha256:abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789
id=550e8400-e29b-41d4-a716-446655440000 status=ok
uuid4: 123e4567-e89b-12d3-a456-426614174000, job 12345678:queued
/home/user/projects/run-2024-05-01/checkpoints/model_step_12000.safetensors
s3://my-bucket/datasets/v2/part-00000-8f4e2b1a-1c3d-4e5f-9a8b-7c6d5e4f3a2b-c000.snappy.parquet
/tmp/tmpa1b2c3d4/pytest-of-user/pytest-42/test_run0/out.log
  File "/usr/lib/python3.12/site-packages/torch/nn/modules/module.py", line 1736, in _call_impl
epoch 3/10 - loss: 0.2314 - accuracy: 0.9121 - val_loss: 0.2650 - val_accuracy: 0.9003
[2024-05-01 12:00:01,123] INFO run_id=2f9c7e2a4b1d4e8f9a0b1c2d3e4f5a6b step=100 lr=3e-4
Processed 1,234,567 rows in 12.3s (100,369 rows/s); peak memory 2.1 GB
Epoch 1:  45%|████▌     | 45/100 [00:01<00:02, 30.01it/s, loss=0.123]
ImageNet mean=[0.485, 0.456, 0.406] std=[0.229, 0.224, 0.225]
Downloading meta-llama/Llama-3.1-8B-Instruct to ~/.cache/huggingface/hub
Successfully installed numpy-2.1.3 pandas-2.2.3 scikit-learn-1.5.2 torch-2.5.1+cu124
pip download torch==2.5.1 --index-url https://download.pytorch.org/whl/cu124
request_id=Ab12Cd34Ef56Gh78Ij90KlMnOpQrStUv trace=00f067aa0ba902b7
wandb: Run data is saved locally in ./wandb/run-20240501_120000-abc123xy
base64 id: dGhpcyBpcyBhIHRlc3Q=, blob=QmFzZTY0RW5jb2RlZElk
etag: "0x8DC2B3F4A5B6C7D"
ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl user@host
Tokenizer: max_tokens=4096, tokenizer=bert-base-uncased, pad_token=[PAD]
primary_key: user_id, sort_key: created_at, partition_key=region
object_key=raw/2024/05/01/events.json.gz cache_key=v3-deps-abc123
PWD=/home/user/work OLDPWD=/home/user
Author: Jane Doe <jane@example.com>
auth_method=oauth AUTH_METHOD: saml
hotkey=ctrl+k KEYBOARD=us tokenizer=tiktoken max_tokens=512 author=jdoe
AWS_ACCESS_KEY_ID is set; PUBLIC_KEY=ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ user@host
def connect(api_key: str, token: str | None = None, password: Optional[str] = None) -> Client:
    password = os.environ["DB_PASSWORD"]; secret_key = settings.get("SECRET_KEY"); token = get_token()
  "auth_token": null, "client_secret": true,
{"model": "gpt-4o-mini", "usage": {"prompt_tokens": 812, "completion_tokens": 64, "total_tokens": 876}}
"""


@pytest.mark.parametrize("line", ORDINARY_OUTPUT.splitlines())
def test_ordinary_output_of_data_work_is_untouched(line):
    assert redact(line, {}) == line


def test_hostile_lines_redact_in_linear_time():
    """Long lines built to make a pattern backtrack: each finishes fast (the bound is generous)."""
    for line in ['password="' * 3_000, 'a="a=' * 6_000, "a-" * 15_000, "x" * 30_000, "0" * 30_000, "SG." * 10_000,
                 "-----BEGIN PRIVATE KEY-----\\n" * 1_000, "ab:" * 10_000, "password: x " * 3_000, "eyJ" * 10_000,
                 "token=" * 5_000, "-" * 30_000, "a." * 15_000, "sk_live_" * 4_000, "1234567890:" * 3_000]:
        started = time.perf_counter()
        redact(line, {"PW": "hunter2x"})
        secret_tail(line, {"PW": "hunter2x"})
        assert time.perf_counter() - started < 2, line[:20]


@pytest.mark.parametrize(("text", "held"), [
    ("all done\n", ""),
    ("using token ghp_a1B2c3", "ghp_a1B2c3"),
    ("    password: ", "password: "),
    ('{\n  "client_secret": "abc', '"client_secret": "abc'),
    ("the value is hunt", "hunt"),  # the start of a known secret
    ("-----BEGIN PRIVATE KEY-----\nMIIEvQ\nAbCd\n", "-----BEGIN PRIVATE KEY-----\nMIIEvQ\nAbCd\n"),
    ("Epoch 1:  45%|####  | 45/100 [00:01<00:02, 30.01it/s]", ""),  # a progress bar shows at once
    ("Continue? [y/N] ", ""),
])
def test_the_end_of_a_read_that_may_be_a_secret_is_held_back(text, held):
    assert text[secret_tail(text, {"PW": "hunter2x"}):] == held


def test_held_back_text_is_bounded():
    text = "x" * 100_000
    assert len(text) - secret_tail(text) == 4_096


@pytest.mark.parametrize("name", [n for n in SECRET_NAMES + NOT_SECRET_NAMES if n.isidentifier()])
def test_templates_and_env_names_are_shown_by_the_one_rule(engine, name):
    """A ``{name}`` template value and an ``--env NAME=…`` value are hidden exactly when the name holds a secret."""
    value = f"value-of-{name}"
    plan = engine.plan_script(f"echo {{{name}}} {{n_rows}}", params={name: value, "n_rows": 512},
                              env={name: f"env-{value}"}, save_session=False)
    secret = secret_name(name)
    assert plan.command.display == (f"echo '[REDACTED:{name}]' 512" if secret else f"echo {value} 512")
    assert (f"# env: {name}=[REDACTED]" if secret else f"# env: {name}=env-{value}") in plan.describe()
    assert plan.command.argv[-1] == f"echo {value} 512"  # what runs has the real value
