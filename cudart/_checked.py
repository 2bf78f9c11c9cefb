"""What the generated checked modules call: argument conversion, binding, errors.

The generated code converts inline on the fast path (an int pointer, a handle object
of the right type) and calls these only for everything else, so a call with the usual
argument types costs no extra Python call. The conversions themselves live in
cudart._convert, shared with kernel launches. Standard library only.
"""

from __future__ import annotations

import ctypes
import sys
import threading
from collections import deque
from ctypes import ArgumentError, byref
from functools import WRAPPER_ASSIGNMENTS, update_wrapper

from . import _contract, _handles, _hostmem, _lazy
from ._backend import compiled_for
from ._binding import CudaDeprecationWarning, bind_symbol, warn_deprecated
from ._contract import library_of_namespace, symbol_of
from ._convert import (  # size relations: generator/sizes.py
    POINTER_SIZE,
    AttributeTable,
    AttributeValue,
    address,
    address_error,
    argument_buffer,
    attribute_result,
    attribute_results,
    attribute_size,
    attribute_storage,
    attribute_storages,
    attribute_value,
    cstring,
    device_function,
    device_pointer,
    dim3,
    driver_function,
    elements,
    enum_argument,
    filled_ref,
    function_pointer,
    handle,
    image,
    image_file,
    integer,
    integer_handle,
    is_python_callable,
    kernel_args,
    pointer,
    ref,
    regions,
    rows,
    shareable_handle,
    shareable_handle_storage,
    span,
)
from ._handles import Handle, integer_handle_class, mark_destroyed
from ._hostmem import HostMemory
from ._jitoptions import (  # typed option lists: generator/jit_options.py
    OptionsWritten,
    OptionTable,
    OptionValue,
    keep_options,
    options_in,
    with_written,
    written,
)
from ._threadlocale import keeping_thread_locale
from .errors import CudaError, StatusError

__all__ = [
    "address_error",
    "enum_argument",
    "filled_ref",
    "integer",
    "device_pointer",
    "ArgumentError",
    "CudaError",
    "CudaDeprecationWarning",
    "argument_error",
    "argument_buffer",
    "AttributeTable",
    "AttributeValue",
    "attribute_result",
    "attribute_results",
    "attribute_size",
    "attribute_storage",
    "attribute_storages",
    "attribute_value",
    "shareable_handle",
    "shareable_handle_storage",
    "bind_on_first_call",
    "byref",
    "call_error",
    "callback",
    "callback_record",
    "callback_record_class",
    "claim",
    "cstring",
    "strings",
    "destroyed",
    "device_function",
    "dim3",
    "driver_function",
    "enum_value",
    "error",
    "error_class",
    "status_error",
    "status_error_class",
    "handle",
    "callback_held",
    "holder_copied",
    "holder_destroyed",
    "host_freed",
    "host_memory",
    "host_memory_like",
    "host_node_added",
    "integer_handle",
    "integer_handle_of",
    "kernel_args",
    "pointer",
    "ref",
    "release",
    "unclaim",
    "warn_deprecated",
]
__all__ += [
    "OptionTable",
    "OptionValue",
    "OptionsWritten",
    "keep_options",
    "options_in",
    "with_written",
    "written",
]
__all__ += [
    "POINTER_SIZE",
    "address",
    "elements",
    "function_pointer",
    "image",
    "image_file",
    "regions",
    "rows",
    "span",
]


# For type checkers only: importing typing costs milliseconds `import cudart` avoids.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar

    _E = TypeVar("_E")
    _R = TypeVar("_R", bound=ctypes.Structure)  # an over-aligned record (none is a union)

    # The generated modules' annotations name these through this module.
    from collections.abc import Callable

    from ._convert import HandleLike as HandleLike
    from ._convert import PointerLike as PointerLike
    from ._jitoptions import OptionsLike as OptionsLike

    # A callback parameter: a Python callable, or a C function pointer (an int address,
    # a ctypes function pointer, None).
    CallbackLike = Callable[..., object] | int | None


# ---------------------------------------------------------------- binding


