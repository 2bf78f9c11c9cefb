"""A kernel of a loaded image (Function): a handle the runtime takes, and launchable.

`launch` packs arguments into preallocated slots (cudart.kernels._launch.Signature) and calls
cudaLaunchKernelExC with a preallocated cudaLaunchConfig_t passed by pointer, the
fastest way peers measured from ctypes; per launch only the argument values and, if
they changed, the grid, block, shared memory and stream are written. Where
cudart.kernels._fastlaunch is built (and $CUDART_BACKEND is not "ctypes"), a Function's
`launch` is its Launcher's: a launch from the same thread whose arguments are of the
kinds of the previous one's (its Signature: ints, floats, bools, ctypes and NumPy
scalars, device arrays, HostMemory, KernelArguments, ...) is packed, configured (a new
grid, block, shared_mem, stream or cooperative flag included) and launched in C;
anything else, and anything C doubts, takes this module's Python `launch`
(`_launch_slow`), which raises as it always has and primes the Launcher again. `pack`
gives the
same packing as an object of its own (KernelArguments), for graph kernel nodes and the
launch functions that take `void **kernelParams`.

Parameter types: the kernel's declared signature (`get_function(name, signature=)`),
else its mangled name's (a C++ kernel), else its image's PTX declaration, else unknown
(cudart.kernels._launch).
"""

from __future__ import annotations

import ctypes
import threading
from typing import Any

from .. import _backend
from .._checked import call_error, check
from .._contract import symbol_of
from .._convert import stream_handle
from .._lasterror import internal_calls
from .._loader import load_runtime
from ._demangle import demangle, parameter_types
from ._launch import (
    KernelArguments,
    ParamType,
    Signature,
    Unpacked,
    check_declared,
    configure,
    pack,
    param_sizes,
    param_type,
    param_types,
    ptx_param_types,
    signature_for,
)

get_ident = threading.get_ident
# What a CUkernel / cudaKernel_t and a CUfunction / cudaFunction_t point at (the kinds of
# cudart._handles).
_KERNEL, _FUNCTION = "CUkern_st", "CUfunc_st"
# Taken to claim a Function's ownership: two threads that both saw no owner would
# otherwise both become it, and launch from the owner's one set of slots at once.
_claim = threading.Lock()
# A launch key no launch matches: the configuration holds nothing known, so the next
# launch writes it (launch's identity and equality checks).
_UNCONFIGURED = (None, None, None, None, None, None)


