"""The checked layer, without a GPU: classification of every function of every version,
the exceptions table, error mapping against each real library, argument conversion,
defaults, docstrings, deprecation, and what `import cudart` costs.

Snapshots: tests/snapshots/outputs_<ver>.txt holds, per version, one line per function
(`name(inputs) -> outputs`, `*` where the exceptions table decided). After a deliberate
change, rewrite them with CUDART_UPDATE_EXPECTATIONS=1 and review `git diff tests/snapshots`.
"""

from __future__ import annotations

import array
import ctypes
import importlib
import inspect
import re
from pathlib import Path

import needs
import pytest
import snapshot_files
from suite import GENERATED, probe_each_version, run_python, version_keys

import cudart._checked as _c
import cudart._convert as _convert
from cudart._views import versions
from generator.resolve import OVERRIDES, describe, table_uses
from generator.views import view_source

HERE = Path(__file__).resolve().parents[1]
SNAPSHOTS = HERE / "snapshots"


def checked_module(manifest, key):
    return importlib.import_module(f"cudart.checked_{manifest.get(key).number}")


# ---------------------------------------------------------------- classification


@pytest.mark.parametrize("key", version_keys())
def test_output_classification_snapshot(plans, key):
    """Every function's inputs and outputs, reviewed once and then held."""
    text = "".join(describe(p) + "\n" for p in plans[key])
    snapshot_files.hold(SNAPSHOTS / f"outputs_{key}.txt", text)