# The functions that leave the calling thread on another C locale (cudart._threadlocale):
# the checked layer puts it back, as cudart.compile does; the raw layer calls C as is.
_SWITCH_THREAD_LOCALE = frozenset({("nvrtc", "nvrtcCompileProgram")})


class _Unbound:
    """Stands for `_<name>` (or `_<name>_out`, with `outputs`) in a checked module until
    its first call binds it."""

    __slots__ = ("namespace", "lib", "name", "restype", "argtypes", "outputs")

    def __init__(
        self,
        namespace: dict,
        lib: Any,
        name: str,
        restype: Any,
        argtypes: tuple,
        outputs: tuple[int, ...] = (),
    ) -> None:
        self.namespace = namespace
        self.lib = lib
        self.name = name
        self.restype = restype
        self.argtypes = argtypes
        self.outputs = outputs

    def __call__(self, *args: Any) -> Any:
        # The raw module's symbol in force (legacy or per-thread), and no deprecation
        # wrapper: the checked function warns itself.
        symbol = symbol_of(self.lib, self.name)
        if symbol is None:  # the generator writes both tables from one model
            raise LookupError(f"{self.lib.__name__} declares no function {self.name}")
        library = library_of_namespace(vars(self.lib))
        inline = vars(self.lib).get("_PER_THREAD_INLINES", {}).get(symbol)
        fn = bind_symbol(
            self.name,
            symbol,
            self.restype,
            self.argtypes,
            self.lib.__name__,
            self.lib.CUDA_VERSION,
            library=library,
            storage=True,
            outputs=self.outputs,
            inline=inline,
        )
        per_stream = _REPORTS_CALLBACK_FAILURES.get(self.name)
        if per_stream is not None:
            fn = _reporting_callback_failures(fn, per_stream)
        if (library, self.name) in _SWITCH_THREAD_LOCALE:
            fn = keeping_thread_locale(fn)
        # Threads that race on the first call each bind (equivalent functions, whole
        # before they are stored); whichever is stored last serves the later calls.
        self.namespace["_" + self.name + ("_out" if self.outputs else "")] = fn
        return fn(*args)


# The checked calls that wait for (or look at) a stream's work, after which a host
# callback's exception is raised (cudart.callbacks.report_failures): True where it is
# the first argument's stream's callbacks, False where every stream's.
_REPORTS_CALLBACK_FAILURES = {
    "cudaStreamSynchronize": True,
    "cudaStreamQuery": True,
    "cudaDeviceSynchronize": False,
    "cudaThreadSynchronize": False,
    "cudaEventSynchronize": False,
    "cudaEventQuery": False,
}
_CALLBACKS = __package__ + ".callbacks"
# cudart.callbacks' host-callback failures not raised yet, oldest first: it records and
# takes them; the waits below only look whether there are any, so the common call pays
# one truth test, no look-up of the callbacks module (only it appends here).
CALLBACK_FAILURES_KEPT = 256
CALLBACK_FAILURES_UNRAISED: deque[Any] = deque(maxlen=CALLBACK_FAILURES_KEPT)


def _reporting_callback_failures(fn: Any, per_stream: bool) -> Any:
    def call(*args: Any) -> Any:
        status = fn(*args)
        if CALLBACK_FAILURES_UNRAISED:
            report = sys.modules[_CALLBACKS].report_failures
            if per_stream:
                report(status, args[0])
            else:
                report(status)
        return status

    call.__wrapped__ = fn  # type: ignore[attr-defined]  # what it calls, for inspection
    return call


def bind_on_first_call(namespace: dict, lib: Any, table: dict) -> None:
    """Put into a checked module's namespace, as `_<name>`, a stand-in for each
    function of `table` ({name: (restype, argtypes[, outputs])}) that binds it on its
    first call; with outputs (the compiled backend's), also `_<name>_out`. The stand-ins
    stay in `_UNBOUND` ({`_<name>`: stand-in}): what a binding replaced, with its types."""
    stand_ins = namespace.setdefault("_UNBOUND", {})
    for name, (restype, argtypes, *outputs) in table.items():
        stand_ins["_" + name] = _Unbound(namespace, lib, name, restype, argtypes)
        if outputs:
            stand_ins["_" + name + "_out"] = _Unbound(
                namespace, lib, name, restype, argtypes, outputs[0]
            )
    namespace.update(stand_ins)


