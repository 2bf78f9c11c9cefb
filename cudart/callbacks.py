"""Python callables as CUDA host callbacks (cudaLaunchHostFunc, cudaStreamAddCallback,
and the driver's cuLaunchHostFunc, cuStreamAddCallback).

    from cudart import callbacks
    status = callbacks.launch_host_func(stream, print, "stream reached this point")
    status = callbacks.add_callback(stream, lambda stream, status: ...)

C receives one fixed trampoline per bindings module (a `cudaHostFn_t` /
`cudaStreamCallback_t` of that module, or the driver's `CUhostFn` / `CUstreamCallback`,
kept for the life of the process) and, as
`userData`, a token naming the Python callable in a registry. The trampoline looks the
token up, calls the callable, and drops it once it has run, so nothing handed to C can
be collected while C may still call it, and nothing outlives its one call.

A callable that raises does not reach C (ctypes would print and carry on, and the
stream would not know): the exception is logged to the `cudart.callbacks` logger with
its traceback and recorded in `failures()` / `failure_count()`, and the stream goes on.
As C's samples stop on a callback's error, the next checked call that waits for the
callback's work raises it, once, as a `CallbackError` whose `__cause__` is the
exception: cudaStreamSynchronize or cudaStreamQuery of its stream (a host node of a
graph, whose stream is not known, counts as every stream's), and cudaDeviceSynchronize,
cudaEventSynchronize or cudaEventQuery for every stream's (an event may follow any
stream's work). A checked call that fails raises its CudaError and leaves them for the
next. `raise_failures()` and `take_failures()` report them where you choose.

CUDA's rule holds for these callables as for C ones: they must not call CUDA
functions. They run on a thread of the CUDA runtime, holding the GIL while they run.

A host function launched into a stream that is being captured becomes a host node of
the captured graph and runs at every launch of that graph, so its registration cannot
end after one call. Through the checked layer it belongs to the graph being captured
into (the one cudaStreamEndCapture returns), as a Python callable in a
`cudaHostNodeParams` belongs to the graph (or executable graph) the node is added to or
set in. C copies nodes: cudaGraphInstantiate*, cudaGraphClone, cudaGraphAddChildGraphNode,
cudaGraphExecUpdate and cudaGraphExecChildGraphNodeSetParams give the new graph or exec
the callables of the one they copy. A callable is released when the last graph or
exec holding it is destroyed through the checked layer (cudaGraphDestroy,
cudaGraphExecDestroy): `held()` tells which holds what. Destroying one through the raw
layer, a failed capture, or a node whose graph is unknown (cudaGraphHostNodeSetParams on
a captured node before CUDA 13.1) leaves its callables registered until
`release_captured()`, which releases every captured callable in the process.
`register()` / `unregister()` give the same control for raw `cudaHostNodeParams`.

Threads (free-threaded Python included): every registry here (the callables, what is
captured, which graph holds what, the failures) is read and written under one lock, so
a callable registered by one thread and run by CUDA's runs once, and a token called
twice runs the first time only. The trampolines are made once per bindings module
(looked up without the lock, made under it, looked up again there) and kept for the
life of the process, so C never calls one that was collected. failure_count() and the
checked layer's truth test of the unraised failures read one value, without the lock.
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import logging
import threading
import traceback
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from ._checked import CALLBACK_FAILURES_KEPT, CALLBACK_FAILURES_UNRAISED
from ._lasterror import internal_calls
from ._serving import raw_module
from .errors import LibraryNotFoundError

__all__ = [
    "CallbackError",
    "CallbackFailure",
    "Trampolines",
    "add_callback",
    "clear_failures",
    "failure_count",
    "failures",
    "held",
    "launch_host_func",
    "pending",
    "raise_failures",
    "register",
    "release_captured",
    "take_failures",
    "trampolines",
    "unregister",
]

logger = logging.getLogger(__name__)

# Enough recent failures to diagnose with; the count keeps the full tally without
# keeping every exception (and the frames its traceback holds) alive forever.
MAX_RECORDED_FAILURES = CALLBACK_FAILURES_KEPT


@dataclass(frozen=True)
class CallbackFailure:
    """A callback that raised: what was called, with what, and what it raised."""

    callback: Callable
    args: tuple
    exception: BaseException
    traceback: str  # formatted, as logged
    stream: int | None = None  # the address of the stream it ran on; None: not known


class CallbackError(RuntimeError):
    """Host callbacks raised: `failures` (oldest first); the first one's exception is
    the `__cause__`."""

    def __init__(self, failures: list[CallbackFailure]):
        self.failures = tuple(failures)
        first = self.failures[0]
        more = len(self.failures) - 1
        super().__init__(
            f"CUDA host callback {first.callback!r} raised "
            f"{type(first.exception).__name__}: {first.exception}"
            + (f" (and {more} more callback failure{'s' * (more > 1)})" if more else "")
        )


class Trampolines(NamedTuple):
    """The C-callable entry points for one bindings module; pass `userData=token`."""

    host: Any  # the module's cudaHostFn_t (CUhostFn)
    stream: Any  # the module's cudaStreamCallback_t (CUstreamCallback)


class _Api(NamedTuple):
    """What this module calls a raw module's callback types and capture queries by:
    the runtime's names or the driver's (the same C shapes and values)."""

    host: str
    stream: str
    is_capturing: str
    capture_none: str
    capture_info: str
    containing_graph: str


_RUNTIME = _Api(
    "cudaHostFn_t",
    "cudaStreamCallback_t",
    "cudaStreamIsCapturing",
    "cudaStreamCaptureStatusNone",
    "cudaStreamGetCaptureInfo",
    "cudaGraphNodeGetContainingGraph",
)
_DRIVER = _Api(
    "CUhostFn",
    "CUstreamCallback",
    "cuStreamIsCapturing",
    "CU_STREAM_CAPTURE_STATUS_NONE",
    "cuStreamGetCaptureInfo",
    "cuGraphNodeGetContainingGraph",
)
# The host function typedefs (a stream callback's is the other).
HOST_FUNCTION_TYPES = (_RUNTIME.host, _DRIVER.host)


def _api(rt) -> _Api:
    return _DRIVER if _DRIVER.host in vars(rt) else _RUNTIME


def _own_queries(rt):
    """Around this module's own queries (a capture's state and graph, a node's graph):
    on the runtime, they leave the thread's last error as the program left it (issue 33
    item 12: a 13.0 driver refuses cudaGraphNodeGetContainingGraph of a 13.1+ runtime,
    which recorded cudaErrorCallRequiresNewerDriver); the driver API keeps none."""
    return contextlib.nullcontext() if _api(rt) is _DRIVER else internal_calls(rt)


class _Entry:
    __slots__ = ("fn", "args", "once", "stream")

    def __init__(self, fn: Callable, args: tuple, once: bool, stream: int | None):
        self.fn = fn
        self.args = args
        self.once = once
        self.stream = stream


_lock = threading.Lock()
_registry: dict[int, _Entry] = {}
_captured: set[int] = set()
# Tokens start at 1: a userData of 0 reaches Python as None.
_tokens = itertools.count(1)
_failures: deque[CallbackFailure] = deque(maxlen=MAX_RECORDED_FAILURES)
_failure_count = 0
# The failures no checked call or raise_failures() has raised yet, oldest first: the
# checked layer's deque, whose waits look at it on every call.
_unraised: deque[CallbackFailure] = CALLBACK_FAILURES_UNRAISED
# raise_failures' "every stream": None is a stream argument (the default stream).
EVERY_STREAM: Any = object()
_trampolines: dict[str, Trampolines] = {}
# Which graph or exec holds which captured callables: (kind, address) -> tokens, and for
# each token how many holders hold it (released at 0). Kinds: "graph", "exec".
_held: dict[tuple[str, int], set[int]] = {}
_holder_count: dict[int, int] = {}
# Host nodes added through the checked layer -> their graph (address -> address), and
# each graph's such nodes: a graph's destroy forgets its own, not a scan of every node.
_node_graph: dict[int, int] = {}
_graph_nodes: dict[int, set[int]] = {}
# A holder's handle type (either API's) -> its kind; _HELD_BY_KIND: by the handle's
# cudart._handles kind, for an object whatever its API.
_HOLDER_KINDS = {
    "cudaGraph_t": "graph",
    "cudaGraphExec_t": "exec",
    "CUgraph": "graph",
    "CUgraphExec": "exec",
}
_HELD_BY_KIND = {"CUgraph_st": "graph", "CUgraphExec_st": "exec"}
_NODE_TYPES = ("cudaGraphNode_t", "CUgraphNode")


def register(fn: Callable, *args, once: bool = True, stream: Any = None) -> int:
    """Register `fn(*args)` for a trampoline and return its token (the C `userData`).

    With once=True the trampoline forgets it after its first call; with once=False it
    stays until unregister(token), for host nodes that run at every graph launch.
    `stream`: the stream a host function runs on, whose checked synchronize raises
    its exception (None: not known, as for a graph's host node).
    """
    if not callable(fn):
        raise TypeError(f"callback must be callable, not {type(fn).__name__}")
    entry = _Entry(fn, args, once, None if stream is None else _stream_key(stream))
    with _lock:
        token = next(_tokens)
        _registry[token] = entry
    return token


def unregister(token: int) -> bool:
    """Forget a registration; False if it was not (or no longer) registered."""
    with _lock:
        _forget(token)
        return _registry.pop(token, None) is not None


def _forget(token: int) -> None:
    # Under _lock: the token no longer belongs to anything.
    _captured.discard(token)
    if _holder_count.pop(token, None) is not None:
        for tokens in _held.values():
            tokens.discard(token)


def pending() -> int:
    """How many registered callables have not run yet (or are kept for graphs)."""
    with _lock:
        return len(_registry)


def release_captured() -> int:
    """Forget the host functions captured into graphs; returns how many.

    Call it after destroying the graphs (and their executable instances) that hold
    them: a graph launched after this finds no callable and records a failure.
    """
    with _lock:
        tokens = list(_captured)
        _captured.clear()
        _held.clear()
        _holder_count.clear()
        _node_graph.clear()
        _graph_nodes.clear()
        for token in tokens:
            _registry.pop(token, None)
    return len(tokens)


def held(handle=None) -> dict[str, frozenset[int]] | frozenset[int]:
    """The tokens of the captured callables a graph or exec holds (a handle; an int
    address is looked up as either), or, without one, every holder's: {"graph 0x..": ...}."""
    with _lock:
        if handle is None:
            return {f"{kind} {address:#x}": frozenset(t) for (kind, address), t in _held.items()}
        kind = _holder_kind(handle)
        kinds = [kind] if kind is not None else ["graph", "exec"]
        address = _address(handle)
        return frozenset().union(*(_held.get((k, address), ()) for k in kinds))


# ---------------------------------------------------------------- which graph holds what
#
# The checked layer calls these after a successful call (generator/lifetimes.py): a
# graph or exec is (kind, address), `kind` from its handle class's C name.


def _address(handle) -> int:
    if isinstance(handle, ctypes.c_void_p):
        return handle.value or 0
    return int(handle or 0)


def _holder_kind(handle) -> str | None:
    """ "graph" or "exec" for a graph or exec handle object of either API, else None."""
    kind = getattr(type(handle), "_kind_", None)
    return _HELD_BY_KIND.get(kind) if kind else _HOLDER_KINDS.get(type(handle).__name__)


def _hold(key: tuple[str, int], token: int) -> None:
    # Under _lock.
    tokens = _held.setdefault(key, set())
    if token not in tokens:
        tokens.add(token)
        _holder_count[token] = _holder_count.get(token, 0) + 1


def hold(ctype: str, handle, token: int) -> None:
    """The graph or exec `handle` (its C type: cudaGraph_t, cudaGraphExec_t, or the
    driver's CUgraph, CUgraphExec) holds `token`."""
    with _lock:
        if token in _registry:
            _captured.add(token)
            _hold((_HOLDER_KINDS[ctype], _address(handle)), token)


def hold_token(token: int, ctype: str, holder, rt=None) -> None:
    """A host node record's callable belongs to `holder`: a graph, an exec, or a node,
    whose graph is found by cudaGraphNodeGetContainingGraph (CUDA 13.1+) or by the
    record of cudaGraphAddHostNode; a node of unknown graph leaves it to release_captured()."""
    if ctype not in _NODE_TYPES:
        hold(ctype, holder, token)
        return
    node = _address(holder)
    graph = _containing_graph(rt, node) if rt is not None else 0
    if not graph:
        with _lock:
            graph = _node_graph.get(node, 0)
    if graph:
        hold("cudaGraph_t", graph, token)


def _containing_graph(rt, node: int) -> int:
    name = _api(rt).containing_graph
    if name not in vars(rt).get("_FUNCTIONS", ()):
        return 0
    graph = ctypes.c_void_p()
    try:
        with _own_queries(rt):
            status = getattr(rt, name)(node, ctypes.byref(graph))
    except Exception:  # a library older than the headers lacks the symbol
        return 0
    return (graph.value or 0) if status == 0 else 0


def host_node_added(node, graph) -> None:
    node, graph = _address(node), _address(graph)
    with _lock:
        before = _node_graph.get(node)
        if before is not None:  # the address of a node of a graph since destroyed
            _forget_node(node, before)
        _node_graph[node] = graph
        _graph_nodes.setdefault(graph, set()).add(node)


def _forget_node(node: int, graph: int) -> None:
    nodes = _graph_nodes.get(graph)
    if nodes is not None:
        nodes.discard(node)
        if not nodes:
            del _graph_nodes[graph]


def holder_copied(ctype: str, handle, source_ctype: str, source) -> None:
    """`handle` now holds a copy of what `source` holds (instantiate, clone, child graph,
    exec update): the callables live until both are destroyed."""
    with _lock:
        tokens = _held.get((_HOLDER_KINDS[source_ctype], _address(source)))
        if tokens:
            key = (_HOLDER_KINDS[ctype], _address(handle))
            for token in list(tokens):
                _hold(key, token)


def holder_destroyed(ctype: str, handle) -> int:
    """A graph or exec was destroyed: release the callables no other holder holds;
    returns how many."""
    kind, address = _HOLDER_KINDS[ctype], _address(handle)
    released = 0
    with _lock:
        if kind == "graph":
            for node in _graph_nodes.pop(address, ()):
                del _node_graph[node]
        for token in _held.pop((kind, address), ()):
            count = _holder_count.get(token, 0) - 1
            if count > 0:
                _holder_count[token] = count
                continue
            _holder_count.pop(token, None)
            _captured.discard(token)
            released += _registry.pop(token, None) is not None
    return released


def failures() -> list[CallbackFailure]:
    """The most recent callbacks that raised, oldest first."""
    with _lock:
        return list(_failures)


def failure_count() -> int:
    """How many callback calls have raised since the start (or clear_failures())."""
    return _failure_count


def clear_failures() -> None:
    """Forget the failures: the record, the count, and those not raised yet."""
    global _failure_count
    with _lock:
        _failures.clear()
        _unraised.clear()
        _failure_count = 0


def take_failures(stream: Any = EVERY_STREAM) -> list[CallbackFailure]:
    """The failures not raised yet, oldest first, which are then forgotten (as raised):
    of every stream, or of `stream` (a stream handle, an int address, None for the
    default stream) and of host nodes, whose stream is not known."""
    key = EVERY_STREAM if stream is EVERY_STREAM else _stream_key(stream)
    taken: list[CallbackFailure] = []
    kept: list[CallbackFailure] = []
    with _lock:
        for failure in _unraised:
            mine = key is EVERY_STREAM or failure.stream is None or failure.stream == key
            (taken if mine else kept).append(failure)
        if taken:
            _unraised.clear()
            _unraised.extend(kept)
    return taken


def raise_failures(stream: Any = EVERY_STREAM) -> None:
    """Raise the failures `take_failures(stream)` takes, if any, as one CallbackError
    caused by the oldest one's exception."""
    taken = take_failures(stream)
    if taken:
        raise CallbackError(taken) from taken[0].exception


def report_failures(status: int, stream: Any = EVERY_STREAM) -> None:
    """What a checked synchronize or query calls with its status: raise_failures(stream)
    where it succeeded (or found work not ready, cudaErrorNotReady), so its own error,
    if any, is what it raises."""
    if _unraised and status in (0, _NOT_READY):
        raise_failures(stream)


_NOT_READY = 600  # cudaErrorNotReady, in every version


def _stream_key(stream: Any) -> int:
    from ._convert import stream_handle

    return stream_handle(stream)


def trampolines(rt=None) -> Trampolines:
    """The trampolines built from `rt`'s callback types (default: cudart.sys; a driver
    module's are its CUhostFn and CUstreamCallback)."""
    rt = _module(rt)
    found = _trampolines.get(rt.__name__)
    if found is None:
        with _lock:
            found = _trampolines.get(rt.__name__)
            if found is None:
                api = _api(rt)
                found = Trampolines(
                    getattr(rt, api.host)(_host_trampoline),
                    getattr(rt, api.stream)(_stream_trampoline),
                )
                _trampolines[rt.__name__] = found
    return found


def launch_host_func(stream, fn: Callable, *args, rt=None) -> int:
    """cudaLaunchHostFunc(stream, fn(*args)): returns the cudaError_t as an int.

    `stream` is what the raw function takes (a cudaStream_t, an int address or None
    for the default stream). On an error nothing stays registered.
    """
    rt = _module(rt)
    host = trampolines(rt).host
    token = _register_on(rt, stream, _is_capturing(rt, stream), fn, *args)
    status = rt.cudaLaunchHostFunc(stream, host, token)
    if status != 0:
        unregister(token)
    return status


def add_callback(stream, fn: Callable, *args, rt=None) -> int:
    """cudaStreamAddCallback(stream, ...): `fn(stream, status, *args)` runs once.

    `stream` reaches fn as an int address (None for the default stream) and `status`
    as the int cudaError_t of the stream's work so far. Returns the call's cudaError_t.
    """
    rt = _module(rt)
    token = register(fn, *args)
    status = rt.cudaStreamAddCallback(stream, trampolines(rt).stream, token, 0)
    if status != 0:
        unregister(token)
    return status


def _module(rt):
    if rt is None:
        return raw_module()
    return rt


def _is_capturing(rt, stream) -> bool:
    state = ctypes.c_int(0)
    api = _api(rt)
    # A query that fails (the legacy stream while another captures, say; no libcuda
    # for a driver module) means the launch itself will fail too, which reports it.
    try:
        with _own_queries(rt):
            status = getattr(rt, api.is_capturing)(stream, ctypes.byref(state))
    except LibraryNotFoundError:
        return False
    if status != 0:
        return False
    return state.value != getattr(rt, api.capture_none)


def _register_on(rt, stream, capturing: bool, fn, *args) -> int:
    """Register `fn` for a host function enqueued on `stream`: released after its one
    run, or, while the stream captures, held by the graph captured into (and recorded
    for release_captured())."""
    # A captured host function runs on whichever stream its graph is launched into.
    known = not capturing and stream is not _NO_STREAM
    token = register(fn, *args, once=not capturing, stream=stream if known else None)
    if capturing:
        with _lock:
            _captured.add(token)
        graph = _capture_graph(rt, stream)
        if graph:
            hold("cudaGraph_t", graph, token)
    return token


def _capture_graph(rt, stream) -> int:
    """The graph a capturing stream captures into (cudaStreamEndCapture returns it), or 0."""
    name = _api(rt).capture_info
    if name not in vars(rt).get("_FUNCTIONS", ()):
        return 0
    from ._contract import unpack

    argtypes = unpack(rt._FUNCTIONS[name])[2]
    # (stream, status, id, graph, then the dependencies' outputs, 2 or 3 by version)
    status, graph = ctypes.c_int(0), ctypes.c_void_p()
    rest = [None] * (len(argtypes) - 4)
    with _own_queries(rt):
        failed = getattr(rt, name)(stream, ctypes.byref(status), None, ctypes.byref(graph), *rest)
    if failed:
        return 0
    return graph.value or 0


def _take(token) -> _Entry | None:
    with _lock:
        entry = _registry.get(token)
        if entry is not None and entry.once:
            del _registry[token]
    return entry


def _call(token, *leading) -> None:
    # Whatever happens here must end here: an exception that reached ctypes would
    # be printed and dropped without our record of it.
    try:
        entry = _take(token)
        if entry is None:
            _record(
                None,
                (),
                LookupError(
                    f"no callback registered under token {token!r}" " (released, or already run)"
                ),
                _address(leading[0]) if leading else None,
            )
            return
        try:
            entry.fn(*leading, *entry.args)
        except BaseException as exc:  # a callback's SystemExit cannot end a CUDA thread either
            # A stream callback is told its stream: C's word over the registration's.
            _record(entry.fn, entry.args, exc, _address(leading[0]) if leading else entry.stream)
    except BaseException:
        pass


def _host_trampoline(user_data) -> None:
    _call(user_data)


def _stream_trampoline(stream, status, user_data) -> None:
    _call(user_data, stream, status)


def _record(fn, args, exc: BaseException, stream: int | None) -> None:
    global _failure_count
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    failure = CallbackFailure(fn, args, exc, text, stream)
    with _lock:
        _failures.append(failure)
        _unraised.append(failure)
        _failure_count += 1
    try:
        logger.error("CUDA host callback %r raised:\n%s", fn, text.rstrip())
    except Exception:
        pass


# ---------------------------------------------------------------- the checked layer
#
# The generated checked functions call these (through cudart._checked) for the
# parameters resolve.py gives the "callback" kinds: a cudaHostFn_t or
# cudaStreamCallback_t with its `void *` data, and a `const T *` to a record holding a
# cudaHostFn_t (cudaHostNodeParams). A raw function pointer (an int, a ctypes
# function pointer, None) passes as it always did, and memory (a buffer, a ctypes
# object) is refused; a Python callable is registered and replaced by this module's
# trampoline, with its token as the data.

_NO_STREAM = object()


def callback_argument(fn, data, kind: str, rt, names=("fn", "userData"), stream=_NO_STREAM):
    """(fn, data, token) for a call: token 0 where nothing was registered.

    `kind` is the C typedef (cudaHostFn_t or cudaStreamCallback_t, or the driver's
    CUhostFn or CUstreamCallback). A host function
    launched into a capturing `stream` stays registered for the graph (see
    release_captured()); any other callable is forgotten after its one call. The caller
    unregisters the token if the call fails.
    """
    from ._convert import function_pointer, is_python_callable, pointer

    if not is_python_callable(fn):
        # C's runtime calls it from its own thread: an address, never memory, and a ctypes
        # function pointer of the typedef's prototype (the raw module's CFUNCTYPE).
        prototype = getattr(_module(rt), kind, None)
        converted = function_pointer(fn, names[0], kind, prototype)
        return converted, pointer(data, names[1], True), 0
    host = kind in HOST_FUNCTION_TYPES
    capturing = host and stream is not _NO_STREAM and _is_capturing(rt, stream)
    token = _register_on(rt, stream, capturing, fn, data)
    t = trampolines(rt)
    return (t.host if host else t.stream), token, token


def record_argument(value, cls, rt, name: str):
    """(argument, token) for a `const T *` to a record with a cudaHostFn_t `fn`.

    A record made with a Python callable as `fn` (cudart._checked.callback_record_class) is passed
    as a copy holding the trampoline and a token: a host node runs at every launch of
    its graph, so the token stays registered until the graphs and execs holding it are
    destroyed (the checked layer calls hold_token after the call) or release_captured().
    """
    from ._convert import ref

    held = getattr(value, "_python_fn_", None)
    if held is None:
        return ref(value, cls, name, False), 0
    fn, data = held
    token = register(fn, data, once=False)
    with _lock:
        _captured.add(token)
    base: Any = type(value).__mro__[1]  # the raw record class
    copy = base.from_buffer_copy(value)
    copy.fn = trampolines(rt).host
    copy.userData = token
    return ctypes.byref(copy), token
