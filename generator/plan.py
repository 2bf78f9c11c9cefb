"""The checked API's plan: the vocabulary resolve.py decides in and render/checked.py reads.

Every role, parameter kind, decision source and result kind is a member of one enum
here, so a typo is an AttributeError and a new kind is one grep away. They are
StrEnums: `describe` (the snapshots) and the tests read them as the plain strings
they always were.

Adding a parameter kind: a member of ParamKind (and of INPUT_KINDS or OUTPUT_KINDS),
where resolve.py picks it (`_Resolver._in_kind` / `_out_kind`), and its emitter in
render/checked.py (`_INPUTS` / `_OUTPUTS`; an import-time check names a missing one).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from .jit_options import OptionGroup
from .model import Function


class Role(StrEnum):
    """Whether the Python caller passes a parameter, gets it back, or neither."""

    IN = "in"
    OUT = "out"
    INOUT = "inout"  # passed in, and its new value comes back
    COUNT = "count"  # an array's length, handled for the caller


class Source(StrEnum):
    """What decided a parameter's role."""

    TYPE = "type"  # its C type: only a non-const pointer to data may be written
    INFERRED = "inferred"  # the header's documentation
    TABLE = "table"  # resolve.OVERRIDES, the reviewed exceptions table
    ATTRIBUTES = "attributes"  # generator/attributes.py: a value typed by an attribute


class Measure(StrEnum):
    """How many bytes a pointer input must hold, from other inputs (generator/sizes.py):
    checked where the caller passes a Python buffer, a list or a ctypes object."""

    BYTES = "bytes"  # the sum of `measure_of` (count, or count + offset)
    ROWS = "rows"  # measure_of = (pitch, width, height): (height - 1) * pitch + width
    ELEMENTS = "elements"  # measure_of = (count,) elements of the pointed-to type (or pointers)
    RECORD = "record"  # one element of the pointed-to type (a struct pointer)
    # measure_of = (the partner function,): as many bytes (or elements) as the partner,
    # called with the function's other inputs, returns (nvrtcGetPTX's nvrtcGetPTXSize).
    # The buffer may be omitted: the checked function then returns what C wrote.
    QUERIED = "queried"
    # measure_of = (size, granularity): one element per granularity of size, rounded up
    # (cuMemGetLocationInfo's location_out: "ceil(size/summaryGranularity)" records).
    REGIONS = "regions"
    # measure_of = (a literal count,): exactly that many elements, which C reads whatever
    # it is given (cuTexRefSetBorderColor's RGBA: 4 floats): a list or tuple of another
    # length is refused, a buffer or ctypes object must hold at least them.
    EXACT = "exact"


