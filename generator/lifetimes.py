"""What the checked layer keeps track of past a call: host memory and graphs' callables.

Two reviewed tables, applied to the plans resolve.py makes (`apply`), each entry with
the reason it is there; tests/generator/test_lifetimes.py holds them, and the outputs snapshots
show their effect (`pHost[size]:host_memory`, `graph:handle@destroys`).

* HOST_MEMORY: `void **` outputs that point at host-accessible memory whose size an
  input gives. The checked function returns a cudart.HostMemory (an int address that
  is also a buffer of that many bytes) instead of the int. Device memory (cudaMalloc)
  is not host-accessible and stays an int.
* EFFECTS: what a successful call changes in cudart.callbacks' record of which graph
  or executable graph holds which Python callables (host nodes), so destroying them
  through the checked layer releases the callables, which call frees host memory
  (a HostMemory passed to it is marked released), and which call ends a handle's life
  (DESTROYS: the handle object passed to it is marked destroyed, cudart._handles, and
  the checked layer refuses it from then on with cudart.HandleDestroyedError). What a
  DESTROYS or FREES call ends is marked before C, atomically, and unmarked if C refuses
  (cudart._checked.claim), so threads ending one object reach C once.
* INTEGER_HANDLES: integer typedefs whose values are handles (texture and surface
  objects). Their parameters take the kind INTEGER_HANDLE: the checked layer returns
  an int subclass named after the typedef (cudart._handles.IntegerHandle), which a
  DESTROYS entry marks like any handle object.
* PARENTS: handle kinds whose objects die with another handle (a graph's nodes, a
  module's functions, a library's kernels, a driver context's streams): a call that
  returns one and takes one input of a parent kind made it that parent's child (the
  calling thread's current context where the table says so and the call takes no
  handle). The checked layer records the child (cudart._handles.add_child), and a
  checked destroy of the parent marks its children, so a call with one raises
  HandleDestroyedError before C. The mark is the destroyed subclass a destroy gives:
  the hot path's class test refuses it at no cost to a live handle.
* NOT_MARKED: every other function whose name says it ends something (DESTROY_LIKE),
  with why no object is marked. tests/generator/test_lifetimes.py fails on a function of any
  version that DESTROY_LIKE matches and neither table decides, and `generate` reports
  it, so a new version's destroy cannot slip through unmarked.

A table entry for a function a version lacks is skipped; one whose parameters do not
match the function is a RenderError, so a header change cannot go unnoticed.
"""

from __future__ import annotations

import dataclasses
import re

from .ctypes_map import RenderError
from .model import Pointer, TypedefRef
from .plan import CURRENT_CONTEXT, Effect, FunctionPlan, ParamKind, ParamPlan, Role

# (function as declared, output) -> (the input that sizes it, why it is host memory).
# A scalar input gives the size in bytes (HOST_MEMORY); a pointer input is the host
# memory the output maps (MAPPED_HOST_MEMORY: that same object where the addresses
# agree, the int otherwise).
HOST_MEMORY: dict[tuple[str, str], tuple[str, str]] = {
    ("cudaHostAlloc", "pHost"): ("size", "page-locked host memory of size bytes"),
    ("cudaMallocHost", "ptr"): ("size", "page-locked host memory of size bytes"),
    ("cudaMallocManaged", "devPtr"): ("size", "managed memory: host-accessible, size bytes"),
    ("cudaHostGetDevicePointer", "pDevice"): (
        "pHost",
        "with UVA the device address of cudaHostAlloc memory is pHost's own",
    ),
    # cuda.h (the driver API)
    ("cuMemAllocHost_v2", "pp"): ("bytesize", "page-locked host memory of bytesize bytes"),
    ("cuMemHostAlloc", "pp"): ("bytesize", "page-locked host memory of bytesize bytes"),
}

# Integer typedef -> why its values are handles (objects the runtime creates and destroys).
INTEGER_HANDLES: dict[str, str] = {
    "cudaTextureObject_t": "made by cudaCreateTextureObject, ended by cudaDestroyTextureObject",
    "cudaSurfaceObject_t": "made by cudaCreateSurfaceObject, ended by cudaDestroySurfaceObject",
    # cuda.h (the driver API)
    "CUtexObject": "made by cuTexObjectCreate, ended by cuTexObjectDestroy",
    "CUsurfObject": "made by cuSurfObjectCreate, ended by cuSurfObjectDestroy",
    "CUmemGenericAllocationHandle": (
        "made by cuMemCreate / cuMulticastCreate / cuMemImportFromShareableHandle / "
        "cuMemRetainAllocationHandle, ended by cuMemRelease"
    ),
}

