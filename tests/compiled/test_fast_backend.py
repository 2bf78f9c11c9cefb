"""The compiled backend (issue 13): generated C per version, the C compiler as a second
ABI judge, the same names and signatures as the ctypes backend, and conversions that
take what ctypes takes and refuse what C's types cannot hold.

The conversions are checked with the module's recorder (`record(True)`: every function
keeps the arguments as converted for C instead of calling it; compiled into the test
build only, fast_support.recording_module), and the real library
answers the calls it can answer without a GPU. The fuzz grids of both backends are
compared in tests/runtime/test_fuzz_ranges.py.
"""

from __future__ import annotations

import ctypes
import importlib
import inspect
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from abi_support import shim_args
from fast_support import (
    JUDGE_FLAGS,
    compiler,
    extension,
    fast_module,
    merged_source,
    python_include,
    recording_module,
)
from suite import REPO, run_python, version_keys

from cudart import _fastproto
from cudart._backend import spec
from generator.fetch import fetch_version
from generator.manifest import Manifest

RAW = importlib.import_module("cudart.sys_12050")


def _number(key: str) -> int:
    major, minor = key.split(".")
    return int(major) * 1000 + int(minor) * 10


def _judge(source: Path, include_dirs=None, view: int | None = None) -> subprocess.CompletedProcess:
    """One generated module, syntax and types only, every warning an error: against the
    pinned headers (`include_dirs`, of one version: its `view` alone,
    -DCUDART_VIEW), or as users build it (None: no CUDA header, every view)."""
    cmd = [compiler() or "cc", *JUDGE_FLAGS, "-fsyntax-only"]
    if view is not None:
        cmd.append(f"-DCUDART_VIEW={view}")
    if include_dirs is not None:
        cmd += ["-DCUDART_FAST_PINNED_HEADERS", *shim_args()]
        for d in include_dirs:
            cmd += ["-isystem", str(d)]
    cmd += ["-I", python_include(), "-I", str(REPO / "cudart"), str(source)]
    return subprocess.run(cmd, capture_output=True, text=True)


# The header families the compiled backend serves, by the prefix of their modules.
SURFACES = {"runtime": ("sys_", "_fast_"), "driver": ("driver_", "_fast_driver_")}


@pytest.fixture(scope="module")
def judged(header_sets):
    if compiler() is None:
        pytest.skip("no C compiler")
    manifest = Manifest.load()

    def include_dirs(key: str, surface: str):
        if surface == "runtime":
            return header_sets[key].include_dirs
        return fetch_version(manifest, key, lambda _m: None, surface).include_dirs

    def one(job: tuple[str, str, bool]):
        key, surface, pinned = job
        source = merged_source(_number(key), surface)
        if pinned:  # that version's view alone, against its headers
            return job, _judge(source, include_dirs(key, surface), _number(key))
        return job, _judge(source)  # every view of the major, as users build it

    # The users' build once per (family, major): every version of it reads that one.
    first: dict[tuple[Path, str], str] = {}
    for k in header_sets:
        for s in SURFACES:
            first.setdefault((merged_source(_number(k), s), s), k)
    jobs = [(k, s, True) for k in header_sets for s in SURFACES]
    jobs += [(k, s, False) for (_source, s), k in first.items()]
    with ThreadPoolExecutor(max_workers=4) as pool:
        done = dict(pool.map(one, jobs))
    for k in header_sets:
        for s in SURFACES:
            done[k, s, False] = done[first[merged_source(_number(k), s), s], s, False]
    return done


@pytest.mark.parametrize("surface", SURFACES)
@pytest.mark.parametrize("key", version_keys())
def test_every_call_compiles_against_the_pinned_headers_without_a_warning(judged, key, surface):
    # Each function pointer is __typeof__(&name) of NVIDIA's declaration, each
    # prototype as the model reads it is asserted compatible with it, and each record
    # by value has the header's size and alignment: -Werror -Wconversion.
    proc = judged[key, surface, True]
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stderr == ""


