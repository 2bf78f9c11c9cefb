"""What the checked layer tracks past a call, without a GPU: generator/lifetimes.py's
reviewed tables (held here, applied in every version's snapshot, refused when they stop
fitting a header), and cudart.callbacks' record of which graph or executable graph
holds which Python callables, driven with real handle objects and real registrations
as the generated functions drive it after a successful call.
"""

from __future__ import annotations

import gc
import importlib
import importlib.util
import inspect
import re
import weakref
from pathlib import Path

import pytest
from suite import probe_each_version, run_python, version_keys

import cudart
import cudart._checked as _c
from cudart import callbacks
from generator import lifetimes
from generator.ctypes_map import RenderError
from generator.plan import Effect

SNAPSHOTS = Path(__file__).resolve().parents[1] / "snapshots"
VERSIONS = cudart.available_versions()

# The tables as reviewed: changing them must change this test too.
REVIEWED_HOST_MEMORY = {
    ("cudaHostAlloc", "pHost"): "size",
    ("cudaMallocHost", "ptr"): "size",
    ("cudaMallocManaged", "devPtr"): "size",
    ("cudaHostGetDevicePointer", "pDevice"): "pHost",
    ("cuMemAllocHost_v2", "pp"): "bytesize",
    ("cuMemHostAlloc", "pp"): "bytesize",
}
REVIEWED_EFFECTS = {
    ("cudaFreeHost", "ptr"): ("frees", None),
    ("cudaFree", "devPtr"): ("frees", None),
    ("cudaGraphDestroy", "graph"): ("destroys", None),
    ("cudaGraphExecDestroy", "graphExec"): ("destroys", None),
    ("cudaGraphInstantiate", "pGraphExec"): ("copies", "graph"),
    ("cudaGraphInstantiateWithFlags", "pGraphExec"): ("copies", "graph"),
    ("cudaGraphInstantiateWithParams", "pGraphExec"): ("copies", "graph"),
    ("cudaGraphClone", "pGraphClone"): ("copies", "originalGraph"),
    ("cudaGraphAddChildGraphNode", "graph"): ("copies", "childGraph"),
    ("cudaGraphExecUpdate", "hGraphExec"): ("copies", "hGraph"),
    ("cudaGraphExecChildGraphNodeSetParams", "hGraphExec"): ("copies", "childGraph"),
    ("cudaGraphAddHostNode", "pGraphNode"): ("node_of", "graph"),
    ("cudaStreamDestroy", "stream"): ("destroys", None),
    ("cudaEventDestroy", "event"): ("destroys", None),
    ("cudaGraphDestroyNode", "node"): ("destroys", None),
    ("cudaMemPoolDestroy", "memPool"): ("destroys", None),
    ("cudaFreeArray", "array"): ("destroys", None),
    ("cudaFreeMipmappedArray", "mipmappedArray"): ("destroys", None),
    ("cudaDestroyExternalMemory", "extMem"): ("destroys", None),
    ("cudaDestroyExternalSemaphore", "extSem"): ("destroys", None),
    ("cudaGraphicsUnregisterResource", "resource"): ("destroys", None),
    ("cudaEGLStreamConsumerDisconnect", "conn"): ("destroys", None),
    ("cudaEGLStreamProducerDisconnect", "conn"): ("destroys", None),
    ("cudaLibraryUnload", "library"): ("destroys", None),
    ("cudaExecutionCtxDestroy", "ctx"): ("destroys", None),
    ("cudaLogsUnregisterCallback", "callback"): ("destroys", None),
    ("cudaDeviceUnregisterAsyncNotification", "callback"): ("destroys", None),
    ("cudaDestroyTextureObject", "texObject"): ("destroys", None),
    ("cudaDestroySurfaceObject", "surfObject"): ("destroys", None),
    # cuda.h (the driver API)
    ("cuStreamDestroy_v2", "hStream"): ("destroys", None),
    ("cuEventDestroy_v2", "hEvent"): ("destroys", None),
    ("cuCtxDestroy_v2", "ctx"): ("destroys", None),
    ("cuGreenCtxDestroy", "hCtx"): ("destroys", None),
    ("cuModuleUnload", "hmod"): ("destroys", None),
    ("cuLibraryUnload", "library"): ("destroys", None),
    ("cuLinkDestroy", "state"): ("destroys", None),
    ("cuMemPoolDestroy", "pool"): ("destroys", None),
    ("cuGraphDestroy", "hGraph"): ("destroys", None),
    ("cuGraphExecDestroy", "hGraphExec"): ("destroys", None),
    ("cuGraphDestroyNode", "hNode"): ("destroys", None),
    ("cuArrayDestroy", "hArray"): ("destroys", None),
    ("cuMipmappedArrayDestroy", "hMipmappedArray"): ("destroys", None),
    ("cuDestroyExternalMemory", "extMem"): ("destroys", None),
    ("cuDestroyExternalSemaphore", "extSem"): ("destroys", None),
    ("cuGraphicsUnregisterResource", "resource"): ("destroys", None),
    ("cuTexRefDestroy", "hTexRef"): ("destroys", None),
    ("cuLogsUnregisterCallback", "callback"): ("destroys", None),
    ("cuDeviceUnregisterAsyncNotification", "callback"): ("destroys", None),
    ("cuTexObjectDestroy", "texObject"): ("destroys", None),
    ("cuSurfObjectDestroy", "surfObject"): ("destroys", None),
    ("cuMemRelease", "handle"): ("destroys", None),
    ("cuMemFreeHost", "p"): ("frees", None),
}
REVIEWED_INTEGER_HANDLES = {
    "cudaTextureObject_t",
    "cudaSurfaceObject_t",
    "CUtexObject",
    "CUsurfObject",
    "CUmemGenericAllocationHandle",
}
# The driver's (cuda.h) copies and host nodes (its destroys are above).
REVIEWED_DRIVER_EFFECTS = {
    ("cuGraphInstantiateWithFlags", "phGraphExec"): ("copies", "hGraph"),
    ("cuGraphInstantiateWithParams", "phGraphExec"): ("copies", "hGraph"),
    ("cuGraphClone", "phGraphClone"): ("copies", "originalGraph"),
    ("cuGraphAddHostNode", "phGraphNode"): ("node_of", "hGraph"),
}
# Every parameter of an integer handle type, in every version: a handle, not a number.
INTEGER_HANDLE_PARAMS = {
    "cudaCreateTextureObject": "pTexObject:integer_handle",
    "cudaDestroyTextureObject": "texObject:integer_handle@destroys",
    "cudaGetTextureObjectResourceDesc": "texObject:integer_handle",
    "cudaGetTextureObjectTextureDesc": "texObject:integer_handle",
    "cudaGetTextureObjectResourceViewDesc": "texObject:integer_handle",
    "cudaCreateSurfaceObject": "pSurfObject:integer_handle",
    "cudaDestroySurfaceObject": "surfObject:integer_handle@destroys",
    "cudaGetSurfaceObjectResourceDesc": "surfObject:integer_handle",
}
# Destroy-like functions that mark nothing (lifetimes.NOT_MARKED has each one's reason).
REVIEWED_NOT_MARKED = {
    "cudaFreeAsync",
    "cudaHostUnregister",
    "cudaIpcCloseMemHandle",
    "cudaUserObjectRelease",
    "cudaGraphReleaseUserObject",
    "cudaDeviceReset",
    "cudaThreadExit",
    "cudaCtxResetPersistingL2Cache",
    "cudaDeviceGraphMemTrim",
    "cudaMemPoolTrimTo",
    "cudaGraphRemoveDependencies",
    "cudaGraphRemoveDependencies_v2",
    "cudaGraphAddMemFreeNode",
    "cudaGraphMemFreeNodeGetParams",
    "cudaGLUnregisterBufferObject",
    "cudaEGLStreamConsumerReleaseFrame",
    "cudaEGLStreamProducerReturnFrame",
    "nvrtcDestroyProgram",
    "nvrtcRemoveBundledHeaders",
    "nvJitLinkDestroy",
    "cuMemFree_v2",
    "cuMemFreeAsync",
    "cuMemAddressFree",
    "cuMemHostUnregister",
    "cuIpcCloseMemHandle",
    "cuCtxDetach",
    "cuDevicePrimaryCtxRelease_v2",
    "cuDevicePrimaryCtxReset_v2",
    "cuCtxResetPersistingL2Cache",
    "cuDeviceGraphMemTrim",
    "cuMemPoolTrimTo",
    "cuGraphRemoveDependencies",
    "cuGraphRemoveDependencies_v2",
    "cuGraphAddMemFreeNode",
    "cuGraphMemFreeNodeGetParams",
    "cuUserObjectRelease",
    "cuGraphReleaseUserObject",
    "cuLogicalEndpointDestroy",
    "cuLogicalEndpointIdRelease",
}
# The driver's integer handle parameters (cuda.h), in every version that has them.
DRIVER_INTEGER_HANDLE_PARAMS = {
    "cuTexObjectCreate": "pTexObject:integer_handle",
    "cuTexObjectDestroy": "texObject:integer_handle@destroys",
    "cuSurfObjectCreate": "pSurfObject:integer_handle",
    "cuSurfObjectDestroy": "surfObject:integer_handle@destroys",
    "cuMemCreate": "handle:integer_handle",
    "cuMemRelease": "handle:integer_handle@destroys",
    "cuMemMap": "handle:integer_handle",
    "cuMemRetainAllocationHandle": "handle:integer_handle",
}
HELD_BY = {
    "cudaGraphAddHostNode": "pNodeParams:callback_record@held_by(graph)",
    "cudaGraphHostNodeSetParams": "pNodeParams:callback_record@held_by(node)",
    "cudaGraphExecHostNodeSetParams": "pNodeParams:callback_record@held_by(hGraphExec)",
}