# (function as declared, parameter) -> (effect, the other parameter or None, why).
# The handle kinds whose destroy (a DESTROYS effect) also releases the Python callables
# of host nodes that only they held (cudart.callbacks' holders).
RELEASES_CALLABLES = frozenset({"cudaGraph_t", "cudaGraphExec_t", "CUgraph", "CUgraphExec"})

EFFECTS: dict[tuple[str, str], tuple[Effect, str | None, str]] = {
    ("cudaFreeHost", "ptr"): (Effect.FREES, None, "frees cudaHostAlloc/cudaMallocHost memory"),
    ("cudaFree", "devPtr"): (Effect.FREES, None, "frees cudaMallocManaged memory too"),
    ("cudaGraphDestroy", "graph"): (Effect.DESTROYS, None, "the graph's nodes go with it"),
    ("cudaGraphExecDestroy", "graphExec"): (Effect.DESTROYS, None, "its copied nodes go"),
    # Handles a successful call ends: using one again hands C a dangling pointer (a
    # second cudaStreamDestroy / cudaEventDestroy segfaults).
    ("cudaStreamDestroy", "stream"): (Effect.DESTROYS, None, "the stream is destroyed"),
    ("cudaEventDestroy", "event"): (Effect.DESTROYS, None, "the event is destroyed"),
    ("cudaGraphDestroyNode", "node"): (
        Effect.DESTROYS,
        None,
        "removes the node from its graph and frees it",
    ),
    ("cudaMemPoolDestroy", "memPool"): (
        Effect.DESTROYS,
        None,
        "the pool handle ends (its memory goes once its allocations are freed)",
    ),
    ("cudaFreeArray", "array"): (Effect.DESTROYS, None, "frees the CUDA array"),
    ("cudaFreeMipmappedArray", "mipmappedArray"): (
        Effect.DESTROYS,
        None,
        "frees the mipmapped array",
    ),
    ("cudaDestroyExternalMemory", "extMem"): (
        Effect.DESTROYS,
        None,
        "the imported memory object is destroyed",
    ),
    ("cudaDestroyExternalSemaphore", "extSem"): (
        Effect.DESTROYS,
        None,
        "the imported semaphore is destroyed",
    ),
    # The connection handle is passed by address (ParamKind.HANDLE_REF), and ended.
    ("cudaEGLStreamConsumerDisconnect", "conn"): (
        Effect.DESTROYS,
        None,
        "disconnecting ends the connection",
    ),
    ("cudaEGLStreamProducerDisconnect", "conn"): (
        Effect.DESTROYS,
        None,
        "disconnecting ends the connection",
    ),
    ("cudaGraphicsUnregisterResource", "resource"): (
        Effect.DESTROYS,
        None,
        "unregistering frees the graphics resource handle",
    ),
    ("cudaLibraryUnload", "library"): (
        Effect.DESTROYS,
        None,
        "the library and the kernels got from it are unloaded",
    ),
    ("cudaExecutionCtxDestroy", "ctx"): (
        Effect.DESTROYS,
        None,
        "the execution (green) context is destroyed",
    ),
    ("cudaLogsUnregisterCallback", "callback"): (
        Effect.DESTROYS,
        None,
        "the registration handle ends with the registration",
    ),
    ("cudaDeviceUnregisterAsyncNotification", "callback"): (
        Effect.DESTROYS,
        None,
        "the registration handle ends with the registration",
    ),
    ("cudaDestroyTextureObject", "texObject"): (
        Effect.DESTROYS,
        None,
        "the texture object is destroyed (an INTEGER_HANDLES value)",
    ),
    ("cudaDestroySurfaceObject", "surfObject"): (
        Effect.DESTROYS,
        None,
        "the surface object is destroyed (an INTEGER_HANDLES value)",
    ),
    # cuda.h (the driver API): handles a successful call ends.
    ("cuStreamDestroy_v2", "hStream"): (
        Effect.DESTROYS,
        None,
        "the stream is destroyed (a second destroy hands C a dangling pointer)",
    ),
    ("cuEventDestroy_v2", "hEvent"): (
        Effect.DESTROYS,
        None,
        "the event is destroyed",
    ),
    ("cuCtxDestroy_v2", "ctx"): (
        Effect.DESTROYS,
        None,
        "the context is destroyed, whatever its usage count",
    ),
    ("cuGreenCtxDestroy", "hCtx"): (
        Effect.DESTROYS,
        None,
        "the green context is destroyed",
    ),
    ("cuModuleUnload", "hmod"): (
        Effect.DESTROYS,
        None,
        "the module and the functions got from it are unloaded",
    ),
    ("cuLibraryUnload", "library"): (
        Effect.DESTROYS,
        None,
        "the library and the kernels got from it are unloaded",
    ),
    ("cuLinkDestroy", "state"): (
        Effect.DESTROYS,
        None,
        "the linker invocation and its cubinOut are freed",
    ),
    ("cuMemPoolDestroy", "pool"): (
        Effect.DESTROYS,
        None,
        "the pool handle ends (its memory goes once its allocations are freed)",
    ),
    ("cuGraphDestroy", "hGraph"): (
        Effect.DESTROYS,
        None,
        "the graph's nodes go with it",
    ),
    ("cuGraphExecDestroy", "hGraphExec"): (
        Effect.DESTROYS,
        None,
        "its copied nodes go",
    ),
    ("cuGraphDestroyNode", "hNode"): (
        Effect.DESTROYS,
        None,
        "removes the node from its graph and frees it",
    ),
    ("cuArrayDestroy", "hArray"): (
        Effect.DESTROYS,
        None,
        "frees the CUDA array",
    ),
    ("cuMipmappedArrayDestroy", "hMipmappedArray"): (
        Effect.DESTROYS,
        None,
        "frees the mipmapped array",
    ),
    ("cuDestroyExternalMemory", "extMem"): (
        Effect.DESTROYS,
        None,
        "the imported memory object is destroyed",
    ),
    ("cuDestroyExternalSemaphore", "extSem"): (
        Effect.DESTROYS,
        None,
        "the imported semaphore is destroyed",
    ),
    ("cuGraphicsUnregisterResource", "resource"): (
        Effect.DESTROYS,
        None,
        "unregistering frees the graphics resource handle",
    ),
    ("cuTexRefDestroy", "hTexRef"): (
        Effect.DESTROYS,
        None,
        "the (deprecated) texture reference is destroyed",
    ),
    ("cuLogsUnregisterCallback", "callback"): (
        Effect.DESTROYS,
        None,
        "the registration handle ends with the registration",
    ),
    ("cuDeviceUnregisterAsyncNotification", "callback"): (
        Effect.DESTROYS,
        None,
        "the registration handle ends with the registration",
    ),
    ("cuTexObjectDestroy", "texObject"): (
        Effect.DESTROYS,
        None,
        "the texture object is destroyed (an INTEGER_HANDLES value)",
    ),
    ("cuSurfObjectDestroy", "surfObject"): (
        Effect.DESTROYS,
        None,
        "the surface object is destroyed (an INTEGER_HANDLES value)",
    ),
    ("cuMemRelease", "handle"): (
        Effect.DESTROYS,
        None,
        "the allocation handle ends (an INTEGER_HANDLES value); mappings keep the memory "
        "until unmapped",
    ),
    ("cuMemFreeHost", "p"): (Effect.FREES, None, "frees cuMemAllocHost/cuMemHostAlloc memory"),
    ("cudaGraphInstantiate", "pGraphExec"): (Effect.COPIES, "graph", "copies graph's nodes"),
    ("cudaGraphInstantiateWithFlags", "pGraphExec"): (
        Effect.COPIES,
        "graph",
        "copies graph's nodes",
    ),
    ("cudaGraphInstantiateWithParams", "pGraphExec"): (
        Effect.COPIES,
        "graph",
        "copies graph's nodes",
    ),
    ("cudaGraphClone", "pGraphClone"): (Effect.COPIES, "originalGraph", "a copy of the graph"),
    ("cudaGraphAddChildGraphNode", "graph"): (
        Effect.COPIES,
        "childGraph",
        "the child node holds a copy of childGraph",
    ),
    ("cudaGraphExecUpdate", "hGraphExec"): (
        Effect.COPIES,
        "hGraph",
        "copies hGraph's node parameters into the exec",
    ),
    ("cudaGraphExecChildGraphNodeSetParams", "hGraphExec"): (
        Effect.COPIES,
        "childGraph",
        "copies childGraph's nodes into the exec",
    ),
    ("cudaGraphAddHostNode", "pGraphNode"): (
        Effect.NODE_OF,
        "graph",
        "cudaGraphHostNodeSetParams(node) finds the node's graph by it",
    ),
    # The driver API's copies and host nodes: the same objects as the runtime's (a handle
    # of either API is one value, cudart._handles; its destroys are above).
    ("cuGraphInstantiateWithFlags", "phGraphExec"): (
        Effect.COPIES,
        "hGraph",
        "copies hGraph's nodes",
    ),
    ("cuGraphInstantiateWithParams", "phGraphExec"): (
        Effect.COPIES,
        "hGraph",
        "copies hGraph's nodes",
    ),
    ("cuGraphClone", "phGraphClone"): (Effect.COPIES, "originalGraph", "a copy of the graph"),
    ("cuGraphAddHostNode", "phGraphNode"): (
        Effect.NODE_OF,
        "hGraph",
        "cuGraphHostNodeSetParams(node) finds the node's graph by it",
    ),
}