def report_callback_failures(name: str, status: int, first: Any) -> None:
    """After the compiled checked `name` waited: raise a host callback's failure as the
    wrapper `_<name>` of the reference does (`_reporting_callback_failures`)."""
    report = sys.modules[_CALLBACKS].report_failures
    if _REPORTS_CALLBACK_FAILURES[name]:
        report(status, first)
    else:
        report(status)


def compile_checked(namespace: dict, lib: Any) -> None:
    """Where the compiled backend serves `lib` and its extension has the checked functions
    in C (issue 23): bind a checked module's public names to them. The Python functions
    stay, as `_reference` (name -> function): each C function calls its own for
    whatever its happy path does not take, and the ctypes backend calls them."""
    fast = compiled_for(library_of_namespace(vars(lib)), lib.CUDA_VERSION)
    install = getattr(fast, "checked", None)
    if install is None:
        return
    reference = namespace.get("_reference")
    if reference is None:
        module = namespace["__name__"]
        reference = {
            name: value
            for name, value in namespace.items()
            if type(value) is _FUNCTION and value.__module__ == module
        }
        namespace["_reference"] = reference
    namespace.update(compiled_functions(install, reference, namespace))


def compiled_functions(install: Any, reference: dict, namespace: dict) -> dict:
    """The C functions an extension's `checked` makes for a checked module's `reference`
    functions, each with its reference's name, docs and annotations, and the reference
    as __wrapped__: inspect.signature, help() and inspect.getsource see the Python
    function's."""
    compiled = install(reference, sys.modules[__name__], namespace)
    for name, fn in compiled.items():
        update_wrapper(fn, reference[name], assigned=_WRAPPER_ASSIGNED)
    return compiled


# 3.14's update_wrapper copies __annotate__ instead of __annotations__, from which only a
# function derives the other: a compiled function takes both.
_WRAPPER_ASSIGNED = tuple(dict.fromkeys((*WRAPPER_ASSIGNMENTS, "__annotations__")))


_FUNCTION = type(compile_checked)


def compiled(lib: Any) -> bool:
    """Whether the compiled backend calls the functions of the raw module `lib`."""
    return compiled_for(library_of_namespace(vars(lib)), lib.CUDA_VERSION) is not None


# ---------------------------------------------------------------- errors

_classes: dict[int, type[CudaError]] = {}
_classes_lock = threading.Lock()


def error_class(code: int, enum: Any) -> type[CudaError]:
    """The CudaError subclass for a code: CudaErrorMemoryAllocation for 2, and so on.

    One class per code for the whole process, made on first use, so `except` clauses
    written against one version's module catch errors raised through another.
    """
    cls = _classes.get(code)
    if cls is not None:
        return cls
    try:
        member = enum(code)
    except ValueError:
        return CudaError
    name = "Cuda" + member.name[4:] if member.name.startswith("cuda") else member.name
    with _classes_lock:
        cls = _classes.get(code)
        if cls is None:
            cls = type(
                name, (CudaError,), {"__module__": "cudart", "__doc__": f"{member.name} ({code})."}
            )
            _classes[code] = cls
    return cls


def error_class_named(name: str, enum: Any, base: type[Exception] = CudaError) -> type[Any]:
    """`CudaErrorMemoryAllocation` -> its class; AttributeError for an unknown name.
    Another family's (`NvrtcErrorInvalidOption`, base NvrtcError) by its enum."""
    if base is not CudaError:
        for member in enum:
            if status_class_name(member.name, enum, base) == name:
                return status_error_class(int(member), enum, base)
        raise AttributeError(name)
    member = getattr(enum, "cuda" + name[4:], None) if name.startswith("Cuda") else None
    if member is None:
        raise AttributeError(name)
    return error_class(int(member), enum)