def test_tables_as_reviewed_each_entry_with_a_reason():
    assert {k: v[0] for k, v in lifetimes.HOST_MEMORY.items()} == REVIEWED_HOST_MEMORY
    assert {k: (str(v[0]), v[1]) for k, v in lifetimes.EFFECTS.items()} == (
        REVIEWED_EFFECTS | REVIEWED_DRIVER_EFFECTS
    )
    assert set(lifetimes.NOT_MARKED) == REVIEWED_NOT_MARKED
    assert set(lifetimes.INTEGER_HANDLES) == REVIEWED_INTEGER_HANDLES
    reasons = [v[1] for v in lifetimes.HOST_MEMORY.values()]
    reasons += [v[2] for v in lifetimes.EFFECTS.values()]
    reasons += list(lifetimes.NOT_MARKED.values())
    reasons += list(lifetimes.INTEGER_HANDLES.values())
    assert all(len(r) > 10 for r in reasons)


@pytest.mark.parametrize("version", VERSIONS)
def test_every_destroy_like_function_is_decided(version):
    """A new version's Destroy/Free/Unload/Unregister/Release/... function fails here
    until generator/lifetimes.py decides it: DESTROYS (marks the handle) or NOT_MARKED."""
    functions = set(importlib.import_module(f"cudart.sys_{version}")._FUNCTIONS)
    assert lifetimes.undecided(functions) == []
    for family in ("nvrtc", "nvjitlink"):
        names = set(importlib.import_module(f"cudart.{family}_{version}")._FUNCTIONS)
        assert lifetimes.undecided(names) == [], family
    for driver in _driver_modules(version):
        # The symbols (cuCtxDestroy_v2), which cuda.h's macros name cuCtxDestroy too.
        assert lifetimes.undecided({f[0] for f in driver._FUNCTIONS.values()}) == []
    assert len([f for f in functions if lifetimes.DESTROY_LIKE.search(f)]) >= 30


