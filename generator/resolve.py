"""model -> the checked API's plan: which parameters a Python caller passes, which come
back, and in what shape. Reads the model only (types, names, the header's docs).

A non-const pointer parameter is an output when the header says so:

* its \\param text says it is returned, stored or written ("Returned device pointer",
  "Location to return ...", "Newly created event"), or its name ends in `_out`;
* or a sentence of the description names it together with "returns"/"stored"
  ("A handle to the new node will be returned in pGraphNode").

Where that reading is wrong or silent, OVERRIDES says what the parameter is; every
override used is reported (see `table_uses`) and tests hold the table's content.
`void *` is memory the caller provides and `const T *` is read by the function: both
are inputs whatever the docs say.
"""

from __future__ import annotations

import dataclasses
import keyword
import re
from typing import TypeVar

from . import device_functions, lifetimes, sizes
from .attributes import FUNCTIONS as ATTRIBUTE_FUNCTIONS
from .attributes import AttributeTypes
from .ctypes_map import BUILTIN_KINDS, POINTER_KINDS, RenderError, TypeKind, TypeMapper
from .jit_options import FUNCTIONS as OPTION_FUNCTIONS
from .model import ApiModel, EnumRef, Function, RecordRef, TypedefRef
from .plan import (
    ARRAY_KINDS,
    FunctionPlan,
    Measure,
    ParamKind,
    ParamPlan,
    ResultKind,
    Role,
    Source,
)
from .status import status_enum

# (function as declared, parameter) -> (role, why). Reviewed by hand: each entry says
# why inference gets that parameter wrong. Keep it short; tests list it.
OVERRIDES: dict[tuple[str, str], tuple[Role, str]] = {
    # Outputs whose \param text does not say "returned" (or has no \param at all).
    ("cudaDeviceGetDefaultMemPool", "memPool"): (Role.OUT, "no \\param text"),
    ("cudaDeviceGetMemPool", "memPool"): (Role.OUT, "no \\param text"),
    ("cudaStreamEndCapture", "pGraph"): (Role.OUT, '"The captured graph"'),
    ("cudaEventElapsedTime", "ms"): (Role.OUT, '"Time between start and end in ms"'),
    ("cudaMemPoolCreate", "memPool"): (Role.OUT, "no \\param text"),
    ("cudaMemPoolImportFromShareableHandle", "memPool"): (Role.OUT, "no \\param text"),
    ("cudaMemPoolExportPointer", "exportData"): (Role.OUT, "no \\param text"),
    ("cudaMemPoolImportPointer", "ptr"): (Role.OUT, "no \\param text"),
    ("cudaGetTextureObjectResourceDesc", "pResDesc"): (Role.OUT, '"Resource descriptor"'),
    ("cudaGetTextureObjectTextureDesc", "pTexDesc"): (Role.OUT, '"Texture descriptor"'),
    ("cudaGetTextureObjectResourceViewDesc", "pResViewDesc"): (
        Role.OUT,
        '"Resource view descriptor"',
    ),
    ("cudaGetSurfaceObjectResourceDesc", "pResDesc"): (Role.OUT, '"Resource descriptor"'),
    ("cudaGraphAddEventRecordNode", "pGraphNode"): (Role.OUT, "no \\param text"),
    ("cudaGraphAddEventWaitNode", "pGraphNode"): (Role.OUT, "no \\param text"),
    ("cudaGraphExecUpdate", "resultInfo"): (Role.OUT, '"the error info structure"'),
    ("cudaGetExportTable", "ppExportTable"): (Role.OUT, "no \\param text"),
    # Declared `void *`, documented as `\param[out] handle_out` (SHAREABLE_HANDLES).
    ("cudaMemPoolExportToShareableHandle", "shareableHandle"): (Role.OUT, '"handle_out"'),
    # cuda.h's twins, declared `void *` and documented `\param[out]` (SHAREABLE_HANDLES).
    ("cuMemPoolExportToShareableHandle", "handle_out"): (Role.OUT, '"Returned OS handle"'),
    ("cuMemExportToShareableHandle", "shareableHandle"): (Role.OUT, '"the requested handle"'),
    ("cuMemGetHandleForAddressRange", "handle"): (Role.OUT, '"the returned handle"'),
    ("cuLogicalEndpointExport", "handle"): (
        Role.OUT,
        '"the location in which to store the handle"',
    ),
    # Swaps: the caller's value goes in, the previous one comes back.
    ("cudaThreadExchangeStreamCaptureMode", "mode"): (Role.INOUT, "swaps the mode"),
    # Inputs that a description sentence wrongly reads as returned.
    ("cudaSetValidDevices", "device_arr"): (Role.IN, "a list the caller gives"),
    ("cudaGraphicsMapResources", "resources"): (Role.IN, "resources the caller gives"),
    ("cudaGraphicsUnmapResources", "resources"): (Role.IN, "resources the caller gives"),
    ("cudaMemPoolGetAccess", "location"): (Role.IN, "the location queried"),
    # "CUDA stream on which to return the frame": "return" is the frame's, as in PresentFrame.
    ("cudaEGLStreamProducerReturnFrame", "pStream"): (Role.IN, "the stream the frame goes on"),
    ("cudaGraphAddMemAllocNode", "nodeParams"): (Role.IN, "caller-filled; the runtime adds dptr"),
    ("cudaGraphMemFreeNodeGetParams", "dptr_out"): (
        Role.OUT,
        "declared void *, written as a void *",
    ),
    ("cudaLogsDumpToMemory", "buffer"): (Role.IN, "a caller-sized buffer; *size says how much"),
    ("cudaLogsDumpToMemory", "size"): (Role.INOUT, "the buffer's size in, the bytes written out"),
    ("cudaMemGetDefaultMemPool", "memPool"): (Role.OUT, "no \\param text"),
    ("cudaMemGetMemPool", "memPool"): (Role.OUT, "no \\param text"),
    ("cudaMemGetMemPool", "location"): (Role.IN, "the location queried"),
    # "The user is expected to allocate the location_out array": C fills the caller's
    # array of ceil(size/summaryGranularity) records (sizes.REVIEWED checks it holds them).
    ("cudaMemGetLocationInfo", "location_out"): (Role.IN, "an array the caller allocates"),
    ("cudaMemSetMemPool", "location"): (Role.IN, "the location configured"),
    ("cudaMemcpy3DBatchAsync", "opList"): (Role.IN, "the operations to perform"),
    ("cudaDevResourceGenerateDesc", "resources"): (Role.IN, "the resources the caller gives"),
    ("cudaDevSmResourceSplit", "remainder"): (Role.OUT, '"the remainder is placed in here"'),
    ("cudaLibraryLoadData", "jitOptionsValues"): (Role.IN, "option values the caller gives"),
    ("cudaLibraryLoadFromFile", "jitOptionsValues"): (Role.IN, "option values the caller gives"),
    # "nbGroups must point to the amount of elements in result and on return, the API will
    # overwrite nbGroups with the amount actually created" (0 with a NULL result: count).
    ("cudaDevSmResourceSplitByCount", "nbGroups"): (Role.INOUT, "the groups asked for, then made"),
    ("cudaDevSmResourceSplitByCount", "remaining"): (
        Role.OUT,
        '"the remaining is placed in here"',
    ),
    # nvrtc.h: deprecated, without docs; nvrtcGetLTOIRSize's twin, whose \param is [out].
    ("nvrtcGetNVVMSize", "nvvmSizeRet"): (Role.OUT, "no \\param text: nvrtcGetNVVM's size"),
    # 13.2 declares it undocumented; 13.3's \param is [out] ("Size of the generated TileIR").
    ("nvrtcGetTileIRSize", "TileIRSizeRet"): (Role.OUT, "no \\param text in 13.2"),
    # cuda.h (the driver API)
    ("cuLogsDumpToMemory", "buffer"): (Role.IN, "a caller-sized buffer; *size says how much"),
    ("cuLogsDumpToMemory", "size"): (Role.INOUT, "the buffer's size in, the bytes written out"),
    ("cuEventElapsedTime", "pMilliseconds"): (Role.OUT, '"Time between hStart and hEnd in ms"'),
    ("cuStreamEndCapture", "phGraph"): (Role.OUT, '"The captured graph"'),
    ("cuThreadExchangeStreamCaptureMode", "mode"): (Role.INOUT, "swaps the mode"),
    ("cuGetExportTable", "ppExportTable"): (Role.OUT, "no \\param text"),
    ("cuGraphExecUpdate_v2", "resultInfo"): (Role.OUT, '"the error info structure"'),
    ("cuLinkCreate_v2", "stateOut"): (Role.OUT, '"On success, this will contain a CUlinkState"'),
    ("cuLinkComplete", "sizeOut"): (Role.OUT, '"Optional parameter to receive the size"'),
    ("cuCtxCreate_v4", "ctxCreateParams"): (Role.IN, '"Context creation parameters", read'),
    # "Array of pointers to kernel parameters" / "Extra options": what the launch reads
    # (a description sentence "returns" near them).
    ("cuLaunchKernel", "kernelParams"): (Role.IN, "the argument pointers the launch reads"),
    ("cuLaunchKernel", "extra"): (Role.IN, "the extra options the launch reads"),
    ("cuPointerGetAttributes", "attributes"): (Role.IN, "the attributes the caller asks for"),
    ("cuGraphicsMapResources", "resources"): (Role.IN, "resources the caller gives"),
    ("cuGraphicsUnmapResources", "resources"): (Role.IN, "resources the caller gives"),
    ("cuMemPoolGetAccess", "location"): (Role.IN, "the location queried"),
    ("cuMemGetMemPool", "location"): (Role.IN, "the location queried"),
    ("cuMemGetLocationInfo", "location_out"): (Role.IN, "an array the caller allocates"),
    ("cuMemSetMemPool", "location"): (Role.IN, "the location configured"),
    ("cuMemcpy3DBatchAsync", "opList"): (Role.IN, "the operations to perform"),
    ("cuMemcpy3DBatchAsync_v2", "opList"): (Role.IN, "the operations to perform"),
    ("cuDevResourceGenerateDesc", "resources"): (Role.IN, "the resources the caller gives"),
    ("cuGraphAddMemAllocNode", "nodeParams"): (Role.IN, "caller-filled; the driver adds dptr"),
    ("cuLibraryLoadData", "jitOptionsValues"): (Role.IN, "option values the caller gives"),
    ("cuLibraryLoadFromFile", "jitOptionsValues"): (Role.IN, "option values the caller gives"),
    ("cuModuleLoadDataEx", "optionValues"): (
        Role.IN,
        "option values the caller gives (12.0-12.3's docs read as returned)",
    ),
    ("cuDevSmResourceSplit", "remainder"): (Role.OUT, '"the remainder is placed in here"'),
    ("cuDevSmResourceSplitByCount", "nbGroups"): (Role.INOUT, "the groups asked for, then made"),
    ("cuDevSmResourceSplitByCount", "remainder"): (Role.OUT, '"the remainder is placed in here"'),
    ("cuDevSmResourceSplitByCount", "remaining"): (Role.OUT, "12.x's name of remainder"),
    # "Input: Size of the cliqueInfo array. Output: Number of entries updated" (COUNTED_ARRAYS).
    ("cuDeviceGetCliqueInfo", "count"): (
        Role.INOUT,
        "the array's size in, the entries written out",
    ),
    ("cuTexObjectGetResourceDesc", "pResDesc"): (Role.OUT, '"Resource descriptor"'),
    ("cuTexObjectGetTextureDesc", "pTexDesc"): (Role.OUT, '"Texture descriptor"'),
    ("cuTexObjectGetResourceViewDesc", "pResViewDesc"): (Role.OUT, '"Resource view descriptor"'),
    ("cuSurfObjectGetResourceDesc", "pResDesc"): (Role.OUT, '"Resource descriptor"'),
    ("cuTensorMapSetAllocationClass", "tensorMap"): (
        Role.IN,
        '"Tensor map to modify in place": the caller\'s map',
    ),
    ("cuTensorMapSetAllocationClass", "outAllocClass"): (
        Role.OUT,
        '"Optional; receives the resulting allocation class"',
    ),
}