class Function:
    """A kernel of a loaded module.

    Usable as `func` in every raw runtime call that takes one (it converts to the
    handle through `_as_parameter_`, `__int__` and `__index__`), and launchable with
    `launch`.
    """

    __module__ = "cudart.kernels"  # where users find it

    def __init__(self, module, name: str, handle: int, signature=None, image_types=None):
        rt = module._rt
        self.module = module
        self.name = name
        self._rt = rt
        self._handle = handle
        self._func = ctypes.c_void_p(handle)
        self._config = rt.cudaLaunchConfig_t()
        self._config_ptr = ctypes.c_void_p(ctypes.addressof(self._config))
        self._cooperative = rt.cudaLaunchAttribute()
        self._cooperative.id = rt.cudaLaunchAttributeCooperative
        self._cooperative.val.cooperative = 1
        self._config.attrs = ctypes.pointer(self._cooperative)
        # The last launch's (grid, block, shared_mem, stream, cooperative) and the class
        # its stream was of when converted; none yet. A checked destroy changes a stream
        # object's class (cudart._handles), so a key of that object or of an equal one
        # no longer matches, and the launch converts it again, which refuses it.
        self._key: tuple[Any, ...] = _UNCONFIGURED
        self._sig = Unpacked
        self._signatures: dict[tuple, Signature] = {}
        self._params: Any = ...  # ... until asked: tuple of sizes, or None if unknowable
        self._declared = signature is not None
        self._types: tuple[ParamType, ...] | None
        if signature is not None:
            self._types = param_types(signature)
        else:
            texts = parameter_types(name)
            self._types = None if texts is None else tuple(param_type(t) for t in texts)
            if self._types is None and image_types is not None:
                self._types = ptx_param_types(image_types)
        self._owner = None
        self._launch = self._launcher(rt)
        self._fast = None
        fast = _backend.launcher_module()
        if fast is not None:
            self._fast = fast.Launcher(
                ctypes.cast(self._launch, ctypes.c_void_p).value,
                self._config,
                ctypes.addressof(self._config),
                self._func,
                ctypes.addressof(self._func),
                self._launch_slow,
                self._fail,
            )
            # The instance's launch is the C one (Function.launch stays the Python one).
            self.__dict__["launch"] = self._fast.launch

    @staticmethod
    def _launcher(rt):
        # The symbol in force, so launches follow the per-thread default stream switch;
        # indexing gives a private function object whose argtypes no one else sets.
        launch = load_runtime().cdll[symbol_of(rt, "cudaLaunchKernelExC")]
        # No argtypes: every argument is a prebuilt ctypes object, so nothing is converted.
        launch.argtypes = None
        launch.restype = ctypes.c_int
        return launch

    # -- the handle
    @property
    def handle(self) -> int:
        if self._handle is None:
            raise ValueError(f"kernel {self.name!r}: its module is closed")
        return self._handle

    def __int__(self) -> int:
        return self.handle

    __index__ = __int__

    @property
    def _as_parameter_(self) -> int:
        return self.handle

    def _cuda_handle_(self, kinds: tuple[str, ...]):
        """The handle of one of `kinds` (cudart._handles kinds) this kernel is, for a
        call that takes a handle rather than a runtime `func` (cudart._convert.handle):
        the driver's CUkernel ("CUkern_st") or CUfunction ("CUfunc_st"), as the
        runtime's cudaKernel_t or cudaFunction_t. The library route's handle is a
        cudaKernel_t already (its CUfunction the driver's cuKernelGetFunction gives);
        the registration route's is a host entry address, whose
        CUfunction cudaGetFuncBySymbol finds (in the current device's context, asked
        each time: a context per device) and whose CUkernel cudaGetKernel does."""
        handle, rt = self.handle, self._rt
        library = getattr(self.module, "route", None) == "library"
        if _KERNEL in kinds and (library or _FUNCTION not in kinds):
            if library:
                return rt.cudaKernel_t(handle)
            if not hasattr(rt, "cudaKernel_t"):
                raise TypeError(
                    f"kernel {self.name!r} has no CUkernel on the CUDA {rt.CUDA_VERSION} "
                    "runtime: cudaGetKernel is CUDA 12.1+"
                )
            return self._look_up(rt.cudaKernel_t, "cudaGetKernel", handle)
        if _FUNCTION in kinds:
            if library:
                return rt.cudaFunction_t(int(self._driver_function(handle)))
            return self._look_up(rt.cudaFunction_t, "cudaGetFuncBySymbol", handle)
        wanted = " or ".join(kinds)
        raise TypeError(f"kernel {self.name!r} is a device function, not a {wanted} handle")

    @staticmethod
    def _driver_function(kernel: int):
        """A library kernel's CUfunction in the current context: cuKernelGetFunction
        (cudaGetFuncBySymbol takes host entry addresses only, not a cudaKernel_t)."""
        from .._serving import driver_modules

        return driver_modules()[1].cuKernelGetFunction(kernel)

    def _look_up(self, cls, function: str, handle: int):
        found = cls()
        with internal_calls(self._rt):  # cudart's conversion, not the program's call
            status = getattr(self._rt, function)(ctypes.byref(found), handle)
        check(self._rt, f"{function} of {self.name!r}", status)
        return found

    def _invalidate(self):
        self._handle = None
        # A stale handle could reach freed driver memory (library route), and the
        # runtime accepts a NULL one from cudaLaunchKernelExC on 12.x: launch nothing.
        self._func.value = None
        self._launch = self._closed
        if self._fast is not None:
            self._fast.prime(None)  # every launch takes the Python path, which raises

    def _closed(self, *args):
        raise ValueError(f"kernel {self.name!r}: its module is closed")

    def __repr__(self):
        state = "closed" if self._handle is None else f"{self._handle:#x}"
        return f"<cudart.kernels.Function {self.name} ({state})>"

    @property
    def demangled(self) -> str | None:
        """The C++ signature of a mangled kernel name (`square(float*, int)`), else None."""
        return demangle(self.name)

    # -- what the runtime knows of it
    def attributes(self):
        """cudaFuncGetAttributes for this kernel (a cudaFuncAttributes struct)."""
        attrs = self._rt.cudaFuncAttributes()
        check(
            self._rt,
            "cudaFuncGetAttributes",
            self._rt.cudaFuncGetAttributes(ctypes.byref(attrs), self.handle),
        )
        return attrs

    # Threads: param_sizes and _checked_params compute a value that is the same whoever
    # computes it (two racing threads may both ask the runtime, and both check a declared
    # signature): no lock. Which thread owns the shared slots is claimed under _claim.
    @property
    def param_sizes(self) -> tuple[int, ...] | None:
        """Each parameter's size in bytes, or None where neither runtime nor driver can tell."""
        if self._params is ...:
            self._params = param_sizes(self._rt, load_runtime().cdll, self.handle, self.name)
        return self._params

    @property
    def param_types(self) -> tuple[ParamType, ...] | None:
        """What is known of each parameter's type: from the declared signature, else
        from a C++ kernel's mangled name, else from the image's PTX (`.u32`, `.f32`,
        ...); None for an `extern "C"` kernel of an image without PTX declared without
        one (then ints pack by the parameter's size and a Python float is refused)."""
        return self._types

    def _checked_params(self):
        """The parameter sizes, with a declared signature checked against them once."""
        params = self.param_sizes
        if self._declared:
            check_declared(self.name, params, self._types)
            self._declared = False
        return params

    # -- packing and launching
    def pack(self, *args) -> KernelArguments:
        """The arguments packed as `void **kernelParams` in slots of their own: a
        KernelArguments, for `cudaKernelNodeParams.kernelParams`, the checked
        cudaLaunchKernel / cudaLaunchCooperativeKernel, or any raw call taking them.
        Checked as `launch` checks its arguments."""
        self.handle  # noqa: B018 - a closed module's kernel packs nothing
        return pack(self.name, args, self._checked_params(), self._types)

    def launch(
        self, grid, block, *args, shared_mem: int = 0, stream=None, cooperative: bool = False
    ) -> None:
        """Launch on `grid` x `block` (ints or 1-3 tuples) with `args`; raises on failure.

        `stream` is None (the default stream), an int, a cudaStream_t, or an object
        with `__cuda_stream__`, `_as_parameter_` or `__int__`. `cooperative=True` makes
        it a cooperative launch (as cudaLaunchCooperativeKernel).

        Where the parameter types are known (`param_types`), a float for a pointer or
        an integer parameter, or an int for a floating-point one, is a TypeError, and an
        int out of the C type's range an OverflowError. Where they are not, an int packs
        as an integer of the parameter's size and a Python float is a TypeError (pass
        numpy.float32(x) or ctypes.c_float(x), or declare `signature=`). A refused
        launch changes nothing: the next one runs with its own configuration.
        """
        if get_ident() != self._owner:
            return self._launch_from_other_thread(
                grid, block, args, shared_mem, stream, cooperative
            )
        sig = self._sig
        try:
            sig.pack(*args)
            for k, cls in sig.classes:  # what struct would take in their place: not here
                if args[k].__class__ is not cls:
                    raise TypeError
        except Exception:
            sig = self._repack(args)
        key = self._key
        # Identity first: a launch loop passes the same objects, and `is` is cheapest
        # (an equal value that is another object takes the tuple comparison below).
        if (
            grid is not key[0]
            or block is not key[1]
            or stream is not key[3]
            or stream.__class__ is not key[5]
            or shared_mem is not key[2]
            or cooperative is not key[4]
        ):
            given = (grid, block, shared_mem, stream, cooperative, stream.__class__)
            if given != key:
                configure(self._config, grid, block, shared_mem, stream, cooperative)
            self._key = given
        status = self._launch(self._config_ptr, self._func, sig.argv)
        if status:
            self._fail(status)

    def _repack(self, args):
        types = tuple(map(type, args))
        sig = self._signatures.get(types)
        if sig is None:
            sig = self._new_signature(args)
            self._signatures[types] = sig
        sig.pack_checked(args)
        self._sig = sig
        if self._fast is not None and getattr(sig, "fast", None) is not None:
            # Arguments the C launcher can pack again: it takes the launches back (the
            # next one primes it, through _launch_slow).
            self.__dict__["launch"] = self._fast.launch
        return sig

    def _new_signature(self, args):
        return signature_for(self.name, args, self._checked_params(), self._types)

    def _launch_from_other_thread(self, grid, block, args, shared_mem, stream, cooperative):
        if self._owner is None:
            with _claim:
                if self._owner is None:
                    self._owner = get_ident()
        if self._owner == get_ident():
            return Function.launch(
                self,
                grid,
                block,
                *args,
                shared_mem=shared_mem,
                stream=stream,
                cooperative=cooperative,
            )
        # Another thread's launch may be reading the shared slots right now (ctypes
        # releases the GIL), so this launch packs into its own.
        sig = self._new_signature(args)
        sig.pack_checked(args)
        config = self._rt.cudaLaunchConfig_t()
        configure(config, grid, block, shared_mem, stream, cooperative)
        config.attrs = ctypes.pointer(self._cooperative)
        status = self._launch(ctypes.c_void_p(ctypes.addressof(config)), self._func, sig.argv)
        if status:
            self._fail(status)

    def _launch_slow(
        self, grid, block, *args, shared_mem: int = 0, stream=None, cooperative: bool = False
    ) -> None:
        """The C launcher's Python path: `launch` as written above, then the Launcher
        primed with what that left (the Signature and the configuration's key), which
        holds whether the launch was refused or not. The defaults are the C side's.

        A refused launch leaves the slots as they were: struct's pack_into zeroes and
        partly writes its buffer before it refuses a value, so they are restored."""
        fast = self._fast
        if fast is not None and get_ident() == self._owner:
            # C's launches configure by themselves: its key says what the configuration
            # holds. Unprimed (another thread may have dropped C's state after C's last
            # launch), nothing says: the launch configures.
            key = fast.key
            self._key = _UNCONFIGURED if key is None else key
        sig: Any = self._sig  # only the owner's launches write these slots
        owner = sig is not Unpacked and get_ident() == self._owner
        buffer = sig._buffer if owner else None
        saved = buffer.raw if buffer is not None else b""
        try:
            Function.launch(
                self,
                grid,
                block,
                *args,
                shared_mem=shared_mem,
                stream=stream,
                cooperative=cooperative,
            )
        except BaseException:
            if buffer is not None and self._sig is sig:
                ctypes.memmove(buffer, saved, len(saved))
            raise
        finally:
            self._prime()

    def _prime(self):
        if get_ident() != self._owner:
            return  # another thread's launch used slots of its own
        sig = self._sig
        fast = getattr(sig, "fast", None)  # Unpacked: no Signature yet
        if fast is None or self._handle is None:
            if self._fast.primed:
                self._fast.prime(None)
            if fast is None and sig is not Unpacked:
                # Arguments only Python packs (ctypes objects, device arrays, ...): the
                # Python launch serves them directly, without the C launcher's detour,
                # until _repack meets arguments C packs again.
                self.__dict__.pop("launch", None)
        else:
            self._fast.prime(self._key, sig, sig.argv.value or 0, fast, self._stream_class())

    def _stream_class(self):
        """The class of the configured stream where it is a handle the Python path takes
        (then it takes every one of its class: a destroyed one is of another), for C to
        take too; None for anything else. The key's stream may be one equal to a stream
        configured before, never converted itself: converted here."""
        stream = self._key[3]
        if not isinstance(stream, ctypes.c_void_p):
            return None
        try:
            stream_handle(stream)
        except Exception:  # noqa: BLE001 - refused: C leaves its class to Python
            return None
        return type(stream)

    def _fail(self, status):
        if self._handle is None:
            raise ValueError(f"kernel {self.name!r}: its module is closed")
        raise call_error(self._rt, f"launching {self.name!r} (cudaLaunchKernelExC)", status)


# A call the Python path refuses by its signature (an unknown keyword, a missing grid)
# names the function called, which through C is _launch_slow: it says Function.launch,
# as without the C launcher.
Function._launch_slow.__qualname__ = "Function.launch"
