"""How the magics' options are read and their ``%name?`` help is laid out.

IPython's ``@magic_arguments`` builds each magic's argparse parser, and formats its help page into
the method's ``__doc__``, when the class is defined: seven magics' parsers were about a third of
``%load_ext execmagic``.  :func:`magic_arguments` here takes the same ``@argument``/``@kwds``
decorators and builds the same parser and the same page, each the first time something asks for
it -- the magic's first call (the parser), ``%exec?``, ``%magic``, a frontend's inspector or the
reference (the page) -- so a notebook pays only for the magics it uses.

The decorators themselves are here too (:class:`argument`, :class:`kwds`: what IPython's record, recorded
the same way), and the help formatter is made when a page is first laid out (:func:`fixed_width_help`):
``%load_ext`` then imports none of ``IPython.core.magic_arguments`` (0.8 ms of the load in a kernel), which the
first parser built imports (on the thread that works ahead, :mod:`.ahead`).
"""

from __future__ import annotations

import functools
import threading
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from IPython.core.magic_arguments import MagicArgumentParser, MagicHelpFormatter

__all__ = ["HELP_WIDTH", "LazyArguments", "argument", "fixed_width_help", "kwds", "magic_arguments"]

#: Help text width: fixed, so the reference reads the same whatever terminal built it.
HELP_WIDTH = 100


@functools.cache
def _fixed_width_class() -> type[MagicHelpFormatter]:
    from IPython.core.magic_arguments import MagicHelpFormatter

    class FixedWidthHelp(MagicHelpFormatter):
        """IPython's magic help formatter at a fixed width (argparse otherwise follows the terminal)."""

        def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                     width: Any = None) -> None:
            super().__init__(prog, indent_increment, max_help_position, width=HELP_WIDTH)

    return FixedWidthHelp


def fixed_width_help(prog: str, indent_increment: int = 2, max_help_position: int = 24,
                     width: Any = None) -> MagicHelpFormatter:
    """IPython's magic help formatter at a fixed width: a ``formatter_class`` for :class:`kwds` (argparse calls
    it as it calls a class), its class made at the first page laid out, not when the magics are defined."""
    return _fixed_width_class()(prog, indent_increment, max_help_position, width)


class _Recorded:
    """One decorator's record on the magic's function, as IPython's ``ArgDecorator`` keeps it (``decorators``,
    in the order applied; IPython's ``construct_parser`` and :attr:`LazyArguments.parser` replay them)."""

    def __call__(self, func: Any) -> Any:
        if not getattr(func, "has_arguments", False):
            func.has_arguments = True
            func.decorators = []
        func.decorators.append(self)
        return func

    def add_to_parser(self, parser: Any, group: Any) -> Any:
        return None


class argument(_Recorded):  # lower case: the name of IPython's decorator it stands in for
    """IPython's ``@argument``: what to hand ``add_argument`` when the parser is built."""

    def __init__(self, *args: Any, **kwds: Any) -> None:
        self.args = args
        self.kwds = kwds

    def add_to_parser(self, parser: Any, group: Any) -> Any:
        (group if group is not None else parser).add_argument(*self.args, **self.kwds)
        return None


class kwds(_Recorded):  # lower case: the name of IPython's decorator it stands in for
    """IPython's ``@kwds``: more keywords for the parser's constructor (``formatter_class=fixed_width_help``)."""

    def __init__(self, **kwds: Any) -> None:
        self.kwds = kwds

    def __call__(self, func: Any) -> Any:
        func = super().__call__(func)
        func.argcmd_kwds = self.kwds
        return func


class LazyArguments:
    """A magic method whose ``parser`` and ``__doc__`` (the help page) are built when first read.

    Read through an instance it is a real bound method (``types.MethodType``), so IPython shows,
    inspects and calls it as it does any magic method: a bound method reads ``__doc__`` and every
    other attribute (``parser``, the marks ``@no_var_expand`` leaves) from the callable it binds,
    which is this object.  ``__wrapped__`` is the function as written: its signature, source and file.
    Both are built under a lock, once: a thread may build a parser ahead while the notebook waits.
    """

    def __init__(self, func: Any) -> None:
        self.__wrapped__ = func
        self.__name__ = func.__name__
        self.__qualname__ = func.__qualname__
        self.__module__ = func.__module__
        self._lock = threading.Lock()
        self._parser: MagicArgumentParser | None = None
        self._help: str | None = None

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        """``function``, for ``isinstance``: ``inspect.getfile``, ``inspect.isfunction`` and the tools built
        on them (debuggers, documentation) take it for the function it stands for, reading ``__code__``
        and the rest through it.  (``type()`` still tells the truth; C code checks the real type.)"""
        return types.FunctionType

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        return self if instance is None else types.MethodType(self, instance)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.__wrapped__(*args, **kwargs)

    def __reduce__(self) -> str:
        """Pickled by name, as a function is (copied, it is itself): its class and lock are no one's business."""
        return self.__qualname__

    def __repr__(self) -> str:
        return repr(self.__wrapped__)

    def __getattr__(self, name: str) -> Any:
        """The function's own attributes read through, as a bound method reads them: what its decorators
        recorded (``argcmd_name``, ``decorators``…), ``__code__``, ``__defaults__``…"""
        if name == "__wrapped__":  # not set yet (an object made without __init__): no endless lookup
            raise AttributeError(name)
        return getattr(self.__wrapped__, name)

    @property
    def parser(self) -> MagicArgumentParser:
        """The magic's parser, as IPython's ``construct_parser`` makes it (its help page not formatted)."""
        with self._lock:
            if self._parser is None:
                from IPython.core.magic_arguments import MagicArgumentParser, real_name

                func = self.__wrapped__
                kwds = dict(getattr(func, "argcmd_kwds", {}))
                kwds.setdefault("description", func.__doc__)
                parser = MagicArgumentParser(real_name(func), **kwds)
                group = None
                for deco in func.decorators[::-1]:  # in the order they appear in the source
                    group = deco.add_to_parser(parser, group) or group
                self._parser = parser
            return self._parser

    @property  # a property where classes keep their docstring: read per object
    def __doc__(self) -> str:  # type: ignore[override]
        """The help page ``%name?`` shows: usage, the docstring, the options (as ``construct_parser`` sets it)."""
        if self._help is None:
            text = self.parser.format_help()
            with self._lock:
                self._help = text
        return self._help


class magic_arguments:  # lower case: the name of IPython's decorator it stands in for
    """IPython's ``@magic_arguments``, with the parser and help page built on first use (:class:`LazyArguments`).

    The outermost of a magic's argument decorators, as IPython's is; ``name`` names the magic in its usage line.
    """

    def __init__(self, name: str | None = None) -> None:
        self.name = name

    def __call__(self, func: Any) -> Any:
        if not getattr(func, "has_arguments", False):
            func.has_arguments = True
            func.decorators = []
        if self.name is not None:
            func.argcmd_name = self.name
        return LazyArguments(func)