# (function, parameter) -> why: a string array C reads though its type does not say so
# (`const char **`, not `const char *const *`), taken as a list of strings (STRINGS).
READ_STRINGS: dict[tuple[str, str], str] = {
    ("nvJitLinkCreate", "options"): (
        '"Array of size numOptions of option strings"; declared `const char **` before '
        "13.5's `const char *const *`: nvJitLink only reads them"
    ),
}

# (function as declared, output array) -> (its in-out count, why): an array the caller
# sizes through a count C then overwrites with how many it filled (ParamKind.COUNTED_ARRAY).
COUNTED_ARRAYS: dict[tuple[str, str], tuple[str, str]] = {
    ("cudaDevSmResourceSplitByCount", "result"): (
        "nbGroups",
        '"nbGroups must point to the amount of elements in result"; NULL when it is 0',
    ),
    # cuda.h (the driver API)
    ("cuDevSmResourceSplitByCount", "result"): (
        "nbGroups",
        '"Output array of CUdevResource resources. Can be NULL to query the number of groups"',
    ),
    ("cuDeviceGetCliqueInfo", "cliqueInfo"): (
        "count",
        '"User must specify the size of the cliqueInfo array in count"',
    ),
}

# (function, `T *` input) -> why: memory the caller gives and C writes results into, which
# the caller reads after the call (an array the call fills, a record with out-fields).
# The checked function refuses a list or tuple there: it would pass C a copy, and what C
# wrote would be lost. An input the header tags `[out]` or `[in,out]` is one too.
FILLED_INPUTS: dict[tuple[str, str], str] = {
    ("cudaMemGetLocationInfo", "location_out"): (
        '"The location information is returned in the location_out array"'
    ),
    ("cuMemGetLocationInfo", "location_out"): '"Array to store location information"',
    ("cudaGraphAddMemAllocNode", "nodeParams"): (
        '"it returns the address of the allocation in nodeParams.dptr"'
    ),
    ("cuGraphAddMemAllocNode", "nodeParams"): (
        '"it returns the address of the allocation in nodeParams.dptr"'
    ),
    ("cudaGraphAddNode", "nodeParams"): (
        '"nodeParams may contain "out parameters" which are modified during the call, such '
        'as nodeParams->alloc.dptr"'
    ),
    ("cuGraphAddNode", "nodeParams"): '"nodeParams may contain "out parameters""',
    ("cudaGraphInstantiateWithParams", "instantiateParams"): (
        '"In the event of an error, the result_out and errNode_out fields will contain more '
        'information"'
    ),
    ("cuGraphInstantiateWithParams", "instantiateParams"): (
        '"the result_out and hErrNode_out fields will contain more information"'
    ),
    ("cudaDevSmResourceSplit", "groupParams"): (
        '"Discovery happens when the smCount field of a given groupParams array entry is set '
        'to 0": C writes the count it found there'
    ),
    ("cuDevSmResourceSplit", "groupParams"): "as cudaDevSmResourceSplit's groupParams",
    ("cuTensorMapReplaceAddress", "tensorMap"): (
        '"Modifies the descriptor ... passed in tensorMap"'
    ),
    ("cuTensorMapSetAllocationClass", "tensorMap"): '"Tensor map to modify in place"',
    ("cudaLogsDumpToMemory", "buffer"): '"dumps driver logs from iterator into buffer"',
    ("cuLogsDumpToMemory", "buffer"): '"Pointer to dump logs"',
}