# The exceptions table as reviewed: growing or changing it must change this test too.
REVIEWED_TABLE = {
    ("cudaDeviceGetDefaultMemPool", "memPool"): "out",
    ("cudaDeviceGetMemPool", "memPool"): "out",
    ("cudaStreamEndCapture", "pGraph"): "out",
    ("cudaEventElapsedTime", "ms"): "out",
    ("cudaMemPoolCreate", "memPool"): "out",
    ("cudaMemPoolImportFromShareableHandle", "memPool"): "out",
    ("cudaMemPoolExportPointer", "exportData"): "out",
    ("cudaMemPoolImportPointer", "ptr"): "out",
    ("cudaGetTextureObjectResourceDesc", "pResDesc"): "out",
    ("cudaGetTextureObjectTextureDesc", "pTexDesc"): "out",
    ("cudaGetTextureObjectResourceViewDesc", "pResViewDesc"): "out",
    ("cudaGetSurfaceObjectResourceDesc", "pResDesc"): "out",
    ("cudaGraphAddEventRecordNode", "pGraphNode"): "out",
    ("cudaGraphAddEventWaitNode", "pGraphNode"): "out",
    ("cudaGraphExecUpdate", "resultInfo"): "out",
    ("cudaGetExportTable", "ppExportTable"): "out",
    ("cudaThreadExchangeStreamCaptureMode", "mode"): "inout",
    ("cudaSetValidDevices", "device_arr"): "in",
    ("cudaGraphicsMapResources", "resources"): "in",
    ("cudaGraphicsUnmapResources", "resources"): "in",
    ("cudaMemPoolGetAccess", "location"): "in",
    ("cudaGraphAddMemAllocNode", "nodeParams"): "in",
    ("cudaGraphMemFreeNodeGetParams", "dptr_out"): "out",
    ("cudaLogsDumpToMemory", "buffer"): "in",
    ("cudaLogsDumpToMemory", "size"): "inout",
    ("cudaMemGetDefaultMemPool", "memPool"): "out",
    ("cudaMemGetMemPool", "memPool"): "out",
    ("cudaMemGetMemPool", "location"): "in",
    ("cudaMemGetLocationInfo", "location_out"): "in",
    ("cudaMemSetMemPool", "location"): "in",
    ("cudaMemcpy3DBatchAsync", "opList"): "in",
    ("cudaDevResourceGenerateDesc", "resources"): "in",
    ("cudaDevSmResourceSplit", "remainder"): "out",
    ("cudaLibraryLoadData", "jitOptionsValues"): "in",
    ("cudaLibraryLoadFromFile", "jitOptionsValues"): "in",
    ("cudaDevSmResourceSplitByCount", "nbGroups"): "inout",
    ("cudaDevSmResourceSplitByCount", "remaining"): "out",
    ("cudaMemPoolExportToShareableHandle", "shareableHandle"): "out",
    ("cudaEGLStreamProducerReturnFrame", "pStream"): "in",
    # cuda.h (the driver API)
    ("cuLogsDumpToMemory", "buffer"): "in",
    ("cuLogsDumpToMemory", "size"): "inout",
    ("cuEventElapsedTime", "pMilliseconds"): "out",
    ("cuStreamEndCapture", "phGraph"): "out",
    ("cuThreadExchangeStreamCaptureMode", "mode"): "inout",
    ("cuGetExportTable", "ppExportTable"): "out",
    ("cuGraphExecUpdate_v2", "resultInfo"): "out",
    ("cuLinkCreate_v2", "stateOut"): "out",
    ("cuLinkComplete", "sizeOut"): "out",
    ("cuCtxCreate_v4", "ctxCreateParams"): "in",
    ("cuLaunchKernel", "kernelParams"): "in",
    ("cuLaunchKernel", "extra"): "in",
    ("cuPointerGetAttributes", "attributes"): "in",
    ("cuMemPoolExportToShareableHandle", "handle_out"): "out",
    ("cuMemExportToShareableHandle", "shareableHandle"): "out",
    ("cuMemGetHandleForAddressRange", "handle"): "out",
    ("cuLogicalEndpointExport", "handle"): "out",
    ("cuMemGetLocationInfo", "location_out"): "in",
    ("cuDeviceGetCliqueInfo", "count"): "inout",
    ("cuGraphicsMapResources", "resources"): "in",
    ("cuGraphicsUnmapResources", "resources"): "in",
    ("cuMemPoolGetAccess", "location"): "in",
    ("cuMemGetMemPool", "location"): "in",
    ("cuMemSetMemPool", "location"): "in",
    ("cuMemcpy3DBatchAsync", "opList"): "in",
    ("cuMemcpy3DBatchAsync_v2", "opList"): "in",
    ("cuDevResourceGenerateDesc", "resources"): "in",
    ("cuGraphAddMemAllocNode", "nodeParams"): "in",
    ("cuLibraryLoadData", "jitOptionsValues"): "in",
    ("cuLibraryLoadFromFile", "jitOptionsValues"): "in",
    ("cuModuleLoadDataEx", "optionValues"): "in",
    ("cuDevSmResourceSplit", "remainder"): "out",
    ("cuDevSmResourceSplitByCount", "nbGroups"): "inout",
    ("cuDevSmResourceSplitByCount", "remainder"): "out",
    ("cuDevSmResourceSplitByCount", "remaining"): "out",
    ("cuTexObjectGetResourceDesc", "pResDesc"): "out",
    ("cuTexObjectGetTextureDesc", "pTexDesc"): "out",
    ("cuTexObjectGetResourceViewDesc", "pResViewDesc"): "out",
    ("cuSurfObjectGetResourceDesc", "pResDesc"): "out",
    ("cuTensorMapSetAllocationClass", "tensorMap"): "in",
    ("cuTensorMapSetAllocationClass", "outAllocClass"): "out",
    # nvrtc.h: sizes nvrtcGetNVVM and nvrtcGetTileIR take their buffers from.
    ("nvrtcGetNVVMSize", "nvvmSizeRet"): "out",
    ("nvrtcGetTileIRSize", "TileIRSizeRet"): "out",
}


def test_exceptions_table_is_the_reviewed_one():
    assert len(OVERRIDES) == 39 + 41 + 2
    assert {key: role for key, (role, _) in OVERRIDES.items()} == REVIEWED_TABLE
    assert all(reason for _, reason in OVERRIDES.values()), "every entry says why"


@pytest.fixture(scope="module")
def driver_models(manifest):
    """Every version's driver (cuda.h) model."""
    from models import models_for

    from generator.fetch import fetch_version

    sets = {key: fetch_version(manifest, key, _quiet, "driver") for key in version_keys()}
    return models_for(sets)


@pytest.fixture(scope="module")
def driver_plans(driver_models):
    """Every version's driver (cuda.h) plans."""
    from generator.resolve import resolve

    return {key: resolve(model) for key, model in driver_models.items()}


def _quiet(_message: str) -> None:
    pass