# Handle kind (the typedef) -> (the kinds of parent whose destroy ends it, in order of
# preference, why). CURRENT_CONTEXT: the context current when a call that takes no handle
# made it (cuStreamCreate, cuModuleLoad), which cuCtxDestroy ends with it.
PARENTS: dict[str, tuple[tuple[str, ...], str]] = {
    "cudaGraphNode_t": (("cudaGraph_t",), "cudaGraphDestroy: the graph's nodes go with it"),
    "cudaKernel_t": (("cudaLibrary_t",), "cudaLibraryUnload unloads the kernels got from it"),
    # cuda.h (the driver API)
    "CUgraphNode": (("CUgraph",), "cuGraphDestroy: the graph's nodes go with it"),
    "CUkernel": (("CUlibrary",), "cuLibraryUnload unloads the kernels got from it"),
    "CUfunction": (
        ("CUmodule", "CUkernel"),
        "cuModuleUnload unloads the module's functions; a kernel's goes with its library",
    ),
    "CUmodule": (
        ("CUlibrary", CURRENT_CONTEXT),
        "cuLibraryGetModule's module is the library's; a loaded one is its context's",
    ),
    "CUstream": (
        ("CUgreenCtx", CURRENT_CONTEXT),
        "cuCtxDestroy / cuGreenCtxDestroy end the streams made in the context",
    ),
    "CUevent": ((CURRENT_CONTEXT,), "cuCtxDestroy ends the events made in the context"),
}

