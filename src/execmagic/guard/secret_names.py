"""Whether a name holds a secret: one rule for environment variables, ``--env`` and ``--param`` names,
notebook variables used in templates and ``name=value`` pairs in output, in any case.

A substring test cannot decide it: ``TOKEN`` is inside ``tokenizer`` and ``max_tokens``, ``AUTH``
inside ``author``, and ``KEY`` is a credential in ``encryption_key`` but a database column in
``primary_key``.  So a name is read as words -- split on anything not a letter or a digit and at
camelCase humps (``apiKey``, ``AWSSecretKey``) -- and the words decide:

- a *credential noun* (``password``, ``secret``, ``token``, ``key``, ...) makes the name a secret,
  unless the word after it says the name is *about* the credential rather than holding it
  (``TOKEN_URL``, ``SECRET_NAME``, ``PASSWORD_FILE``, ``AWS_ACCESS_KEY_ID``: a place, a name, a path,
  an id -- none of them the value itself);
- ``key`` and ``token`` are also read with the word before them: ``primary_key``, ``sort_key``,
  ``public_key``, ``pad_token`` name things that are not secret (a qualifier of data work);
- a few words count only as the last word, where they are what the name holds: ``BASIC_AUTH`` but
  not ``AUTH_METHOD``, ``SESSION_COOKIE`` but not ``COOKIE_DOMAIN``; and ``PWD`` or ``PASS`` only with
  another word before them (``DB_PWD``, ``SMTP_PASS``), as ``PWD`` alone is the working directory.

Plural counts (``max_tokens``, ``num_keys``) and compounds that merely contain a noun (``tokenizer``,
``hotkey``, ``keyboard``, ``author``) are different words and never match; a word that *ends* with an
unmistakable noun (``PGPASSWORD``, ``NGROK_AUTHTOKEN``) does.  Erring matters in both
directions -- a missed name leaks its value, a wrong one hides a template value the user wants to
see -- so the word lists are explicit and tested as a table.
"""

from __future__ import annotations

import functools
import re

from ..shell.patterns import lazy_pattern

__all__ = ["name_words", "secret_name"]

