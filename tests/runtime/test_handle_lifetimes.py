"""Handle lifetimes without a GPU (issue 11, item 3): a checked destroy that succeeds
marks the handle object it was given, and the checked layer refuses that object from
then on with cudart.HandleDestroyedError, before C sees it.

A destroy only succeeds on a GPU, so the marking path is driven here with the C
function of each generated destroy replaced by a recorder (BRIEF: allowed to see what
reaches C); everything else, including a destroy that fails in the real library (which
must not mark), runs for real, for every DESTROYS entry of generator/lifetimes.py in
every version. The GPU side is tests/gpu/test_safety_lifetimes.py.
"""

from __future__ import annotations

import ctypes
import importlib
import inspect
import json

import pytest
from suite import probe_each_version

import cudart
from cudart import HandleDestroyedError, _convert, callbacks
from cudart._handles import (
    Handle,
    IntegerHandle,
    destroyed_by,
    integer_handle_class,
    mark_destroyed,
)
from generator import lifetimes
from generator.plan import Effect

# The calls go through the backend in force: make test-ctypes runs them on ctypes too.
pytestmark = pytest.mark.backend

VERSIONS = cudart.available_versions()
DESTROYS = sorted(
    (function, param)
    for (function, param), (effect, _, _) in lifetimes.EFFECTS.items()
    if effect is Effect.DESTROYS
)


@pytest.fixture(params=VERSIONS, ids=[f"checked_{v}" for v in VERSIONS])
def checked(request):
    return importlib.import_module(f"cudart.checked_{request.param}")


class Recorder:
    """Stands for a checked module's C function: records the arguments C would get and
    answers `status` (writing `writes` into the first argument, an output's storage)."""

    def __init__(self, status: int = 0, writes: int | None = None) -> None:
        self.calls: list[tuple] = []
        self.status = status
        self.writes = writes

    def __call__(self, *args):
        self.calls.append(args)
        if self.writes is not None:
            args[0].value = self.writes
        return self.status


def record(monkeypatch, module, name: str, status: int = 0, writes: int | None = None):
    recorder = Recorder(status, writes)
    monkeypatch.setitem(vars(module), "_" + name, recorder)
    return recorder


# The integer handles' destroys (annotated `int`): their kinds.
INTEGER_KINDS = {
    "cudaDestroyTextureObject": "cudaTextureObject_t",
    "cudaDestroySurfaceObject": "cudaSurfaceObject_t",
}


def entries(module):
    """(function, parameter, handle class) of each DESTROYS entry the version has."""
    found = []
    for function, param in DESTROYS:
        fn = getattr(module, function, None)
        if fn is None:
            continue
        if function in INTEGER_KINDS:
            cls = integer_handle_class(INTEGER_KINDS[function])
        else:
            cls = getattr(module, fn.__annotations__[param].split(" | ")[0])
        found.append((function, param, cls))
    return found


def call(module, function: str, param: str, value):
    fn = getattr(module, function)
    return fn(**{n: value if n == param else 0 for n in inspect.signature(fn).parameters})


def test_every_version_has_its_destroys(checked):
    names = {function for function, _, _ in entries(checked)}
    assert {
        "cudaStreamDestroy",
        "cudaEventDestroy",
        "cudaFreeArray",
        "cudaGraphDestroyNode",
    } <= names
    assert {"cudaDestroyTextureObject", "cudaDestroySurfaceObject"} <= names
    assert len(names) >= 13
    for _, _, cls in entries(checked):
        assert issubclass(cls, (Handle, IntegerHandle))