# A function `<name>_v<N>` takes its twin <name>'s table entries for the parameters
# they share: the header documents them in the same words (cudaEventElapsedTime_v2's
# ms), so the reading that needed the entry fails for both.
# Outputs of a length C fixes and no parameter says: a `char *` returned as bytes
# (FIXED_BYTES), an array of numbers as a list of that many (SIZED_ARRAY, sized by the
# literal length).
FIXED_LENGTH_OUTPUTS: dict[tuple[str, str], tuple[int, str]] = {
    ("cuDeviceGetLuid", "luid"): (8, "a Windows LUID: 8 bytes (cudaDeviceProp.luid is char[8])"),
    ("cuTexRefGetBorderColor", "pBorderColor"): (
        4,
        "\"pBorderColor[0] holds 'R' component\" ... [3] 'A': four floats",
    ),
}

_VERSIONED = re.compile(r"^(\w+?)_v\d+$")
_T = TypeVar("_T")


def _override(function: str, parameter: str) -> tuple[Role, str] | None:
    """OVERRIDES' entry for a parameter, the `_vN` twin's where the function has none."""
    return _entry(OVERRIDES, function, parameter)


def _entry(table: dict[tuple[str, str], _T], function: str, parameter: str) -> _T | None:
    """`table`'s entry for a parameter, the `_vN` twin's where the function has none."""
    found = table.get((function, parameter))
    if found is None and (twin := _VERSIONED.match(function)):
        found = table.get((twin.group(1), parameter))
    return found


# (function, `void *` output) -> (the handle type input that says what C writes, why):
# an OS handle whose C type follows cudaMemAllocationHandleType ("(int)", "(HANDLE)",
# "(D3DKMT_HANDLE)", "(cudaMemFabricHandle_t)"), which cudart._convert reads and sizes.
SHAREABLE_HANDLES: dict[tuple[str, str], tuple[str, str]] = {
    ("cudaMemPoolExportToShareableHandle", "shareableHandle"): (
        "handleType",
        '"Type of handle to be exported"; the enumerators\' docs name each C type',
    ),
    # cuda.h (the driver API): CUmemAllocationHandleType's docs name the C types as the
    # runtime's do; CUmemRangeHandleType's one handle is _UNDOCUMENTED_HANDLE_TYPES'.
    ("cuMemPoolExportToShareableHandle", "handle_out"): (
        "handleType",
        '"Type of handle to be exported"',
    ),
    ("cuMemExportToShareableHandle", "shareableHandle"): (
        "handleType",
        '"Type of shareable handle requested (defines type and size of the shareableHandle '
        'output parameter)"',
    ),
    ("cuMemGetHandleForAddressRange", "handle"): (
        "handleType",
        '"Type of handle requested (defines type and size of the handle output parameter)"',
    ),
    ("cuLogicalEndpointExport", "handle"): (
        "handleType",
        '"Type of shareable handle requested. Defines type and size of the handle output '
        'parameter"; the enumerator names CUlogicalEndpointFabricHandle',
    ),
}
# The handle type enums SHAREABLE_HANDLES' inputs are of.
_HANDLE_TYPE_ENUMS = frozenset(
    {
        "cudaMemAllocationHandleType",
        "CUmemAllocationHandleType_enum",
        "CUmemRangeHandleType_enum",
        "CUlogicalEndpointIpcHandleType_enum",
    }
)
# Handle types whose enumerator's doc names no C type: (enumerator -> C type, why).
_UNDOCUMENTED_HANDLE_TYPES: dict[str, tuple[str, str]] = {
    "CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD": (
        "int",
        'cuMemGetHandleForAddressRange: "The handle will be interpreted as a pointer to an '
        'integer to store the dma_buf file descriptor"',
    ),
    "CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC": (
        "CUlogicalEndpointFabricHandle",
        "undocumented in 13.3-13.4; 13.5's doc: \"Allows export to a fabric handle "
        '(CUlogicalEndpointFabricHandle)"',
    ),
}

# The C types an enumerator's doc names last ("... exporting. (HANDLE)") that the
# runtime headers do not declare: windows.h's HANDLE is a void *, d3dkmthk.h's
# D3DKMT_HANDLE a UINT.
_WINDOWS_HANDLES = {"HANDLE": "c_void_p", "D3DKMT_HANDLE": "c_uint"}
_DOC_TYPE = re.compile(r"\((\w+)\)\s*$")


def shareable_handle_types(types: TypeMapper, enum: str) -> dict[int, tuple[str, str]]:
    """value -> (enumerator, ctypes spelling) of each OS handle type of the handle type
    enum, from its enumerators' docs ("(int)", "(cudaMemFabricHandle_t)"); one without a
    type (cudaMemHandleTypeNone) exports nothing and is left out."""
    found = {}
    for e in types.enums[enum].enumerators:
        m = _DOC_TYPE.search(e.doc)
        if m is None and e.name not in _UNDOCUMENTED_HANDLE_TYPES:
            continue
        name = m.group(1) if m else _UNDOCUMENTED_HANDLE_TYPES[e.name][0]
        if name == "int":
            ctype = "c_int"
        elif name in _WINDOWS_HANDLES:
            ctype = _WINDOWS_HANDLES[name]
        elif name in types.typedefs:
            ctype = types.record_class(TypedefRef(name))
        else:
            raise RenderError(f"{enum}.{e.name}: no C type for the handle type {name}")
        found[e.value] = (e.name, ctype)
    return found


# Handle types whose non-const pointer, as an input, points at one handle C reads, not
# at an array (cudaGraphicsMapResources' resources): the EGL stream API takes its
# connection and its stream by address ("Connection on which to present the CUDA
# array", "CUDA stream on which to present the frame"). The caller passes the handle.
ONE_HANDLE_POINTERS: dict[str, str] = {
    "cudaEglStreamConnection": "every connection input of cudaEGLStream*",
    "cudaStream_t": "the EGL stream functions' pStream: the stream the frame is on",
}