# ---------------------------------------------------------------- other families' errors
#
# A header family other than the runtime (NVRTC) has its own status enum and exception
# base (generator/status.py decides which): one subclass per (base, code), named the way
# the generator names them for type checkers.

_status_classes: dict[tuple[type, int], type] = {}


def aligned(cls: type[_R]) -> _R:
    """A zeroed instance of a record C aligns beyond what Python's allocator gives
    (CUtensorMap: 64 bytes in 12.x, 128 in 13.x), at an address of that alignment: its
    memory is a bytearray one alignment longer, which the instance keeps alive."""
    align, size = ctypes.alignment(cls), ctypes.sizeof(cls)
    memory = bytearray(size + align)
    start = ctypes.addressof((ctypes.c_char * len(memory)).from_buffer(memory))
    return cls.from_buffer(memory, -start % align)


def status_class_name(enumerator: str, enum: Any, base: type[Exception]) -> str:
    """The class of one code, as generator/status.py names it: the base's name + the
    code's words after its family's prefix (the driver's CUDA_ERROR_INVALID_VALUE ->
    CudaDriverErrorInvalidValue, NVRTC_ERROR_COMPILATION -> NvrtcErrorCompilation)."""
    return _contract.status_class_name(enumerator, enum(0).name, base.__name__)


def status_error_class(code: int, enum: Any, base: type[Exception]) -> type[Any]:
    cls = _status_classes.get((base, code))
    if cls is not None:
        return cls
    try:
        member = enum(code)
    except ValueError:
        return base
    with _classes_lock:
        cls = _status_classes.get((base, code))
        if cls is None:
            cls = type(
                status_class_name(member.name, enum, base),
                (base,),
                {"__module__": "cudart", "__doc__": f"{member.name} ({code})."},
            )
            _status_classes[(base, code)] = cls
    return cls


def status_error(
    enum: Any,
    base: type[Exception],
    message_function: str | None,
    name_function: str | None = None,
    written: bool = False,
    docs: dict[str, str] | None = None,
) -> Any:
    """The `_error(code, lib)` of a checked module whose family's status is `enum`:
    the subclass of `base` for the code, with the library's name and message for it.
    A message or name function returns its text (nvrtcGetErrorString) or, taking a
    `const char **` after the code, writes it there and returns a status of its own
    (`written`: the driver's cuGetErrorString and cuGetErrorName; a stub libcuda fails
    them, and the enumerator's name stands, with its description from the header,
    `docs` by enumerator name, as the message)."""
    docs = docs or {}

    def text(lib: Any, function: str | None, code: int) -> str | None:
        if function is None:
            return None
        fn = getattr(lib, function)
        if not written:
            found = fn(code)
            return found.decode(errors="replace") if found else None
        out = ctypes.c_char_p()
        if fn(code, byref(out)) or not out.value:
            return None
        return out.value.decode(errors="replace")

    def error(code: int, lib: Any) -> Exception:
        cls = status_error_class(code, enum, base)
        try:
            member: Any = enum(code)
            name = member.name
        except ValueError:
            member, name = code, f"{enum.__name__} {code}"
        message = text(lib, message_function, code) or docs.get(name, "")
        name = text(lib, name_function, code) or name
        return cls(member, name, message)

    return error


def error(code: int, lib: Any) -> CudaError:
    """The exception for a failed call, with the runtime's own name and message."""
    enum = lib.cudaError
    cls = error_class(code, enum)
    try:
        member: Any = enum(code)
    except ValueError:
        member = code
    name = lib.cudaGetErrorName(code)
    message = lib.cudaGetErrorString(code)
    return cls(
        member,
        name.decode() if name else f"cudaError {code}",
        message.decode() if message else "",
    )


def call_error(lib: Any, call: str, status: int) -> CudaError:
    """The exception for a failed call made outside the checked functions (kernel
    loading and launching, occupancy), noting which call failed."""
    exc = error(status, lib)
    exc.add_note(f"while {call}")
    return exc