@pytest.mark.parametrize("key", version_keys())
def test_driver_output_classification_snapshot(driver_plans, key):
    """Every driver function's inputs and outputs (tests/snapshots/driver_outputs_<ver>.txt),
    reviewed once and then held, as the runtime's are."""
    from generator.generate import snapshot_name

    text = "".join(describe(p) + "\n" for p in driver_plans[key])
    assert "cuMemcpyHtoD_v2(" in text
    snapshot_files.hold(SNAPSHOTS / snapshot_name(key, "driver"), text)


@pytest.fixture(scope="module")
def nvrtc_plans(manifest):
    """Every version's NVRTC plans."""
    from models import model_for

    from generator.fetch import fetch_version
    from generator.resolve import resolve

    return [resolve(model_for(fetch_version(manifest, k, _quiet, "nvrtc"))) for k in version_keys()]


def test_every_table_entry_is_used_by_some_version(plans, driver_plans, nvrtc_plans):
    every = [*plans.values(), *driver_plans.values(), *nvrtc_plans]
    reported = [line for p in every for line in table_uses(p)]
    declared = {
        (f.function.name, q.name) for p in every for f in p for q in f.params if q.source == "table"
    }
    assert {k for k in OVERRIDES} <= declared, sorted(set(OVERRIDES) - declared)
    assert len(reported) == sum(len(f.table_params) for p in every for f in p)


def test_versioned_functions_take_their_twins_table_entries(plans, driver_plans):
    """`<name>_vN` is documented as <name> is: a parameter the table decides for the twin
    is decided the same way for it, without an entry of its own."""
    followed = []
    every = [*plans.items(), *(("driver " + k, v) for k, v in driver_plans.items())]
    for key, version in every:
        by_name = {plan.name: plan for plan in version}
        for plan in version:
            twin = by_name.get(re.sub(r"_v\d+$", "", plan.name))
            # cuda.h's `#define cuLinkCreate cuLinkCreate_v2`: one declaration, two names.
            if twin is None or twin is plan or twin.function is plan.function:
                continue
            decided = {q.name: q.role for q in twin.params if q.source == "table"}
            for q in plan.params:
                if q.name in decided:
                    assert (q.role, q.source) == (decided[q.name], "table"), (key, plan.name)
                    assert (plan.name, q.name) not in OVERRIDES
                    followed.append((key, plan.name, q.name))
    assert ("12.9", "cudaEventElapsedTime_v2", "ms") in followed
    assert ("driver 12.9", "cuEventElapsedTime_v2", "pMilliseconds") in followed


@pytest.mark.parametrize("key", version_keys())
def test_table_entries_change_what_inference_says(models, key):
    """An entry that agrees with inference is dead weight: each must disagree."""
    agreeing = _agreeing_entries(models[key])
    assert not agreeing, f"inference already says what these say: {agreeing}"


def test_driver_table_entries_change_what_inference_says_somewhere(driver_models):
    """The driver's entries: each disagrees with inference in some version (cuda.h's
    docs change between versions: cuCtxCreate_v4's ctxCreateParams reads as an
    output only from 13.2's wording on)."""
    has = {(f.name, p.name) for m in driver_models.values() for f in m.functions for p in f.params}
    entries = {k for k in OVERRIDES if k in has}
    agreeing_everywhere = set.intersection(
        *(_agreeing_entries(m) | (entries - _present(m)) for m in driver_models.values())
    )
    assert entries and not agreeing_everywhere & entries, sorted(agreeing_everywhere & entries)


def _present(model) -> set[tuple[str, str]]:
    return {(f.name, p.name) for f in model.functions for p in f.params}


def _agreeing_entries(model) -> set[tuple[str, str]]:
    """The entries whose role inference already gives in this model."""
    from generator.resolve import _Resolver

    r = _Resolver(model)
    functions = {f.name: f for f in model.functions}
    found = set()
    for (fname, pname), (role, _) in OVERRIDES.items():
        f = functions.get(fname)
        if f is None or pname not in {p.name for p in f.params}:
            continue
        p = next(p for p in f.params if p.name == pname)
        inferred = "out" if r.may_be_output(p.type) and r.documented_output(f, pname) else "in"
        if inferred == role:
            found.add((fname, pname))
    return found


