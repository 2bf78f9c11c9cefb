"""A driver kernel handle with a declared signature (TypedKernel, `typed`).

cuModuleGetFunction and cuLibraryGetKernel give a bare CUfunction or CUkernel: nothing
in it says what its parameters are, so the checked cuLaunchKernel takes a tuple for it
only as ctypes values, each its own C type (cudart._convert.ctypes_kernel_args). A
TypedKernel is that handle with the parameter types a signature declares, as
`get_function(name, signature=)` gives a Function: the driver's launch functions then
pack a tuple of Python values with those types, checked as Function.launch checks
them, and `pack` gives KernelArguments for graph kernel nodes. Where libcuda tells the
kernel's parameters (cuFuncGetParamInfo, driver 12.4+, for a CUfunction), the
declaration is checked against them before the first packing.
"""

from __future__ import annotations

from ctypes import c_void_p

from .._convert import handle_kind, refuse_destroyed
from .._paraminfo import driver_params
from ._launch import KernelArguments, ParamType, check_declared, pack, param_types

_FUNCTION, _KERNEL = "CUfunc_st", "CUkern_st"


class TypedKernel:
    """A CUfunction or CUkernel handle and its declared parameter types.

    Converts wherever C takes that handle (`_cuda_handle_`, `_as_parameter_`,
    `__int__`), so `cuLaunchKernel(k, grid..., block..., shared, stream, (x, ptr, n),
    None)` packs the tuple by the signature.
    """

    __module__ = "cudart.kernels"  # where users find it
    __slots__ = ("handle", "name", "_kind", "_types", "_params", "_checked")

    def __init__(self, handle, signature):
        kind = handle_kind(type(handle)) if isinstance(handle, c_void_p) else None
        if kind not in (_FUNCTION, _KERNEL):
            raise TypeError(
                "typed() takes a CUfunction or CUkernel handle (cuModuleGetFunction, "
                f"cuLibraryGetKernel), not {type(handle).__name__}"
            )
        refuse_destroyed(handle, "handle")
        if not handle.value:
            raise ValueError("typed(): a NULL kernel handle")
        self.handle = handle
        self.name = f"{type(handle).__name__} {handle.value:#x}"
        self._kind = kind
        self._types = param_types(signature)
        self._params = ...  # ... until asked: tuple of sizes, or None if unknowable
        self._checked = False

    def _cuda_handle_(self, kinds: tuple[str, ...]):
        refuse_destroyed(self.handle, "f")  # its module unloaded since
        if self._kind in kinds:
            return self.handle
        wanted = " or ".join(kinds)
        raise TypeError(f"{self.name} is a {type(self.handle).__name__}, not a {wanted} handle")

    @property
    def _as_parameter_(self) -> int:
        refuse_destroyed(self.handle, "f")
        return self.handle.value

    def __int__(self) -> int:
        return self.handle.value

    __index__ = __int__

    @property
    def param_types(self) -> tuple[ParamType, ...]:
        return self._types

    @property
    def param_sizes(self) -> tuple[int, ...] | None:
        """Each parameter's size in bytes, where libcuda tells them (a CUfunction,
        driver 12.4+), else None."""
        if self._params is ...:
            found = driver_params(self.handle.value) if self._kind == _FUNCTION else None
            self._params = None if found is None else tuple(size for _, size in found)
        return self._params

    def pack(self, *args) -> KernelArguments:
        """The arguments packed by the signature as `void **kernelParams`, checked as
        Function.launch checks them (kinds, C ranges, count)."""
        refuse_destroyed(self.handle, "f")
        params = self.param_sizes
        if not self._checked:
            check_declared(self.name, params, self._types)
            self._checked = True
        return pack(self.name, args, params, self._types)

    def __repr__(self) -> str:
        declared = ", ".join(t.text for t in self._types)
        return f"<cudart.kernels.TypedKernel {self.name} ({declared})>"


def typed(handle, signature) -> TypedKernel:
    """`handle` (a CUfunction or CUkernel) with the parameter types `signature`
    declares: C text (`"float, const float*, int"`, names allowed) or a sequence of
    ctypes types, as get_function(signature=) takes."""
    return TypedKernel(handle, signature)