# The handle kind CURRENT_CONTEXT stands for: the driver's context (cuCtxDestroy).
CONTEXT_KIND = "CUcontext"
# Every kind a destroy of which marks children.
PARENT_KINDS = frozenset(
    CONTEXT_KIND if kind == CURRENT_CONTEXT else kind
    for kinds, _ in PARENTS.values()
    for kind in kinds
)

# A function whose name says it ends something: each must be decided, in EFFECTS (as
# DESTROYS or FREES) or in NOT_MARKED. Broad on purpose: a false match costs one entry.
DESTROY_LIKE = re.compile(
    r"Destroy|Free|Unload|Unregister|Release|Close|Reset|Trim|Remove|Delete|Detach"
    r"|Disconnect|Exit|Return|Drop|Dispose|Invalidate|Uninit|Finaliz"
)

# Function -> why a successful call marks no object.
NOT_MARKED: dict[str, str] = {
    "cudaFreeAsync": "frees device memory in stream order: an int address, no object",
    "cudaHostUnregister": "unpins the caller's memory, which stays the caller's to use",
    "cudaIpcCloseMemHandle": "unmaps an int device address: no object carries it",
    "cudaUserObjectRelease": (
        "drops count references: the caller's others and graphs' may keep it alive"
    ),
    "cudaGraphReleaseUserObject": "drops a graph's references; the caller's may remain",
    "cudaDeviceReset": (
        "ends every handle of the device at once; finding each object would need a "
        "registry of every live handle, paid by every create"
    ),
    "cudaThreadExit": "cudaDeviceReset's deprecated name: the same reason",
    "cudaCtxResetPersistingL2Cache": "resets cache lines: no handle ends",
    "cudaDeviceGraphMemTrim": "returns unused graph memory to the OS: no handle ends",
    "cudaMemPoolTrimTo": "returns the pool's unused memory to the OS: the pool lives",
    "cudaGraphRemoveDependencies": "removes edges between nodes that live on",
    "cudaGraphRemoveDependencies_v2": "removes edges between nodes that live on",
    "cudaGraphAddMemFreeNode": "adds a node that frees memory when the graph runs",
    "cudaGraphMemFreeNodeGetParams": "reads a free node's address",
    "cudaGLUnregisterBufferObject": "a GL buffer is a GL name (an int), no object",
    "cudaEGLStreamConsumerReleaseFrame": "hands a frame back; connection and resource live",
    "cudaEGLStreamProducerReturnFrame": "takes a frame back; connection and resource live",
    # NVRTC (its own header family, the same tables).
    "nvrtcDestroyProgram": (
        "takes the caller's nvrtcProgram storage by address (a ref), not a handle object; "
        "cudart.compile destroys the programs it creates"
    ),
    "nvrtcRemoveBundledHeaders": "removes headers installed under a path: no handle ends",
    # nvJitLink (a header family of its own).
    "nvJitLinkDestroy": (
        "takes the caller's nvJitLinkHandle storage by address (a ref), not a handle object; "
        "cudart.link destroys the handles it creates"
    ),
    # cuda.h (the driver API)
    "cuMemFree_v2": "frees a CUdeviceptr: an int address, no object (cuMemAllocManaged's too)",
    "cuMemFreeAsync": "frees device memory in stream order: an int address, no object",
    "cuMemAddressFree": "frees a reserved virtual address range: int addresses, no object",
    "cuMemHostUnregister": "unpins the caller's memory, which stays the caller's to use",
    "cuIpcCloseMemHandle": "unmaps an int device address: no object carries it",
    "cuCtxDetach": "drops one usage count: the context lives while another attach holds it",
    "cuDevicePrimaryCtxRelease_v2": (
        "drops one retain of the device's primary context: other retains (the runtime's) keep it"
    ),
    "cuDevicePrimaryCtxReset_v2": (
        "ends every handle of the primary context at once: cudaDeviceReset's reason"
    ),
    "cuCtxResetPersistingL2Cache": "resets cache lines: no handle ends",
    "cuDeviceGraphMemTrim": "returns unused graph memory to the OS: no handle ends",
    "cuMemPoolTrimTo": "returns the pool's unused memory to the OS: the pool lives",
    "cuGraphRemoveDependencies": "removes edges between nodes that live on",
    "cuGraphRemoveDependencies_v2": "removes edges between nodes that live on",
    "cuGraphAddMemFreeNode": "adds a node that frees memory when the graph runs",
    "cuGraphMemFreeNodeGetParams": "reads a free node's address",
    "cuUserObjectRelease": (
        "drops count references: the caller's others and graphs' may keep it alive"
    ),
    "cuGraphReleaseUserObject": "drops a graph's references; the caller's may remain",
    "cuLogicalEndpointDestroy": (
        "ends the endpoint of an id the caller reserved (an int): the id stays reserved "
        "until cuLogicalEndpointIdRelease"
    ),
    "cuLogicalEndpointIdRelease": "returns a range of reserved ids (ints): no object carries them",
}