@pytest.mark.parametrize("key", version_keys())
def test_every_function_has_a_checked_form(manifest, key):
    raw = importlib.import_module(f"cudart.sys_{manifest.get(key).number}")
    checked = checked_module(manifest, key)
    # A compiled checked function (issue 23) wraps the Python one (__wrapped__).
    missing = [
        n for n in raw._FUNCTIONS if not inspect.isfunction(inspect.unwrap(checked.__dict__.get(n)))
    ]
    assert missing == []


@pytest.mark.parametrize("key", version_keys())
def test_docstrings_for_every_documented_function(manifest, plans, key):
    checked = checked_module(manifest, key)
    for plan in plans[key]:
        doc = checked.__dict__[plan.name].__doc__
        assert doc.startswith(f"{plan.name}("), plan.name  # the Python signature first
        assert "C: " in doc
        f = plan.function
        if f.doc and f.doc.brief:
            assert f.doc.brief.rstrip(".") in doc, plan.name
        for p in plan.inputs:
            if p.doc:
                assert f"    {p.py_name}: " in doc, (plan.name, p.name)
        for code in plan.errors:
            assert code in doc, (plan.name, code)


@pytest.mark.parametrize("key", version_keys())
def test_queries_return_bool_and_only_queries(plans, key):
    queries = sorted(p.name for p in plans[key] if p.result == "query")
    assert queries == ["cudaEventQuery", "cudaStreamQuery"]


def test_shapes_of_well_known_functions(manifest):
    checked = importlib.import_module("cudart.checked_12050")
    sig = inspect.signature
    assert str(sig(checked.cudaMalloc)) == "(size: 'int') -> 'int'"
    assert str(sig(checked.cudaMemGetInfo)) == "() -> 'tuple[int, int]'"
    assert sig(checked.cudaGetDeviceProperties).return_annotation == "cudaDeviceProp"
    assert sig(checked.cudaStreamCreateWithFlags).return_annotation == "cudaStream_t"
    assert sig(checked.cudaGraphGetNodes).return_annotation == "list[cudaGraphNode_t]"
    assert sig(checked.cudaStreamQuery).return_annotation == "bool"
    assert sig(checked.cudaEventElapsedTime).return_annotation == "float"
    assert list(sig(checked.cudaMemcpy).parameters) == ["dst", "src", "count", "kind"]
    # `from` is a Python keyword: the parameter is from_.
    assert "from_" in sig(checked.cudaGraphAddDependencies).parameters


def test_defaults_come_from_the_header(manifest):
    checked = importlib.import_module("cudart.checked_12050")
    raw = importlib.import_module("cudart.sys_12050")

    def defaults(fn):
        return {
            n: p.default
            for n, p in inspect.signature(fn).parameters.items()
            if p.default is not inspect.Parameter.empty
        }

    assert defaults(checked.cudaMemcpyAsync) == {"stream": None}
    assert defaults(checked.cudaEventRecord) == {"stream": None}
    assert defaults(checked.cudaMemcpyToSymbol) == {"offset": 0, "kind": raw.cudaMemcpyHostToDevice}
    assert defaults(checked.cudaMemcpyFromSymbol) == {
        "offset": 0,
        "kind": raw.cudaMemcpyDeviceToHost,
    }
    assert defaults(checked.cudaStreamWaitEvent) == {"flags": 0}
    assert defaults(checked.cudaUserObjectRetain) == {"count": 1}
    # __dv(0) on outputs (cudaStreamGetCaptureInfo's optional ones) is no parameter.
    assert list(inspect.signature(checked.cudaStreamGetCaptureInfo).parameters) == ["stream"]


# ---------------------------------------------------------------- the real libraries