def test_a_destroy_marks_the_object_and_its_reuse_is_refused(checked, monkeypatch):
    for i, (function, param, cls) in enumerate(entries(checked)):
        address = 0x10000 + 0x100 * i
        recorder = record(monkeypatch, checked, function)
        handle = cls(address)
        assert call(checked, function, param, handle) is None
        assert len(recorder.calls) == 1
        assert destroyed_by(handle) == function and type(handle) is not cls
        # Still the value it was: kind, address, ==, hash, isinstance.
        assert isinstance(handle, cls) and type(handle).__name__ == cls.__name__
        assert handle == cls(address) and hash(handle) == hash(cls(address))
        assert int(handle) == address
        assert repr(handle) == f"<{cls.__name__} {address:#x} destroyed by {function}>"
        with pytest.raises(HandleDestroyedError) as caught:
            call(checked, function, param, handle)
        error = caught.value
        assert (error.kind, error.address, error.destroyed_by, error.parameter) == (
            cls.__name__,
            address,
            function,
            param,
        )
        assert isinstance(error, ValueError) and isinstance(error, cudart.CudartError)
        assert f"{address:#x}" in str(error) and function in str(error)
        assert len(recorder.calls) == 1, f"{function}: the dangling handle reached C"


def test_ints_other_objects_null_and_foreign_handles_stay_the_callers_promise(checked, monkeypatch):
    for function, param, cls in entries(checked):
        recorder = record(monkeypatch, checked, function)
        dead = cls(0x5000)
        call(checked, function, param, dead)
        # An int, and another object at the same address: passed, and never marked.
        for value in (0x5000, 0x5000, cls(0x5000)):
            call(checked, function, param, value)
        other = cls(0x5000)
        call(checked, function, param, other)
        assert destroyed_by(other) == function  # that object was destroyed through now
        # NULL and None are never marked (the default stream is never destroyed).
        null = cls()
        call(checked, function, param, null)
        call(checked, function, param, null)
        if issubclass(cls, Handle):  # an integer handle is never None (ctypes refuses it)
            call(checked, function, param, None)
        assert type(null) is cls
        # A plain c_void_p (an int, for an integer handle) is not ours: no state.
        plain = ctypes.c_void_p(0x6000) if issubclass(cls, Handle) else 0x6000
        call(checked, function, param, plain)
        call(checked, function, param, plain)
        assert type(plain) in (ctypes.c_void_p, int)
        assert len(recorder.calls) == (10 if issubclass(cls, Handle) else 9)


def test_a_failed_destroy_does_not_mark(checked, monkeypatch):
    invalid = int(checked._lib.cudaErrorInvalidResourceHandle)
    for function, param, cls in entries(checked):
        recorder = record(monkeypatch, checked, function, status=invalid)
        handle = cls(0x7000)
        for _ in range(2):
            # Naming the error asks the loaded library, which another major's module
            # refuses to call: either way the failure raised before any marking.
            with pytest.raises((cudart.CudaError, cudart.BindingsVersionError)):
                call(checked, function, param, handle)
        assert type(handle) is cls and destroyed_by(handle) is None
        assert len(recorder.calls) == 2


def test_a_destroyed_stream_is_refused_everywhere_a_stream_goes(checked, monkeypatch):
    record(monkeypatch, checked, "cudaStreamDestroy")
    query = record(monkeypatch, checked, "cudaStreamQuery")
    stream = checked.cudaStream_t(0x8000)
    assert checked.cudaStreamQuery(stream) is True
    checked.cudaStreamDestroy(stream)
    with pytest.raises(HandleDestroyedError, match="'stream' is the cudaStream_t 0x8000"):
        checked.cudaStreamQuery(stream)
    record_event = record(monkeypatch, checked, "cudaEventRecord")
    with pytest.raises(HandleDestroyedError):
        checked.cudaEventRecord(checked.cudaEvent_t(0x10), stream)
    # Kernel launches and anything else that takes a stream through cudart._convert.
    with pytest.raises(HandleDestroyedError):
        _convert.stream_handle(stream)
    # A foreign stream object (the CUDA stream protocol) is an address: its promise.
    foreign = type("Foreign", (), {"__cuda_stream__": lambda self: (0, 0x8000)})()
    assert checked.cudaStreamQuery(foreign) is True
    # Another kind is still a TypeError first: the kind is wrong whether or not it lives.
    with pytest.raises(TypeError, match="must be a cudaEvent_t, not a cudaStream_t"):
        checked.cudaEventQuery(stream)
    assert len(query.calls) == 2 and record_event.calls == []


