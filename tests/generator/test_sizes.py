"""Size relations (generator/sizes.py) without a GPU: the table as reviewed, a decision
for every (pointer, size) pair of every version, and the checked layer of every version
on the real library refusing an over-long request before C while letting the
exact-size request reach C (which answers the no-GPU error).

What reaches C is seen by a recorder put in place of the checked module's ctypes
functions (`_cudaMemcpy`, ...) inside the subprocess: it records, then calls the real
function.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest
from suite import REPO, probe_each_version, quiet, version_keys

from generator import sizes
from generator.ctypes_map import RenderError
from generator.plan import Measure


def _relation(plans, function, param):
    plan = next((p for p in plans if p.function.name == function), None)
    if plan is None:
        return None  # a function this version lacks
    p = next(q for q in plan.params if q.name == param)
    return str(p.measure) if p.measure else None, p.measure_of


@pytest.fixture(scope="module")
def family_plans(manifest):
    """The other header families' plans (nvJitLink's AddData has a reviewed relation)."""
    from models import model_for

    from generator.fetch import fetch_version
    from generator.resolve import resolve

    return {
        (family, key): resolve(model_for(fetch_version(manifest, key, quiet, family)))
        for family in ("nvrtc", "nvjitlink")
        for key in version_keys()
    }


# The reviewed entries as reviewed: changing the table must change this test too.
REVIEWED_KEYS = {
    ("cudaMemGetLocationInfo", "location_out"),
    ("cudaMemRangeGetAttribute", "devPtr"),
    ("cudaMemRangeGetAttributes", "devPtr"),
    ("cudaMemRangeGetAttributes", "dataSizes"),
    ("cudaMemPrefetchAsync_v2", "devPtr"),
    ("cudaStreamUpdateCaptureDependencies", "dependencies"),
    ("cudaLogsDumpToMemory", "buffer"),
    ("cudaStreamAttachMemAsync", "devPtr"),
    ("nvJitLinkAddData", "data"),
} | {
    (f, p)
    for f in ("cudaLibraryLoadData", "cudaLibraryLoadFromFile")
    for p in ("jitOptions", "jitOptionsValues", "libraryOptions", "libraryOptionValues")
}
# cuda.h (the driver API)
DRIVER_REVIEWED_KEYS = (
    {
        ("cuLogsDumpToMemory", "buffer"),
        ("cuMemGetLocationInfo", "location_out"),
        ("cuMemRangeGetAttributes", "dataSizes"),
        ("cuLinkAddData_v2", "data"),
        ("cuModuleLoadDataEx", "optionValues"),
        ("cuTexRefSetBorderColor", "pBorderColor"),  # Measure.EXACT: RGBA, 4 floats
        ("cuStreamUpdateCaptureDependencies", "dependencies"),
        ("cuMemCreate", "prop"),
        ("cuMipmappedArrayCreate", "pMipmappedArrayDesc"),
        ("cuTensorMapEncodeTiled", "boxDim"),
    }
    | {
        (f, p)
        for f in ("cuLibraryLoadData", "cuLibraryLoadFromFile")
        for p in ("jitOptions", "jitOptionsValues", "libraryOptions", "libraryOptionValues")
    }
    | {
        (f, p)
        for f in (
            "cuTensorMapEncodeTiled",
            "cuTensorMapEncodeIm2col",
            "cuTensorMapEncodeIm2colWide",
        )
        for p in ("globalDim", "elementStrides")
    }
)


@pytest.fixture(scope="module")
def driver_plans(manifest):
    """Every version's driver (cuda.h) plans."""
    from models import models_for

    from generator.fetch import fetch_version
    from generator.resolve import resolve

    sets = {key: fetch_version(manifest, key, quiet, "driver") for key in version_keys()}
    return {key: resolve(model) for key, model in models_for(sets).items()}