PROBE = r"""
import ctypes, json, warnings
import cudart
lib = cudart.sys
checked = __import__(f"cudart.checked_{lib.CUDA_VERSION}", fromlist=["x"])
import cudart._checked as _c
import cudart._convert as _convert
out = {"version": lib.CUDA_VERSION, "errors": [], "mismatch": []}
for member in lib.cudaError:
    if member == 0:
        continue
    exc = _c.error(int(member), lib)
    raw_name = lib.cudaGetErrorName(member).decode()
    raw_message = lib.cudaGetErrorString(member).decode()
    cls = getattr(cudart, "Cuda" + member.name[4:])
    ok = (type(exc) is cls and exc.code is member and exc.name == raw_name
          and exc.message == raw_message and isinstance(exc, cudart.CudaError))
    out["errors"].append(member.name)
    if not ok or raw_name != member.name:
        out["mismatch"].append([member.name, type(exc).__name__, exc.name, raw_name])
try:
    cudart.cudaGetDeviceCount()
    out["device_count"] = "no error"
except cudart.CudaError as exc:
    out["device_count"] = [type(exc).__name__, int(exc.code), exc.name, str(exc)]
out["runtime_version"] = cudart.cudaRuntimeGetVersion()
out["driver_version"] = cudart.cudaDriverGetVersion()
out["error_string"] = cudart.cudaGetErrorString(cudart.cudaErrorInvalidValue)
# 12.x deprecates cudaThreadSynchronize for cudaDeviceSynchronize; 13.x removed it and
# deprecates others without naming a replacement, such as cudaDeviceGetSharedMemConfig.
if "cudaThreadSynchronize" in lib._FUNCTIONS:
    name, raw_args = "cudaThreadSynchronize", ()
else:
    name, raw_args = "cudaDeviceGetSharedMemConfig", (ctypes.byref(ctypes.c_int()),)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    for fn in (getattr(cudart, name), getattr(cudart, name)):
        try:
            fn()
        except cudart.CudaError:
            pass
    getattr(lib, name)(*raw_args)  # the raw layer shares the once
out["deprecated"] = [name, lib._REPLACEMENTS.get(name), [str(w.message) for w in caught],
                     [w.filename for w in caught]]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def probes(header_sets):
    return probe_each_version(PROBE, header_sets)


@pytest.mark.backend
@pytest.mark.parametrize("key", version_keys())
def test_every_error_code_maps_to_its_class(probes, manifest, key):
    r = probes[key]
    assert r["version"] == manifest.get(key).number
    assert len(r["errors"]) > 100
    assert r["mismatch"] == []


@pytest.mark.backend
@pytest.mark.parametrize("key", version_keys())
def test_device_count_without_a_gpu_raises_the_right_subclass(probes, key):
    r = probes[key]
    if r["device_count"] == "no error":
        pytest.skip("a GPU is present")
    name, code, runtime_name, text = r["device_count"]
    assert code in (35, 100), r  # InsufficientDriver here, NoDevice on a driver without GPUs
    assert name == "Cuda" + runtime_name[4:]
    assert text.startswith(f"{runtime_name} ({code}): ")


@pytest.mark.backend
@pytest.mark.parametrize("key", version_keys())
def test_calls_that_need_no_gpu(probes, manifest, key):
    r = probes[key]
    assert r["runtime_version"] == manifest.get(key).number
    assert r["error_string"] == "invalid argument"


@pytest.mark.backend
@pytest.mark.parametrize("key", version_keys())
def test_deprecated_warns_once_naming_the_replacement(probes, key):
    name, replacement, messages, files = probes[key]["deprecated"]
    if key.startswith("12."):
        assert (name, replacement) == ("cudaThreadSynchronize", "cudaDeviceSynchronize")
        instead = f"; use {replacement} instead"
    else:  # the header names no replacement, and neither does the warning
        assert (name, replacement) == ("cudaDeviceGetSharedMemConfig", None)
        instead = ""
    # Two checked calls and one raw call: one warning, pointing at the caller.
    assert messages == [f"{name} is deprecated in the CUDA runtime{instead}"]
    assert files == ["<string>"]


# ---------------------------------------------------------------- arguments


@pytest.mark.backend
def test_pointer_arguments():
    assert _c.pointer(None, "p", True) is None
    assert _c.pointer(0x1000, "p", True) == 0x1000
    assert _c.pointer(b"abc", "p", False) == b"abc"
    with pytest.raises(TypeError, match="'dst' is written by the function: bytes"):
        _c.pointer(b"abc", "dst", True)
    buf = bytearray(b"hello")
    arr = _c.pointer(buf, "p", True)
    assert ctypes.addressof(arr) == ctypes.addressof((ctypes.c_char * 5).from_buffer(buf))
    ints = array.array("i", [1, 2, 3])
    view = _c.pointer(ints, "p", True)
    assert ctypes.sizeof(view) == 12
    ctypes.memmove(view, b"\x07\x00\x00\x00", 4)
    assert ints[0] == 7  # no copy: the function writes into the caller's array
    ro = memoryview(b"xyz")[1:]
    copy = _c.pointer(ro, "src", False)
    assert bytes(copy) == b"yz"
    with pytest.raises(
        TypeError, match="'dst' is written by the function: the buffer is read-only"
    ):
        _c.pointer(ro, "dst", True)
    with pytest.raises(TypeError, match="C-contiguous"):
        _c.pointer(memoryview(bytearray(8))[::2], "p", True)
    s = ctypes.c_double(1.5)
    assert type(_c.pointer(s, "p", True)).__name__ == "CArgObject"
    assert isinstance(_c.pointer(ctypes.c_void_p(5), "p", True), ctypes.c_void_p)

    class Addr:
        def __int__(self):
            return 0x2000

    class CudaArray:
        __cuda_array_interface__ = {
            "data": (0x3000, False),
            "shape": (1,),
            "typestr": "<f4",
            "version": 3,
        }

    assert _c.pointer(Addr(), "p", True) == 0x2000
    assert _c.pointer(CudaArray(), "p", True) == 0x3000
    with pytest.raises(TypeError, match="'p' must be a pointer.*not float"):
        _c.pointer(1.5, "p", True)
    with pytest.raises(TypeError, match="not str"):
        _c.pointer("text", "p", False)


@pytest.mark.backend
def test_pointer_accepts_numpy_arrays():
    np = needs.numpy()
    a = np.arange(4, dtype=np.float32)
    p = _c.pointer(a, "dst", True)
    assert ctypes.addressof(p) == a.ctypes.data
    with pytest.raises(TypeError, match="C-contiguous"):
        _c.pointer(a[::2], "dst", True)


@pytest.mark.backend
def test_handle_arguments():
    raw = importlib.import_module("cudart.sys_12050")
    s = raw.cudaStream_t(0x10)
    assert _c.handle(s, raw.cudaStream_t, "stream") is s
    assert _c.handle(None, raw.cudaStream_t, "stream") is None
    assert _c.handle(0x20, raw.cudaStream_t, "stream") == 0x20

    class TorchLike:
        def __cuda_stream__(self):
            return (0, 0x30)

    class BindingsLike:
        def __int__(self):
            return 0x40

    assert _c.handle(TorchLike(), raw.cudaStream_t, "stream") == 0x30
    assert _c.handle(BindingsLike(), raw.cudaStream_t, "stream") == 0x40
    with pytest.raises(TypeError, match="'stream' must be a cudaStream_t, not a cudaEvent_t"):
        _c.handle(raw.cudaEvent_t(1), raw.cudaStream_t, "stream")
    with pytest.raises(TypeError, match="'event' must be a cudaEvent_t.*not str"):
        _c.handle("s", raw.cudaEvent_t, "event")
    # A stream protocol object is no event.
    with pytest.raises(TypeError):
        _c.handle(TorchLike(), raw.cudaEvent_t, "event")


@pytest.mark.parametrize(
    "answer, error, message",
    [
        (123, TypeError, "must return a 2-tuple"),
        ((0,), TypeError, r"of \(int, int\)"),
        (("x", 0), TypeError, r"of \(int, int\)"),
        ((0, "x"), TypeError, r"of \(int, int\)"),
        ((0, 1.5), TypeError, r"of \(int, int\)"),
        ([0, 5], TypeError, r"of \(int, int\)"),
        ((1, 12345), ValueError, "unsupported version 1"),
        ((0, -1), ValueError, "not a pointer"),
        ((0, 1 << 64), ValueError, "not a pointer"),
    ],
)
@pytest.mark.backend
def test_stream_protocol_answers_are_validated(answer, error, message):
    # CuPy's test_stream.py holds its own stream protocol to the same rules.
    raw = importlib.import_module("cudart.sys_12050")

    class Foreign:
        def __cuda_stream__(self):
            return answer

    with pytest.raises(error, match=message):
        _c.handle(Foreign(), raw.cudaStream_t, "stream")
    with pytest.raises(error, match=message):
        _convert.stream_handle(Foreign())


@pytest.mark.backend
def test_sequences_for_typed_pointers():
    raw = importlib.import_module("cudart.sys_12050")
    nodes = _c.ref([raw.cudaGraphNode_t(1), 2], raw.cudaGraphNode_t, "pDependencies", False)
    assert [n.value for n in nodes] == [1, 2]
    ints = _c.ref([1, 2, 3], ctypes.c_int, "device_arr", True)
    assert list(ints) == [1, 2, 3]
    with pytest.raises(TypeError, match="'device_arr'"):
        _c.ref(["a"], ctypes.c_int, "device_arr", True)


@pytest.mark.backend
def test_sequences_of_foreign_handles():
    # cuda-bindings' CUgraphNode and its kind are ints through __int__ (test_interop_live).
    raw = importlib.import_module("cudart.sys_12050")

    class ForeignNode:
        def __int__(self):
            return 0x50

    nodes = _c.ref([ForeignNode(), raw.cudaGraphNode_t(3)], raw.cudaGraphNode_t, "deps", False)
    assert [n.value for n in nodes] == [0x50, 3]
    with pytest.raises(TypeError, match="'deps' must be a cudaGraphNode_t, not a cudaEvent_t"):
        _c.ref([raw.cudaEvent_t(1)], raw.cudaGraphNode_t, "deps", False)
    with pytest.raises(TypeError, match="'deps' must be a cudaGraphNode_t"):
        _c.ref([1.5], raw.cudaGraphNode_t, "deps", False)


@pytest.mark.backend
def test_strings():
    assert _c.cstring("αβ", "s") == "αβ".encode()
    assert _c.cstring(None, "s") is None
    with pytest.raises(TypeError, match="'s' must be str or bytes, not int"):
        _c.cstring(3, "s")


@pytest.mark.backend
def test_wrong_types_name_the_parameter(header_sets):
    code = r"""