def _driver_modules(version: str) -> list:
    """The driver's raw module of a version, where it is generated (generate --all
    makes every version's; a branch may hold some)."""
    name = f"cudart.driver_{version}"
    return [importlib.import_module(name)] if importlib.util.find_spec(name) else []


def test_the_decision_list_is_neither_stale_nor_blind():
    everywhere = set().union(
        *(
            importlib.import_module(f"cudart.{family}_{v}")._FUNCTIONS
            for v in VERSIONS
            for family in ("sys", "nvrtc", "nvjitlink")
        ),
        # The driver's of every version, as its snapshots list them (test_checked.py
        # holds them to the generator).
        *(
            {line.partition("(")[0] for line in path.read_text().splitlines()}
            for path in SNAPSHOTS.glob("driver_outputs_*.txt")
        ),
    )
    assert "cuMemFree_v2" in everywhere
    decided = {f for f, _ in lifetimes.EFFECTS} | set(lifetimes.NOT_MARKED)
    assert decided <= everywhere  # no entry for a function no version has
    # Each entry of NOT_MARKED is destroy-like (else it is no decision), and a new
    # destroy-like name is undecided until someone adds it.
    assert all(lifetimes.DESTROY_LIKE.search(f) for f in lifetimes.NOT_MARKED)
    new = ["cudaWidgetDestroy", "cudaFreeWidget", "cudaWidgetUnregister", "cudaGetWidget"]
    assert lifetimes.undecided(new) == sorted(new[:3])
    # A COPIES entry does not decide a destroy-like function (only DESTROYS / FREES).
    assert lifetimes.undecided(["cudaGraphInstantiate"]) == []


