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

import copy
import ctypes
import importlib
import inspect
import json
import pickle
import threading
import time

import pytest
from fast_support import python_checked, stand_in_for_c
from suite import probe_each_version

import cudart
from cudart import HandleDestroyedError, _convert, _serving, callbacks
from cudart._handles import (
    Handle,
    IntegerHandle,
    destroyed_by,
    integer_handle_class,
    mark_destroyed,
)
from cudart._hostmem import host_memory
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
    stand_in_for_c(monkeypatch, module, name, recorder)
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
        if getattr(module, function, None) is None:
            continue
        fn = python_checked(module, function)
        if function in INTEGER_KINDS:
            cls = integer_handle_class(INTEGER_KINDS[function])
        else:
            cls = getattr(module, fn.__annotations__[param].split(" | ")[0])
        found.append((function, param, cls))
    return found


def call(module, function: str, param: str, value):
    # The Python checked function: the tests stand in for C through its `_<name>`.
    fn = python_checked(module, function)
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
    source = inspect.getsource(python_checked(checked, "cudaStreamQuery"))
    assert "if stream.__class__ is not cudaStream_t:" in source
    assert "destroyed" not in source.split('"""')[2]


# ---------------------------------------------------------------- threads (issue 20)

THREADS = 16


class InC:
    """Stands for a checked module's C function, or wraps the real one (`real`): counts
    the calls and the most that were in it at once, holding each for `hold` seconds with
    the GIL released (as ctypes and the compiled backend release it around C)."""

    def __init__(self, real=None, status: int = 0, hold: float = 0.005) -> None:
        self.real, self.status, self.hold = real, status, hold
        self.calls = self.inside = self.most = 0
        self.lock = threading.Lock()

    def __call__(self, *args):
        with self.lock:
            self.calls += 1
            self.inside += 1
            self.most = max(self.most, self.inside)
        try:
            time.sleep(self.hold)
            return self.real(*args) if self.real is not None else self.status
        finally:
            with self.lock:
                self.inside -= 1