import cudart
for call in (lambda: cudart.cudaSetDevice("zero"),
             lambda: cudart.cudaMemcpy(0, 0, "many", cudart.cudaMemcpyHostToDevice),
             lambda: cudart.cudaMemcpy(1.5, 0, 1, cudart.cudaMemcpyHostToDevice),
             lambda: cudart.cudaStreamSynchronize("s")):
    try:
        call()
    except TypeError as exc:
        print(exc)
"""
    lines = run_python(
        code, env={"CUDART_LIBRARY": str(header_sets["12.5"].library)}
    ).stdout.splitlines()
    assert lines[0].startswith("cudaSetDevice() argument 'device': ")
    assert lines[1].startswith("cudaMemcpy() argument 'count': ")
    assert lines[2].startswith("'dst' must be a pointer")
    assert lines[3].startswith("'stream' must be a cudaStream_t")
    assert len(lines) == 4


# ---------------------------------------------------------------- the package


@pytest.mark.backend
def test_top_level_names_and_laziness(header_sets):
    code = r"""
import sys
import cudart
assert "cudart.checked_12050" not in sys.modules and "cudart.sys_12050" not in sys.modules
import cudart._loader as loader
assert loader.load_runtime.loaded is None
assert cudart.CudaError.__name__ == "CudaError"  # no library needed for the base class
v = cudart.cudaRuntimeGetVersion()
assert cudart.cudaMalloc.__module__ == "cudart.checked_12050"
assert cudart.sys.__name__ == "cudart.sys_12050"
assert cudart.cudaMemcpyHostToDevice == 1 and cudart.cudaDeviceProp is cudart.sys.cudaDeviceProp
assert cudart.cudaStream_t is cudart.sys.cudaStream_t and cudart.CUDART_VERSION == 12050
for name in ("c_int", "IntEnum", "bind_on_first_lookup", "TYPE_CHECKING", "_lib"):
    assert not hasattr(cudart, name), name