@pytest.mark.parametrize("key", version_keys())
def test_every_version_applies_every_entry(key):
    lines = {
        line.partition("(")[0]: line
        for line in (SNAPSHOTS / f"outputs_{key}.txt").read_text().splitlines()
    }
    for (function, output), size in _runtime(REVIEWED_HOST_MEMORY).items():
        kind = "host_memory" if size == "size" else "mapped_host_memory"
        assert f"{output}[{size}]:{kind}" in lines[function]
    for (function, param), (effect, of) in _runtime(REVIEWED_EFFECTS).items():
        if function not in lines and effect == "destroys":
            continue  # a destroy of later versions only (cudaLibraryUnload: 12.8+)
        expected = f"@{effect}({of})" if of else f"@{effect}"
        assert f"{param}:" in lines[function] and expected in lines[function]
    for function, text in HELD_BY.items():
        assert text in lines[function]
    for function, text in INTEGER_HANDLE_PARAMS.items():
        assert text in lines[function]
    assert "integer_handle" not in "".join(
        line for name, line in lines.items() if name not in INTEGER_HANDLE_PARAMS
    )
    assert "host_memory" not in lines["cudaMalloc"] and "@" not in lines["cudaMalloc"]


def _runtime(table: dict) -> dict:
    """The entries of the runtime's functions (and NVRTC's), not the driver's (cu*)."""
    return {k: v for k, v in table.items() if not re.match(r"cu[A-Z]", k[0])}


def _driver_snapshots() -> list[str]:
    return sorted(
        p.name[len("driver_outputs_") : -len(".txt")]
        for p in SNAPSHOTS.glob("driver_outputs_*.txt")
    )


@pytest.mark.parametrize("key", _driver_snapshots())
def test_every_driver_version_applies_every_entry(key):
    """The driver's entries, in its snapshots (tests/generator/test_checked.py holds them
    to the generator): each decision shows where the version has the function."""
    lines = {
        line.partition("(")[0]: line
        for line in (SNAPSHOTS / f"driver_outputs_{key}.txt").read_text().splitlines()
    }
    driver = {k: v for k, v in REVIEWED_EFFECTS.items() if k not in _runtime(REVIEWED_EFFECTS)}
    for (function, param), (effect, _) in driver.items():
        if function in lines:
            assert f"{param}:" in lines[function] and f"@{effect}" in lines[function], function
    assert {f for f, _ in driver} - set(lines) <= {
        "cuLogsUnregisterCallback",
        "cuGreenCtxDestroy",
        "cuLibraryUnload",
        "cuDeviceUnregisterAsyncNotification",
    }
    for (function, output), size in REVIEWED_HOST_MEMORY.items():
        if function.startswith("cuMem"):
            assert f"{output}[{size}]:host_memory" in lines[function]
    for function, text in DRIVER_INTEGER_HANDLE_PARAMS.items():
        assert text in lines[function]
    # Device memory is an int (a CUdeviceptr): nothing to mark, no host memory.
    assert lines["cuMemAlloc_v2"].endswith("-> (dptr:scalar)")
    assert lines["cuMemFree_v2"] == "cuMemFree_v2(dptr:scalar) -> ()"