def check(lib: Any, call: str, status: int) -> None:
    if status:
        raise call_error(lib, call, status)


def argument_error(exc: ArgumentError, function: str, names: tuple[str, ...]) -> TypeError:
    """ctypes' "argument 2: TypeError: ..." as a TypeError naming the parameter."""
    text = str(exc)
    head, _, rest = text.partition(":")
    try:
        index = int(head.split()[-1]) - 1
        name = names[index]
    except (ValueError, IndexError):
        return TypeError(f"{function}(): {text}")
    rest = rest.strip()
    if rest.startswith("TypeError:"):
        rest = rest[len("TypeError:") :].strip()
    return TypeError(f"{function}() argument '{name}': {rest}")


# ---------------------------------------------------------------- arguments


def strings(values: list | tuple, count: Any, name: str) -> Any:
    """A list or tuple of str/bytes as C's `const char *const *`: a c_char_p array,
    which the caller keeps until C returns. ValueError where an item holds a NUL (C
    would cut it short) or the array is shorter than `count`, which C reads."""
    items = []
    for i, value in enumerate(values):
        item = cstring(value, f"{name}[{i}]") if value is not None else None
        if item is None:
            raise TypeError(f"'{name}[{i}]' must be str or bytes, not None")
        if b"\0" in item:
            raise ValueError(f"'{name}[{i}]' contains a NUL byte, where C would cut it short")
        items.append(item)
    if count.__class__ is int and count > len(items):
        raise ValueError(f"'{name}' holds {len(items)} string(s), and C reads {count}")
    return (ctypes.c_char_p * max(len(items), 1))(*items)


# ---------------------------------------------------------------- results


def enum_value(enum: type[_E], value: int) -> _E:
    """The enum member for a value the runtime wrote, or the int if the enum lacks it
    (typed as the enum: an IntEnum member is an int, and a newer runtime's value is
    what the caller would compare it with)."""
    try:
        return enum(value)  # type: ignore[call-arg]  # an IntEnum class, called with its value
    except ValueError:
        return value  # type: ignore[return-value]


def borrowed(address: int | None, ctype: Any, count: int) -> list[Any] | None:
    """`count` items of the runtime's own array at `address` (None where it gave none)."""
    if not address:
        return None if count else []
    items = ctypes.cast(address, ctypes.POINTER(ctype))[:count]
    if isinstance(ctype, type) and issubclass(ctype, Handle):
        # ctypes gives views of the runtime's memory, which it may reuse: copies.
        return [ctype(item.value) for item in items]
    return list(items)


def string(value: bytes | None) -> str | None:
    return None if value is None else value.decode(errors="replace")


def text(value: bytes | None) -> str:
    """The runtime's own static text (cudaGetErrorName, cudaGetErrorString), which C
    never gives as NULL; "" if it did."""
    return "" if value is None else value.decode(errors="replace")


def deprecated(name: str, replacement: str | None) -> None:
    # Shared with the raw layer: the first call through either layer warns, once.
    warn_deprecated(name, replacement, stacklevel=3)


# ---------------------------------------------------------------- callbacks
#
# Python callables as cudaHostFn_t / cudaStreamCallback_t and in cudaHostNodeParams:
# cudart.callbacks does it (registry, trampolines, failures), imported on first use
# (logging and traceback are not worth paying for at import).


def callback(fn: Any, data: Any, kind: str, lib: Any, names: tuple[str, str], *stream: Any) -> Any:
    """(fn, data, token) for a callback parameter and its data; token 0: none registered."""
    return _lazy.module(".callbacks").callback_argument(fn, data, kind, lib, names, *stream)


def callback_record(value: Any, cls: Any, lib: Any, name: str) -> Any:
    """(argument, token) for a `const T *` to a record holding a cudaHostFn_t."""
    return _lazy.module(".callbacks").record_argument(value, cls, lib, name)