@pytest.mark.parametrize("surface", SURFACES)
@pytest.mark.parametrize("key", version_keys())
def test_the_users_build_compiles_without_a_warning(judged, key, surface):
    # No CUDA header: the model's own prototypes, and only the limited API (a function
    # outside it would be an implicit declaration, an error here).
    proc = judged[key, surface, False]
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stderr == ""


def _sabotaged(tmp_path: Path, old: str, new: str) -> Path:
    """The 12.x module with `old` replaced by `new`: the one occurrence, or the first in
    cudaMalloc's function."""
    source = merged_source(12050).read_text()
    start = 0 if source.count(old) == 1 else source.index("*cudart_fn_cudaMalloc(")
    at = source.index(old, start)
    path = tmp_path / "_fast_12.c"
    path.write_text(source[:at] + new + source[at + len(old) :])
    return path


@pytest.mark.parametrize(
    "old, new, complaint",
    [
        # The model misreading a prototype: size_t read as unsigned int.
        (
            "CUDART_PROTOTYPE(cudaMalloc, cudaMalloc, cudaError_t (*)(void **, size_t));",
            "CUDART_PROTOTYPE(cudaMalloc, cudaMalloc, cudaError_t (*)(void **, unsigned int));",
            "cudaMalloc: prototype",
        ),
        # A conversion handing C a narrower type than the header's.
        ("(unsigned long)u1);", "(int)u1);", "sign-conversion"),
        # A record by value of the wrong size.
        (
            "unsigned char bytes[24]; } cudart_record_cudaExtent_24_8;",
            "unsigned char bytes[32]; } " "cudart_record_cudaExtent_24_8;",
            "cudaExtent: size",
        ),
    ],
)
def test_the_judge_refuses_a_wrong_declaration(header_sets, tmp_path, old, new, complaint):
    if compiler() is None:
        pytest.skip("no C compiler")
    source = _sabotaged(tmp_path, old, new)
    proc = _judge(source, header_sets["12.5"].include_dirs, 12050)
    assert proc.returncode != 0
    assert complaint in proc.stderr


def _prototype(doc: str) -> str:
    """The C prototype heading a raw function's doc (without the alias note)."""
    return doc.splitlines()[0].split("  (what C")[0]


@pytest.mark.parametrize("surface", SURFACES)
@pytest.mark.parametrize("key", version_keys())
def test_both_backends_expose_the_same_names_and_signatures(key, surface):
    number = _number(key)
    raw_prefix, fast_prefix = SURFACES[surface]
    fast = extension(f"cudart.{fast_prefix}{number}")
    raw = importlib.import_module(f"cudart.{raw_prefix}{number}")
    functions = vars(raw)["_FUNCTIONS"]
    docs = vars(raw)["_DOCS"]
    compiled = {n for n in dir(fast) if callable(getattr(fast, n)) and n.startswith("cu")}
    assert compiled == set(functions)
    for name, (_symbol, _restype, argtypes, _flags) in functions.items():
        fn = getattr(fast, name)
        params = list(inspect.signature(fn).parameters.values())
        assert len(params) == len(argtypes), name
        assert all(p.kind is p.POSITIONAL_ONLY for p in params), name
        # The same doc: the C prototype, parameter names included, and the header's docs.
        assert fn.__doc__ == docs[name], name
        c_names = re.findall(r"(\w+)(?:\[\d*\])?(?:,|\)$)", _prototype(fn.__doc__))
        if argtypes:
            assert [p.name.rstrip("_") for p in params] == c_names, name


# ---------------------------------------------------------------- conversions


@pytest.fixture
def recorder():
    fast = recording_module(12050)
    fast.record(True)
    yield fast
    fast.record(False)


def _last(fast):
    calls = fast.recorded()
    assert calls, "nothing reached C"
    return calls[-1][1]