# PARENTS as reviewed: child kind -> its parent kinds (CURRENT: the current context).
CURRENT = "current context"
REVIEWED_PARENTS = {
    "cudaGraphNode_t": ("cudaGraph_t",),
    "cudaKernel_t": ("cudaLibrary_t",),
    "CUgraphNode": ("CUgraph",),
    "CUkernel": ("CUlibrary",),
    "CUfunction": ("CUmodule", "CUkernel"),
    "CUmodule": ("CUlibrary", CURRENT),
    "CUstream": ("CUgreenCtx", CURRENT),
    "CUevent": (CURRENT,),
}
# What the rule makes of them in 13.5's snapshots: function -> its output's parent.
PARENT_FINDINGS = {
    "cudaGraphAddEmptyNode": "pGraphNode:handle^graph",
    "cudaGraphAddChildGraphNode": "pGraphNode:handle^graph",  # not childGraph
    "cudaGraphNodeFindInClone": "pNode:handle^clonedGraph",
    "cudaLibraryGetKernel": "pKernel:handle^library",
    "cuModuleGetFunction": "hfunc:handle^hmod",
    "cuKernelGetFunction": "pFunc:handle^kernel",
    "cuLibraryGetModule": "pMod:handle^library",
    "cuGraphAddEmptyNode": "phGraphNode:handle^hGraph",
    "cuGreenCtxStreamCreate": "phStream:handle^greenCtx",
    "cuStreamCreate": f"phStream:handle^{CURRENT}",
    "cuEventCreate": f"phEvent:handle^{CURRENT}",
    "cuModuleLoadData": f"module:handle^{CURRENT}",
}


def test_parents_as_reviewed_and_found_in_13_5():
    assert {k: kinds for k, (kinds, _) in lifetimes.PARENTS.items()} == REVIEWED_PARENTS
    assert all(why for _, why in lifetimes.PARENTS.values())
    lines = {}
    for name in ("outputs_13.5.txt", "driver_outputs_13.5.txt"):
        for line in (SNAPSHOTS / name).read_text().splitlines():
            lines[line.partition("(")[0]] = line
    for function, text in PARENT_FINDINGS.items():
        assert text in lines[function], lines[function]
    # A call given a handle that is no parent makes no child of the current context: the
    # module a function names already exists (cuFuncGetModule).
    assert "^" not in lines["cuFuncGetModule"]
    assert "^" not in lines["cudaStreamCreate"]  # the primary context: cudaDeviceReset's
    children = sum("^" in line for line in lines.values())
    assert children >= 40, children


@pytest.fixture(scope="module")
def newest_plans(plans):
    return {p.name: p for p in plans[version_keys()[-1]]}