# (function, parameter): a kernel image (fatbin, cubin, PTX) C parses trusting the
# sizes its header states, in memory (with no length) or in a named file: reviewed, as
# the docs say only "Code to load" / "File to load from". Its header is checked before
# the call (cudart._convert.image / image_file).
IMAGES: frozenset[tuple[str, str]] = frozenset(
    {
        ("cudaLibraryLoadData", "code"),
        ("cudaLibraryLoadFromFile", "fileName"),
        # cuda.h (the driver API)
        ("cuModuleLoadData", "image"),
        ("cuModuleLoadDataEx", "image"),
        ("cuModuleLoadFatBinary", "fatCubin"),
        ("cuModuleLoad", "fname"),
        ("cuLibraryLoadData", "code"),
        ("cuLibraryLoadFromFile", "fileName"),
    }
)

# (function, parameter) -> (the kernelParams input beside it, why): the driver launches'
# `void **extra`, taken as the kernel's packed argument buffer (ParamKind.ARGUMENT_BUFFER;
# cudart._convert.argument_buffer builds cuda.h's option list around it) or as the
# option list itself. cuLaunchCooperativeKernel has no `extra`; the kernel node records'
# `extra` members stay addresses (device_functions.REVIEWED).
ARGUMENT_BUFFERS: dict[tuple[str, str], tuple[str, str]] = {
    ("cuLaunchKernel", "extra"): (
        "kernelParams",
        '"Kernel parameters can also be packaged by the application into a single buffer '
        'that is passed in via the extra parameter"; INVALID_VALUE "if kernel parameters are '
        'specified with both kernelParams and extra (i.e. both ... are non-NULL)"',
    ),
    ("cuLaunchKernelEx", "extra"): (
        "kernelParams",
        '"Kernel parameters to f can be specified in the same ways that they can be using '
        "cuLaunchKernel\": extra as cuLaunchKernel's",
    ),
}

_RETURNED = re.compile(
    r"\b(returns?|returned|retrieved|stores?|stored|written|writes?|output|new(ly)?"
    r"|to create|allocated)\b",
    re.I,
)
_RETURN_VERB = re.compile(r"\b(returns?|returned|stored?|written|writes?)\b", re.I)
_REPLACEMENT = (
    re.compile(r"(\w+)(?:\(\))?,? which should be\s+used instead"),
    re.compile(r"\b[Uu]se (\w+)(?:\(\))? instead"),
    re.compile(r"\b(?:replaced|superseded) by (\w+)"),
)
_COUNT_NAME = re.compile(r"^p?[Nn]um")
# A \note that says the function updates what a pointer parameter points to: the
# caller's value goes in and the new one comes back ("iterator is auto-advancing").
_UPDATED = re.compile(r"\b(auto-advancing|will update|updates?d?)\b", re.I)
# The function pointer typedefs the checked layer also takes as Python callables
# (cudart.callbacks' trampolines have these signatures): the runtime's and the driver's
# (CUstreamCallback is (CUstream, CUresult, void *), cudaStreamCallback_t's shape).
PYTHON_CALLBACKS = frozenset(
    {"cudaHostFn_t", "cudaStreamCallback_t", "CUhostFn", "CUstreamCallback"}
)
# The host function typedefs: a record with one as `fn` (cudaHostNodeParams,
# CUDA_HOST_NODE_PARAMS) takes a Python callable there (ParamKind.CALLBACK_RECORD).
HOST_FUNCTIONS = frozenset({"cudaHostFn_t", "CUhostFn"})
_NULL_POINTER_SPELLINGS = frozenset({"0", "NULL", "nullptr"})
# What a non-const pointer must point to for the function to be able to write it.
_MAY_BE_WRITTEN = frozenset(
    {TypeKind.POINTER, TypeKind.CHAR_POINTER, TypeKind.OPAQUE_POINTER, TypeKind.FUNCTION_POINTER}
)


def resolve(
    model: ApiModel, types: TypeMapper | None = None, attributes: AttributeTypes | None = None
) -> list[FunctionPlan]:
    """A plan per public function name (aliases included), sorted by name. `types` and
    `attributes`: the version's own where the caller has them (generator/context.py)."""
    resolver = _Resolver(model, types, attributes)
    by_name = {f.name: f for f in model.functions}
    # An inline wrapper's symbol (__nvJitLinkCreate_12_5) is the public function under the
    # library's versioned name: planned once, as the public name, so that every table
    # (OVERRIDES, sizes, lifetimes) names it as the header's API does, in every version.
    forwarded = {a.symbol for a in model.aliases if a.inline}
    # C variadic functions have no checked form (the CUDA runtime declares none).
    plans = {
        f.name: resolver.plan(f.name, f)
        for f in model.functions
        if not f.variadic and f.name not in forwarded
    }
    for alias in model.aliases:
        target = by_name[alias.symbol]
        if not target.variadic:
            if alias.inline:
                target = dataclasses.replace(target, name=alias.public)
            plans[alias.public] = resolver.plan(alias.public, target)
    return _filled(sizes.apply(lifetimes.apply([plans[n] for n in sorted(plans)])))


def _filled(plans: list[FunctionPlan]) -> list[FunctionPlan]:
    """The plans with each `T *` input C writes into for the caller marked (FILLED_INPUTS,
    or the header's `[out]` / `[in,out]` tag)."""

    def filled(plan: FunctionPlan, p: ParamPlan) -> bool:
        if p.role is not Role.IN or p.kind is not ParamKind.REF:
            return False
        doc = plan.function.doc
        tagged = doc is not None and doc.direction(p.name) in ("out", "in,out")
        return tagged or _entry(FILLED_INPUTS, plan.name, p.name) is not None

    return [
        (
            dataclasses.replace(
                plan,
                params=tuple(
                    dataclasses.replace(p, filled=True) if filled(plan, p) else p
                    for p in plan.params
                ),
            )
            if any(filled(plan, p) for p in plan.params)
            else plan
        )
        for plan in plans
    ]


def replacements(model: ApiModel, types: TypeMapper | None = None) -> list[tuple[str, str]]:
    """(deprecated function, what its header says to use instead), by public name."""
    resolver = _Resolver(model, types)
    by_name = {f.name: f for f in model.functions}
    names = [(f.name, f) for f in model.functions] + [
        (a.public, by_name[a.symbol]) for a in model.aliases
    ]
    found = [(name, resolver._replacement(f)) for name, f in names]
    return sorted((name, r) for name, r in found if r)


def table_uses(plans: list[FunctionPlan]) -> list[str]:
    """`function.param: role` for every classification the exceptions table made."""
    return [f"{plan.name}.{p.name}: {p.role}" for plan in plans for p in plan.table_params]


def doc_name_mismatches(model: ApiModel) -> list[str]:
    """`X for parameter f.Y` where the docs name a prototype parameter otherwise and
    the docstring takes the \\param at its position."""
    found = []
    for f in model.functions:
        if f.doc is None:
            continue
        names = [p.name for p in f.params]
        for i, name in enumerate(names):
            if f.doc.param(name) is None and (at := f.doc.param_at(names, i)) is not None:
                found.append(f"{at.name} for parameter {f.name}.{name}")
    return found