def undecided(names: list[str] | set[str]) -> list[str]:
    """The destroy-like functions among `names` that neither EFFECTS nor NOT_MARKED
    decides (DESTROY_LIKE)."""
    decided = {f for (f, _), (e, _, _) in EFFECTS.items() if e in _ENDS} | set(NOT_MARKED)
    return sorted(n for n in names if DESTROY_LIKE.search(n) and n not in decided)


# The effects that decide a destroy-like function, and the parameter kinds each takes.
_ENDS = {
    Effect.DESTROYS: (ParamKind.HANDLE, ParamKind.INTEGER_HANDLE, ParamKind.HANDLE_REF),
    Effect.FREES: (ParamKind.POINTER,),
}

# A host node record's callable belongs to what the call changes: an executable graph
# before a graph before a node (cudaGraphExecHostNodeSetParams names both the exec and
# the node of the graph it was made from; only the exec runs the new callable).
_HOLDER_TYPES = (
    "cudaGraphExec_t",
    "CUgraphExec",
    "cudaGraph_t",
    "CUgraph",
    "cudaGraphNode_t",
    "CUgraphNode",
)


def apply(plans: list[FunctionPlan]) -> list[FunctionPlan]:
    """The plans with the tables' kinds and effects, and each host node record's holder."""
    return [_apply(plan) for plan in plans]