def test_a_new_create_at_a_destroyed_address_gives_a_live_object(checked, monkeypatch):
    record(monkeypatch, checked, "cudaStreamDestroy")
    query = record(monkeypatch, checked, "cudaStreamQuery")
    record(monkeypatch, checked, "cudaStreamCreate", writes=0x9000)
    old = checked.cudaStreamCreate()
    checked.cudaStreamDestroy(old)
    new = checked.cudaStreamCreate()  # C reuses the address
    assert new == old and new is not old and type(new) is checked.cudaStream_t
    assert checked.cudaStreamQuery(new) is True and len(query.calls) == 1
    with pytest.raises(HandleDestroyedError):
        checked.cudaStreamQuery(old)


def test_a_destroyed_handle_in_a_list_is_refused(checked, monkeypatch):
    add = record(monkeypatch, checked, "cudaGraphAddEmptyNode")
    record(monkeypatch, checked, "cudaGraphDestroyNode")
    live, dead = checked.cudaGraphNode_t(0xA000), checked.cudaGraphNode_t(0xA010)
    checked.cudaGraphDestroyNode(dead)
    with pytest.raises(HandleDestroyedError, match="cudaGraphNode_t 0xa010"):
        checked.cudaGraphAddEmptyNode(checked.cudaGraph_t(0xB000), [live, dead], 2)
    assert add.calls == []


def test_destroying_a_graph_also_releases_its_callables(checked, monkeypatch):
    callbacks.release_captured()
    record(monkeypatch, checked, "cudaGraphDestroy")
    graph = checked.cudaGraph_t(0xC000)
    token = callbacks.register(print, once=False)
    callbacks.hold("cudaGraph_t", graph, token)
    checked.cudaGraphDestroy(graph)
    assert callbacks.held(checked.cudaGraph_t(0xC000)) == frozenset()
    assert token not in callbacks._registry and destroyed_by(graph) == "cudaGraphDestroy"
    assert "marked destroyed" in checked.cudaGraphDestroy.__doc__
    assert "marked destroyed" in checked.cudaStreamDestroy.__doc__
    assert "released" not in checked.cudaStreamDestroy.__doc__


def test_marking_is_once_per_object_and_classes_are_shared():
    rt = importlib.import_module(f"cudart.sys_{VERSIONS[0]}")
    a, b = rt.cudaEvent_t(0x1), rt.cudaEvent_t(0x2)
    assert mark_destroyed(a, "cudaEventDestroy") and mark_destroyed(b, "cudaEventDestroy")
    assert type(a) is type(b)  # one destroyed class per (kind, function)
    assert not mark_destroyed(a, "cudaEventDestroy")  # already
    for value in (0x3, None, rt.cudaEvent_t(), ctypes.c_void_p(5), object(), True):
        assert not mark_destroyed(value, "cudaEventDestroy")
    texture = integer_handle_class("cudaTextureObject_t")
    assert not mark_destroyed(texture(0), "cudaDestroyTextureObject")
    # The raw layer takes what it is given: a marked object is still a c_void_p to ctypes.
    assert type(rt.cudaEventQuery(a)) is int


def test_the_fast_path_is_unchanged(checked):
    # A live handle of the exact class never leaves the generated function: the
    # destroyed check costs the hot path nothing (the class is the check).
    source = inspect.getsource(checked.cudaStreamQuery)
    assert "if stream.__class__ is not cudaStream_t:" in source
    assert "destroyed" not in source.split('"""')[2]


# ---------------------------------------------------------------- the real library


