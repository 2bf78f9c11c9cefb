"""The generated modules' IntEnums are built with enum._simple_enum (cudart._enums), the
standard library's fast path; here every enum of every version is held equal to the one
enum's public functional API builds from the same class body."""

from __future__ import annotations

import enum
import importlib
import sys

import pytest
from suite import version_keys

from cudart import _enums


def _plain_bodies(module):
    """Each IntEnum of a generated module, with the namespace of the plain class that
    int_enum received for it."""
    for value in vars(module).values():
        if (
            isinstance(value, type)
            and issubclass(value, enum.IntEnum)
            and value.__module__ == module.__name__
        ):
            body = {
                "__doc__": value.__doc__,
                "__module__": value.__module__,
                "__qualname__": value.__qualname__,
            }
            body |= {name: int(member) for name, member in value.__members__.items()}
            yield value, body


@pytest.mark.parametrize("key", version_keys())
def test_fast_enums_equal_the_functional_api(manifest, key):
    module = importlib.import_module(f"cudart.sys_{manifest.get(key).number}")
    count = 0
    for made, body in _plain_bodies(module):
        reference = _enums.int_enum_by_metaclass(type(made.__name__, (), dict(body)))
        again = _enums.int_enum(type(made.__name__, (), dict(body)))
        for candidate in (made, again):
            assert issubclass(candidate, enum.IntEnum)
            assert (
                candidate.__name__ == reference.__name__ and candidate.__doc__ == reference.__doc__
            )
            # Members with aliases, in order, and the canonical members iterated.
            assert {k: int(v) for k, v in candidate.__members__.items()} == {
                k: int(v) for k, v in reference.__members__.items()
            }
            assert [m.name for m in candidate] == [m.name for m in reference]
            first = next(iter(reference))
            assert candidate(int(first)).name == first.name
            with pytest.raises(ValueError):
                candidate(max(int(m) for m in reference) + 1)
        count += 1
    assert count >= 50, f"only {count} enums in CUDA {key}"


def test_the_fast_path_is_the_one_in_use():
    # If a Python drops enum._simple_enum, int_enum falls back to the functional API;
    # the supported ones (3.11-3.13) all have it.
    assert (_enums._simple_enum is not None) == (sys.version_info >= (3, 11))