def test_integers_are_checked_against_their_c_type(recorder):
    fast = recorder
    fast.cudaMemset(None, -(2**31), 2**64 - 1)
    assert _last(fast) == (0, -(2**31), 2**64 - 1)
    for bad, cause in [
        (2**31, "OverflowError"),
        (-(2**31) - 1, "OverflowError"),
        (1.5, "TypeError"),
        ("1", "TypeError"),
    ]:
        with pytest.raises(ctypes.ArgumentError, match=f"argument 2: {cause}"):
            fast.cudaMemset(None, bad, 0)
    with pytest.raises(ctypes.ArgumentError, match="argument 3: OverflowError"):
        fast.cudaMemset(None, 0, 2**64)
    with pytest.raises(ctypes.ArgumentError, match="argument 3: OverflowError"):
        fast.cudaMemset(None, 0, -1)
    # Enums are their underlying integer, as in ctypes; IntEnum members and ctypes
    # scalars are ints.
    fast.cudaMemcpy(None, None, ctypes.c_size_t(8), RAW.cudaMemcpyKind.cudaMemcpyDefault)
    assert _last(fast) == (0, 0, 8, 4)
    # An int's subclasses miss the exact int's inline path and take the same rule.
    fast.cudaMemset(None, _Int(-(2**31)), _Int(2**64 - 1))
    assert _last(fast) == (0, -(2**31), 2**64 - 1)
    fast.cudaMemset(None, True, False)
    assert _last(fast) == (0, 1, 0)
    for bad, at in [((_Int(2**31), 0), 2), ((0, _Int(-1)), 3)]:
        with pytest.raises(ctypes.ArgumentError, match=f"argument {at}: OverflowError"):
            fast.cudaMemset(None, *bad)


class _Int(int):
    """An int's subclass: what an exact int's fast path must leave to the general one."""


def test_an_integer_takes_its_argtypes_ctypes_class_as_its_memory_holds_it(recorder):
    fast = recorder
    # cudaMemset(void *, int value, size_t count): argtypes c_void_p, c_int, c_ulong.

    class Lying(ctypes.c_int):
        value = property(lambda self: 1)  # ctypes passes the memory, not `.value`

    fast.cudaMemset(None, Lying(-5), ctypes.c_size_t(2**64 - 1))
    assert _last(fast) == (0, -5, 2**64 - 1)
    for bad in (
        ctypes.c_uint(1),  # another integer class: ctypes refuses it too
        ctypes.c_long(1),
        ctypes.c_void_p(1),  # an address is no integer
        RAW.cudaEvent_t(1),
    ):
        with pytest.raises(ctypes.ArgumentError, match="argument 2: TypeError: wrong type"):
            fast.cudaMemset(None, bad, 0)


def test_pointers_take_what_ctypes_takes(recorder):
    fast = recorder
    buf = (ctypes.c_char * 16)()
    value = ctypes.c_int(7)
    data = b"abcd"
    array = bytearray(8)
    stream = RAW.cudaStream_t(0x1234)
    callback = RAW.cudaHostFn_t(lambda _data: None)
    cases = [
        (None, 0),
        (0x1000, 0x1000),
        (buf, ctypes.addressof(buf)),
        (ctypes.byref(value), ctypes.addressof(value)),
        (ctypes.byref(buf, 4), ctypes.addressof(buf) + 4),
        (ctypes.pointer(value), ctypes.addressof(value)),
        (ctypes.c_void_p(0x2000), 0x2000),
        (stream, 0x1234),
        (callback, ctypes.cast(callback, ctypes.c_void_p).value),
        (array, ctypes.addressof(ctypes.c_char.from_buffer(array))),
        (data, ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value),  # its bytes
        (_Int(0x3000), 0x3000),  # an int's subclasses are addresses too
        (True, 1),
    ]
    for given, expected in cases:
        fast.cudaFreeHost(given)
        assert _last(fast)[0] == expected, given
    for bad, cause in [
        (-1, "OverflowError"),
        (2**64, "OverflowError"),
        (_Int(-1), "OverflowError"),
        (_Int(2**64), "OverflowError"),
        (1.5, "TypeError"),
        ("x", "TypeError"),
        (object(), "TypeError"),
        (value, "TypeError"),
    ]:
        with pytest.raises(ctypes.ArgumentError, match=f"argument 1: {cause}"):
            fast.cudaFreeHost(bad)


