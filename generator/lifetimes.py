"""What the checked layer keeps track of past a call: host memory and graphs' callables.

Two reviewed tables, applied to the plans resolve.py makes (`apply`), each entry with
the reason it is there; tests/test_lifetimes.py holds them, and the outputs snapshots
show their effect (`pHost[size]:host_memory`, `graph:handle@destroys`).

* HOST_MEMORY: `void **` outputs that point at host-accessible memory whose size an
  input gives. The checked function returns a cudart.HostMemory (an int address that
  is also a buffer of that many bytes) instead of the int. Device memory (cudaMalloc)
  is not host-accessible and stays an int.
* EFFECTS: what a successful call changes in cudart.callbacks' record of which graph
  or executable graph holds which Python callables (host nodes), so destroying them
  through the checked layer releases the callables, and which call frees host memory
  (a HostMemory passed to it is marked released).

A table entry for a function a version lacks is skipped; one whose parameters do not
match the function is a RenderError, so a header change cannot go unnoticed.
"""

from __future__ import annotations

import dataclasses

from .ctypes_map import RenderError
from .plan import Effect, FunctionPlan, ParamKind, ParamPlan, Role

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
}

# (function as declared, parameter) -> (effect, the other parameter or None, why).
EFFECTS: dict[tuple[str, str], tuple[Effect, str | None, str]] = {
    ("cudaFreeHost", "ptr"): (Effect.FREES, None, "frees cudaHostAlloc/cudaMallocHost memory"),
    ("cudaFree", "devPtr"): (Effect.FREES, None, "frees cudaMallocManaged memory too"),
    ("cudaGraphDestroy", "graph"): (Effect.DESTROYS, None, "the graph's nodes go with it"),
    ("cudaGraphExecDestroy", "graphExec"): (Effect.DESTROYS, None, "its copied nodes go"),
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
}

# A host node record's callable belongs to what the call changes: an executable graph
# before a graph before a node (cudaGraphExecHostNodeSetParams names both the exec and
# the node of the graph it was made from; only the exec runs the new callable).
_HOLDER_TYPES = ("cudaGraphExec_t", "cudaGraph_t", "cudaGraphNode_t")


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
    for (function, param), (effect, other, _) in EFFECTS.items():
        if function != name:
            continue
        p = _param(plan, params, param)
        if other is not None:
            _param(plan, params, other)
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
    if changed == params:
        return plan
    return dataclasses.replace(plan, params=tuple(changed[p.name] for p in plan.params))


def _param(plan: FunctionPlan, params: dict[str, ParamPlan], name: str) -> ParamPlan:
    p = params.get(name)
    if p is None:
        raise RenderError(f"{plan.function.name} has no parameter {name} (generator/lifetimes.py)")
    return p