def test_tables_as_reviewed_each_entry_with_a_reason(plans, family_plans, driver_plans):
    symbols = {k for k, v in sizes.REVIEWED.items() if k[1] == "symbol"}
    assert len(symbols) == 10 and all(
        v[1] == ("count", "offset") for k, v in sizes.REVIEWED.items() if k in symbols
    )
    assert set(sizes.REVIEWED) - symbols == REVIEWED_KEYS | DRIVER_REVIEWED_KEYS
    assert all(reason for *_, reason in sizes.REVIEWED.values())
    assert all(sizes.LEFT_OUT.values())
    # Every entry is used by some version: a stale entry is a review nobody needs.
    every = [*plans.values(), *family_plans.values(), *driver_plans.values()]
    declared = {p.function.name for version in every for p in version}
    assert {f for f, _ in sizes.REVIEWED} <= declared
    assert {f for f, *_ in sizes.LEFT_OUT} <= declared


def test_every_pair_of_every_version_is_decided(plans, family_plans, driver_plans):
    """A function with a (pointer, size)-looking pair and no decision fails here: add a
    relation (REVIEWED) or a LEFT_OUT entry with the reason, or teach `derive`."""
    every = {
        **plans,
        **{f"{family} {key}": v for (family, key), v in family_plans.items()},
        **{f"driver {k}": v for k, v in driver_plans.items()},
    }
    undecided = {
        key: [f"{p.function}({p.pointer}, {p.size})" for p in pairs if p.state == "UNDECIDED"]
        for key, version in every.items()
        for pairs in [[pair for plan in version for pair in sizes.pairs(plan)]]
    }
    assert {k: v for k, v in undecided.items() if v} == {}


# The getters whose buffer a partner function sizes (sizes.queried_partner), as found in
# the headers: (function, buffer, partner). nvrtcGetNVVM is 12.x's only; the others are
# in each version that declares them.
QUERIED = {
    ("nvrtcGetPTX", "ptx", "nvrtcGetPTXSize"),
    ("nvrtcGetCUBIN", "cubin", "nvrtcGetCUBINSize"),
    ("nvrtcGetLTOIR", "LTOIR", "nvrtcGetLTOIRSize"),
    ("nvrtcGetNVVM", "nvvm", "nvrtcGetNVVMSize"),
    ("nvrtcGetOptiXIR", "optixir", "nvrtcGetOptiXIRSize"),
    ("nvrtcGetTileIR", "TileIR", "nvrtcGetTileIRSize"),
    ("nvrtcGetProgramLog", "log", "nvrtcGetProgramLogSize"),
    ("nvrtcGetSupportedArchs", "supportedArchs", "nvrtcGetNumSupportedArchs"),
    ("nvJitLinkGetLinkedCubin", "cubin", "nvJitLinkGetLinkedCubinSize"),
    ("nvJitLinkGetLinkedPtx", "ptx", "nvJitLinkGetLinkedPtxSize"),
    ("nvJitLinkGetLinkedLTOIR", "ltoir", "nvJitLinkGetLinkedLTOIRSize"),
    ("nvJitLinkGetErrorLog", "log", "nvJitLinkGetErrorLogSize"),
    ("nvJitLinkGetInfoLog", "log", "nvJitLinkGetInfoLogSize"),
}


def test_buffers_a_partner_sizes_are_found_in_every_version(plans, family_plans, driver_plans):
    """Each getter of QUERIED that a version declares is sized by its partner (and may
    omit the buffer: default None); nothing else of any family is."""
    every = [*plans.values(), *family_plans.values(), *driver_plans.values()]
    found = set()
    for version in every:
        names = {plan.name for plan in version}
        for plan in version:
            for p in plan.inputs:
                if p.measure is Measure.QUERIED:
                    found.add((plan.name, p.name, p.measure_of[0]))
                    assert p.default == "None" and p is plan.inputs[-1], plan.name
        for function, buffer, partner in QUERIED:
            if function in names:
                assert partner in names and (function, buffer, partner) in found
    assert found == QUERIED
    declared = {plan.name for version in family_plans.values() for plan in version}
    assert {"nvrtcGetNVVM", "nvrtcGetTileIR", "nvJitLinkGetLinkedLTOIR"} <= declared


def test_the_figures_of_12_5(plans):
    """The issue counted the pairs of 12.5: these are this table's figures for it."""
    assert sizes.summary(plans["12.5"]) == {
        "pairs": 151,
        "checked": 122,
        "undecided": 0,
        "relations": 102,
        # 57 until issue 21: the EGL functions' 9 `cudaEglStreamConnection *` and
        # `cudaStream_t *` inputs are handles now (HANDLE_REF), not one-record pointers.
        "records": 48,
    }