def _apply(plan: FunctionPlan) -> FunctionPlan:
    name = plan.function.name
    params = {p.name: p for p in plan.params}
    changed = dict(params)
    for (function, output), (size, _) in HOST_MEMORY.items():
        if function != name:
            continue
        p, source = _param(plan, params, output), _param(plan, params, size)
        if p.role is not Role.OUT or p.kind is not ParamKind.ADDRESS:
            raise RenderError(f"HOST_MEMORY: {name}.{output} is not an address output")
        if source.kind is ParamKind.SCALAR:
            kind, annotation = ParamKind.HOST_MEMORY, "_HostMemory"
        elif source.kind is ParamKind.POINTER:
            kind, annotation = ParamKind.MAPPED_HOST_MEMORY, "_HostMemory | int"
        else:
            raise RenderError(f"HOST_MEMORY: {name}.{size} is neither a size nor a pointer")
        changed[output] = dataclasses.replace(p, kind=kind, py_type=annotation, partner=size)
    for c in plan.function.params:
        typedef = _integer_handle(c.type)
        p = params[c.name]
        if typedef is None:
            continue
        if p.kind is not ParamKind.SCALAR or p.role not in (Role.IN, Role.OUT):
            raise RenderError(f"INTEGER_HANDLES: {name}.{c.name} is not a scalar input or output")
        changed[c.name] = dataclasses.replace(p, kind=ParamKind.INTEGER_HANDLE, ctype=typedef)
    for (function, param), (effect, other, _) in EFFECTS.items():
        if function != name:
            continue
        p = _param(plan, params, param)
        if other is not None:
            _param(plan, params, other)
        kinds = _ENDS.get(effect)
        p = changed[param]
        if kinds is not None and (p.role is not Role.IN or p.kind not in kinds):
            raise RenderError(f"EFFECTS: {name}.{param} is not a {kinds[0]} input ({effect})")
        changed[param] = dataclasses.replace(changed[param], effect=effect, effect_of=other)
    for p in plan.params:
        if p.kind is ParamKind.CALLBACK_RECORD:
            holder = next(
                (
                    q.name
                    for t in _HOLDER_TYPES
                    for q in plan.inputs
                    if q.kind is ParamKind.HANDLE and q.ctype == t
                ),
                None,
            )
            if holder is not None:
                changed[p.name] = dataclasses.replace(
                    changed[p.name], effect=Effect.HELD_BY, effect_of=holder
                )
    for p in plan.params:
        parent = _parent(plan, p)
        if parent is not None:
            changed[p.name] = dataclasses.replace(changed[p.name], parent=parent)
    if changed == params:
        return plan
    return dataclasses.replace(plan, params=tuple(changed[p.name] for p in plan.params))


def _parent(plan: FunctionPlan, p: ParamPlan) -> str | None:
    """The input (or CURRENT_CONTEXT) a handle output of a PARENTS kind is the child of."""
    if p.role is not Role.OUT or p.kind is not ParamKind.HANDLE or p.ctype not in PARENTS:
        return None
    handles = [q for q in plan.inputs if q.kind is ParamKind.HANDLE]
    for kind in PARENTS[p.ctype][0]:
        if kind == CURRENT_CONTEXT:
            if not handles:
                return CURRENT_CONTEXT
            continue
        # The first: the graph a node is added to precedes any other graph the call
        # reads (cudaGraphAddChildGraphNode's childGraph, copied into the node).
        found = [q.name for q in handles if q.ctype == kind]
        if found:
            return found[0]
    return None


def _integer_handle(t: object) -> str | None:
    """The INTEGER_HANDLES typedef a parameter passes (T) or returns (T *), if any."""
    if isinstance(t, Pointer):
        t = t.pointee
    return t.name if isinstance(t, TypedefRef) and t.name in INTEGER_HANDLES else None


def _param(plan: FunctionPlan, params: dict[str, ParamPlan], name: str) -> ParamPlan:
    p = params.get(name)
    if p is None:
        raise RenderError(f"{plan.function.name} has no parameter {name} (generator/lifetimes.py)")
    return p