def describe(plan: FunctionPlan) -> str:
    """One reviewable line: `name(inputs) -> outputs`, table decisions marked with *."""

    def mark(p: ParamPlan) -> str:
        star = "*" if p.source is Source.TABLE else ""
        listed = p.kind in ARRAY_KINDS or p.kind is ParamKind.STRINGS
        extra = f"[{p.partner}]" if listed and p.partner else ""
        extra += f"[{p.partner}]" if p.kind in _PARTNERED_KINDS else ""
        # A buffer its partner function sizes (sizes.QUERIED): returned when omitted.
        extra += f"[{p.measure_of[0]}()]" if p.measure is Measure.QUERIED else ""
        effect = f"@{p.effect}({p.effect_of})" if p.effect_of else f"@{p.effect}"
        parent = f"^{p.parent}" if p.parent else ""
        return f"{star}{p.name}{extra}:{p.kind}{effect if p.effect else ''}{parent}"

    ins = ", ".join(mark(p) for p in plan.inputs)
    outs = ", ".join(mark(p) for p in plan.outputs)
    result = {
        ResultKind.QUERY: "bool",
        ResultKind.STRING: "str",
        ResultKind.STRUCT: plan.result_ctype,
        ResultKind.VOID: "None",
        ResultKind.VALUE: plan.result_ctype,
    }.get(plan.result)
    right = result if result else f"({outs})"
    return f"{plan.name}({ins}) -> {right}"


_HOST_MEMORY_KINDS = frozenset({ParamKind.HOST_MEMORY, ParamKind.MAPPED_HOST_MEMORY})
# Other kinds whose partner `describe` shows: the input that sizes or types them.
_PARTNERED_KINDS = _HOST_MEMORY_KINDS | {ParamKind.SHAREABLE_HANDLE, ParamKind.ARGUMENT_BUFFER}
_NULL_DEFAULT_KINDS = frozenset(
    {
        ParamKind.POINTER,
        ParamKind.FUNCTION_POINTER,
        ParamKind.HANDLE,
        ParamKind.ARRAY,
        ParamKind.STRING,
    }
)

# (parameter kind, ctype, annotation), decided from a TypeKind; see _in_kind, _out_kind.
_Decision = tuple[ParamKind, str, str]
_STRINGS_ANNOTATION = "list[str | bytes] | tuple[str | bytes, ...] | _PointerLike"


def _count_before(f: Function, i: int) -> str | None:
    """The count of a string array: the nearest integer before it named num* (nvrtc.h's
    numOptions, numHeaders)."""
    return next(
        (q.name for q in reversed(f.params[:i]) if _COUNT_NAME.match(q.name)),
        None,
    )