def test_an_entry_that_no_longer_fits_is_refused(newest_plans, monkeypatch):
    plan = newest_plans["cudaHostAlloc"]
    monkeypatch.setitem(lifetimes.HOST_MEMORY, ("cudaHostAlloc", "pHost"), ("bytes", "x"))
    with pytest.raises(RenderError, match="cudaHostAlloc has no parameter bytes"):
        lifetimes.apply([plan])
    monkeypatch.setitem(lifetimes.HOST_MEMORY, ("cudaHostAlloc", "pHost"), ("size", "x"))
    monkeypatch.setitem(lifetimes.HOST_MEMORY, ("cudaHostAlloc", "size"), ("flags", "x"))
    with pytest.raises(RenderError, match="not an address output"):
        lifetimes.apply([plan])
    monkeypatch.setitem(lifetimes.EFFECTS, ("cudaGraphDestroy", "g"), (Effect.DESTROYS, None, "x"))
    with pytest.raises(RenderError, match="cudaGraphDestroy has no parameter g"):
        lifetimes.apply([newest_plans["cudaGraphDestroy"]])
    # DESTROYS takes a handle input, FREES a pointer input: anything else is refused.
    monkeypatch.setitem(
        lifetimes.EFFECTS, ("cudaStreamCreate", "pStream"), (Effect.DESTROYS, None, "x")
    )
    with pytest.raises(RenderError, match="cudaStreamCreate.pStream is not a handle input"):
        lifetimes.apply([newest_plans["cudaStreamCreate"]])
    monkeypatch.setitem(lifetimes.EFFECTS, ("cudaFreeArray", "array"), (Effect.FREES, None, "x"))
    with pytest.raises(RenderError, match="cudaFreeArray.array is not a pointer input"):
        lifetimes.apply([newest_plans["cudaFreeArray"]])
    # An integer handle typedef that a function takes other than as a scalar.
    monkeypatch.setitem(lifetimes.INTEGER_HANDLES, "cudaStream_t", "x")
    with pytest.raises(RenderError, match="cudaStreamQuery.stream is not a scalar input"):
        lifetimes.apply([newest_plans["cudaStreamQuery"]])


@pytest.fixture(params=VERSIONS, ids=[f"checked_{v}" for v in VERSIONS])
def checked(request):
    return importlib.import_module(f"cudart.checked_{request.param}")


def test_generated_functions_record_only_after_success(checked):
    source = inspect.getsource(checked.cudaGraphDestroy)
    assert source.index("raise _error(err, _lib)") < source.index(
        '_c.destroyed(graph, "cudaGraph_t", "cudaGraphDestroy")'
    )
    for (function, param), (effect, _) in REVIEWED_EFFECTS.items():
        if effect != "destroys" or not hasattr(checked, function):
            continue
        source = inspect.getsource(getattr(checked, function))
        line = next(x for x in source.splitlines() if "_c.destroyed(" in x)
        assert line.strip().startswith(f"_c.destroyed({param}, ") and f'"{function}")' in line
        assert source.index("raise _error(err, _lib)") < source.index(line)
    assert '_c.holder_copied(pGraphExec, "cudaGraphExec_t", graph, "cudaGraph_t")' in (
        inspect.getsource(checked.cudaGraphInstantiate)
    )
    source = inspect.getsource(checked.cudaGraphAddHostNode)
    assert '_c.callback_held(_pNodeParams_token, graph, "cudaGraph_t", _lib)' in source
    assert "_c.host_node_added(pGraphNode, graph)" in source
    assert "_c.host_freed(ptr)" in inspect.getsource(checked.cudaFreeHost)
    # What a call ends is marked before C, in one step with the check, and unmarked on
    # each way C can refuse (issue 20: threads destroying one handle all reached C).
    for (function, param), (effect, _) in REVIEWED_EFFECTS.items():
        if effect not in ("destroys", "frees") or not hasattr(checked, function):
            continue
        source = inspect.getsource(getattr(checked, function))
        claim = f'_c.claim({param}, "{param}", "{function}")'
        assert source.count(claim) == 1 and source.count(f"_c.unclaim({param})") == 2
        assert source.index(claim) < source.index(f"err = _{function}(")
    assert "graph (or exec)" not in checked.cudaGraphDestroy.__doc__
    assert "released" in checked.cudaGraphDestroy.__doc__