#: Words that hold a credential wherever they stand (but before a describing word).
_NOUNS = frozenset({
    "secret", "secrets", "password", "passwords", "passwd", "passphrase", "passcode", "credential", "credentials",
    "creds", "cred", "token", "key", "keys", "apikey", "apikeys", "secretkey", "privatekey", "accesstoken",
    "refreshtoken", "authtoken", "apitoken", "bearer", "dsn", "sessiontoken", "masterkey", "signingkey",
    "encryptionkey", "clientsecret", "privkey",
})
#: Words that hold a credential only as the name's last word (``BASIC_AUTH``, ``SESSION_COOKIE``, ``GITHUB_PAT``).
_LAST_NOUNS = frozenset({"auth", "authorization", "cookie", "cookies", "jwt", "pat", "pwd", "pass"})
#: Of those, the ones that need a word before them: ``PWD`` alone is the working directory, ``PAT`` a name.
_NOT_ALONE = frozenset({"pwd", "pass", "pat"})
#: A word after a credential noun that makes the name *about* the credential, not the credential.
_DESCRIBING = frozenset({
    "id", "ids", "name", "names", "path", "paths", "file", "files", "filename", "dir", "directory", "type", "types",
    "kind", "size", "length", "len", "bits", "count", "counts", "num", "limit", "limits", "budget", "alias", "arn",
    "url", "uri", "endpoint", "host", "server", "format", "fmt", "algorithm", "algo", "alg", "fingerprint",
    "header", "env", "var", "variable", "field", "column", "col", "index", "idx", "expiry", "expires",
    "expiration", "ttl", "lifetime", "timeout", "policy", "rotation", "provider", "method", "mode", "scheme",
    "scope", "scopes", "location", "vault", "usage", "hint", "min", "max", "strength", "required", "enabled",
    "disabled", "enable", "flag", "rule", "rules", "regex", "pattern", "command", "cmd", "helper", "manager",
    "source", "label", "description", "domain", "secure", "samesite", "age", "prompt", "reset", "dialog",
    "position", "pos", "offset", "map", "mapping", "list", "set", "store", "prefix", "suffix", "version",
})
#: ``secret_id`` (an AppRole credential) and ``password_id`` hold what they name: the id rule is for keys and tokens.
_ID_IS_A_DESCRIPTION = frozenset({"key", "keys", "token", "credential", "credentials", "cred", "creds"})
#: A word before ``key``/``token``/``pass`` that makes it a thing of data work, not a credential.
_DATA_QUALIFIERS = frozenset({
    # keys of tables, maps, sorts and caches
    "primary", "foreign", "sort", "sorting", "partition", "partitioning", "cache", "join", "object", "hash",
    "dict", "map", "lookup", "row", "range", "composite", "unique", "index", "group", "grouping", "shard",
    "routing", "cluster", "clustering", "idempotency", "dedup", "dedupe", "natural", "surrogate", "candidate",
    "compound", "secondary", "distribution", "dist", "bucket", "order", "merge", "match", "search", "sharding",
    "metric", "metrics", "column", "field", "record", "item", "node", "config", "setting", "settings", "state",
    "translation", "i18n", "message", "label", "music", "musical", "piano", "hot", "short", "shortcut",
    "rng", "prng", "random", "seed", "public", "pub", "publishable", "next", "prev", "previous", "first", "last",
    "min", "max", "start", "end", "stop", "num", "total", "n", "query",
    # tokens of tokenizers and language models
    "pad", "eos", "bos", "unk", "sep", "cls", "mask", "special", "input", "output", "prompt", "completion",
    "context", "image", "text", "word", "vocab", "sentence", "split", "lexer", "parser", "syntax",
    # passes of an algorithm
    "forward", "backward", "fwd", "bwd", "single", "multi", "second", "third", "final", "render", "train",
    "eval", "training",
})
_QUALIFIED = frozenset({"key", "keys", "token", "pass"})
#: Nouns that also end a word glued together (``PGPASSWORD``, ``HTPASSWD``, ``NGROK_AUTHTOKEN``): no
#: other word ends with them, unlike ``key`` (``hotkey``, ``monkey``) or ``pass`` (``bypass``).
_GLUED = ("password", "passwd", "passphrase", "secret", "token", "credentials", "credential")
_WORD = lazy_pattern(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+", often=True)


def name_words(name: str) -> list[str]:
    """``name`` as lower-case words: ``AWSSecretKey`` and ``aws-secret.key`` are both ``aws secret key``."""
    return [word.lower() for part in re.split(r"[^A-Za-z0-9]+", name) for word in _WORD.findall(part)]


def _holds(words: list[str], i: int) -> bool:
    """Whether ``words[i]`` makes the name hold a credential."""
    word = words[i]
    if word not in _NOUNS:
        word = next((noun for noun in _GLUED if word.endswith(noun)), word)
    after = words[i + 1] if i + 1 < len(words) else None
    if word in ("auth", "authorization") and after in ("config", "json") and i + 2 == len(words):
        return True  # DOCKER_AUTH_CONFIG: the registry credentials themselves
    if word in _LAST_NOUNS:
        return after is None and (i > 0 or word not in _NOT_ALONE) and not (
            word == "pass" and words[i - 1] in _DATA_QUALIFIERS)
    if word not in _NOUNS:
        return False
    private_key_id = word == "key" and after == "id" and i > 0 and words[i - 1] == "private"
    if after is not None and after in _DESCRIBING and not private_key_id and (
            after not in ("id", "ids") or word in _ID_IS_A_DESCRIPTION):
        return False  # a service account's "private_key_id" names the key that signs: kept as secret as the key
    if word in _QUALIFIED:
        if i == 0 and word in ("key", "keys"):  # a bare ``key``: a loop variable far more often than a credential
            return False
        return i == 0 or words[i - 1] not in _DATA_QUALIFIERS
    return True


#: Some noun a name that holds a secret has among its words (each word is a piece of the name, lower-cased): a name
#: without one is told apart by one search (most names: a script's ``v1=…``, ``count=…``), without splitting it.
_ANY_NOUN = lazy_pattern("|".join(sorted(_NOUNS | _LAST_NOUNS | set(_GLUED), key=len, reverse=True)), often=True)


@functools.lru_cache(maxsize=4096)  # output repeats its names: a log line's fields, an env listing
def secret_name(name: str) -> bool:
    """Whether a variable, parameter or field named ``name`` holds a secret (see the module's rule)."""
    if not _ANY_NOUN.search(name.lower()):
        return False
    words = name_words(name)
    return any(_holds(words, i) for i in range(len(words)))