def test_handle_objects_pass_the_value_their_memory_holds(recorder):
    # A c_void_p argument's value is read where ctypes keeps its memory (b_ptr, found at
    # import): every handle class, subclasses, a value changed after the object was
    # made, and views of other memory (an array item, a buffer) whose memory changed.
    import sys

    from cudart._handles import Handle

    fast = recorder
    classes = [c for c in vars(RAW).values() if isinstance(c, type) and issubclass(c, Handle)]
    assert len(classes) > 20
    for n, cls in enumerate(classes):
        address = 0x10000 + 0x100 * n
        sub = type("Sub", (cls,), {})
        changed = cls(1)
        changed.value = address + 1
        items = (cls * 2)(cls(5), cls(6))
        item = items[1]
        ctypes.memmove(
            ctypes.addressof(items) + ctypes.sizeof(cls), address.to_bytes(8, "little"), 8
        )
        memory = bytearray(8)
        view = cls.from_buffer(memory)
        memory[:] = (address + 2).to_bytes(8, "little")
        for given, expected in [
            (cls(address), address),
            (cls(), 0),
            (sub(address + 3), address + 3),
            (changed, address + 1),
            (item, address),
            (view, address + 2),
        ]:
            fast.cudaStreamQuery(given)
            assert _last(fast)[0] == expected, (cls, given)
    if sys.version_info >= (3, 12):  # a class's own buffer: ctypes passes its memory still

        class Other(RAW.cudaStream_t):
            def __buffer__(self, flags):
                return memoryview(b"\x07" * 8)

        fast.cudaStreamQuery(Other(0x4321))
        assert _last(fast)[0] == 0x4321


def test_a_buffer_for_a_typed_pointer_must_hold_its_pointee(recorder):
    fast = recorder
    # cudaPointerGetAttributes(struct cudaPointerAttributes *, const void *)
    size = ctypes.sizeof(RAW.cudaPointerAttributes)
    fast.cudaPointerGetAttributes(bytearray(size), None)
    with pytest.raises(ctypes.ArgumentError, match="argument 1: ValueError"):
        fast.cudaPointerGetAttributes(bytearray(size - 1), None)
    with pytest.raises(ctypes.ArgumentError, match="argument 1: ValueError"):
        fast.cudaPointerGetAttributes(b"x", None)
    fast.cudaPointerGetAttributes(0x10000, None)  # an address: the caller's promise
    # A byref(): what is left of its object from its offset.
    room = (ctypes.c_char * (size + 8))()
    fast.cudaPointerGetAttributes(ctypes.byref(room, 8), None)
    assert _last(fast)[0] == ctypes.addressof(room) + 8
    for offset in (9, size + 9, -1):
        with pytest.raises(ctypes.ArgumentError, match="argument 1: ValueError: a byref"):
            fast.cudaPointerGetAttributes(ctypes.byref(room, offset), None)


def test_storage_variants_pass_ctypes_objects_by_their_memory(recorder):
    fast = recorder
    # cudaStreamCreate(cudaStream_t *): the checked layer passes a cudaStream_t to fill.
    stream = RAW.cudaStream_t(0x55)
    fast.cudaStreamCreate(stream)  # raw: a handle is the address it holds
    assert _last(fast)[0] == 0x55
    storage = fast.variant("cudaStreamCreate", spec((ctypes.POINTER(RAW.cudaStream_t),)))
    storage(stream)  # storage: its memory
    assert _last(fast)[0] == ctypes.addressof(stream)
    p = ctypes.pointer(ctypes.c_void_p())
    storage(p)  # a pointer object is still its value
    assert _last(fast)[0] == ctypes.addressof(p.contents)


