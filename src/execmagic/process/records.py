"""Frozen value classes made without compiling code: what crosses layers (a result, a plan, a spec) is one.

``@record`` is ``@dataclasses.dataclass(frozen=True)`` -- the same fields (``dataclasses.fields``,
``replace``, ``asdict`` work), the same ``__init__`` arguments, ``repr``, equality, hash and frozen
attributes -- at a fifteenth of the cost of making the class.  A frozen dataclass compiles six methods
from source as its class is made: 0.5-0.7 ms each class on Python 3.11, and the magics' load and the
first command's imports made some thirty of them (about 4 ms of a 20 ms ``%load_ext``, 16 ms of the
first command's imports).  Here the methods are shared closures over the class's fields, made in
0.03 ms.  An instance of many fields is made faster than a dataclass makes it (a ``Result``: 1.5 µs, not
4); one of three fields given by position, slower (1.5 µs, not 0.9): the guard's values, made for each
command of a script it reads (40,000 a MB), stay dataclasses.

Type checkers see a frozen dataclass (:func:`typing.dataclass_transform`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

__all__ = ["record"]

_T = TypeVar("_T")
_MISSING = dataclasses.MISSING

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:
    def dataclass_transform(**_kwargs: Any) -> Callable[[_T], _T]:
        return lambda made: made


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field, dataclasses.Field))
def record(cls: type[_T]) -> type[_T]:
    """``cls`` as a frozen dataclass (see the module's docstring); a method ``cls`` defines itself is kept."""
    own = set(vars(cls))
    if "__setattr__" in own or "__delattr__" in own:
        raise TypeError(f"a record cannot define __setattr__ or __delattr__ ({cls.__qualname__}: it is frozen)")
    # the fields, their defaults and the class's parameters, as dataclasses makes them; no method made (but for
    # a frozen base's heir, which dataclasses makes frozen itself: a frozen class has no unfrozen heir)
    frozen_base = any(getattr(getattr(base, "__dataclass_params__", None), "frozen", False) for base in cls.__mro__[1:])
    made: Any = dataclasses.dataclass(init=False, repr=False, eq=False, frozen=frozen_base)(cls)
    fields = dataclasses.fields(made)  # (those of its bases too, in order)
    params = made.__dataclass_params__
    params.init = params.repr = params.eq = params.frozen = True  # (what an heir and a reader of them see)
    methods = {"__init__": _init(made, fields), "__repr__": _repr(tuple(f.name for f in fields if f.repr)),
               "__eq__": _eq(compared := tuple(f.name for f in fields if f.compare)), "__hash__": _hash(compared)}
    # a method the class defines is kept, as a dataclass keeps it: but a __hash__ that is None only because the
    # class defines __eq__ (Python's doing), which a frozen dataclass replaces with its fields' hash
    kept = own - {"__hash__"} if vars(cls).get("__hash__", 0) is None and "__eq__" in own else own
    methods = {name: method for name, method in methods.items() if name not in kept}
    methods.update(__setattr__=_setattr(made, frozenset(f.name for f in fields)), __delattr__=_delattr())
    for name, method in methods.items():
        method.__qualname__ = f"{made.__qualname__}.{name}"
        setattr(made, name, method)
    return made


def _init(cls: type, fields: tuple[dataclasses.Field[Any], ...]) -> Callable[..., None]:
    """The ``__init__`` a frozen dataclass of ``fields`` has: each field by position or name, else its default.

    Its values are put in the instance's ``__dict__`` at once, in the fields' order (as a dataclass's own
    ``__init__`` sets them one by one): a copy of the defaults, updated with what was given."""
    names = tuple(f.name for f in fields if f.init)
    known = frozenset(names)
    # (a field neither given nor with a default is left unset, as a dataclass leaves it)
    kept = [f for f in fields if f.init or f.default is not _MISSING or f.default_factory is not _MISSING]
    template = {f.name: f.default for f in kept}  # (_MISSING where no default is)
    # what a default does not fill: a value to give, or one a factory makes for each instance
    unfilled = tuple((f.name, f.default_factory if f.default_factory is not _MISSING else None)
                     for f in kept if f.default is _MISSING)
    post_init = hasattr(cls, "__post_init__")
    whole = len(template) == len(names)  # (every field is given to __init__: all given by position is all of them)

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if whole and not kwargs and len(args) == len(names):
            self.__dict__.update(zip(names, args, strict=True))
            if post_init:
                self.__post_init__()
            return
        values = template.copy()
        if args:
            if len(args) > len(names):
                raise TypeError(f"{type(self).__qualname__}() takes {len(names)} positional arguments, "
                                f"{len(args)} were given")
            values.update(zip(names, args, strict=False))  # (the first fields; the rest by name or default)
        if kwargs:
            if not known.issuperset(kwargs):
                raise TypeError(f"{type(self).__qualname__}() got an unexpected keyword argument "
                                f"{sorted(set(kwargs) - known)[0]!r}")
            if args and not kwargs.keys().isdisjoint(names[:len(args)]):
                raise TypeError(f"{type(self).__qualname__}() got multiple values for argument "
                                f"{sorted(set(names[:len(args)]) & set(kwargs))[0]!r}")
            values.update(kwargs)
        for name, factory in unfilled:
            if values[name] is _MISSING:
                if factory is None:
                    missing = [name for name, factory in unfilled if factory is None and values[name] is _MISSING]
                    raise TypeError(f"{type(self).__qualname__}() missing {len(missing)} required argument"
                                    f"{'s' if len(missing) > 1 else ''}: {', '.join(map(repr, missing))}")
                values[name] = factory()
        self.__dict__.update(values)
        if post_init:
            self.__post_init__()

    return __init__


def _repr(shown: tuple[str, ...]) -> Callable[[Any], str]:
    def __repr__(self: Any) -> str:
        return f"{type(self).__qualname__}({', '.join(f'{name}={getattr(self, name)!r}' for name in shown)})"

    return __repr__


def _eq(compared: tuple[str, ...]) -> Callable[[Any, object], Any]:
    def __eq__(self: Any, other: object) -> Any:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return tuple(getattr(self, name) for name in compared) == tuple(getattr(other, name) for name in compared)

    return __eq__


def _hash(compared: tuple[str, ...]) -> Callable[[Any], int]:
    def __hash__(self: Any) -> int:
        return hash(tuple(getattr(self, name) for name in compared))

    return __hash__


def _setattr(cls: Any, names: frozenset[str]) -> Callable[[Any, str, Any], None]:
    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    return __setattr__


def _delattr() -> Callable[[Any, str], None]:
    def __delattr__(self: Any, name: str) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")

    return __delattr__
