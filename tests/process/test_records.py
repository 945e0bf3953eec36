"""A record is a frozen dataclass in all a caller can tell: each behaviour is compared with one made by dataclasses."""

from __future__ import annotations

import builtins
import copy
import dataclasses
import math
import pickle

import pytest

from execmagic.process.records import record


def _twins(namespace: dict[str, object]) -> tuple[type, type]:
    """The same class body made as a frozen dataclass and as a record."""
    made = [maker(type("Thing", (), dict(namespace))) for maker in (dataclasses.dataclass(frozen=True), record)]
    return made[0], made[1]


_BODY = {"__annotations__": {"a": "int", "b": "str", "c": "list", "d": "object"}, "__module__": __name__,
         "__doc__": "A thing.", "b": "x", "c": dataclasses.field(default_factory=list),
         "d": dataclasses.field(default=None, repr=False, compare=False)}


def _outcome(call):
    try:
        return "value", call()
    except Exception as exc:  # the kind of failure is the answer
        return "raised", type(exc)


@pytest.mark.parametrize("call", [
    lambda cls: cls(1), lambda cls: cls(1, "y"), lambda cls: cls(a=1, b="y", c=[2]), lambda cls: cls(1, d=5),
    lambda cls: cls(), lambda cls: cls(1, "y", [], None, 9), lambda cls: cls(1, a=2), lambda cls: cls(1, e=2),
    lambda cls: cls(b="y")])
def test_it_is_made_from_the_same_arguments(call):
    twins = _twins(_BODY)
    made = [_outcome(lambda cls=cls: call(cls)) for cls in twins]
    assert made[0][0] == made[1][0]
    if made[0][0] == "raised":
        assert made[0][1] is made[1][1]
    else:
        assert [dataclasses.astuple(value) for _, value in made] == [dataclasses.astuple(made[0][1])] * 2
        assert repr(made[0][1]) == repr(made[1][1])


def test_it_compares_hashes_and_shows_as_a_frozen_dataclass():
    plain, fast = _twins(_BODY)
    for cls in (plain, fast):
        one, same, other = cls(1, c=(), d="ignored"), cls(1, c=(), d="not compared"), cls(2, c=())
        assert one == same and one != other and hash(one) == hash(same)
        assert (one == 1) is False and one.__eq__(1) is NotImplemented
        assert one.c is not cls(1).c  # a factory's value is made anew each time
        with pytest.raises(dataclasses.FrozenInstanceError):
            one.a = 5  # type: ignore[misc]
        with pytest.raises(dataclasses.FrozenInstanceError):
            del one.a
        with pytest.raises(dataclasses.FrozenInstanceError):
            one.other = 5  # a frozen class takes no attribute at all
    nan_twins = _twins({"__annotations__": {"x": "float"}, "__module__": __name__})
    nan = math.nan
    assert [cls(nan) == cls(nan) for cls in nan_twins] == [True, True]  # (as tuples compare: the same object)
    assert repr(fast(1, "y")) == repr(plain(1, "y"))
    assert fast.__init__.__qualname__ == "Thing.__init__"


def test_the_dataclasses_functions_work_on_it():
    plain, fast = _twins(_BODY)
    for cls in (plain, fast):
        one = cls(1, "y", [3])
        assert dataclasses.is_dataclass(one)
        assert [f.name for f in dataclasses.fields(one)] == ["a", "b", "c", "d"]
        assert dataclasses.asdict(one) == {"a": 1, "b": "y", "c": [3], "d": None}
        changed = dataclasses.replace(one, b="z")
        assert (changed.b, changed.a, type(changed)) == ("z", 1, cls)
        assert cls.__dataclass_params__.frozen and cls.__match_args__ == ("a", "b", "c", "d")


def test_a_method_the_class_defines_is_kept():
    body = dict(_BODY, __repr__=lambda self: "mine", __eq__=lambda self, other: True)
    for cls in _twins(body):
        assert repr(cls(1)) == "mine" and cls(1) == cls(2)
        assert hash(cls(1, c=())) == hash(cls(1, c=()))  # a __hash__ made None by __eq__ alone is the fields' hash
    hashed = dict(_BODY, __hash__=lambda self: 7)
    assert [hash(cls(1)) for cls in _twins(hashed)] == [7, 7]


@dataclasses.dataclass(frozen=True)
class Plain:
    """Made by dataclasses (pickled by its name: a class of the module)."""

    a: int
    c: list[int] = dataclasses.field(default_factory=list)


@record
class Fast:
    """Made as a record."""

    a: int
    c: list[int] = dataclasses.field(default_factory=list)


@pytest.mark.parametrize("cls", [Plain, Fast])
def test_it_is_pickled_and_copied(cls):
    one = cls(1, [2])
    assert pickle.loads(pickle.dumps(one)) == one and copy.deepcopy(one) == one and copy.copy(one) == one


def test_post_init_runs_and_a_field_not_given_to_init_gets_its_default():
    seen = []
    body = {"__annotations__": {"a": "int", "b": "int"}, "__module__": __name__, "b": dataclasses.field(default=3,
            init=False), "__post_init__": lambda self: seen.append((self.a, self.b))}
    for cls in _twins(body):
        assert cls(1).b == 3
    assert seen == [(1, 3), (1, 3)]


def test_an_heir_of_a_record_is_frozen_and_has_both_fields():
    base = record(type("Base", (), {"__annotations__": {"a": "int"}, "__module__": __name__}))
    heir = record(type("Heir", (base,), {"__annotations__": {"b": "int"}, "__module__": __name__, "b": 2}))
    made = heir(1)
    assert (made.a, made.b) == (1, 2) and made != base(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.a = 3  # type: ignore[misc]
    with pytest.raises(TypeError):  # as dataclasses says: a frozen class has no unfrozen heir
        dataclasses.dataclass(type("Loose", (base,), {"__module__": __name__}))


def test_a_record_that_defines_setattr_is_refused():
    with pytest.raises(TypeError, match="frozen"):
        record(type("Odd", (), {"__setattr__": lambda self, name, value: None, "__module__": __name__}))


def test_a_record_compiles_no_code(monkeypatch):
    """What makes it cheaper to make (counted, not timed): dataclasses compiles each method it makes from source."""
    compiled = []
    real_exec = builtins.exec

    def counted(*args, **kwargs):
        compiled.append(args[0])
        return real_exec(*args, **kwargs)

    monkeypatch.setattr(builtins, "exec", counted)
    record(type("Counted", (), dict(_BODY)))
    assert compiled == []
    dataclasses.dataclass(frozen=True)(type("Counted", (), dict(_BODY)))
    assert len(compiled) >= 5


def test_a_field_not_given_to_init_and_with_no_default_is_left_unset():
    body = {"__annotations__": {"a": "int", "b": "int"}, "__module__": __name__, "b": dataclasses.field(init=False)}
    for cls in _twins(body):
        made = cls(1)
        assert made.a == 1 and not hasattr(made, "b")


@pytest.mark.parametrize("call", [lambda cls: cls(), lambda cls: cls(1, a=1), lambda cls: cls(1, 2, 3, 4, 5),
                                  lambda cls: cls(1, e=1), lambda cls: cls(b="y", c=[])])
def test_a_wrong_call_raises_type_error_as_a_dataclass_does(call):
    for cls in _twins(_BODY):
        with pytest.raises(TypeError):
            call(cls)