def at_once(action, *args) -> list[object]:
    """Call `action(*args)` in THREADS threads released together: what each returned or
    raised."""
    barrier = threading.Barrier(THREADS)
    outcomes: list[object] = [None] * THREADS

    def run(i: int) -> None:
        barrier.wait()
        try:
            outcomes[i] = action(*args)
        except Exception as exc:  # noqa: BLE001 - the outcome is what the test checks
            outcomes[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return outcomes


def test_threads_destroying_one_handle_reach_c_once(checked, monkeypatch):
    # The mark was checked, then C called with the GIL released, then the mark set:
    # every thread passed the check and each destroyed the handle in C.
    for i, (function, param, cls) in enumerate(entries(checked)):
        for round in range(3):
            in_c = InC()
            monkeypatch.setitem(vars(checked), "_" + function, in_c)
            handle = cls(0x20000 + 0x100 * i + round)
            outcomes = at_once(call, checked, function, param, handle)
            assert in_c.calls == 1, f"{function}: {in_c.calls} threads reached C"
            assert outcomes.count(None) == 1, (function, outcomes)
            lost = [o for o in outcomes if o is not None]
            assert all(isinstance(o, HandleDestroyedError) for o in lost), (function, lost)
            assert {(o.destroyed_by, o.parameter, o.address) for o in lost} == {
                (function, param, int(handle))
            }
            assert destroyed_by(handle) == function


def test_threads_freeing_one_host_memory_reach_c_once(checked, monkeypatch):
    backing = (ctypes.c_ubyte * 64)()
    for function in ("cudaFreeHost", "cudaFree"):
        in_c = InC()
        monkeypatch.setitem(vars(checked), "_" + function, in_c)
        memory = host_memory(ctypes.addressof(backing), 64)
        outcomes = at_once(getattr(checked, function), memory)
        assert in_c.calls == 1, f"{function}: {in_c.calls} threads reached C"
        assert outcomes.count(None) == 1 and memory.released
        lost = [o for o in outcomes if o is not None]
        assert all(type(o) is ValueError and "was freed" in str(o) for o in lost), lost
        # A free C refuses: one thread at a time in C, and the memory stays usable.
        refused = InC(status=int(checked._lib.cudaErrorInvalidValue))
        monkeypatch.setitem(vars(checked), "_" + function, refused)
        memory = host_memory(ctypes.addressof(backing), 64)
        outcomes = at_once(getattr(checked, function), memory)
        assert refused.most == 1 and refused.calls >= 1 and not memory.released
        failed = [o for o in outcomes if not (type(o) is ValueError and "was freed" in str(o))]
        assert len(failed) == refused.calls
        assert all(isinstance(o, (cudart.CudaError, cudart.BindingsVersionError)) for o in failed)


def test_a_destroy_c_refuses_unmarks_and_the_object_lives_on(checked, monkeypatch):
    invalid = int(checked._lib.cudaErrorInvalidResourceHandle)
    for function, param, cls in entries(checked):
        in_c = InC(status=invalid)
        monkeypatch.setitem(vars(checked), "_" + function, in_c)
        handle = cls(0x30000)
        outcomes = at_once(call, checked, function, param, handle)
        # Never two in C at once; each call that reached C failed there, and the others
        # met a destroy in progress. Afterwards the object is live and usable again.
        assert in_c.most == 1, f"{function}: {in_c.most} threads in C at once"
        failed = [o for o in outcomes if not isinstance(o, HandleDestroyedError)]
        assert len(failed) == in_c.calls >= 1
        assert all(isinstance(o, (cudart.CudaError, cudart.BindingsVersionError)) for o in failed)
        assert type(handle) is cls and destroyed_by(handle) is None
        with pytest.raises((cudart.CudaError, cudart.BindingsVersionError)):
            call(checked, function, param, handle)
        assert in_c.calls == len(failed) + 1


def test_a_destroy_the_real_library_refuses_reaches_it_one_thread_at_a_time():
    # The loaded runtime's own module, its C functions wrapped (each call still reaches
    # the real libcudart, which refuses every destroy without a GPU).
    checked = _serving.checked_module()
    found = entries(checked)
    assert len(found) >= 13
    for function, param, cls in found:
        with pytest.raises(cudart.CudaError):
            call(checked, function, param, cls(0x40000))  # binds the real function
        in_c = InC(real=vars(checked)["_" + function])
        vars(checked)["_" + function] = in_c
        try:
            handle = cls(0x40000)
            outcomes = at_once(call, checked, function, param, handle)
        finally:
            vars(checked)["_" + function] = in_c.real
        assert in_c.most == 1, f"{function}: {in_c.most} threads in C at once"
        reached = [o for o in outcomes if isinstance(o, cudart.CudaError)]
        assert len(reached) == in_c.calls >= 1
        assert all(isinstance(o, HandleDestroyedError) for o in outcomes if o not in reached)
        assert type(handle) is cls and destroyed_by(handle) is None


def test_a_destroy_pays_no_exception_and_no_class_lock_once_its_class_is_made(monkeypatch):
    # The reference's destroy claims the object, then `_c.destroyed` marks it again: that
    # second mark raised and caught a HandleDestroyedError on every destroy, and making
    # the destroyed class took its lock on every call, made or not.
    from cudart import _checked, _handles

    made: list[object] = []

    class Counted(HandleDestroyedError):
        def __init__(self, *args) -> None:
            made.append(args)
            super().__init__(*args)

    class CountedLock:
        def __init__(self) -> None:
            self.lock, self.taken = threading.Lock(), 0

        def __enter__(self):
            self.taken += 1
            return self.lock.__enter__()

        def __exit__(self, *exc):
            return self.lock.__exit__(*exc)

    rt = importlib.import_module(f"cudart.sys_{VERSIONS[0]}")
    _handles.claim(rt.cudaEvent_t(0x60), "cudaEventDestroy", "event")  # the class made
    lock = CountedLock()
    monkeypatch.setattr(_handles, "HandleDestroyedError", Counted)
    monkeypatch.setattr(_handles, "_destroyed_lock", lock)
    event = rt.cudaEvent_t(0x61)
    assert _checked.claim(event, "event", "cudaEventDestroy") is event
    _checked.destroyed(event, "cudaEvent_t", "cudaEventDestroy")
    assert destroyed_by(event) == "cudaEventDestroy"
    assert made == [] and lock.taken == 0
    with pytest.raises(Counted):  # still refused, once marked
        _checked.claim(event, "event", "cudaEventDestroy")


def test_claim_is_refused_once_marked_and_unclaim_restores():
    from cudart._handles import claim, unclaim

    rt = importlib.import_module(f"cudart.sys_{VERSIONS[0]}")
    event = rt.cudaEvent_t(0x50)
    assert claim(event, "cudaEventDestroy", "event") is True
    assert destroyed_by(event) == "cudaEventDestroy"
    with pytest.raises(HandleDestroyedError, match="'event'"):
        claim(event, "cudaEventDestroy", "event")
    unclaim(event)
    assert type(event) is rt.cudaEvent_t and destroyed_by(event) is None
    # Nothing to mark: ints, None, NULL and foreign objects pass unmarked.
    for value in (0x3, None, rt.cudaEvent_t(), ctypes.c_void_p(5)):
        assert claim(value, "cudaEventDestroy", "event") is False
        unclaim(value)


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
    # The Python function's annotations (the public one may be the compiled function,
    # which has none), the public function's call: twice, the second through C where
    # the compiled backend has it (the first binds it).
    python = vars(checked).get("_reference", {}).get(function, fn)
    for attempt in range(2):
        if function in integer_kinds:
            cls = integer_handle_class(integer_kinds[function])
            handle = cls(1)  # texture and surface objects are small ids
        else:
            cls = getattr(checked, python.__annotations__[param].split(" | ")[0])
            handle = cls(ctypes.addressof(memory))
        names = list(inspect.signature(fn).parameters)
        args = [handle if n == param else 0 for n in names]
        try:
            fn(*args)
            outcome = "succeeded"
        except cudart.CudaError as exc:
            outcome = type(exc).__name__
        results.setdefault(function, []).append(
            [outcome, destroyed_by(handle), type(handle) is cls]
        )
print(json.dumps(results))
"""


def test_a_destroy_the_real_library_refuses_does_not_mark(header_sets):
    results = probe_each_version(PROBE % json.dumps([DESTROYS, INTEGER_KINDS]), header_sets)
    assert len(results) == len(VERSIONS)
    for key, found in results.items():
        assert "cudaStreamDestroy" in found and len(found) >= 13, key
        for function, attempts in found.items():
            for outcome, by, same_class in attempts:
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
    from cudart.kernels._launch import Signature  # noqa: F401  (the packer accepts int subclasses)

    texture = integer_handle_class("cudaTextureObject_t")(9)
    mark_destroyed(texture, "cudaDestroyTextureObject")
    assert isinstance(texture, int) and int(texture) == 9 and texture + 1 == 10


# ---------------------------------------------------------------- pickling


def test_a_pickled_handle_keeps_its_mark(checked):
    """A destroyed handle object comes back from pickle (and copy) destroyed, a live one
    live: the destroyed class has its live class's name, which pickle finds by."""
    for i, (function, _, cls) in enumerate(entries(checked)):
        address = 0x20000 + 0x100 * i
        live, dead = cls(address), cls(address)
        assert mark_destroyed(dead, function)
        for copy_of in (lambda h: pickle.loads(pickle.dumps(h)), copy.copy, copy.deepcopy):
            back = copy_of(dead)
            assert destroyed_by(back) == function, (function, copy_of)
            assert back == live and type(back).__name__ == cls.__name__
            again = copy_of(live)
            assert destroyed_by(again) is None and type(again) is cls and again == live


def test_a_destroyed_graphs_node_is_refused_in_every_version(checked, monkeypatch):
    """A node a checked add made in a graph dies with the graph (lifetimes.PARENTS): the
    next call with it raises HandleDestroyedError, through the public function (compiled
    where built) and the Python one, and C never sees it."""
    raw = importlib.import_module(checked.__name__.replace("checked_", "sys_"))
    graph = raw.cudaGraph_t(0x90000)
    record(monkeypatch, checked, "cudaGraphAddEmptyNode", writes=0x90010)
    node = checked.cudaGraphAddEmptyNode(graph, None, 0)
    record(monkeypatch, checked, "cudaGraphDestroy")
    checked.cudaGraphDestroy(graph)
    assert destroyed_by(node) == "cudaGraphDestroy"
    c = Recorder()
    monkeypatch.setitem(vars(checked), "_cudaGraphNodeSetEnabled", c)
    for fn in (checked.cudaGraphNodeSetEnabled, python_checked(checked, "cudaGraphNodeSetEnabled")):
        with pytest.raises(HandleDestroyedError, match="cudaGraphDestroy"):
            fn(None, node, 1)
    assert c.calls == []
