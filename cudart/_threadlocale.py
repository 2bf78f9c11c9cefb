"""The calling thread's C locale, kept across a call into libnvrtc.

A compile leaves the thread on the "C" locale (libnvrtc's LLVM calls uselocale and does
not restore it), so afterwards Python's default text encoding there is ASCII: open(),
subprocess and str(path) of a user's program fail on the first non-ASCII byte, and
libclang, loaded in the same process, parses the headers' comments otherwise (the
generator then describes a function differently). uselocale(0) reads the thread's
locale without changing it. Standard library only.
"""

from __future__ import annotations

import ctypes
import functools

# For type checkers only: importing typing costs milliseconds a first compile avoids.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


class thread_locale_kept:
    """A `with` block after which the calling thread's locale is what it was before."""

    def __enter__(self) -> None:
        uselocale = _uselocale()
        self._saved = uselocale(None) if uselocale else None

    def __exit__(self, *exc: object) -> None:
        uselocale = _uselocale()
        if uselocale and self._saved:
            uselocale(self._saved)


def keeping_thread_locale(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn`, called with the thread's locale kept (a checked module's nvrtcCompileProgram)."""

    @functools.wraps(fn)
    def kept(*args: Any) -> Any:
        with thread_locale_kept():
            return fn(*args)

    return kept


# Threads: the locale kept is the calling thread's own (uselocale is per thread); racing
# first calls of this may each look uselocale up, the same function.
@functools.cache
def _uselocale():
    try:
        uselocale = ctypes.CDLL(None).uselocale  # POSIX 2008; glibc, musl, macOS
    except (AttributeError, OSError):
        return None
    uselocale.restype = ctypes.c_void_p
    uselocale.argtypes = [ctypes.c_void_p]
    return uselocale