@pytest.mark.parametrize("version", [v for v in VERSIONS if _driver_modules(v)])
def test_driver_functions_mark_what_they_end_after_success(version):
    """The driver's checked module marks what the entries say a call ends, once C said
    yes, and claims it before C (as the runtime's)."""
    module = importlib.import_module(f"cudart.driver_checked_{version}")
    marked = 0
    for (function, param), (effect, _) in REVIEWED_EFFECTS.items():
        if not function.startswith("cu") or function.startswith("cuda"):
            continue
        if not hasattr(module, function):
            continue
        source = inspect.getsource(getattr(module, function))
        claim = f'_c.claim({param}, "{param}", "{function}")'
        assert source.count(claim) == 1 and source.count(f"_c.unclaim({param})") == 2, function
        mark = "_c.host_freed(" if effect == "frees" else "_c.destroyed("
        line = next(x for x in source.splitlines() if mark in x)
        assert source.index("raise _error(err, _lib)") < source.index(line)
        marked += 1
    assert marked >= 20
    source = inspect.getsource(module.cuMemAllocHost_v2)
    assert "_HostMemory" in source and "bytesize" in source


# ---------------------------------------------------------------- the bookkeeping


@pytest.fixture
def rt():
    return importlib.import_module(f"cudart.sys_{VERSIONS[0]}")


@pytest.fixture
def clean():
    callbacks.release_captured()
    yield
    callbacks.release_captured()


class Callable:
    """A callable a weakref can follow (a lambda's closure would keep the test alive)."""

    def __call__(self, *args):
        pass


def kept(token: int) -> bool:
    return token in callbacks._registry


def register():
    """A host node record's callable, registered as the checked layer registers it."""
    fn = Callable()
    checked = importlib.import_module(f"cudart.checked_{VERSIONS[0]}")
    _, token = callbacks.record_argument(
        checked.cudaHostNodeParams(fn=fn), checked._lib.cudaHostNodeParams, checked._lib, "p"
    )
    return token, weakref.ref(fn)


@pytest.mark.backend
def test_a_graph_and_its_exec_each_keep_the_callable(rt, clean):
    graph, exec_ = rt.cudaGraph_t(0x1000), rt.cudaGraphExec_t(0x2000)
    token, ref = register()
    _c.callback_held(token, graph, "cudaGraph_t", rt)
    _c.holder_copied(exec_, "cudaGraphExec_t", graph, "cudaGraph_t")  # instantiate
    assert callbacks.held(graph) == callbacks.held(exec_) == {token}
    _c.holder_destroyed(graph, "cudaGraph_t")
    gc.collect()
    assert kept(token) and ref() is not None  # the exec still runs it
    _c.holder_destroyed(exec_, "cudaGraphExec_t")
    gc.collect()
    assert not kept(token) and ref() is None
    assert callbacks.held() == {}


@pytest.mark.backend
def test_clone_child_and_update_copy_and_ints_are_the_same_handles(rt, clean):
    child, parent, clone = rt.cudaGraph_t(0x10), rt.cudaGraph_t(0x20), rt.cudaGraph_t(0x30)
    exec_ = rt.cudaGraphExec_t(0x40)
    token, _ = register()
    callbacks.hold("cudaGraph_t", 0x10, token)  # an int address: the same graph
    _c.holder_copied(parent, "cudaGraph_t", child, "cudaGraph_t")  # add child graph node
    _c.holder_copied(clone, "cudaGraph_t", parent, "cudaGraph_t")  # clone
    _c.holder_copied(exec_, "cudaGraphExec_t", clone, "cudaGraph_t")  # exec update
    for holder in (child, parent, clone, exec_):
        assert callbacks.held(holder) == {token}
    for handle, ctype in ((child, "cudaGraph_t"), (parent, "cudaGraph_t"), (clone, "cudaGraph_t")):
        _c.holder_destroyed(int(handle), ctype)
        assert kept(token)
    assert callbacks.holder_destroyed("cudaGraphExec_t", exec_) == 1
    assert not kept(token)
    # A graph and an exec at one address are two holders.
    assert callbacks.held(rt.cudaGraph_t(0x40)) == frozenset()