def test_output_variants_provide_their_outputs(recorder):
    fast = recorder
    # cudaMemGetInfo(size_t *free, size_t *total): both provided by the call.
    argtypes = (ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_size_t))
    both = fast.variant("cudaMemGetInfo", spec(argtypes, (0, 1)))
    assert both() == (0, 0, 0)  # status, free, total (the recorder writes nothing)
    free, total = _last(fast)
    assert free != 0 and total == free + 8  # two slots of the call's own
    with pytest.raises(TypeError, match="takes 0 arguments"):
        both(None)

    class Spec(bytes):
        pass

    # A spec of a bytes' subclass is a spec still (variant() keeps an exact copy).
    assert fast.variant("cudaMemGetInfo", Spec(spec(argtypes, (0, 1))))() == (0, 0, 0)
    assert fast.variant("cudaMemGetInfo", Spec(spec(argtypes, (1,))))(None) == (0, 0)
    # cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
    argtypes = (ctypes.POINTER(ctypes.c_int), ctypes.c_uint, ctypes.c_int)
    value = fast.variant("cudaDeviceGetAttribute", spec(argtypes, (0,)))
    assert value(1, 0) == (0, 0)
    assert _last(fast)[1:] == (1, 0)
    with pytest.raises(ctypes.ArgumentError, match="argument 3: OverflowError"):
        value(1, 2**40)  # the C parameter's number, as ctypes numbers it
    # Only pointers to a scalar can be slots: a record pointer cannot.
    argtypes = (ctypes.POINTER(RAW.cudaPointerAttributes), ctypes.c_void_p)
    with pytest.raises(TypeError, match="no pointer to a ctypes scalar"):
        spec(argtypes, (0,))
    forged = bytearray(spec((ctypes.POINTER(ctypes.c_int), ctypes.c_void_p), (0,)))
    with pytest.raises(ValueError, match="output must point to a scalar"):
        fast.variant("cudaPointerGetAttributes", bytes(forged))(None)


def test_every_output_code_of_the_protocol_is_read_by_the_c_side(recorder):
    # cudart/_fastproto.py's codes are what cudart_output_value reads: each one comes
    # back as a value (the recorder writes nothing: a zero of the code's type).
    fast = recorder
    for code in sorted(_fastproto.OUTPUT_CODES):
        variant = fast.variant("cudaMemGetInfo", _fastproto.spec(0, 0b11, {0: code, 1: code}))
        assert variant() == (0, 0, 0), code
    with pytest.raises(SystemError, match="no output code z"):
        fast.variant("cudaMemGetInfo", _fastproto.spec(0, 0b1, {0: "z"}))(None)


def test_records_by_value_are_exactly_their_size(recorder):
    fast = recorder
    extent = RAW.make_cudaExtent(1, 2, 3)
    fast.cudaMemset3D(RAW.cudaPitchedPtr(), 0, extent)
    assert _last(fast)[2] == bytes(extent)
    with pytest.raises(ctypes.ArgumentError, match="argument 3: TypeError"):
        fast.cudaMemset3D(RAW.cudaPitchedPtr(), 0, RAW.dim3())
    with pytest.raises(ctypes.ArgumentError, match="argument 3: TypeError"):
        fast.cudaMemset3D(RAW.cudaPitchedPtr(), 0, (ctypes.c_size_t * 3)(1, 2, 3))
    # Another class of the same name and size is another record, as to ctypes.
    fields = [(name, ctypes.c_size_t) for name in ("width", "height", "depth")]
    same_name = type("cudaExtent", (ctypes.Structure,), {"_fields_": fields})
    with pytest.raises(ctypes.ArgumentError, match="argument 3: TypeError"):
        fast.cudaMemset3D(RAW.cudaPitchedPtr(), 0, same_name(1, 2, 3))

    class Subclass(RAW.cudaExtent):
        pass

    fast.cudaMemset3D(RAW.cudaPitchedPtr(), 0, Subclass(1, 2, 3))
    assert _last(fast)[2] == bytes(extent)


