"""How the generated modules make their IntEnum classes: the fast way, at import.

A raw module defines 55-85 C enums with 500-900 enumerators, and building them as
`class E(IntEnum)` costs about 8 ms of the first call's 25 (enum's metaclass runs
per member). The standard library builds its own hot enums (http.HTTPStatus, ...)
with enum._simple_enum, which makes the same IntEnum from a plain class body in half
the time; the tests hold its result equal to the metaclass's for every enum of every
version (members, aliases, order, values, docstrings).

The generated source reads `@int_enum` over `class E(IntEnumBase)`: at run time
IntEnumBase is `object`, so the class body stays a plain class until int_enum turns it
into the IntEnum; type checkers see IntEnumBase as IntEnum, so E is an IntEnum to them.
"""

from __future__ import annotations

import enum

TYPE_CHECKING = False
if TYPE_CHECKING:
    from enum import IntEnum as IntEnumBase
    from typing import TypeVar

    _E = TypeVar("_E")
else:
    IntEnumBase = object

_simple_enum = getattr(enum, "_simple_enum", None)

__all__ = ["IntEnumBase", "int_enum", "int_enum_by_metaclass"]


def int_enum(cls: type[_E]) -> type[_E]:
    """The IntEnum whose members are the plain class's public attributes, in order."""
    if _simple_enum is None:
        return int_enum_by_metaclass(cls)
    made: type[_E] = _simple_enum(enum.IntEnum)(cls)
    return made


def int_enum_by_metaclass(cls: type[_E]) -> type[_E]:
    """The same IntEnum through enum's public functional API: the fallback where the
    standard library lacks _simple_enum, and the reference the tests compare with."""
    members = [(k, v) for k, v in vars(cls).items() if not k.startswith("_")]
    # mypy wants a literal class name for the functional API; here it is the body's own.
    made = enum.IntEnum(  # type: ignore[misc]
        cls.__name__, members, module=cls.__module__, qualname=cls.__qualname__
    )
    made.__doc__ = cls.__doc__
    return made  # type: ignore[return-value]