@pytest.mark.backend
def test_a_node_belongs_to_the_graph_it_was_added_to(rt, clean):
    graph, node = rt.cudaGraph_t(0x100), rt.cudaGraphNode_t(0x101)
    _c.host_node_added(node, graph)
    token, _ = register()
    _c.callback_held(token, node, "cudaGraphNode_t", rt)  # cudaGraphHostNodeSetParams
    assert callbacks.held(graph) == {token}
    _c.holder_destroyed(graph, "cudaGraph_t")
    assert not kept(token) and callbacks._node_graph == {}
    # A node of unknown graph (a captured one): kept for release_captured().
    token, ref = register()
    _c.callback_held(token, rt.cudaGraphNode_t(0x999), "cudaGraphNode_t", rt)
    assert kept(token) and callbacks.held() == {}
    assert callbacks.release_captured() >= 1 and not kept(token)


@pytest.mark.backend
def test_a_graph_destroyed_forgets_its_own_nodes_only(rt, clean):
    """Each graph's host nodes are indexed: a destroy forgets those and no other graph's,
    and a node address reused by another graph (its first graph destroyed or not) moves."""
    first, second = rt.cudaGraph_t(0x700), rt.cudaGraph_t(0x800)
    for k in range(3):
        _c.host_node_added(rt.cudaGraphNode_t(0x710 + k), first)
        _c.host_node_added(rt.cudaGraphNode_t(0x810 + k), second)
    _c.host_node_added(rt.cudaGraphNode_t(0x712), second)  # the address, now second's
    _c.holder_destroyed(first, "cudaGraph_t")
    assert callbacks._node_graph == {0x712: 0x800, 0x810: 0x800, 0x811: 0x800, 0x812: 0x800}
    token, _ = register()
    _c.callback_held(token, rt.cudaGraphNode_t(0x712), "cudaGraphNode_t", rt)
    assert callbacks.held(second) == {token}
    _c.holder_destroyed(second, "cudaGraph_t")
    assert callbacks._node_graph == {} and callbacks._graph_nodes == {} and not kept(token)


@pytest.mark.backend
def test_failure_unregisters_and_release_captured_still_releases_all(rt, clean):
    graph = rt.cudaGraph_t(0x500)
    first, _ = register()
    second, _ = register()
    for token in (first, second):
        callbacks.hold("cudaGraph_t", graph, token)
    callbacks.unregister(first)  # what a failed call does
    assert callbacks.held(graph) == {second}
    assert callbacks.release_captured() == 1
    assert callbacks.held() == {} and not kept(second)
    _c.holder_destroyed(graph, "cudaGraph_t")  # nothing left: no error


@pytest.mark.backend
def test_token_zero_and_no_callbacks_module_record_nothing(rt, clean):
    _c.callback_held(0, rt.cudaGraph_t(0x1), "cudaGraph_t", rt)
    assert callbacks.held() == {}


PROBE = """
import ctypes, cudart
from cudart import callbacks
graph = cudart.sys.cudaGraph_t(0x1234)
token = callbacks.register(print, once=False)
callbacks.hold("cudaGraph_t", graph, token)
try:
    cudart.cudaGraphDestroy(graph)   # no driver here: the runtime refuses
except cudart.CudaError as exc:
    print(type(exc).__name__, sorted(callbacks.held(graph)) == [token])
"""


@pytest.mark.backend
def test_a_failed_destroy_releases_nothing():
    out = run_python(PROBE).stdout.split()
    assert out[0].startswith("CudaError") and out[1] == "True"


CAPTURE_PROBE = """
import json, cudart
from cudart import callbacks
rt = cudart.sys
# Without a driver both queries fail: 0, "not known". A wrong argument count for the
# version's cudaStreamGetCaptureInfo would be a ctypes TypeError here instead.
print(json.dumps([callbacks._capture_graph(rt, None), callbacks._containing_graph(rt, 0x10)]))
"""


@pytest.mark.backend
def test_the_runtime_queries_fit_every_versions_prototypes(header_sets):
    results = probe_each_version(CAPTURE_PROBE, header_sets)
    assert results and all(found == [0, 0] for found in results.values())