class ParamKind(StrEnum):
    """How a parameter crosses between Python and C."""

    # Inputs (role IN).
    HANDLE = "handle"  # a handle object, int, None or __cuda_stream__ (also an output)
    POINTER = "pointer"  # an address: int, None, buffer, ctypes object, ...
    REF = "ref"  # a `T *` to data: a ctypes T by reference, or an address
    STRING = "string"  # `const char *`: str or bytes
    # `const char *const *` (NVRTC's options, headers): a list or tuple of str or bytes,
    # or an address; `partner` is the count C reads.
    STRINGS = "strings"
    STRUCT = "struct"  # a record by value (also an output, written by the call)
    SCALAR = "scalar"  # a number or enum value (also an output)
    CALLBACK = "callback"  # cudaHostFn_t / cudaStreamCallback_t: a Python callable or a pointer
    CALLBACK_DATA = "callback_data"  # its `void *` data: any object with a callable (`partner`)
    CALLBACK_RECORD = "callback_record"  # `const T *` to a record with a cudaHostFn_t (host nodes)
    # A `void *` / union value whose type the `partner` attribute argument selects: the
    # Python value in (setters) or out (getters); ctype names the generated table.
    ATTRIBUTE = "attribute"
    DEVICE_FUNCTION = "device_function"  # `const void *func`: a Function, cudaKernel_t, address
    KERNEL_ARGS = "kernel_args"  # `void **args` beside it (`partner`): packed, or a tuple of values
    # A C function pointer with no trampoline (cudaAsyncCallback, cudaLogsCallback_t, a
    # callback without one `void *` data): an int, a ctypes function pointer or None.
    FUNCTION_POINTER = "function_pointer"
    # A kernel image C parses trusting its header: in memory (with no length), or the
    # name of a file holding one (resolve.IMAGES).
    IMAGE = "image"
    # An integer typedef that is a handle (cudaTextureObject_t: lifetimes.INTEGER_HANDLES):
    # an int subclass named after it, which a destroy can mark (also an output).
    INTEGER_HANDLE = "integer_handle"
    # A `H *` input pointing at one handle C reads (resolve.ONE_HANDLE_POINTERS: the EGL
    # stream API's connection and stream): the handle, passed by address.
    HANDLE_REF = "handle_ref"
    # The driver launches' `void **extra` (resolve.ARGUMENT_BUFFERS): the kernel's packed
    # argument buffer, which the checked layer wraps in cuda.h's option list
    # (CU_LAUNCH_PARAM_BUFFER_POINTER, buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
    # CU_LAUNCH_PARAM_END), or that list as the caller built it; `partner` is the
    # kernelParams input C refuses beside it.
    ARGUMENT_BUFFER = "argument_buffer"
    # Outputs (roles OUT, INOUT, COUNT).
    ENUM = "enum"  # an enum value, returned as the enum class's member
    ADDRESS = "address"  # a `void *` or pointer written by the call, returned as an int
    CHAR_BUFFER = "char_buffer"  # `char *` the call fills, sized by `partner`
    # `char *` of a length C fixes (resolve.FIXED_LENGTH_OUTPUTS; `partner` is the
    # length): returned as bytes, all of them (a LUID is binary, NULs included).
    FIXED_BYTES = "fixed_bytes"
    CSTRING = "cstring"  # a `char **` the call points at its own text
    ARRAY = "array"  # `T *` filled with `partner` elements, asked for by a first call
    SIZED_ARRAY = "sized_array"  # `T *` filled with as many elements as the input `partner`
    # `T *` of as many elements as the in-out `partner` says going in (NULL for 0: the
    # call then only counts), cut to as many as it says coming out (resolve.COUNTED_ARRAYS).
    COUNTED_ARRAY = "counted_array"
    BORROWED_ARRAY = "borrowed_array"  # `const T **` pointed at the runtime's own array
    COUNT = "count"  # the `size_t *numX` of an array
    # generator/lifetimes.py decides these two (a reviewed table), not the types.
    HOST_MEMORY = "host_memory"  # a `void *` to host memory of `partner` bytes: a HostMemory
    MAPPED_HOST_MEMORY = "mapped_host_memory"  # the `partner` input's HostMemory at that address
    # A `void *` the call writes an OS handle to, of the type the handle type input
    # `partner` names (resolve.SHAREABLE_HANDLES): an int, or a fabric handle record.
    SHAREABLE_HANDLE = "shareable_handle"


class Effect(StrEnum):
    """What the checked layer records after a successful call, beyond what it returns
    (generator/lifetimes.py decides; `effect_of` names the other parameter)."""

    FREES = "frees"  # frees host memory: a HostMemory argument is marked released
    # A handle destroyed: the object is marked (cudart.HandleDestroyedError on reuse); a
    # graph's or exec's callables only it held are released.
    DESTROYS = "destroys"
    COPIES = "copies"  # a graph or exec now also holds `effect_of`'s callables (a C copy)
    HELD_BY = "held_by"  # a host node record's callable belongs to graph/exec/node `effect_of`
    NODE_OF = "node_of"  # a host node of graph `effect_of` (for later cudaGraphHostNodeSetParams)


# ParamPlan.parent of a handle made in the calling thread's current context.
CURRENT_CONTEXT = "current context"