@pytest.mark.parametrize(
    "function, param, expected",
    [
        ("cudaMemcpy", "dst", ("bytes", ("count",))),
        ("cudaMemcpy", "src", ("bytes", ("count",))),
        ("cudaMemcpyAsync", "src", ("bytes", ("count",))),
        ("cudaMemcpyPeer", "src", ("bytes", ("count",))),
        ("cudaMemset", "devPtr", ("bytes", ("count",))),
        ("cudaMemcpyToArray", "src", ("bytes", ("count",))),
        ("cudaMemcpyFromArray", "dst", ("bytes", ("count",))),
        ("cudaMemcpyToSymbol", "src", ("bytes", ("count",))),
        ("cudaMemcpyToSymbol", "symbol", ("bytes", ("count", "offset"))),
        ("cudaHostRegister", "ptr", ("bytes", ("size",))),
        ("cudaMemcpy2D", "dst", ("rows", ("dpitch", "width", "height"))),
        ("cudaMemcpy2D", "src", ("rows", ("spitch", "width", "height"))),
        ("cudaMemcpy2DToArray", "src", ("rows", ("spitch", "width", "height"))),
        ("cudaMemset2DAsync", "devPtr", ("rows", ("pitch", "width", "height"))),
        ("cudaSetValidDevices", "device_arr", ("elements", ("len",))),
        ("cudaGraphicsMapResources", "resources", ("elements", ("count",))),
        ("cudaGraphAddKernelNode", "pDependencies", ("elements", ("numDependencies",))),
        ("cudaGraphAddDependencies", "to", ("elements", ("numDependencies",))),
        (
            "cudaLaunchCooperativeKernelMultiDevice",
            "launchParamsList",
            ("elements", ("numDevices",)),
        ),
        ("cudaChooseDevice", "prop", ("record", ())),
        ("cudaGraphAddKernelNode", "pNodeParams", ("record", ())),
        ("cudaMemcpy3D", "p", ("record", ())),
    ],
)
def test_relations_of_every_version(plans, function, param, expected):
    found = {key: _relation(version, function, param) for key, version in plans.items()}
    assert {k: v for k, v in found.items() if v is not None and v != expected} == {}
    assert found["12.5"] == expected


@pytest.mark.parametrize(
    "function, param, expected",
    [
        ("cuMemcpyHtoD_v2", "srcHost", ("bytes", ("ByteCount",))),
        ("cuMemcpyHtoDAsync_v2", "srcHost", ("bytes", ("ByteCount",))),
        ("cuMemcpyDtoH_v2", "dstHost", ("bytes", ("ByteCount",))),
        ("cuMemcpyDtoHAsync_v2", "dstHost", ("bytes", ("ByteCount",))),
        ("cuMemHostRegister_v2", "p", ("bytes", ("bytesize",))),
        ("cuLinkAddData_v2", "data", ("bytes", ("size",))),
        ("cuModuleLoadDataEx", "options", ("elements", ("numOptions",))),
        ("cuModuleLoadDataEx", "optionValues", ("elements", ("numOptions",))),
        ("cuLinkCreate_v2", "options", ("elements", ("numOptions",))),
        ("cuMemSetAccess", "desc", ("elements", ("count",))),
        ("cuTensorMapEncodeTiled", "globalDim", ("elements", ("tensorRank",))),
        ("cuTensorMapEncodeTiled", "boxDim", ("elements", ("tensorRank",))),
        ("cuTensorMapEncodeTiled", "globalStrides", ("record", ())),
        # A size that is the new object's, beside one record.
        ("cuMemCreate", "prop", ("record", ())),
        ("cuMipmappedArrayCreate", "pMipmappedArrayDesc", ("record", ())),
        ("cuMemcpy2D_v2", "pCopy", ("record", ())),
    ],
)
def test_driver_relations_of_every_version(driver_plans, function, param, expected):
    found = {key: _relation(version, function, param) for key, version in driver_plans.items()}
    assert {k: v for k, v in found.items() if v is not None and v != expected} == {}
    assert found["12.5"] == expected


def test_batch_copies_count_their_lists(plans):
    for key in ("12.8", "13.0", "13.5"):
        version = plans[key]
        for param in ("dsts", "srcs", "sizes"):
            assert _relation(version, "cudaMemcpyBatchAsync", param) == ("elements", ("count",))
        for param in ("attrs", "attrsIdxs"):
            assert _relation(version, "cudaMemcpyBatchAsync", param) == ("elements", ("numAttrs",))