def callback_record_class(base: Any) -> Any:
    """A subclass of a raw record with a cudaHostFn_t `fn` whose `fn` also takes a
    Python callable, called with `userData` (any object then): the checked layer's
    `cudaHostNodeParams`. The raw layer takes it as the record it is (`fn` NULL).

    Filled as C fills it, field by field, in either order: `userData` given before a
    Python `fn` is that callable's data (an object C cannot hold waits for `fn`)."""
    fn_type = dict(base._fields_)["fn"]

    class record(base):
        # _python_fn_: (callable, data) once fn is a Python callable (cudart.callbacks
        # reads it); _python_data_: userData no C field can hold, waiting for such an fn.
        __slots__ = ("_python_fn_", "_python_data_")

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            object.__setattr__(self, "_python_fn_", None)
            object.__setattr__(self, "_python_data_", None)
            fields = [f[0] for f in base._fields_]
            given = dict(zip(fields, args, strict=False))
            given.update(kwargs)
            fn = given.pop("fn", None)
            data = given.pop("userData", None)
            base.__init__(self, **given)
            if data is not None:
                self.userData = data
            if fn is not None:
                self.fn = fn

        def __setattr__(self, name: str, value: Any) -> None:
            if name == "fn":
                self._set_fn(value)
            elif name == "userData":
                self._set_data(value)
            else:
                base.__setattr__(self, name, value)

        def _data(self) -> Any:
            held = self._python_fn_
            if held is not None:
                return held[1]
            if self._python_data_ is not None:
                return self._python_data_
            return base.userData.__get__(self, base)

        def _set_fn(self, value: Any) -> None:
            data = self._data()
            if is_python_callable(value):
                base.fn.__set__(self, fn_type())  # NULL: the raw layer's view of it
                base.userData.__set__(self, None)
                object.__setattr__(self, "_python_data_", None)
                object.__setattr__(self, "_python_fn_", (value, data))
                return
            if value is None:  # no function yet: the data waits, as userData before fn
                base.fn.__set__(self, fn_type())
                object.__setattr__(self, "_python_fn_", None)
                self._set_data(data)
                return
            try:  # a C function gets userData as C holds it: an address or memory
                base.userData.__set__(self, data)
            except TypeError:
                raise TypeError(
                    f"{base.__name__}.userData is a {type(data).__name__}: a C function "
                    "pointer as fn takes an address or memory as its data (a Python "
                    "callable takes any object)"
                ) from None
            base.fn.__set__(self, value)
            object.__setattr__(self, "_python_fn_", None)
            object.__setattr__(self, "_python_data_", data)

        def _set_data(self, value: Any) -> None:
            held = self._python_fn_
            if held is not None:
                object.__setattr__(self, "_python_fn_", (held[0], value))
                return
            # Kept as given for a Python fn to come; C holds it where it can (an address
            # or memory, for a C fn).
            try:
                base.userData.__set__(self, value)
            except TypeError:
                base.userData.__set__(self, None)
            object.__setattr__(self, "_python_data_", value)

    record.__name__ = record.__qualname__ = base.__name__
    record.__module__ = base.__module__
    record.__doc__ = base.__doc__
    return record


def release(token: int) -> None:
    """Forget what a failed call registered (nothing for token 0)."""
    if token:
        _lazy.module(".callbacks").unregister(token)


# ---------------------------------------------------------------- host memory
#
# The outputs and frees generator/lifetimes.py names: cudart._hostmem does the work.


def host_memory(address: int | None, size: int) -> HostMemory:
    """A `void **` output that is host memory of `size` bytes, as a HostMemory."""
    return _hostmem.host_memory(address, size)


def host_memory_like(address: int | None, given: Any) -> HostMemory | int:
    """A `void **` output that maps the pointer input `given`: that HostMemory where the
    address is its own (the same memory, freed with it), else the int."""
    return _hostmem.like(address, given)


def host_freed(value: Any) -> None:
    """After a successful free: a HostMemory argument is released."""
    _hostmem.release(value)


# ---------------------------------------------------------------- graphs' callables
#
# Which graph or executable graph holds which Python callables (cudart.callbacks), as
# generator/lifetimes.py's effects say. Nothing to do until cudart.callbacks is imported:
# no callable can be registered before it is.