class _Resolver:
    def __init__(
        self,
        model: ApiModel,
        types: TypeMapper | None = None,
        attributes: AttributeTypes | None = None,
    ) -> None:
        self.model = model
        self.types = types or TypeMapper(model)
        self.attributes = attributes or AttributeTypes(model, self.types)
        self.enumerators = {k.name for e in model.enums for k in e.enumerators}
        # Integer macros name defaults too (C++'s `flags = cudaMemAttachGlobal`).
        self.int_macros = {m.name for m in model.macros if m.kind == "int"}
        # The family's status enum (generator/status.py): cudaError_t, nvrtcResult.
        self.status = status_enum(model)
        self.error_names = self.status.names if self.status else []
        self.function_names = {f.name for f in model.functions} | {a.public for a in model.aliases}

    # ------------------------------------------------------------ types

    def _in_kind(self, t) -> _Decision:
        """(kind, ctype, annotation) of a parameter the caller passes."""
        types = self.types
        match kind := types.classify(t):
            case TypeKind.HANDLE:
                return ParamKind.HANDLE, types.handle_name(t), "_HandleLike"
            case TypeKind.CALLBACK if isinstance(t, TypedefRef) and t.name in PYTHON_CALLBACKS:
                return ParamKind.CALLBACK, t.name, "_CallbackLike"
            case TypeKind.CALLBACK | TypeKind.FUNCTION_POINTER:
                # A function pointer without a trampoline (cudaAsyncCallback, VDPAU's
                # VdpGetProcAddress *) is the address of a function the caller has.
                return ParamKind.FUNCTION_POINTER, "c_void_p", "_PointerLike"
            case TypeKind.VOID_POINTER:
                return ParamKind.POINTER, "c_void_p", "_PointerLike"
            case TypeKind.RECORD | TypeKind.OPAQUE_RECORD:
                name = types.record_class(t)
                return ParamKind.STRUCT, name, name
            case TypeKind.ENUM:
                return ParamKind.SCALAR, types.param_type(t), "int"
            case TypeKind.INTEGER if types.is_device_address(t):
                return ParamKind.SCALAR, types.param_type(t), "int | _PointerLike"
            case _ if kind in BUILTIN_KINDS:
                return ParamKind.SCALAR, types.param_type(t), types.number_annotation(kind)
            case TypeKind.CHAR_POINTER if types.points_to_const(t):
                return ParamKind.STRING, "c_char_p", "str | bytes | None"
            case _ if kind in POINTER_KINDS and self._strings(t):
                return ParamKind.STRINGS, "c_void_p", _STRINGS_ANNOTATION
            case _ if kind in POINTER_KINDS:
                pointee = types.pointee(t)
                # A pointer to a pointer (not to a handle) is an address; to data, a ref.
                if types.classify(pointee) in POINTER_KINDS - {TypeKind.HANDLE}:
                    return ParamKind.POINTER, "c_void_p", "_PointerLike"
                if types.points_to_const(t) and self._holds_host_fn(pointee):
                    return ParamKind.CALLBACK_RECORD, types.record_class(pointee), "_PointerLike"
                if (
                    types.classify(pointee) is TypeKind.HANDLE
                    and not types.points_to_const(t)
                    and isinstance(pointee, TypedefRef)
                    and pointee.name in ONE_HANDLE_POINTERS
                ):
                    return ParamKind.HANDLE_REF, types.handle_name(pointee), "_HandleLike"
                return ParamKind.REF, types.field_type(pointee), "_PointerLike"
        raise RenderError(f"no checked input for {t!r}")

    def _out_kind(self, t) -> _Decision:
        """(kind, storage ctype, annotation) of what a `T *` parameter returns."""
        types = self.types
        target = types.pointee(t)
        match kind := types.classify(target):
            case TypeKind.HANDLE:
                handle = types.handle_name(target)
                return ParamKind.HANDLE, handle, handle
            case TypeKind.VOID:
                return (
                    ParamKind.ADDRESS,
                    "c_void_p",
                    "int",
                )  # a `void *` the header says is written as one
            case TypeKind.ENUM if (enum_class := types.enum_class(target)) is not None:
                return ParamKind.ENUM, types.field_type(target), enum_class
            case TypeKind.CHAR:
                return ParamKind.CHAR_BUFFER, "c_char", "str"
            case TypeKind.BOOL | TypeKind.FLOAT | TypeKind.INTEGER | TypeKind.ENUM:
                return ParamKind.SCALAR, types.field_type(target), types.number_annotation(kind)
            case TypeKind.RECORD | TypeKind.OPAQUE_RECORD:
                name = types.record_class(target)
                return ParamKind.STRUCT, name, name
            case TypeKind.CHAR_POINTER:
                return ParamKind.CSTRING, "c_char_p", "str | None"
            case _ if kind in POINTER_KINDS:
                return ParamKind.ADDRESS, "c_void_p", "int"
        raise RenderError(f"no checked output for {t!r}")

    def _strings(self, t) -> bool:
        """`const char *const *`: C reads an array of strings it does not change."""
        types = self.types
        pointee = types.pointee(t)
        return (
            types.classify(pointee) is TypeKind.CHAR_POINTER
            and types.points_to_const(t)
            and types.points_to_const(pointee)
        )

    def _holds_host_fn(self, t) -> bool:
        """A record with a host function member (cudaHostNodeParams,
        CUDA_HOST_NODE_PARAMS): its `fn` may be a Python callable in the checked layer."""
        if self.types.classify(t) is not TypeKind.RECORD:
            return False
        ref = self.types.resolve(t)
        assert isinstance(ref, RecordRef)
        record = self.types.records[ref.name]
        return any(
            isinstance(f.type, TypedefRef) and f.type.name in HOST_FUNCTIONS for f in record.fields
        )

    # ------------------------------------------------------------ classification

    def documented_output(self, f: Function, name: str) -> bool:
        if name.endswith("_out"):
            return True
        doc = f.doc
        if doc is None:
            return False
        if doc.direction(name) == "out" and self._one_value_out(f, name):
            return True  # `\param[out] x` (nvrtc.h's `\param [out] x`)
        text = doc.param(name) or ""
        if _RETURNED.search(text):
            return True
        word = re.compile(r"(?<![\w.])\*?" + re.escape(name) + r"\b")
        for paragraph in doc.description:
            for sentence in re.split(r"(?<=\.)\s+", paragraph):
                if word.search(sentence) and _RETURN_VERB.search(sentence):
                    return True
        return False

    def _one_value_out(self, f: Function, name: str) -> bool:
        """Whether a `[out]` parameter receives one value: not a `char *` the caller sizes
        (nvrtcGetPTX's ptx, sized by nvrtcGetPTXSize) nor an array ("sorted array of
        supported architectures"), which the caller's buffer must hold whole."""
        p = next(q for q in f.params if q.name == name)
        if self.types.classify(p.type) is TypeKind.CHAR_POINTER:
            return False
        return not re.search(r"\barray\b", (f.doc.param(name) if f.doc else None) or "", re.I)

    def documented_update(self, f: Function, name: str) -> bool:
        """A \\note naming the parameter says the call updates its value."""
        if f.doc is None:
            return False
        word = re.compile(r"(?<![\w.])\*?" + re.escape(name) + r"\b")
        return any(word.search(n) and _UPDATED.search(n) for n in f.doc.notes)

    def may_be_output(self, t) -> bool:
        """A non-const pointer to something other than void or a function."""
        kind = self.types.classify(t)
        return kind in _MAY_BE_WRITTEN and not self.types.points_to_const(t)

    def roles(self, f: Function) -> list[tuple[Role, Source]]:
        """(role, source) per parameter."""
        found = []
        launch_inputs = _launch_inputs(f)
        for p in f.params:
            override = _override(f.name, p.name)
            if override is not None:
                found.append((override[0], Source.TABLE))
            elif p.name in launch_inputs:
                found.append((Role.IN, Source.INFERRED))
            elif not self.may_be_output(p.type):
                found.append((Role.IN, Source.TYPE))
            elif self.documented_update(f, p.name):
                found.append((Role.INOUT, Source.INFERRED))
            elif self.documented_output(f, p.name):
                found.append((Role.OUT, Source.INFERRED))
            else:
                found.append((Role.IN, Source.INFERRED))
        return found

    def plan(self, public: str, f: Function) -> FunctionPlan:
        types = self.types
        roles = self.roles(f)
        params: list[ParamPlan | None] = [None] * len(f.params)
        # Arrays with a count: a run of output pointers right before a `size_t *numX`.
        for i, p in enumerate(f.params):
            if not (_COUNT_NAME.match(p.name) and self.may_be_output(p.type)):
                continue
            if types.classify(types.pointee(p.type)) not in BUILTIN_KINDS:
                continue
            run = []
            shape = None
            j = i - 1
            while j >= 0 and roles[j][0] is Role.OUT and self.may_be_output(f.params[j].type):
                element_shape = self._element_shape(f.params[j].type)
                if element_shape is None or shape not in (None, element_shape):
                    break
                shape = element_shape
                run.append(j)
                j -= 1
            if not run:
                continue
            source = Source.TABLE if roles[i][1] is Source.TABLE else Source.INFERRED
            params[i] = ParamPlan(
                p.name,
                _py_name(p.name),
                Role.COUNT,
                ParamKind.COUNT,
                types.field_type(types.pointee(p.type)),
                "int",
                self._doc(f, p.name),
                source=source,
            )
            for j in reversed(run):
                q = f.params[j]
                element = types.pointee(q.type)
                if types.points_to_const(element):
                    kind, ctype = ParamKind.BORROWED_ARRAY, types.field_type(types.pointee(element))
                    annotation = f"list[{self._py_element(types.pointee(element))}] | None"
                else:
                    kind, ctype = ParamKind.ARRAY, types.field_type(element)
                    annotation = f"list[{self._py_element(element)}]"
                params[j] = ParamPlan(
                    q.name,
                    _py_name(q.name),
                    Role.OUT,
                    kind,
                    ctype,
                    annotation,
                    self._doc(f, q.name),
                    source=roles[j][1],
                    partner=p.name,
                )
        for i, p in enumerate(f.params):
            if params[i] is not None:
                continue
            role, source = roles[i]
            doc = self._doc(f, p.name)
            if role in (Role.OUT, Role.INOUT):
                kind, ctype, annotation = self._out_kind(p.type)
                partner = None
                if (f.name, p.name) in FIXED_LENGTH_OUTPUTS:
                    element = types.pointee(p.type)
                    if types.classify(p.type) is TypeKind.CHAR_POINTER:
                        kind, ctype, annotation = ParamKind.FIXED_BYTES, "c_char", "bytes"
                    else:
                        kind, ctype = ParamKind.SIZED_ARRAY, types.field_type(element)
                        annotation = f"list[{self._py_element(element)}]"
                    partner = str(FIXED_LENGTH_OUTPUTS[f.name, p.name][0])
                elif kind is ParamKind.CHAR_BUFFER:
                    partner = self._capacity(f, i)
                elif (f.name, p.name) in COUNTED_ARRAYS:
                    partner = self._counted_by(f, roles)[p.name]
                    element = types.pointee(p.type)
                    kind, ctype = ParamKind.COUNTED_ARRAY, types.field_type(element)
                    annotation = f"list[{self._py_element(element)}]"
                    source = Source.TABLE
                elif (f.name, p.name) in SHAREABLE_HANDLES:
                    kind, ctype, annotation = ParamKind.SHAREABLE_HANDLE, "c_void_p", "object"
                    partner = self._handle_type(f, SHAREABLE_HANDLES[f.name, p.name][0])
                elif role is Role.OUT and (size := self._size(f, i)) is not None:
                    element = types.pointee(p.type)
                    kind, ctype = ParamKind.SIZED_ARRAY, types.field_type(element)
                    annotation = f"list[{self._py_element(element)}]"
                    partner = size
                params[i] = ParamPlan(
                    p.name,
                    _py_name(p.name),
                    role,
                    kind,
                    ctype,
                    annotation,
                    doc,
                    source=source,
                    partner=partner,
                )
            else:
                kind, ctype, annotation = self._in_kind(p.type)
                if kind is not ParamKind.STRINGS and (f.name, p.name) in READ_STRINGS:
                    kind, ctype, annotation = ParamKind.STRINGS, "c_void_p", _STRINGS_ANNOTATION
                    source = Source.TABLE
                params[i] = ParamPlan(
                    p.name,
                    _py_name(p.name),
                    Role.IN,
                    kind,
                    ctype,
                    annotation,
                    doc,
                    self._default(f, p.default, kind),
                    source=source,
                    partner=_count_before(f, i) if kind is ParamKind.STRINGS else None,
                )
        # Attribute values (generator/attributes.py): typed by the attribute argument.
        if f.name in ATTRIBUTE_FUNCTIONS:
            spec = ATTRIBUTE_FUNCTIONS[f.name]
            params = [
                (
                    self.attributes.plan_param(f.name, q)
                    if q and q.name == spec.value
                    else (
                        self.attributes.size_param(f.name, q)
                        if q and q.name == spec.size_inout
                        else q
                    )
                )
                for q in params
            ]
        groups = OPTION_FUNCTIONS.get(f.name, ())
        plans = _trailing_defaults(
            _typed_options(
                groups,
                _argument_buffers(
                    f,
                    _images(
                        f,
                        _pair_callbacks(_kernel_params(f, [q for q in params if q is not None])),
                    ),
                ),
            )
        )
        result, result_ctype = self._result(f)
        errors = self._errors(f)
        if (
            result is ResultKind.ERROR
            and not any(q.role in (Role.OUT, Role.INOUT) for q in plans)
            and self._is_query(f, errors)
        ):
            result = ResultKind.QUERY
            errors = tuple(e for e in errors if e != "cudaErrorNotReady")
        return FunctionPlan(
            public,
            public,
            f,
            tuple(plans),
            result,
            result_ctype,
            errors,
            self._replacement(f),
            option_groups=groups,
        )

    def _element_shape(self, t) -> str | None:
        """What an array of this pointer's pointee is, for grouping arrays with a count:
        "filled" for handles and records the function writes into caller storage,
        "borrowed" for `const T **` where it hands back its own array; None otherwise."""
        element = self.types.pointee(t)
        kind = self.types.classify(element)
        if kind in POINTER_KINDS - {TypeKind.HANDLE} and self.types.points_to_const(element):
            return "borrowed"
        if kind in (TypeKind.HANDLE, TypeKind.RECORD, TypeKind.OPAQUE_RECORD):
            return "filled"
        return None

    def _py_element(self, t) -> str:
        match kind := self.types.classify(t):
            case TypeKind.HANDLE:
                return self.types.handle_name(t)
            case TypeKind.RECORD | TypeKind.OPAQUE_RECORD:
                return self.types.record_class(t)
            case _ if kind in BUILTIN_KINDS:
                return self.types.number_annotation(kind)
        return "int"

    def _counted_by(self, f: Function, roles: list[tuple[Role, Source]]) -> dict[str, str]:
        """COUNTED_ARRAYS' entries of f, checked: each an output pointer whose count is an
        in-out pointer to an integer."""
        found = {}
        index = {p.name: i for i, p in enumerate(f.params)}
        for (function, array), (count, _) in COUNTED_ARRAYS.items():
            if function != f.name:
                continue
            i, j = index.get(array), index.get(count)
            if i is None or j is None or roles[i][0] is not Role.OUT:
                raise RenderError(f"resolve.COUNTED_ARRAYS: {f.name} has no output {array}")
            counted = self.types.classify(self.types.pointee(f.params[j].type))
            if roles[j][0] is not Role.INOUT or counted not in BUILTIN_KINDS:
                raise RenderError(f"resolve.COUNTED_ARRAYS: {f.name}.{count} is no in-out count")
            found[array] = count
        return found

    def _handle_type(self, f: Function, name: str) -> str:
        """SHAREABLE_HANDLES' handle type input of f, checked: of a handle type enum."""
        p = next((q for q in f.params if q.name == name), None)
        if p is None or self.types.enum_class(p.type) not in _HANDLE_TYPE_ENUMS:
            raise RenderError(f"resolve.SHAREABLE_HANDLES: {f.name} has no handle type {name}")
        return name

    def _capacity(self, f: Function, i: int) -> str:
        """A char buffer's length: the integer parameter right after it."""
        if i + 1 < len(f.params):
            nxt = f.params[i + 1]
            if self.types.classify(nxt.type) in BUILTIN_KINDS and nxt.name in (
                "len",
                "length",
                "size",
            ):
                return nxt.name
        raise RenderError(
            f"{f.name}.{f.params[i].name}: a char buffer output without a length parameter"
        )

    def _size(self, f: Function, i: int) -> str | None:
        """The input count an output array of numbers or handles is as long as: the
        integer parameter named num<parameter> (cudaLibraryEnumerateKernels' numKernels
        for kernels) or whose \\param text says it is its size ("Count of requested operations and
        size of capabilities"); other counts (cudaGraphAddKernelNode's numDependencies
        beside its pGraphNode, cudaMemcpyBatchAsync's count) size something else."""
        element = self.types.pointee(f.params[i].type)
        if self.types.classify(element) not in BUILTIN_KINDS | {TypeKind.HANDLE, TypeKind.RECORD}:
            return None
        name = f.params[i].name
        # "size of pCudaDevices", or with up to four words between ("The size of the
        # output device array pCudaDevices": cudaGLGetDevices), or "the number of groups
        # in result" (cudaDevSmResourceSplit).
        word = re.compile(
            r"\b(?:size|length|number of \w+) (?:of|in) (?:\w+ ){0,4}" + re.escape(name) + r"\b"
        )
        sizes = [
            q.name
            for q in f.params
            if self.types.classify(q.type) in BUILTIN_KINDS
            and (q.name.lower() == "num" + name.lower() or word.search(self._doc(f, q.name)))
        ]
        return sizes[0] if len(sizes) == 1 else None

    def _doc(self, f: Function, name: str) -> str:
        if f.doc is None:
            return ""
        text = f.doc.param(name)
        if text is None:
            names = [p.name for p in f.params]
            at = f.doc.param_at(names, names.index(name))
            text = at.text if at else None
        return text or ""

    def _default(self, f: Function, default: str | None, kind: ParamKind) -> str | None:
        if default is None:
            return None
        if kind in _NULL_DEFAULT_KINDS:
            # C's null pointer constants; 13.1+ spells `__dv(NULL)` where older headers wrote 0.
            if default not in _NULL_POINTER_SPELLINGS:
                raise RenderError(f"{f.name}: pointer default {default!r}")
            return "None"
        if re.fullmatch(r"-?\d+", default):
            return default
        if default in self.enumerators or default in self.int_macros:
            return default
        raise RenderError(f"{f.name}: cannot express the default {default!r} in Python")

    def _result(self, f: Function) -> tuple[ResultKind, str]:
        t = f.result
        if isinstance(t, TypedefRef | EnumRef) and self.status and t.name == self.status.result:
            return ResultKind.ERROR, ""
        types = self.types
        match kind := types.classify(t):
            case TypeKind.VOID:
                return ResultKind.VOID, ""
            case _ if kind in POINTER_KINDS and types.classify(types.pointee(t)) in BUILTIN_KINDS:
                return ResultKind.STRING, "c_char_p"
            case TypeKind.RECORD | TypeKind.OPAQUE_RECORD:
                return ResultKind.STRUCT, types.record_class(t)
            case TypeKind.ENUM:
                return ResultKind.VALUE, types.result_type(t)  # returned as C returns it
            case _ if kind in BUILTIN_KINDS:
                return ResultKind.VALUE, types.result_type(t)
        raise RenderError(f"{f.name}: no checked form for result {t!r}")

    def _errors(self, f: Function) -> tuple[str, ...]:
        if f.doc is None:
            return ()
        words = re.findall(r"\w+", f.doc.returns)
        known = set(self.error_names)
        seen: list[str] = []
        for w in words:
            if w in known and self.status and w != self.status.success and w not in seen:
                seen.append(w)
        return tuple(seen)

    def _is_query(self, f: Function, errors: tuple[str, ...]) -> bool:
        # cudaStreamQuery and cudaEventQuery: "Returns cudaSuccess if ... or
        # cudaErrorNotReady if not". Other functions list NotReady as a failure.
        return (
            "cudaErrorNotReady" in errors and f.doc is not None and f.doc.brief.startswith("Quer")
        )

    def _replacement(self, f: Function) -> str | None:
        if not f.deprecated or f.doc is None:
            return None
        texts = [f.doc.deprecated or ""] + list(f.doc.description)
        for text in texts:
            for pattern in _REPLACEMENT:
                m = pattern.search(text)
                if m and m.group(1) in self.function_names and m.group(1) != f.name:
                    return m.group(1)
        return None