def test_a_pair_without_docs_is_undecided(plans):
    """What the table test guards: the same function with its count's \\param text gone
    has a pair nobody decided."""
    plan = next(p for p in plans["12.5"] if p.function.name == "cudaSetValidDevices")
    blank = tuple(dataclasses.replace(p, doc="", measure=None, measure_of=()) for p in plan.params)
    [bare] = sizes.apply([dataclasses.replace(plan, params=blank)])
    states = {(p.pointer, p.size): p.state for p in sizes.pairs(bare)}
    assert states == {("device_arr", "len"): "UNDECIDED"}


def test_a_stale_entry_is_refused(plans, monkeypatch):
    plan = next(p for p in plans["12.5"] if p.function.name == "cudaMemcpy")
    monkeypatch.setitem(sizes.REVIEWED, ("cudaMemcpy", "source"), (Measure.BYTES, ("count",), "x"))
    with pytest.raises(RenderError, match="cudaMemcpy.source is no pointer input"):
        sizes.apply([plan])
    monkeypatch.delitem(sizes.REVIEWED, ("cudaMemcpy", "source"))
    monkeypatch.setitem(sizes.REVIEWED, ("cudaMemcpy", "src"), (Measure.BYTES, ("bytes",), "x"))
    with pytest.raises(RenderError, match="sized by bytes, no scalar input"):
        sizes.apply([plan])


def test_outputs_sizes_prints_the_table():
    proc = subprocess.run(
        [sys.executable, "-m", "generator", "outputs", "12.5", "--sizes"],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=True,
    )
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("# CUDA 12.5: 151 (pointer, size) pair(s), 122 checked, 0 UNDECIDED")
    assert '  cudaMemcpy.src: bytes(count) (docs: count "Size in bytes to copy")' in lines
    assert (
        "  cudaMallocArray: (desc, width) left out: width sizes the new array, desc is one record"
        in lines
    )


def test_outputs_sizes_lists_the_driver():
    proc = subprocess.run(
        [sys.executable, "-m", "generator", "outputs", "12.5", "--surface", "driver", "--sizes"],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=True,
    )
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("# CUDA 12.5: ") and ", 0 UNDECIDED;" in lines[0]
    assert (
        '  cuMemcpyHtoD_v2.srcHost: bytes(ByteCount) (docs: ByteCount "Size of memory copy in '
        'bytes")' in lines
    )
    assert "  cuMemCreate: (prop, size) left out: " in "\n".join(lines)


# ---------------------------------------------------------------- the checked layer