def _callbacks() -> Any:
    return sys.modules.get("cudart.callbacks")


def integer_handle_of(value: int, kind: str) -> int:
    """What a create returns for an integer handle (cudaTextureObject_t, ...): an int
    of the kind's IntegerHandle class, which a checked destroy can mark."""
    return integer_handle_class(kind)(value)


def destroyed(handle: Any, ctype: str, function: str) -> None:
    """`function` destroyed `handle` (a DESTROYS effect): a graph's or exec's callables
    only it held are released. The object was marked before C (`claim`); marking it
    again here is nothing, and keeps a module generated before claims marking."""
    callbacks = sys.modules.get("cudart.callbacks")  # _callbacks(), a frame less per destroy
    if callbacks is not None and ctype in callbacks._HOLDER_KINDS:
        callbacks.holder_destroyed(ctype, handle)
    kind = type(handle)
    if kind is not int and kind not in _handles.DESTROYED_CLASSES:
        mark_destroyed(handle, function)
    if isinstance(handle, Handle) and handle.value:
        # Its children die with it (generator/lifetimes.py PARENTS); an int is the
        # caller's promise, as the handle itself is.
        _handles.parent_destroyed(kind._kind_, handle.value, function)


def child_of(child: Any, parent: Any, parent_class: type[Handle]) -> None:
    """A successful call made the handle `child` as `parent`'s child (a handle of
    `parent_class`, or its int address): a checked destroy of the parent marks it."""
    # After the handle conversion: None, an int, or a c_void_p (ours, or another kind
    # the parameter takes as this one).
    address = parent.value or 0 if isinstance(parent, ctypes.c_void_p) else parent or 0
    _handles.add_child(child, parent_class._kind_, address)


def child_of_current(child: Any, current: Any) -> None:
    """A successful call made `child` in the calling thread's current context, which
    `current` (the module's checked cuCtxGetCurrent) gives."""
    try:
        context = current()
    except StatusError:
        return  # no context to die with: the child stays the caller's to track
    if context:
        _handles.add_child(child, type(context)._kind_, context.value)


def claim(value: Any, parameter: str, function: str) -> Any:
    """Before C: `function` is about to destroy or free `value` (a DESTROYS or FREES
    effect). Marks it now, atomically, so that of threads destroying one object only
    one reaches C (cudart._handles.claim, cudart._hostmem.claim); the others raise.
    Returns what C is given: a HostMemory's address (marked, it is no buffer any more),
    else `value`."""
    if isinstance(value, HostMemory):
        _hostmem.claim(value)
        return value.address
    _handles.claim(value, function, parameter)
    return value


def unclaim(value: Any) -> None:
    """C refused the destroy or free `claim` marked `value` for: it lives on."""
    if isinstance(value, HostMemory):
        _hostmem.unclaim(value)
    else:
        _handles.unclaim(value)


def holder_destroyed(handle: Any, ctype: str) -> None:
    """cudaGraphDestroy / cudaGraphExecDestroy succeeded: release what only it held."""
    callbacks = _callbacks()
    if callbacks is not None:
        callbacks.holder_destroyed(ctype, handle)


def holder_copied(handle: Any, ctype: str, source: Any, source_ctype: str) -> None:
    """`handle` (a graph or exec) now holds a copy of `source`'s host nodes."""
    callbacks = _callbacks()
    if callbacks is not None:
        callbacks.holder_copied(ctype, handle, source_ctype, source)


def callback_held(token: int, holder: Any, ctype: str, lib: Any) -> None:
    """A host node record's callable (token) now belongs to `holder` (graph, exec, node)."""
    if token:
        _lazy.module(".callbacks").hold_token(token, ctype, holder, lib)


def host_node_added(node: Any, graph: Any) -> None:
    """cudaGraphAddHostNode made `node` in `graph` (for cudaGraphHostNodeSetParams)."""
    callbacks = _callbacks()
    if callbacks is not None:
        callbacks.host_node_added(node, graph)