# Builtins the checked functions' bodies name (`x.__class__ is not bytes`): a parameter
# or output so named would shadow them in its function (cudaLibraryGetGlobal's `bytes`).
_BODY_BUILTINS = frozenset({"bytes", "int"})


def _py_name(name: str) -> str:
    return name + "_" if keyword.iskeyword(name) or name in _BODY_BUILTINS else name


def _pair_callbacks(params: list[ParamPlan]) -> list[ParamPlan]:
    """A callback takes the function's one `void *` input as its data: whatever the
    Python callable is called with (default None). Without exactly one, it is a
    function pointer only (an address, never memory)."""
    callbacks = [i for i, p in enumerate(params) if p.kind is ParamKind.CALLBACK]
    data = [
        i
        for i, p in enumerate(params)
        if p.kind is ParamKind.POINTER and p.role is Role.IN and p.ctype == "c_void_p"
    ]
    out = list(params)
    for i in callbacks:
        if len(callbacks) != 1 or len(data) != 1:
            out[i] = ParamPlan(
                **{
                    **params[i].__dict__,
                    "kind": ParamKind.FUNCTION_POINTER,
                    "ctype": "c_void_p",
                    "py_type": "_PointerLike",
                }
            )
            continue
        j = data[0]
        out[i] = ParamPlan(**{**params[i].__dict__, "partner": params[j].name})
        out[j] = ParamPlan(
            **{
                **params[j].__dict__,
                "kind": ParamKind.CALLBACK_DATA,
                "py_type": "object",
                "default": "None",
                "partner": params[i].name,
            }
        )
    return out