def test_the_recorder_is_in_test_builds_only():
    # Issue 19: setup.py's build (the users') has no call recorder; the test build has.
    assert not hasattr(fast_module(12050), "record")
    assert not hasattr(fast_module(12050), "recorded")
    assert callable(recording_module(12050).record)


@pytest.mark.parametrize(
    "old, new",
    [
        ("#define CUDART_MAX_PARAMS 64", "#define CUDART_MAX_PARAMS 32"),
        ("#define CUDART_SLOT_RECORD 1", "#define CUDART_SLOT_RECORD 2"),
        ("    unsigned long long outs;\n", "    unsigned int outs;\n"),
    ],
)
def test_a_protocol_drift_of_fastcall_h_fails_the_compile(tmp_path, old, new):
    # The generated C asserts _fastcall.h's numbers against cudart/_fastproto.py's.
    if compiler() is None:
        pytest.skip("no C compiler")
    header = (REPO / "cudart" / "_fastcall.h").read_text()
    assert header.count(old) == 1
    (tmp_path / "_fastcall.h").write_text(header.replace(old, new))
    source = tmp_path / "_fast_12.c"  # its "_fastcall.h" is the one beside it
    source.write_text(merged_source(12050).read_text())
    proc = _judge(source)
    assert proc.returncode != 0
    assert "_fastcall.h disagrees with cudart/_fastproto.py" in proc.stderr
    (tmp_path / "_fastcall.h").write_text(header)
    assert _judge(source).returncode == 0


def test_arity_is_checked_and_an_unbound_function_raises():
    fast = recording_module(12050)
    with pytest.raises(TypeError, match="takes 3 arguments"):
        fast.cudaMemset(None, 0)
    fast.record(False)
    unbound = next(n for n in dir(fast) if n.startswith("cuda") and fast.address(n) == 0)
    with pytest.raises(RuntimeError, match="not bound"):
        getattr(fast, unbound)(*[None] * len(inspect.signature(getattr(fast, unbound)).parameters))


# ---------------------------------------------------------------- the real library


def test_the_real_library_through_the_compiled_backend():
    code = r"""
import ctypes, json, cudart
from cudart import _backend
v = ctypes.c_int()
out = {
    "backend": cudart.backend(),
    "builtin": type(cudart.sys.cudaRuntimeGetVersion).__name__,
    "status": cudart.sys.cudaRuntimeGetVersion(ctypes.byref(v)),
    "version": v.value,
    "checked": cudart.cudaRuntimeGetVersion(),
    "text": cudart.sys.cudaGetErrorString(1).decode(),
    "desc": type(cudart.sys.cudaCreateChannelDesc(8, 0, 0, 0, 0)).__name__,
    "device": cudart.sys.cudaGetDeviceCount(ctypes.byref(v)),
}
print(json.dumps(out))
"""
    import json

    fast_module(12050)
    out = json.loads(run_python(code, env={"CUDART_BACKEND": "compiled"}).stdout)
    assert out["backend"] == "compiled"
    assert out["builtin"] == "builtin_function_or_method"
    assert (out["status"], out["version"], out["checked"]) == (0, 12050, 12050)
    assert out["text"] == "invalid argument"
    assert out["desc"] == "cudaChannelFormatDesc"
    assert out["device"] in (0, 35, 100)  # a GPU, no driver, no device