INPUT_KINDS = frozenset(
    {
        ParamKind.HANDLE,
        ParamKind.POINTER,
        ParamKind.REF,
        ParamKind.STRING,
        ParamKind.STRINGS,
        ParamKind.STRUCT,
        ParamKind.SCALAR,
        ParamKind.CALLBACK,
        ParamKind.CALLBACK_DATA,
        ParamKind.CALLBACK_RECORD,
        ParamKind.ATTRIBUTE,
        ParamKind.DEVICE_FUNCTION,
        ParamKind.KERNEL_ARGS,
        ParamKind.FUNCTION_POINTER,
        ParamKind.IMAGE,
        ParamKind.INTEGER_HANDLE,
        ParamKind.HANDLE_REF,
        ParamKind.ARGUMENT_BUFFER,
    }
)
OUTPUT_KINDS = frozenset(ParamKind) - {
    ParamKind.POINTER,
    ParamKind.REF,
    ParamKind.STRING,
    ParamKind.STRINGS,
    ParamKind.CALLBACK,
    ParamKind.CALLBACK_DATA,
    ParamKind.CALLBACK_RECORD,
    ParamKind.DEVICE_FUNCTION,
    ParamKind.KERNEL_ARGS,
    ParamKind.FUNCTION_POINTER,
    ParamKind.IMAGE,
    ParamKind.HANDLE_REF,
    ParamKind.ARGUMENT_BUFFER,
}
ARRAY_KINDS = frozenset(
    {ParamKind.ARRAY, ParamKind.SIZED_ARRAY, ParamKind.COUNTED_ARRAY, ParamKind.BORROWED_ARRAY}
)


class ResultKind(StrEnum):
    """What the checked function makes of the C function's own return value."""

    ERROR = "error"  # a cudaError_t: raise on failure
    QUERY = "query"  # cudaStreamQuery, cudaEventQuery: cudaErrorNotReady is False
    STRING = "string"  # `const char *`, decoded
    STRUCT = "struct"  # a record by value
    VALUE = "value"  # a number or enum, returned as C returns it
    VOID = "void"


@dataclass(frozen=True)
class ParamPlan:
    name: str  # the C name
    py_name: str  # the Python name (C name, plus "_" where it is a keyword or a builtin)
    role: Role
    kind: ParamKind
    ctype: str  # ctypes spelling of the value (in) or of its storage / element (out)
    py_type: str  # the annotation
    doc: str = ""
    default: str | None = None  # Python source of the default, for inputs
    source: Source = Source.TYPE  # what decided the role
    partner: str | None = (
        None  # array -> its count; char buffer -> its capacity; callback -> its data
    )
    effect: Effect | None = None  # what a successful call records (generator/lifetimes.py)
    effect_of: str | None = None  # the other parameter (C name) the effect names
    # A handle output made as a child of this input (C name; CURRENT_CONTEXT: the calling
    # thread's context): destroying the parent marks it too (generator/lifetimes.py).
    parent: str | None = None
    # The size relation (generator/sizes.py): what the buffer must hold, from which inputs.
    measure: Measure | None = None
    measure_of: tuple[str, ...] = ()
    measure_source: str = ""  # "docs: ...", "type: ..." or the reviewed entry's reason
    # A `T *` input C writes results into for the caller to read (resolve.FILLED_INPUTS):
    # a list or tuple, which the conversion would copy, is refused.
    filled: bool = False


@dataclass(frozen=True)
class FunctionPlan:
    name: str  # public name (what Python callers use)
    symbol: str  # the raw module's name to call (same as name; aliases call their target)
    function: Function
    params: tuple[ParamPlan, ...]
    result: ResultKind
    result_ctype: str = ""
    errors: tuple[str, ...] = ()
    replacement: str | None = None
    # Typed option lists (generator/jit_options.py): each group's count, options and
    # values parameters take a mapping of options to values (cudart._jitoptions).
    option_groups: tuple[OptionGroup, ...] = ()

    @property
    def inputs(self) -> list[ParamPlan]:
        return [p for p in self.params if p.role in (Role.IN, Role.INOUT)]

    @property
    def outputs(self) -> list[ParamPlan]:
        return [p for p in self.params if p.role in (Role.OUT, Role.INOUT)]

    @property
    def table_params(self) -> list[ParamPlan]:
        return [p for p in self.params if p.source is Source.TABLE]
