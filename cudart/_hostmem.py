"""Host memory the CUDA runtime allocated: an address that is also a buffer.

The checked `cudaHostAlloc`, `cudaMallocHost` and `cudaMallocManaged` return a
`HostMemory` (generator/lifetimes.py says which outputs, and which parameter gives the
size). It is an address wherever one is expected: `int(m)`, `operator.index(m)`,
`hex(m)`, any pointer parameter of the checked layer (and of the raw layer, which takes
it as the ctypes array it is), `==` and `hash` as the int address. And it is the
memory: `memoryview(m)` and `numpy.frombuffer(m, dtype)` see its `len(m)` bytes, and
`m.view("f")` is a memoryview of it as floats.

How it is made: a subclass of a ctypes array of `c_ubyte` of the allocation's size,
placed at its address (ctypes' `from_address`, no copy, not owning the memory), so the
buffer protocol is ctypes' own and works on Python 3.11, which has no `__buffer__`
(PEP 688). One such class per size, made on first use; `isinstance(m, HostMemory)`
holds for all of them. The one place it is no address: what takes an exact int only
(ctypes' `from_address`, `c_void_p(m)`), since a ctypes array cannot also be an int
subclass (their layouts conflict), and the buffer matters more: `int(m)` there, or
`(c_float * n).from_buffer(m)`. Its `__index__` is the address for pointers only: the
checked layer's integer parameters (counts, sizes) refuse it (cudart._convert).

After `cudaFreeHost(m)` through the checked layer, `m` is released: `int(m)`, passing
it to a pointer parameter of the checked layer (a second `cudaFreeHost` included),
`m.view()` and, on Python 3.12 and later, `memoryview(m)` raise ValueError. On Python
3.11 `memoryview(m)` and `numpy.frombuffer(m)` are ctypes' own export, which cannot
refuse: do not export a freed object there. Views and arrays taken before the free
point at freed memory, as a C pointer would: keep them no longer than the memory.
The raw layer (`cudart.sys`) passes the array's address as C does, released or not.
Nothing frees the memory by itself: free it with cudaFreeHost (cudaFree for managed
memory), as in C. Standard library only.
"""

from __future__ import annotations

import ctypes
import sys
import threading
from ctypes import c_ubyte

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["HostMemory", "host_memory"]

# Sizes are as many as a program's distinct allocation sizes: enough classes to hold the
# sizes in use without keeping one forever for each size ever allocated.
_MAX_CLASSES = 512


class HostMemory:
    """CUDA-allocated host memory: an int address that also exports its bytes.

    Instances are made by `host_memory(address, size)` (the checked layer does),
    never by calling this class. `len(m)` is the size in bytes, `m[i]` a byte.
    """

    # Set by host_memory() on each instance (which has a __dict__, as ctypes objects do).
    _released_: bool
    # Instances are arrays of the allocation's size; this says so to type checkers.
    if TYPE_CHECKING:

        def __len__(self) -> int: ...

    def __new__(cls, *args: Any, **kwargs: Any) -> HostMemory:
        raise TypeError("HostMemory is made by the checked layer (or cudart._hostmem.host_memory)")

    @property
    def address(self) -> int:
        """The address, also once released (for messages; int(m) refuses then)."""
        return ctypes.addressof(self)  # type: ignore[arg-type]  # a ctypes array at run time

    @property
    def nbytes(self) -> int:
        return len(self)

    @property
    def released(self) -> bool:
        """Whether cudaFreeHost (or cudaFree) freed it through the checked layer."""
        return self._released_

    def check(self) -> int:
        """The address; ValueError once the memory was freed."""
        if self._released_:
            raise ValueError(
                f"host memory at {self.address:#x} ({len(self)} bytes) was freed: "
                "it is no longer an address or a buffer"
            )
        return ctypes.addressof(self)  # type: ignore[arg-type]

    def __int__(self) -> int:
        return self.check()

    def __index__(self) -> int:
        return self.check()

    def __bool__(self) -> bool:
        # As the int address would be (not the array's length).
        return self.address != 0

    def __eq__(self, other: object) -> bool:
        if isinstance(other, HostMemory):
            return self.address == other.address
        if isinstance(other, int) and not isinstance(other, bool):
            return self.address == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.address)

    def __repr__(self) -> str:
        state = ", released" if self._released_ else ""
        return f"<HostMemory {self.address:#x}, {len(self)} bytes{state}>"

    def view(self, format: str = "B") -> memoryview:
        """A memoryview of the bytes as `format` items ("B", "f", "d", "i", ...): the
        same on every Python (memoryview(m) is ctypes' "<B" view on 3.11)."""
        self.check()
        view = memoryview(self).cast("B")
        return view if format == "B" else view.cast(format)  # type: ignore[call-overload]

    if sys.version_info >= (3, 12):
        # PEP 688: memoryview(m) and numpy.frombuffer(m) ask this before ctypes' own
        # export, so a released object refuses; the view is of plain bytes ("B").
        def __buffer__(self, flags: int) -> memoryview:
            self.check()
            return super().__buffer__(flags).cast("B")  # type: ignore[misc]

    elif TYPE_CHECKING:
        # 3.11: the buffer is ctypes' own export; type checkers' Buffer asks for this.
        def __buffer__(self, flags: int) -> memoryview: ...

    def _release(self) -> None:
        """Mark freed: what the checked cudaFreeHost and cudaFree do after success."""
        self._released_ = True


_classes: dict[int, Any] = {}
# Taken on a miss only: two threads trimming at once would both pop the oldest size (the
# second a KeyError), or iterate the table while the other changes it (RuntimeError).
# A hit is one dict read, which needs no lock with or without the GIL.
_classes_lock = threading.Lock()


def _class(size: int) -> Any:
    cls = _classes.get(size)
    if cls is None:
        with _classes_lock:
            cls = _classes.get(size)
            if cls is None:
                if len(_classes) >= _MAX_CLASSES:
                    del _classes[next(iter(_classes))]
                cls = type("HostMemory", (HostMemory, c_ubyte * size), {"__module__": __name__})
                _classes[size] = cls
    return cls


def host_memory(address: int | None, size: int) -> HostMemory:
    """The `size` bytes at `address` as a HostMemory (address 0 or None: an empty one at 0).

    The caller says that the memory is host-accessible and that it lives until freed;
    nothing is copied, nothing is owned.
    """
    if size < 0:
        raise ValueError(f"host memory size must be >= 0, not {size}")
    if not address:
        address, size = 0, 0
    memory: HostMemory = _class(size).from_address(address)
    memory._released_ = False
    return memory


def release(value: Any) -> None:
    """Mark a HostMemory freed (anything else: nothing to mark)."""
    if isinstance(value, HostMemory):
        value._release()


# Makes checking that a HostMemory is not released and releasing it one step (`claim`).
_release_lock = threading.Lock()


def claim(value: Any) -> None:
    """Before a free: release a HostMemory in one step with checking that it was not
    (ValueError, as `check`), so that of several threads freeing it only one reaches C.
    `unclaim` undoes it when C refuses the free. Anything else: nothing to mark."""
    if isinstance(value, HostMemory):
        with _release_lock:
            value.check()
            value._released_ = True


def unclaim(value: Any) -> None:
    """C refused the free `claim` released `value` for: the memory is usable again."""
    if isinstance(value, HostMemory):
        value._released_ = False


def like(address: int | None, given: Any) -> HostMemory | int:
    """What a call that maps `given` returns for `address`: `given` itself when it is a
    HostMemory at that very address (the same memory, freed with it), else the int."""
    if isinstance(given, HostMemory) and not given.released and given.address == address:
        return given
    return address or 0