# Each case: (function, call, expected). "refused:<Error>" must raise that before C (the
# recorder saw no call); "reached" must reach C (the recorder saw it; the no-GPU error).
PROBE = r"""
import array, ctypes, importlib, json, warnings
warnings.simplefilter("ignore")
import cudart
from cudart._hostmem import host_memory

mod = importlib.import_module(cudart.cudaMemcpy.__module__)
calls = []


class Recorder:
    def __init__(self, ns, key):
        self.ns, self.key, self.inner = ns, key, ns[key]
        ns[key] = self

    def __call__(self, *args):
        calls.append(self.key)
        self.ns[self.key] = self.inner  # the stand-in binds itself on its first call
        try:
            return self.inner(*args)
        finally:
            self.inner, self.ns[self.key] = self.ns[self.key], self


# The C functions' stand-ins (`_cudaMemcpy`), not the module's tables of values
# (`_cudaMemcpyKind_members`, `_cudaMemPoolAttr_values`).
for key in [k for k, v in mod.__dict__.items() if k.startswith("_cuda") and callable(v)]:
    Recorder(mod.__dict__, key)

H2D, D2H = int(cudart.cudaMemcpyHostToDevice), int(cudart.cudaMemcpyDeviceToHost)
DEFAULT = int(cudart.cudaMemcpyDefault)
D = 0x10000  # a device address: a bare int, the caller's promise
backing = (ctypes.c_char * 64)()
pinned = host_memory(ctypes.addressof(backing), 16)
ro = memoryview(bytearray(16)).toreadonly()


class PythonChecked:
    # The Python checked functions: a compiled one (issue 23) calls C itself, past the
    # stand-ins, and is held to its Python function by tests/compiled/ (as
    # tests/support/fast_support.python_checked says).
    def __getattr__(self, name):
        return vars(mod).get("_reference", {}).get(name) or getattr(cudart, name)


c = PythonChecked()
cases = {
    "memcpy h2d over": lambda: c.cudaMemcpy(D, bytearray(10), 100, H2D),
    "memcpy h2d exact": lambda: c.cudaMemcpy(D, bytearray(10), 10, H2D),
    "memcpy d2h over": lambda: c.cudaMemcpy(bytearray(10), D, 11, D2H),
    "memcpy d2h exact": lambda: c.cudaMemcpy(bytearray(10), D, 10, D2H),
    "memcpy d2h bytes": lambda: c.cudaMemcpy(b"0123456789", D, 10, D2H),
    "memcpy d2h read-only view": lambda: c.cudaMemcpy(ro, D, 16, D2H),
    "memcpy default array over": lambda: c.cudaMemcpy(D, array.array("f", [0.0] * 4), 17, DEFAULT),
    "memcpy default array exact": lambda: c.cudaMemcpy(D, array.array("f", [0.0] * 4), 16, DEFAULT),
    "memcpy ctypes over": lambda: c.cudaMemcpy(D, (ctypes.c_int * 4)(), 17, H2D),
    "memcpy ctypes exact": lambda: c.cudaMemcpy(D, (ctypes.c_int * 4)(), 16, H2D),
    "memcpy byref over": lambda: c.cudaMemcpy(D, ctypes.byref(ctypes.c_int()), 5, H2D),
    "memcpy memoryview over": lambda: c.cudaMemcpy(memoryview(bytearray(32))[8:], D, 25, D2H),
    "memcpy hostmemory over": lambda: c.cudaMemcpy(D, pinned, 17, H2D),
    "memcpy hostmemory exact": lambda: c.cudaMemcpy(D, pinned, 16, H2D),
    "memcpy negative count": lambda: c.cudaMemcpy(D, bytearray(10), -1, H2D),
    "memcpy ints unchecked": lambda: c.cudaMemcpy(D, D + 4096, 1 << 40, H2D),
    "memcpyAsync over": lambda: c.cudaMemcpyAsync(D, bytearray(10), 11, H2D, None),
    "memcpyAsync exact": lambda: c.cudaMemcpyAsync(D, bytearray(10), 10, H2D, None),
    "memcpyPeer over": lambda: c.cudaMemcpyPeer(bytearray(4), 0, D, 0, 8),
    "memcpyPeerAsync over": lambda: c.cudaMemcpyPeerAsync(D, 0, bytearray(4), 0, 8, None),
    "memset over": lambda: c.cudaMemset(bytearray(8), 0, 9),
    "memset exact": lambda: c.cudaMemset(bytearray(8), 0, 8),
    "memsetAsync over": lambda: c.cudaMemsetAsync(pinned, 0, 17, None),
    "memcpy2D over": lambda: c.cudaMemcpy2D(bytearray(94), 10, D, 10, 5, 10, D2H),
    "memcpy2D exact": lambda: c.cudaMemcpy2D(bytearray(95), 10, D, 10, 5, 10, D2H),
    "memcpy2D src over": lambda: c.cudaMemcpy2D(D, 10, bytearray(94), 10, 5, 10, H2D),
    "memcpy2DAsync over": lambda: c.cudaMemcpy2DAsync(D, 10, bytearray(94), 10, 5, 10, H2D, None),
    "memset2D over": lambda: c.cudaMemset2D(bytearray(20), 8, 0, 8, 3),
    "memset2D exact": lambda: c.cudaMemset2D(bytearray(24), 8, 0, 8, 3),
    "memcpy2DToArray over": lambda: c.cudaMemcpy2DToArray(D, 0, 0, bytearray(10), 8, 8, 2, H2D),
    "memcpy2DFromArray over": lambda: c.cudaMemcpy2DFromArray(bytearray(10), 8, D, 0, 0, 8, 2, D2H),
    "memcpyToArray over": lambda: c.cudaMemcpyToArray(D, 0, 0, bytearray(4), 8, H2D),
    "memcpyFromArray over": lambda: c.cudaMemcpyFromArray(bytearray(4), D, 0, 0, 8, D2H),
    "memcpyToSymbol src over": lambda: c.cudaMemcpyToSymbol(D, bytearray(4), 8, 0, H2D),
    "memcpyToSymbol symbol over": lambda: c.cudaMemcpyToSymbol(bytearray(8), b"0123", 4, 8, H2D),
    "memcpyToSymbol exact": lambda: c.cudaMemcpyToSymbol(D, bytearray(8), 8, 0, H2D),
    "memcpyFromSymbolAsync over": lambda: c.cudaMemcpyFromSymbolAsync(
        bytearray(4), D, 8, 0, D2H, None
    ),
    "hostRegister over": lambda: c.cudaHostRegister(bytearray(4096), 8192, 0),
    "hostRegister exact": lambda: c.cudaHostRegister(bytearray(4096), 4096, 0),
    "hostRegister bytes": lambda: c.cudaHostRegister(bytes(4096), 4096, 0),
    "chooseDevice short": lambda: c.cudaChooseDevice(b"x"),
    "chooseDevice struct": lambda: c.cudaChooseDevice(c.cudaDeviceProp()),
    "chooseDevice other struct": lambda: c.cudaChooseDevice(c.cudaUUID_t()),
    "setValidDevices long count": lambda: c.cudaSetValidDevices([0], 1000),
    "setValidDevices exact": lambda: c.cudaSetValidDevices([0], 1),
    "setValidDevices buffer over": lambda: c.cudaSetValidDevices(array.array("i", [0]), 2),
    "mapResources long count": lambda: c.cudaGraphicsMapResources(2, [None], None),
    "emptyNode long count": lambda: c.cudaGraphAddEmptyNode(None, [], 1),
    "emptyNode exact": lambda: c.cudaGraphAddEmptyNode(None, [], 0),
}
if hasattr(c, "cudaMemcpyBatchAsync"):
    cases["memcpyBatch sizes over"] = lambda: c.cudaMemcpyBatchAsync(
        (ctypes.c_void_p * 2)(D, D), (ctypes.c_void_p * 2)(D, D), [4], 2, [], [], 0, None
    )
    cases["memcpyBatch dsts over"] = lambda: c.cudaMemcpyBatchAsync(
        (ctypes.c_void_p * 1)(D), (ctypes.c_void_p * 2)(D, D), [4, 4], 2, [], [], 0, None
    )
out = {}
for name, call in cases.items():
    del calls[:]
    try:
        call()
        what = "returned"
    except Exception as exc:
        what = type(exc).__name__ + ": " + str(exc)
    out[name] = ("reached " if calls else "refused ") + what
print(json.dumps(out))
"""