assert issubclass(cudart.CudaErrorMemoryAllocation, cudart.CudaError)
assert cudart.CudaErrorMemoryAllocation is cudart.CudaErrorMemoryAllocation
assert "typing" not in sys.modules, "the checked layer must not import typing at run time"
print(v)
"""
    out = run_python(code, env={"CUDART_LIBRARY": str(header_sets["12.5"].library)})
    assert out.stdout.strip() == "12050"


def test_generated_sizes_stay_reasonable():
    """Docs are compact (first sentence per parameter): hold each checked module's size
    (13.5: 522 kB, with its declarations for type checkers, the attribute value tables
    and their per-attribute docs, about 21 kB, and the 38 functions of the profiler and
    GL/EGL/VDPAU interop headers). Issue 11's range and kind checks add about 170 kB to
    13.5 (660 kB): two lines per integer, enum and pointer input, each C type's range
    and each enum's values once, and the 43 checked record builders). Issue 20's
    function-pointer, image and claim lines bring 13.5 to 700 kB."""
    for path in sorted(GENERATED.glob("checked_*.py")):
        assert path.stat().st_size < 720_000, path.name


def test_stub_types_the_newest_version():
    newest = max(versions("checked"))
    stub = (GENERATED / "_latest.pyi").read_text()
    # The modules it imports, as stubs: exactly the newest views' text.
    for layer in ("sys", "checked"):
        assert (GENERATED / f"{layer}_{newest}.pyi").read_text() == view_source(f"{layer}_{newest}")
    assert f"checked_{newest} import *" in stub and f"sys_{newest} import *" in stub
    assert f"\nsys = sys_{newest}  #" in stub
    package_stub = (HERE.parent / "cudart" / "__init__.pyi").read_text()
    assert "from ._latest import *" in package_stub
    assert (HERE.parent / "cudart" / "py.typed").exists()


def test_cli_shows_the_table_decisions(plans, capsys):
    from generator.cli import main

    assert main(["outputs", "12.5", "--table"]) == 0
    out = capsys.readouterr().out.splitlines()
    uses = table_uses(plans["12.5"])
    assert out[0] == f"# CUDA 12.5: {len(uses)} parameter(s) classified by the exceptions table"
    assert [line.strip() for line in out[1:]] == uses


@pytest.mark.parametrize("key", version_keys())
def test_cxx_defaults_of_the_header(manifest, key):
    """`#if defined(__cplusplus)` twins' defaults (`flags = cudaMemAttachGlobal`)."""
    checked = checked_module(manifest, key)
    raw = importlib.import_module(f"cudart.sys_{manifest.get(key).number}")
    params = inspect.signature(checked.cudaMallocManaged).parameters
    assert params["flags"].default == raw.cudaMemAttachGlobal
    params = inspect.signature(checked.cudaStreamAttachMemAsync).parameters
    assert params["length"].default == 0
    assert params["flags"].default == raw.cudaMemAttachSingle


