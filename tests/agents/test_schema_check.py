"""The one JSON Schema check behind tool arguments and plugin manifests: the first problem, as data.

Both readers word the same :class:`SchemaProblem`; these tests pin the walk itself (which problem
comes first, where it is, which rule), so a wording change in one reader cannot hide a walk change.
"""

from __future__ import annotations

import math

from execmagic.agents.arguments import object_schema, validate
from execmagic.agents.manifest import MANIFEST_SCHEMA
from execmagic.agents.schema_check import first_problem, has_type

SCHEMA = object_schema({"n": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}},
                        "o": {"type": "object"}}, ["n"])


def test_a_boolean_is_not_a_number_and_an_unknown_type_fits_nothing():
    assert has_type(1, "integer") and has_type(1, "number") and has_type(1.5, "number")
    assert not has_type(True, "integer") and not has_type(False, "number") and not has_type("x", "bogus")


def test_the_first_problem_names_path_and_rule():
    assert first_problem(SCHEMA, {"n": 1}) is None
    missing = first_problem(SCHEMA, {})
    assert (missing.path, missing.rule, missing.detail) == ((), "required", "n")
    wrong = first_problem(SCHEMA, {"n": 1, "tags": ["a", 5]})
    assert (wrong.path, wrong.rule, wrong.value) == (("tags", 1), "type", 5)
    unknown = first_problem(SCHEMA, {"n": 1, "x": 2})
    assert (unknown.path, unknown.rule, unknown.detail) == (("x",), "additionalProperties", ["n", "tags", "o"])


def test_open_parts_must_still_be_json_unless_asked_not_to():
    value = {"n": 1, "o": {"deep": [math.inf]}}
    found = first_problem(SCHEMA, value)
    assert (found.path, found.rule) == (("o", "deep", 0), "finite")
    assert first_problem(SCHEMA, value, json_only=False) is None
    text = first_problem(SCHEMA, {"n": 1, "o": {"s": "a\ud800"}})
    assert (text.rule, text.detail) == ("text", 1)


def test_one_walk_two_wordings():
    assert validate(SCHEMA, {"n": 1, "tags": ["a", 5]}) == "argument 'tags'[1] must be string, not integer 5"
    found = first_problem(MANIFEST_SCHEMA, {"tool": {"name": "t"}, "exec": {"binary": "b", "timeout": 0}})
    assert (found.path, found.rule) == (("exec", "timeout"), "exclusiveMinimum")


def test_a_tools_numeric_bounds_are_advice_a_manifests_are_rules():
    schema = object_schema({"timeout": {"type": "integer", "minimum": 1000, "maximum": 600000}})
    assert validate(schema, {"timeout": 700000}) is None and validate(schema, {"timeout": 5}) is None
    assert first_problem(schema, {"timeout": 700000}).rule == "maximum"
    assert first_problem(schema, {"timeout": 5}).rule == "minimum"


def test_a_misspelt_name_is_named_before_the_name_it_misses():
    assert validate(SCHEMA, {"m": 1}).startswith("unknown argument 'm' (expected: n, tags, o)")
    found = first_problem(MANIFEST_SCHEMA, {"tool": {"nme": "t"}, "exec": {"binary": "b"}})
    assert (found.path, found.rule) == (("tool", "nme"), "additionalProperties")