REFUSED = {
    "memcpy h2d over": (
        "ValueError: cudaMemcpy: count = 100 bytes, but 'src' is a buffer of 10 bytes: "
        "the call would run past its end"
    ),
    "memcpy d2h over": "ValueError: cudaMemcpy: count = 11 bytes, but 'dst' is a buffer of 10",
    "memcpy d2h bytes": "TypeError: 'dst' is written by the function: bytes is read-only",
    "memcpy d2h read-only view": "TypeError: 'dst' is written by the function: the buffer is read",
    "memcpy default array over": "ValueError: cudaMemcpy: count = 17 bytes, but 'src' is a buffer",
    "memcpy ctypes over": "ValueError: cudaMemcpy: count = 17 bytes, but 'src' is a buffer of 16",
    "memcpy byref over": "ValueError: cudaMemcpy: count = 5 bytes, but 'src' is a buffer of 4",
    "memcpy memoryview over": "ValueError: cudaMemcpy: count = 25 bytes, but 'dst' is a buffer of",
    "memcpy hostmemory over": "ValueError: cudaMemcpy: count = 17 bytes, but 'src' is a buffer of",
    # The count is converted (its range checked) before the buffers it sizes.
    "memcpy negative count": "OverflowError: cudaMemcpy() argument 'count': -1 is outside",
    "memcpyAsync over": "ValueError: cudaMemcpyAsync: count = 11 bytes, but 'src'",
    "memcpyPeer over": "ValueError: cudaMemcpyPeer: count = 8 bytes, but 'dst' is a buffer of 4",
    "memcpyPeerAsync over": "ValueError: cudaMemcpyPeerAsync: count = 8 bytes, but 'src'",
    "memset over": "ValueError: cudaMemset: count = 9 bytes, but 'devPtr' is a buffer of 8",
    "memsetAsync over": "ValueError: cudaMemsetAsync: count = 17 bytes, but 'devPtr' is a buffer",
    "memcpy2D over": "ValueError: cudaMemcpy2D: (height - 1) * dpitch + width = 95 bytes, but",
    "memcpy2D src over": "ValueError: cudaMemcpy2D: (height - 1) * spitch + width = 95 bytes, but",
    "memcpy2DAsync over": "ValueError: cudaMemcpy2DAsync: (height - 1) * spitch + width = 95",
    "memset2D over": "ValueError: cudaMemset2D: (height - 1) * pitch + width = 24 bytes, but",
    "memcpy2DToArray over": "ValueError: cudaMemcpy2DToArray: (height - 1) * spitch + width = 16",
    "memcpy2DFromArray over": "ValueError: cudaMemcpy2DFromArray: (height - 1) * dpitch + width =",
    "memcpyToArray over": "ValueError: cudaMemcpyToArray: count = 8 bytes, but 'src' is a buffer",
    "memcpyFromArray over": "ValueError: cudaMemcpyFromArray: count = 8 bytes, but 'dst'",
    "memcpyToSymbol src over": "ValueError: cudaMemcpyToSymbol: count = 8 bytes, but 'src'",
    "memcpyToSymbol symbol over": "ValueError: cudaMemcpyToSymbol: count + offset = 12 bytes, but",
    "memcpyFromSymbolAsync over": "ValueError: cudaMemcpyFromSymbolAsync: count = 8 bytes, but",
    "hostRegister over": "ValueError: cudaHostRegister: size = 8192 bytes, but 'ptr' is a buffer",
    "hostRegister bytes": "TypeError: 'ptr' is written by the function: bytes is read-only",
    "chooseDevice short": (
        "ValueError: cudaChooseDevice: the record (1 x cudaDeviceProp) = "  # 1032 or 1008 bytes
    ),
    # Another record class is refused by kind first (cudart._convert._record_pointer).
    "chooseDevice other struct": "TypeError: 'prop' must be a cudaDeviceProp, not a CUuuid_st",
    "setValidDevices long count": (
        "ValueError: cudaSetValidDevices: len = 1000 elements, but 'device_arr' has 1"
    ),
    "setValidDevices buffer over": "ValueError: cudaSetValidDevices: len (2 x c_int) = 8 bytes,",
    "mapResources long count": "ValueError: cudaGraphicsMapResources: count = 2 elements, but",
    "emptyNode long count": (
        "ValueError: cudaGraphAddEmptyNode: numDependencies = 1 elements, but 'pDependencies' has 0"
    ),
    "memcpyBatch sizes over": "ValueError: cudaMemcpyBatchAsync: count = 2 elements, but 'sizes'",
    "memcpyBatch dsts over": (
        "ValueError: cudaMemcpyBatchAsync: count pointers = 16 bytes, but 'dsts' is a buffer of 8"
    ),
}
REACHED = [
    "memcpy h2d exact",
    "memcpy d2h exact",
    "memcpy default array exact",
    "memcpy ctypes exact",
    "memcpy hostmemory exact",
    "memcpy ints unchecked",
    "memcpyAsync exact",
    "memset exact",
    "memcpy2D exact",
    "memset2D exact",
    "memcpyToSymbol exact",
    "hostRegister exact",
    "chooseDevice struct",
    "setValidDevices exact",
    "emptyNode exact",
]


@pytest.mark.backend
def test_checked_layer_refuses_before_c_on_every_version(header_sets):
    results = probe_each_version(PROBE, header_sets)
    for key, out in results.items():
        for case, message in REFUSED.items():
            if case.startswith("memcpyBatch") and case not in out:
                continue  # the batch copies came with 12.8
            assert out[case].startswith("refused " + message), (key, case, out[case])
        for case in REACHED:
            # Without a GPU the runtime answers with an error of its own: a CudaError.
            assert out[case].startswith("reached Cuda"), (key, case, out[case])
    assert "memcpyBatch sizes over" in results["13.5"]