PROBE = """
import ctypes, importlib, inspect, json
import cudart
from cudart._handles import destroyed_by, integer_handle_class
rt = cudart.sys
checked = importlib.import_module(f"cudart.checked_{rt.CUDA_VERSION}")
entries, integer_kinds = json.loads(%r)
# Each handle points at zeroed memory: a runtime that read through it reads zeros.
memory = (ctypes.c_char * 4096)()
results = {}
for function, param in entries:
    fn = getattr(checked, function, None)
    if fn is None or function not in rt._FUNCTIONS:
        continue
    if function in integer_kinds:
        cls = integer_handle_class(integer_kinds[function])
        handle = cls(1)  # texture and surface objects are small ids
    else:
        cls = getattr(checked, fn.__annotations__[param].split(" | ")[0])
        handle = cls(ctypes.addressof(memory))
    args = {n: handle if n == param else 0 for n in inspect.signature(fn).parameters}
    try:
        fn(**args)
        outcome = "succeeded"
    except cudart.CudaError as exc:
        outcome = type(exc).__name__
    results[function] = [outcome, destroyed_by(handle), type(handle) is cls]
print(json.dumps(results))
"""


def test_a_destroy_the_real_library_refuses_does_not_mark(header_sets):
    results = probe_each_version(PROBE % json.dumps([DESTROYS, INTEGER_KINDS]), header_sets)
    assert len(results) == len(VERSIONS)
    for key, found in results.items():
        assert "cudaStreamDestroy" in found and len(found) >= 13, key
        for function, (outcome, by, same_class) in found.items():
            # No GPU: each destroy fails in C, and nothing is marked.
            assert outcome.startswith("CudaError"), (key, function, outcome)
            assert by is None and same_class, (key, function)


# ---------------------------------------------------------------- integer handles


def test_texture_and_surface_objects_are_ints_of_their_kind(checked, monkeypatch):
    texture_kind = integer_handle_class("cudaTextureObject_t")
    surface_kind = integer_handle_class("cudaSurfaceObject_t")
    record(monkeypatch, checked, "cudaCreateTextureObject", writes=7)
    record(monkeypatch, checked, "cudaCreateSurfaceObject", writes=7)
    get = record(monkeypatch, checked, "cudaGetTextureObjectResourceDesc")
    record(monkeypatch, checked, "cudaDestroyTextureObject")
    texture = checked.cudaCreateTextureObject(
        checked.cudaResourceDesc(), checked.cudaTextureDesc(), None
    )
    surface = checked.cudaCreateSurfaceObject(checked.cudaResourceDesc())
    # An int (kernel arguments, ctypes take it), of a kind the checked layer knows.
    assert type(texture) is texture_kind and type(surface) is surface_kind
    assert texture == 7 == surface and repr(texture) == "<cudaTextureObject_t 0x7>"
    assert type(integer_handle_class("cudaTextureObject_t")) is type(texture_kind)
    with pytest.raises(TypeError, match="must be a cudaTextureObject_t, not a cudaSurfaceObject_t"):
        checked.cudaGetTextureObjectResourceDesc(surface)
    for bad, error in ((-1, OverflowError), (1 << 64, OverflowError), (1.0, TypeError)):
        with pytest.raises(error, match="texObject"):
            checked.cudaGetTextureObjectResourceDesc(bad)
    checked.cudaGetTextureObjectResourceDesc(texture)
    checked.cudaDestroyTextureObject(texture)
    assert repr(texture) == "<cudaTextureObject_t 0x7 destroyed by cudaDestroyTextureObject>"
    with pytest.raises(HandleDestroyedError, match="cudaTextureObject_t 0x7"):
        checked.cudaGetTextureObjectResourceDesc(texture)
    checked.cudaGetTextureObjectResourceDesc(7)  # the int: the caller's promise
    assert len(get.calls) == 2


def test_a_destroyed_texture_object_is_still_an_int_for_a_kernel():
    from cudart._launch import Signature  # noqa: F401  (the packer accepts int subclasses)

    texture = integer_handle_class("cudaTextureObject_t")(9)
    mark_destroyed(texture, "cudaDestroyTextureObject")
    assert isinstance(texture, int) and int(texture) == 9 and texture + 1 == 10