def _device_function_params(f: Function) -> dict[str, str]:
    """generator/device_functions.py's decision for a function's parameters."""
    doc = f.doc
    return device_functions.classify(
        f.name, [(p.name, p.type, (doc.param(p.name) or "") if doc else "") for p in f.params]
    )


def _launch_inputs(f: Function) -> set[str]:
    """The `void **` parameters of a function that takes a device function: kernel
    arguments or the driver's `extra` launch options, which C reads and never writes,
    whatever the docs' sentences say (cuLaunchKernel's would make both outputs)."""
    if not _device_function_params(f):
        return set()
    return {p.name for p in f.params if device_functions.is_void_pointer_array(p.type)}


def _kernel_params(f: Function, params: list[ParamPlan]) -> list[ParamPlan]:
    """Device-function inputs and the kernel arguments beside them take their own kinds
    (generator/device_functions.py decides which parameters they are)."""
    found = _device_function_params(f)
    func = next((n for n, k in found.items() if k == device_functions.DEVICE_FUNCTION), None)
    out = []
    for p in params:
        what = found.get(p.name)
        # The driver's device functions are handles (cuLaunchKernel's `CUfunction f`).
        taken = (ParamKind.POINTER, ParamKind.HANDLE)
        if p.role is not Role.IN or p.kind not in taken or what is None:
            out.append(p)
        elif what == device_functions.DEVICE_FUNCTION:
            out.append(ParamPlan(**{**p.__dict__, "kind": ParamKind.DEVICE_FUNCTION}))
        else:
            out.append(ParamPlan(**{**p.__dict__, "kind": ParamKind.KERNEL_ARGS, "partner": func}))
    return out


def _images(f: Function, params: list[ParamPlan]) -> list[ParamPlan]:
    """The memory and file name inputs IMAGES names are kernel images."""
    return [
        (
            ParamPlan(**{**p.__dict__, "kind": ParamKind.IMAGE})
            if (f.name, p.name) in IMAGES and p.kind in (ParamKind.POINTER, ParamKind.STRING)
            else p
        )
        for p in params
    ]


def _argument_buffers(f: Function, params: list[ParamPlan]) -> list[ParamPlan]:
    """The `extra` inputs ARGUMENT_BUFFERS names are argument buffers, checked: each a
    `void **` input (an address today) beside the kernelParams it names."""
    out = []
    names = {p.name: p for p in params}
    for p in params:
        entry = ARGUMENT_BUFFERS.get((f.name, p.name))
        if entry is None:
            out.append(p)
            continue
        partner = names.get(entry[0])
        if p.kind is not ParamKind.POINTER or partner is None or partner.role is not Role.IN:
            raise RenderError(
                f"resolve.ARGUMENT_BUFFERS: {f.name}.{p.name} is no `void **` input beside "
                f"an input {entry[0]}"
            )
        out.append(
            ParamPlan(**{**p.__dict__, "kind": ParamKind.ARGUMENT_BUFFER, "partner": entry[0]})
        )
    return out


def _typed_options(groups, params: list[ParamPlan]) -> list[ParamPlan]:
    """A typed option group's parameters default to None (no options): the typed form
    needs no count, and a mapping leaves the values out (cudart._jitoptions)."""
    names = {n for g in groups for n in (g.count, g.options, g.values)}
    found = {p.name for p in params if p.role is Role.IN} & names
    if found != names:
        raise RenderError(f"jit_options.FUNCTIONS: no inputs {sorted(names - found)}")
    return [
        ParamPlan(**{**p.__dict__, "default": "None"}) if p.name in names else p for p in params
    ]


def _trailing_defaults(params: list[ParamPlan]) -> list[ParamPlan]:
    """Python allows defaults only at the end: drop those before an input without one."""
    out = list(params)
    required_seen = False
    for i in range(len(out) - 1, -1, -1):
        p = out[i]
        if p.role not in (Role.IN, Role.INOUT):
            continue
        if p.default is None or p.role is Role.INOUT:
            required_seen = True
        elif required_seen:
            out[i] = ParamPlan(**{**p.__dict__, "default": None})
    return out
