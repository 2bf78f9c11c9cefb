"""The base of every generated handle class (cudaStream_t, cudaEvent_t, ...).

A handle is a `c_void_p` subclass, so ctypes passes it as a `c_void_p` argument with no
conversion, and C's size and alignment hold. On top of that it is a value: `int(h)` is
its address (0 for NULL), `bool(h)` is false for NULL, `==` and `hash` go by kind and
address (so handles are dict keys), and the repr shows both (`<cudaStream_t 0x7b>`).
The kind is the class name, as in argument conversion (cudart._convert.handle): one
version's module's cudaStream_t equals another's at the same address.

ctypes gives a handle, not an int, for a struct field or array item of a handle type,
and that handle is a view of the field's memory: it reads what the field holds now.
Standard library only.
"""

from __future__ import annotations

from ctypes import c_void_p


class Handle(c_void_p):
    """An opaque CUDA handle: a value made of its kind (the class name) and address."""

    # The names of the handle kinds that C converts to this one implicitly: for a
    # `const T` handle, its `T` twin (cudaArray_const_t accepts cudaArray_t). The
    # generator sets it from the model; cudart._convert.handle reads it.
    _accepts_: tuple[str, ...] = ()

    def __int__(self) -> int:
        return self.value or 0

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Handle):
            return NotImplemented
        same_kind = type(self).__name__ == type(other).__name__
        return same_kind and (self.value or 0) == (other.value or 0)

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.value or 0))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.value or 0:#x}>"

    # bool(h): c_void_p's own, false when the address is NULL.


class StreamHandle(Handle):
    """A cudaStream_t: also the CUDA stream protocol, which PyTorch, CuPy and
    cuda-bindings accept for a stream."""

    def __cuda_stream__(self) -> tuple[int, int]:
        return (0, self.value or 0)