@pytest.mark.parametrize("key", version_keys())
def test_outputs_the_header_documents(manifest, key):
    checked = checked_module(manifest, key)
    sig = inspect.signature
    assert list(sig(checked.cudaDeviceGetGraphMemAttribute).parameters) == ["device", "attr"]
    assert sig(checked.cudaDeviceGetGraphMemAttribute).return_annotation == "int"
    if hasattr(checked, "cudaLogsDumpToFile"):
        f = checked.cudaLogsDumpToFile
        assert sig(f).parameters["iterator"].annotation == "int"
        assert sig(f).return_annotation == "int"
        assert sig(checked.cudaLogsDumpToMemory).return_annotation == "tuple[int, int]"
    if hasattr(checked, "cudaLibraryEnumerateKernels"):
        f = checked.cudaLibraryEnumerateKernels
        assert list(sig(f).parameters) == ["numKernels", "lib"]
        assert sig(f).return_annotation == "list[cudaKernel_t]"
    for name in ("cudaDeviceGetHostAtomicCapabilities", "cudaDeviceGetP2PAtomicCapabilities"):
        if hasattr(checked, name):
            f = getattr(checked, name)
            assert "capabilities" not in sig(f).parameters
            assert sig(f).return_annotation == "list[int]"
    doc = checked.cudaMemPoolExportToShareableHandle.__doc__
    assert "shareableHandle: pointer to the location" in doc


def test_the_ctypes_the_template_imports_are_listed_once():
    """render/checked.py's TEMPLATE_CTYPES is the template's own import list: a module
    using any other ctypes name (nvJitLinkCreate's c_uint32) imports it itself."""
    from generator.render.checked import TEMPLATE_CTYPES
    from generator.tree import REPO

    text = (REPO / "templates" / "checked_module.py.j2").read_text()
    block = re.search(r"^from ctypes import \(\n(.*?)^\)", text, re.M | re.S)
    assert block is not None
    assert {name.strip(" ,") for name in block.group(1).split()} == TEMPLATE_CTYPES