TWO_VIEWS_CHILD = r"""
import ctypes, importlib, json
import cudart
from cudart import _checked
a = importlib.import_module("cudart._fast_12050")
b = importlib.import_module("cudart._fast_12080")
raw = {v: importlib.import_module(f"cudart.sys_{v}") for v in (12050, 12080)}
out = {"versions": [a.CUDA_VERSION, b.CUDA_VERSION]}
out["same_extension"] = a.__spec__.origin == b.__spec__.origin
out["names"] = [
    {n for n in dir(m) if n.startswith("cuda")} == set(vars(raw[v])["_FUNCTIONS"])
    for m, v in ((a, 12050), (b, 12080))
]
# A name of 12.8 that 12.5 lacks: absent from 12.5's view, and bind() refuses it there.
extra = sorted(n for n in set(dir(b)) - set(dir(a)) if n.startswith("cuda"))
out["extra"] = bool(extra) and not any(hasattr(a, n) for n in extra)
try:
    a.bind(extra[0], extra[0], ctypes.CDLL(None)._handle)
    out["bind_refused"] = False
except LookupError:
    out["bind_refused"] = True
# Slots: binding one view's function leaves the other view's as it was.
before = b.address("cudaGetDevice")
assert a.bind("cudaGetDevice", "abs", ctypes.CDLL(None)._handle)
out["slots"] = [a.cudaGetDevice(7) == 7, b.address("cudaGetDevice") == before]
# Record classes: each view takes its own raw module's records by value.
def takes(m, record):
    try:
        m.cudaMalloc3D(None, record)
    except ctypes.ArgumentError:
        return False
    except RuntimeError:  # converted, then unbound
        return True
    return True
out["records"] = [
    takes(a, raw[12050].cudaExtent()), takes(a, raw[12080].cudaExtent()),
    takes(b, raw[12080].cudaExtent()), takes(b, raw[12050].cudaExtent()),
]
# Checked references: each view's compiled checked function falls back to its own.
made = {}
for name, m in (("a", a), ("b", b)):
    ref = {"cudaSetDevice": lambda *args, who=name, **kw: (who, list(args), kw)}
    ns = vars(importlib.import_module(f"cudart.checked_{m.CUDA_VERSION}"))
    made[name] = m.checked(ref, _checked, ns)["cudaSetDevice"]
out["references"] = [made["a"](device=1), made["b"](device=2)]
print(json.dumps(out))
"""


def test_two_views_of_one_major_keep_their_own_state():
    # One extension (cudart._fast_12) serves both; each view has exactly its minor's
    # functions, its own slots, record classes and checked references.
    import json

    fast_module(12050)
    out = json.loads(run_python(TWO_VIEWS_CHILD).stdout)
    assert out["versions"] == [12050, 12080] and out["same_extension"]
    assert out["names"] == [True, True]
    assert out["extra"] and out["bind_refused"]
    assert out["slots"] == [True, True]
    assert out["records"] == [True, False, True, False]
    assert out["references"] == [["a", [], {"device": 1}], ["b", [], {"device": 2}]]


def test_a_status_is_the_int_c_returned():
    # cudaGetDevice's slot bound to libc's abs, which returns the address it is passed:
    # below, at and above the small ints a status is boxed from without a call.
    code = r"""
import ctypes, importlib, json
fast = importlib.import_module("cudart._fast_12050")
assert fast.bind("cudaGetDevice", "abs", ctypes.CDLL(None)._handle)
values = [0, 1, 35, 255, 256, 257, 999, 2**31 - 1]
back = [fast.cudaGetDevice(v) for v in values]
print(json.dumps([back == values, {type(b).__name__ for b in back} == {"int"}]))
"""
    import json

    fast_module(12050)
    assert json.loads(run_python(code).stdout) == [True, True]


def test_the_backend_switch():
    code = "import cudart; print(cudart.backend(), type(cudart.sys.cudaGetDevice).__name__)"
    out = run_python(code, env={"CUDART_BACKEND": "ctypes"}).stdout.split()
    assert out == ["ctypes", "_FuncPtr"]
    bad = run_python(code, env={"CUDART_BACKEND": "fast"}, check=False)
    assert bad.returncode != 0 and "CUDART_BACKEND='fast'" in bad.stderr
    missing = run_python(
        "from cudart import _backend; _backend.compiled_module(99990)",
        env={"CUDART_BACKEND": "compiled"},
        check=False,
    )
    assert missing.returncode != 0
    assert "CUDART_BACKEND=compiled, but cudart._fast_99990 is not built" in missing.stderr


def test_the_hand_written_launcher_compiles_without_a_warning():
    if compiler() is None:
        pytest.skip("no C compiler")
    proc = _judge(REPO / "cudart" / "kernels" / "_fastlaunch.c")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stderr == ""
