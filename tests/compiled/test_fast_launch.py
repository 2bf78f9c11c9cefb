"""Function.launch in C (cudart.kernels._fastlaunch) without a GPU.

A stand-in for the driver, compiled here with gcc, takes the place of
cudaLaunchKernelExC: it records the configuration, the kernel handle and every
argument's bytes as they are at the call. Two Functions of one kernel launch the same
sequences, one through the C launcher, one through the Python `launch`, each into its
own entry point of the stand-in (so a test knows which path launched), and what the
stand-in saw must be the same; refusals must raise the same exceptions and leave the
slots and the configuration as they were.
"""

from __future__ import annotations

import ctypes
import functools
import gc
import inspect
import itertools
import random
import struct
import subprocess
import sys
import threading
import time
import types
import weakref

import needs
import pytest
from fast_support import compiler, extension

import cudart
from cudart import CudaError, _backend
from cudart.kernels._function import Function

fastlaunch = extension("cudart.kernels._fastlaunch")

FAKE_C = r"""
#include <dlfcn.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>
unsigned char config_copy[256];
size_t config_size;
const void *last_func;
unsigned char args_copy[64][8];
int nrecord, sizes[64], status;
long calls_c, calls_py;
int gil_held = -1;
void fake_setup(size_t csize, int n, const int *szs, int st) {
    config_size = csize; nrecord = n; status = st;
    for (int i = 0; i < n; i++) sizes[i] = szs[i];
}
static int record(const void *config, const void *func, void **args) {
    memcpy(config_copy, config, config_size);
    last_func = func;
    memset(args_copy, 0, sizeof args_copy);
    for (int i = 0; i < nrecord; i++) memcpy(args_copy[i], args[i], sizes[i]);
    int (*check)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "PyGILState_Check");
    gil_held = check ? check() : -1;
    return status;
}
int fake_launch_c(const void *c, const void *f, void **a) { calls_c++; return record(c, f, a); }
int fake_launch_py(const void *c, const void *f, void **a) { calls_py++; return record(c, f, a); }
/* For launches from many threads: each thread says which int it launches with, and a
   launch that sees another value (at the call or after a pause in which the other
   threads run, the GIL released) ran with another thread's arguments. */
static __thread int expected;
long own_calls, own_mismatches;
void fake_expect(int value) { expected = value; }
int fake_launch_own(const void *c, const void *f, void **a) {
    (void)c; (void)f;
    int at_call = *(const volatile int *)a[0];
    usleep(1000);
    int later = *(const volatile int *)a[0];
    __atomic_add_fetch(&own_calls, 1, __ATOMIC_RELAXED);
    if (at_call != expected || later != expected)
        __atomic_add_fetch(&own_mismatches, 1, __ATOMIC_RELAXED);
    return 0;
}
/* The same check without the pause, and the grid's x (set as the thread's value too),
   for launches by the thousand. */
int fake_launch_tagged(const void *c, const void *f, void **a) {
    (void)f;
    unsigned grid_x;
    memcpy(&grid_x, c, sizeof grid_x);
    __atomic_add_fetch(&own_calls, 1, __ATOMIC_RELAXED);
    if (*(const volatile int *)a[0] != expected || (int)grid_x != expected)
        __atomic_add_fetch(&own_mismatches, 1, __ATOMIC_RELAXED);
    return 0;
}
"""

HANDLE = 0x5EED000


@pytest.fixture(scope="module")
def fake(tmp_path_factory):
    gcc = compiler()
    if gcc is None:
        pytest.skip("no C compiler for the driver's stand-in")
    build = tmp_path_factory.mktemp("fake_launch")
    (build / "fake.c").write_text(FAKE_C)
    lib = build / "libfake.so"
    subprocess.run([gcc, "-O1", "-shared", "-fPIC", "-o", str(lib), str(build / "fake.c"), "-ldl"])
    return Fake(ctypes.CDLL(str(lib)))


class Fake:
    """The driver's stand-in: what its last call saw, and how often each path called."""

    def __init__(self, lib):
        self.lib = lib
        self.c_address, self.py = self.entry("fake_launch_c"), self.function("fake_launch_py")

    def entry(self, name: str) -> int:
        return ctypes.cast(self.lib[name], ctypes.c_void_p).value

    def function(self, name: str):
        """`name` as Function._launch holds cudaLaunchKernelExC (no argtypes)."""
        fn = self.lib[name]
        fn.restype = ctypes.c_int
        fn.argtypes = None
        return fn

    def setup(self, sizes, status=0):
        arr = (ctypes.c_int * max(1, len(sizes)))(*sizes)
        self.lib.fake_setup(ctypes.sizeof(cudart.sys.cudaLaunchConfig_t), len(sizes), arr, status)

    def value(self, ctype, name):
        return ctype.in_dll(self.lib, name).value

    @property
    def calls(self) -> tuple[int, int]:
        return self.value(ctypes.c_long, "calls_c"), self.value(ctypes.c_long, "calls_py")

    @property
    def gil_held(self) -> int:
        return self.value(ctypes.c_int, "gil_held")

    def seen(self, sizes):
        config = cudart.sys.cudaLaunchConfig_t.from_buffer_copy(
            (ctypes.c_ubyte * 256).in_dll(self.lib, "config_copy")
        )
        args = (ctypes.c_ubyte * 8 * 64).in_dll(self.lib, "args_copy")
        return (
            geometry(config),
            self.value(ctypes.c_void_p, "last_func"),
            tuple(bytes(args[k])[:size] for k, size in enumerate(sizes)),
        )


def geometry(config):
    return (
        (config.gridDim.x, config.gridDim.y, config.gridDim.z),
        (config.blockDim.x, config.blockDim.y, config.blockDim.z),
        config.dynamicSmemBytes,
        config.stream or 0,
        config.numAttrs,
    )


# axpy's parameters as its image's PTX declares them (tests/kernels/kernels.ptx).
AXPY_PTX = (("f32", 4), ("u64", 8), ("u64", 8), ("u32", 4))


def function(
    fake, fast, name="axpy", sizes=None, signature=None, entry=None, image_types=None
) -> Function:
    """A Function whose launches reach the stand-in: through its C launcher (`fast`)
    or through the Python launch only; `entry` names one entry point for both paths."""
    fn = Function(types.SimpleNamespace(_rt=cudart.sys), name, HANDLE, signature, image_types)
    fn._params = None if sizes is None else tuple(sizes)  # cudaFuncGetParamInfo's answer
    fn._launch = fake.py if entry is None else fake.function(entry)
    if fast:
        fn._fast = fastlaunch.Launcher(
            fake.c_address if entry is None else fake.entry(entry),
            fn._config,
            ctypes.addressof(fn._config),
            fn._func,
            ctypes.addressof(fn._func),
            fn._launch_slow,
            fn._fail,
        )
        fn.__dict__["launch"] = fn._fast.launch
    else:
        fn.__dict__.pop("launch", None)
        fn._fast = None
    return fn


def outcome(fn, fake, sizes, grid, block, args, kwargs):
    try:
        fn.launch(grid, block, *args, **kwargs)
    except Exception as exc:
        return type(exc), str(exc)
    return "launched", fake.seen(sizes)


CASES = {
    "small ints": (
        dict(signature="int8_t, uint8_t, short, unsigned short"),
        (1, 1, 2, 2),
        [(1, 2, 3, 4), (-128, 255, -32768, 65535), (127, 0, 32767, 0), (True, False, 5, True)],
    ),
    "large ints": (
        dict(signature="int, unsigned, long long, unsigned long long"),
        (4, 4, 8, 8),
        [
            (1, 2, 3, 4),
            (-(2**31), 2**32 - 1, -(2**63), 2**64 - 1),
            (2**31 - 1, 0, 2**63 - 1, 2**63),
        ],
    ),
    "floats, bool, pointer": (
        dict(signature="float, double, bool, const float *x"),
        (4, 8, 1, 8),
        [
            (1.5, 2.5, True, 0x1000),
            (float("inf"), -0.0, False, 2**64 - 1),
            (1e-45, 1e308, 1, 0),
            (3.4028234663852886e38, float("nan"), 0, 5),
            (-1.0e-30, 1.0 / 3, True, 0xDEADBEEF),
        ],
    ),
    "untyped sizes": (
        dict(sizes=(1, 2, 4, 8)),
        (1, 2, 4, 8),
        [(1, 2, 3, 4), (255, 65535, 2**32 - 1, 2**64 - 1), (-128, -32768, -(2**31), -(2**63))],
    ),
    "PTX types": (
        dict(sizes=(4, 8, 8, 4), image_types=AXPY_PTX),
        (4, 8, 8, 4),
        [
            (2.0, 0x1000, 0x2000, 4),
            (0.5, 1, 2, -3),
            (1e-3, 2**64 - 1, -(2**63), 2**32 - 1),
        ],
    ),
    "sizes unknown": (dict(sizes=None), (8, 8, 8), [(1, -1, 2**64 - 1), (0, 2**63, -5)]),
    "mangled": (
        dict(name="_Z4axpyfPKfPfi", sizes=(4, 8, 8, 4)),
        (4, 8, 8, 4),
        [(2.0, 0x1000, 0x2000, 1000), (0.5, 0x3000, 0x4000, -7)],
    ),
    "half (Python packs it)": (dict(signature="__half, int"), (2, 4), [(1.5, 2), (65504.0, -3)]),
    "no arguments": (dict(sizes=()), (), [()]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_c_writes_what_python_writes(fake, case):
    spec, sizes, sequence = CASES[case]
    fake.setup(sizes)
    fast, slow = function(fake, True, **spec), function(fake, False, **spec)
    grid, block = (3, 2), 128
    c_launches = 0
    for args in sequence:
        for repeat in range(3):  # the first of a kind primes the launcher, the others use it
            before = fake.calls
            got = outcome(fast, fake, sizes, grid, block, args, {})
            from_c = fake.calls[0] - before[0]
            c_launches += from_c
            want = outcome(slow, fake, sizes, grid, block, args, {})
            assert got == want, (args, repeat)
            assert got[0] == "launched"
            # Padding included: C writes each slot's bytes and no others.
            assert fast._sig._buffer.raw == slow._sig._buffer.raw
            assert got[1][1] == HANDLE
    # Every repeated launch of a Signature C packs was C's.
    if "half" in case:
        assert c_launches == 0 and not fast._fast.primed
    else:
        assert c_launches >= len(sequence)
        assert fast._fast.primed


REFUSED = [
    ((2**31, 2, True, 1.0), OverflowError),
    ((1, 256, True, 1.0), OverflowError),
    ((1, -1, True, 1.0), OverflowError),
    ((1, 2, -1, 1.0), OverflowError),
    ((1, 2, True, 1e39), OverflowError),  # struct's: too large for a float
    ((1, 2.0, True, 1.0), TypeError),
    ((1, 2, True, 1), TypeError),  # an int for a float
    ((1, 2, True, "1.0"), TypeError),
    ((1, 2, True), TypeError),  # a missing argument
]


def test_refusals_match_and_leave_the_slots(fake):
    sizes = (4, 1, 1, 4)
    fake.setup(sizes)
    spec = dict(signature="int, unsigned char, bool, float")
    fast, slow = function(fake, True, **spec), function(fake, False, **spec)
    good = (7, 200, True, 0.25)
    for fn in (fast, slow):
        fn.launch(4, 64, *good)
        fn.launch(4, 64, *good)
    assert fast._fast.primed
    slots, config = fast._sig._buffer.raw, geometry(fast._config)
    for args, error in REFUSED:
        calls = fake.calls
        with pytest.raises(error) as from_c:
            fast.launch(4, 64, *args)
        with pytest.raises(error) as from_python:
            slow.launch(4, 64, *args)
        assert str(from_c.value) == str(from_python.value)
        assert fake.calls == calls  # nothing launched
        assert fast._sig._buffer.raw == slots, args
        assert geometry(fast._config) == config
        # The next launch like the last good one is C's again.
        fast.launch(4, 64, *good)
        assert fake.calls[0] == calls[0] + 1
        assert fake.seen(sizes)[2] == struct.unpack("4s1s1s4s", struct.pack("<iB?f", *good))


def test_untyped_floats_are_refused_through_c(fake):
    # Issue 21: without parameter types a Python float is ambiguous (float, double or
    # an integer's bits). A launcher primed with ints must not pack it either.
    sizes = (4, 8, 8, 4)
    fake.setup(sizes)
    fast, slow = function(fake, True, sizes=sizes), function(fake, False, sizes=sizes)
    good = (2, 0x1000, 0x2000, 4)
    for fn in (fast, slow):
        fn.launch(1, 32, *good)
        fn.launch(1, 32, *good)
    assert fast._fast.primed
    slots = fast._sig._buffer.raw
    for args in ((3.0, 0x1000, 0x2000, 4), (2, 0x1000, 0x2000, 3.0), (2, 1.5, 0x2000, 4)):
        calls = fake.calls
        with pytest.raises(TypeError, match="signature=") as from_c:
            fast.launch(1, 32, *args)
        with pytest.raises(TypeError, match="signature=") as from_python:
            slow.launch(1, 32, *args)
        assert str(from_c.value) == str(from_python.value)
        assert "numpy.float32(3.0)" in str(from_c.value)
        assert fake.calls == calls  # nothing launched
        assert fast._sig._buffer.raw == slots
    fast.launch(1, 32, *good)  # C's again
    assert fake.seen(sizes)[2] == struct.unpack("4s8s8s4s", struct.pack("<iQQi", *good))


def test_geometry_and_keywords(fake):
    sizes = (4, 8, 8, 4)
    fake.setup(sizes)
    fast, slow = (
        function(fake, True, sizes=sizes, image_types=AXPY_PTX),
        function(fake, False, sizes=sizes, image_types=AXPY_PTX),
    )
    args = (2.0, 0x1000, 0x2000, 4)
    grid, other_grid, stream = (4, 2), (8, 1, 1), 0x7000
    calls = [
        ((grid, 32), {}),
        ((grid, 32), {}),  # C
        ((other_grid, 32), {}),  # a new grid: Python
        ((other_grid, 32), {}),  # C
        (((8, 1, 1), 32), {}),  # equal, another object: Python, configuration kept
        ((grid, 32), {"stream": stream, "shared_mem": 4096}),
        ((grid, 32), {"stream": stream, "shared_mem": 4096}),
        ((grid, 32), {"stream": stream, "shared_mem": 4096, "cooperative": True}),
        ((grid, 32), {"cooperative": True, "stream": stream, "shared_mem": 4096}),
        ((grid, 32), {"stream": None}),
        ((grid, 32), {}),
    ]
    for (g, b), kwargs in calls:
        assert outcome(fast, fake, sizes, g, b, args, kwargs) == outcome(
            slow, fake, sizes, g, b, args, kwargs
        )
    for fn in (fast, slow):
        with pytest.raises(TypeError, match="unexpected keyword argument 'streams'"):
            fn.launch(grid, 32, *args, streams=stream)
        with pytest.raises(ValueError, match="shared_mem must be >= 0"):
            fn.launch(grid, 32, *args, shared_mem=-1)
        with pytest.raises(TypeError):
            fn.launch(grid)
    # Which path served: C's, a new grid object included (the refusals kept the last
    # configuration, and C configures a new grid itself).
    before = fake.calls
    fast.launch(grid, 32, *args)
    fast.launch(other_grid, 32, *args)
    fast.launch(other_grid, 32, *args)
    assert fake.calls == (before[0] + 3, before[1])
    assert fake.seen(sizes)[0][0] == (8, 1, 1)


def test_other_threads_use_their_own_slots(fake):
    sizes = (4, 8, 8, 4)
    fake.setup(sizes)
    fn = function(fake, True, sizes=sizes, image_types=AXPY_PTX)
    args = (2.0, 0x1000, 0x2000, 4)
    fn.launch(1, 32, *args)
    fn.launch(1, 32, *args)
    slots = fn._sig._buffer.raw
    seen = []

    def other():
        before = fake.calls
        fn.launch(9, 64, 3.0, 0x5000, 0x6000, 5)
        seen.append((fake.calls[1] - before[1], fake.seen(sizes)))

    thread = threading.Thread(target=other)
    thread.start()
    thread.join()
    ((python_calls, (geom, _, values)),) = seen
    assert python_calls == 1  # not C's: another thread
    assert geom[0] == (9, 1, 1) and values[3] == struct.pack("<i", 5)
    # The owner's slots and configuration are its own, and C still serves it.
    assert fn._sig._buffer.raw == slots and geometry(fn._config)[0] == (1, 1, 1)
    before = fake.calls
    fn.launch(1, 32, *args)
    assert fake.calls[0] == before[0] + 1


class InRange:
    """A number whose comparisons say "in range" whatever it is: C's unsigned int keeps
    the low 32 bits of its index (2**32 + 5: 5)."""

    def __init__(self, index: int = 2**32 + 5):
        self.index = index

    def __index__(self) -> int:
        return self.index

    def __lt__(self, other) -> bool:
        return False

    def __le__(self, other) -> bool:
        return True

    __gt__, __ge__ = __lt__, __le__


class InRangeInt(int):
    """The same as an int subclass, whose own value is the index."""

    __lt__, __le__, __gt__, __ge__ = InRange.__lt__, InRange.__le__, InRange.__gt__, InRange.__ge__


def test_geometry_is_checked_as_converted(fake):
    """Grid, block and shared_mem are converted once (operator.index), and the
    converted numbers checked: what C would receive, on both launch paths."""
    sizes = (4,)
    fake.setup(sizes)
    refused = [
        (((InRange(),), 32), {}, ValueError),
        (((1, InRange()), 32), {}, ValueError),
        ((1, (32, 1, InRange())), {}, ValueError),
        ((InRangeInt(2**32 + 5), 32), {}, ValueError),
        (((InRange(-1), 1), 32), {}, ValueError),
        ((1, 32), {"shared_mem": InRange()}, OverflowError),
        ((1, 32), {"shared_mem": InRange(-1)}, ValueError),
        ((1, 32), {"shared_mem": 16.0}, TypeError),
    ]
    for fast in (True, False):
        fn = function(fake, fast, sizes=sizes)
        fn.launch(1, 32, 7)
        fn.launch(1, 32, 7)  # the C launcher is primed
        calls = fake.calls
        for (grid, block), kwargs, error in refused:
            with pytest.raises(error):
                fn.launch(grid, block, 7, **kwargs)
            assert fake.calls == calls, (grid, block, kwargs)  # nothing reached the driver
        assert geometry(fn._config)[:3] == ((1, 1, 1), (32, 1, 1), 0)
        # Numbers in range launch as their index says, whatever their comparisons.
        fn.launch((InRange(3),), (InRange(64), InRangeInt(2)), 7, shared_mem=InRange(16))
        assert fake.seen(sizes)[0][:3] == ((3, 1, 1), (64, 2, 1), 16)


def yield_before_each_line(filename: str):
    """A trace function that, before one in twenty lines of `filename`'s code, sleeps
    0.2 ms: other threads run meanwhile, and the interleavings that, untraced, come
    once in about a thousand first launches come every few dozen."""
    draw = random.Random(threading.get_ident()).random

    def each_line(frame, event, arg):
        if event == "line" and draw() < 0.05:
            time.sleep(2e-4)  # blocks: other threads take the GIL
        return each_line

    def tracer(frame, event, arg):
        return each_line if frame.f_code.co_filename == filename else None

    return tracer


@pytest.mark.parametrize("fast", [True, False], ids=["compiled", "python"])
def test_first_launches_from_many_threads_keep_their_arguments(fake, fast):
    """16 threads launch fresh Functions at once, each with its own value: whichever
    becomes a Function's owner, no launch runs with another thread's arguments (two
    threads once both became the owner, and shared the owner's slots)."""
    threads, functions, launches = 16, 200, 2
    fns = [function(fake, fast, sizes=(4,), entry="fake_launch_own") for _ in range(functions)]
    counts = (
        ctypes.c_long.in_dll(fake.lib, "own_calls"),
        ctypes.c_long.in_dll(fake.lib, "own_mismatches"),
    )
    for count in counts:
        count.value = 0
    start = threading.Barrier(threads)
    failures = []

    def launcher(value):
        fake.lib.fake_expect(value)
        sys.settrace(yield_before_each_line(Function.launch.__code__.co_filename))
        try:
            for fn in fns:
                start.wait()  # the first launches of each Function at once
                for _ in range(launches):
                    fn.launch(1, 32, value)
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(exc)
            start.abort()  # the others stop waiting for this one
        finally:
            sys.settrace(None)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter can
    try:
        workers = [threading.Thread(target=launcher, args=(k,)) for k in range(1, threads + 1)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    finally:
        sys.setswitchinterval(interval)
    assert not failures, failures
    calls, mismatches = (count.value for count in counts)
    assert calls == threads * functions * launches
    assert mismatches == 0, f"{mismatches} of {calls} launches ran with another thread's arguments"
    idents = {worker.ident for worker in workers}
    assert all(fn._owner in idents for fn in fns)


def test_a_function_closed_by_another_thread_while_it_launches(fake):
    """The owner launches each Function through C, with a new grid and value each time,
    until another thread closes it (its module unloaded: Function._invalidate clears
    the C launcher, prime(None)) and reads its key meanwhile: every launch that
    reached the driver ran with its own arguments and grid, every later one raises
    that the module is closed, nothing crashes. Without a GIL, the clear once freed the
    launcher's state and keys under a launch (issue 25: the launcher's critical
    section); the suite runs this under 3.13t too."""
    counts = (
        ctypes.c_long.in_dll(fake.lib, "own_calls"),
        ctypes.c_long.in_dll(fake.lib, "own_mismatches"),
    )
    for count in counts:
        count.value = 0
    functions = 600
    fns = [function(fake, True, sizes=(4,), entry="fake_launch_tagged") for _ in range(functions)]
    primed = [threading.Event() for _ in fns]
    closed = [threading.Event() for _ in fns]
    failures, launched = [], [0]
    draw = random.Random(25).random

    def closer():
        try:
            for fn, ready, done in zip(fns, primed, closed, strict=True):
                ready.wait()
                deadline = time.perf_counter() + draw() * 3e-4
                while time.perf_counter() < deadline:
                    key = fn._fast.key
                    assert key is None or len(key) == 6
                fn._invalidate()
                done.set()
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    other = threading.Thread(target=closer)
    other.start()
    try:
        for fn, ready, done in zip(fns, primed, closed, strict=True):
            for i in itertools.count():
                value = 1 + i % 7
                fake.lib.fake_expect(value)
                after_close = done.is_set()
                try:
                    fn.launch(value, 32, value)
                except ValueError as exc:
                    assert "module is closed" in str(exc)
                    break
                assert not after_close, "a launch after the close reached the driver"
                launched[0] += 1
                if i == 2:
                    ready.set()  # primed: C serves the next ones
    finally:
        for ready in primed:
            ready.set()
        other.join()
    assert not failures, failures
    calls, mismatches = (count.value for count in counts)
    assert (calls, mismatches) == (launched[0], 0)
    assert sum(fn._fast.launches for fn in fns) > functions  # C served most of them


def test_status_close_and_gil(fake):
    sizes = (4, 8, 8, 4)
    args = (2.0, 0x1000, 0x2000, 4)
    fake.setup(sizes)
    fast, slow = (
        function(fake, True, sizes=sizes, image_types=AXPY_PTX),
        function(fake, False, sizes=sizes, image_types=AXPY_PTX),
    )
    fast.launch(1, 32, *args)
    fast.launch(1, 32, *args)
    assert fake.gil_held == 0  # released around the call, as ctypes does
    fast._fast.release_gil = False
    fast.launch(1, 32, *args)
    assert fake.gil_held == 1
    fast._fast.release_gil = True
    fake.setup(sizes, status=cudart.sys.cudaErrorLaunchOutOfResources)
    try:
        before = fake.calls
        with pytest.raises(CudaError) as from_c:
            fast.launch(1, 32, *args)
        assert fake.calls[0] == before[0] + 1
        with pytest.raises(CudaError) as from_python:
            slow.launch(1, 32, *args)
        assert str(from_c.value) == str(from_python.value)
        assert "cudaErrorLaunchOutOfResources" in str(from_c.value)
    finally:
        fake.setup(sizes)
    fast._invalidate()  # its module closed
    assert not fast._fast.primed
    before = fake.calls
    with pytest.raises(ValueError, match="module is closed"):
        fast.launch(1, 32, *args)
    assert fake.calls == before


def test_function_launch_is_the_c_one_where_built():
    fn = Function(types.SimpleNamespace(_rt=cudart.sys), "axpy", 0)
    if _backend.launcher_module() is None:
        assert "launch" not in vars(fn)
        return
    assert type(fn.launch).__name__ == "builtin_function_or_method"
    assert fn.launch.__self__ is fn._fast
    # help(fn.launch) says what Function.launch says.
    doc = inspect.getdoc(fn.launch)
    python_doc = inspect.getdoc(Function.launch)
    assert doc is not None and python_doc is not None
    assert python_doc in doc
    names = list(inspect.signature(fn.launch).parameters)
    assert names == ["grid", "block", "args", "shared_mem", "stream", "cooperative"]
    # The Function, its Launcher and their cycle are collected.
    ref = weakref.ref(fn)
    del fn
    gc.collect()
    assert ref() is None


def test_real_runtime_refusal_is_the_same_error():
    # No GPU here: libcudart answers cudaLaunchKernelExC with an error, through C as
    # through Python.
    fns = [Function(types.SimpleNamespace(_rt=cudart.sys), "_Z4axpyfPKfPfi", 0) for _ in range(2)]
    if _backend.launcher_module() is None:
        pytest.skip("the Python launch serves (CUDART_BACKEND=ctypes or not built)")
    fns[1].__dict__.pop("launch")
    errors = []
    for fn in fns:
        fn._params = (4, 8, 8, 4)
        for _ in range(2):
            with pytest.raises(CudaError) as info:
                fn.launch(1, 32, 2.0, 0x1000, 0x2000, 4)
            errors.append(str(info.value))
    assert fns[0]._fast.primed
    assert len(set(errors)) == 1


def test_arguments_only_python_packs_bypass_the_c_launcher(fake):
    # A Python float for a half is packed by the Python launch alone (struct rounds it):
    # after one such launch the Function launches through it directly, with no detour
    # through C, and arguments C packs (bytes for the half) hand the launches back to C.
    sizes = (2, 4)
    fake.setup(sizes)
    fn = function(fake, True, sizes=sizes, signature="__half, int")
    grid, block = (1,), (256,)
    fn.launch(grid, block, 1.5, 1000)
    assert "launch" not in vars(fn)  # Function.launch, the Python one, serves
    calls = fake.calls
    fn.launch(grid, block, 1.5, 1000)
    assert fake.calls == (calls[0], calls[1] + 1)
    half = struct.pack("<e", 2.5)
    fn.launch(grid, block, half, 1000)  # repacked: C takes it back
    assert vars(fn)["launch"] == fn._fast.launch
    fn.launch(grid, block, half, 1000)  # primes it (Python path)
    calls = fake.calls
    fn.launch(grid, block, half, 1000)
    assert fake.calls == (calls[0] + 1, calls[1])  # launched from C
    assert fake.seen(sizes)[2] == (half, (1000).to_bytes(4, "little"))


# ---------------------------------------------------------------- every kind through C (issue 23)

CUDA = (2, 0)  # kDLCUDA, device 0


class DeviceArray:
    """A device array as CuPy's: __cuda_array_interface__ a property."""

    def __init__(self, address: int):
        self.address = address

    @property
    def __cuda_array_interface__(self):
        return {"shape": (4,), "typestr": "<f4", "data": (self.address, False), "version": 3}


class DLPackOnly:
    """Another library's array: DLPack only (cudart's own array exports it)."""

    def __init__(self, address: int):
        self.array = cudart.as_array(address, 16, "u1", device=CUDA)

    def __dlpack_device__(self):
        return CUDA

    def __dlpack__(self, stream=None, max_version=None):
        return self.array.__dlpack__(stream=stream, max_version=max_version)


class IntAddress:
    """An address by __int__ (cuda-bindings' pointer classes)."""

    def __init__(self, address: int):
        self.address = address

    def __int__(self) -> int:
        return self.address


class ForeignStream:
    """A stream of another library: the CUDA stream protocol."""

    def __init__(self, answer):
        self.answer = answer

    def __cuda_stream__(self):
        return self.answer


_HOST_BUFFERS: list = []  # what the HostMemory objects below stand on, kept alive


def host_memory(size: int = 64):
    from cudart._hostmem import host_memory

    _HOST_BUFFERS.append(ctypes.create_string_buffer(size))
    return host_memory(ctypes.addressof(_HOST_BUFFERS[-1]), size)


# One parameter of each kind, and what each takes: every argument kind Python packs.
KIND_SIGNATURE = "int, float, const float *p, double, unsigned char"
KIND_SIZES = (4, 4, 8, 8, 1)


def kind_arguments(np):
    packed = function_for_pack().pack(3, 0x4000)
    return [
        [7, True, np.int32(-7), np.int64(2**31 - 1), np.bool_(True), ctypes.c_int(-9)],
        [1.5, np.float32(2.5), np.float64(0.1), ctypes.c_float(3.5), -0.0],
        [
            0x1000,
            None,
            ctypes.c_void_p(0x2000),
            ctypes.c_void_p(None),
            cudart.sys.cudaStream_t(0x2800),
            DeviceArray(0x3000),
            cudart.as_array(0x3400, 4, "float32"),
            DLPackOnly(0x3800),
            host_memory(),
            packed,
            IntAddress(0x5000),
            np.uint64(0x6000),
        ],
        [0.25, np.float64(1e300), ctypes.c_double(2.0), np.float32(1.5)],
        [200, np.uint8(3), ctypes.c_uint8(4), False],
    ]


def function_for_pack():
    return Function(
        types.SimpleNamespace(_rt=cudart.sys), "packed", HANDLE, signature="int, const void *"
    )


STREAMS = [
    None,
    0x7000,
    cudart.sys.cudaStream_t(0x8000),
    cudart.sys.cudaStream_t(0x9000),
    ForeignStream((0, 0xA000)),
    ForeignStream((0, 0xB000)),
    0,
]
# (grid, block, shared_mem, cooperative): a new geometry each time, objects made anew.
GEOMETRIES = [
    lambda: (1, 32, 0, False),
    lambda: ((2,), (64,), 0, False),
    lambda: ((3, 2), (16, 4), 128, False),
    lambda: ((4, 5, 6), (8, 2, 2), 0, True),
    lambda: (2**32 - 1, (1, 1, 64), 2**32 - 1, False),
    lambda: (int("70000"), int("256"), int("4096"), True),  # not the small-int objects
    lambda: ((0, 1, 1), 1, 0, False),
]


def launch_both(fast, slow, fake, grid, block, args, kwargs):
    """Both paths' outcomes, and whether C launched the first one."""
    before = fake.calls
    got = outcome(fast, fake, KIND_SIZES, grid, block, args, kwargs)
    by_c = fake.calls[0] - before[0]
    want = outcome(slow, fake, KIND_SIZES, grid, block, args, kwargs)
    return got, want, by_c


def test_every_kind_geometry_and_stream_c_writes_what_python_writes(fake):
    """The grid: each kind of each parameter x new geometries x streams. C writes what
    the Python path writes (configuration, kernel handle, every argument's bytes, the
    slots' padding), and after the first launch of a Signature (which primes C) every
    launch is C's, whatever its geometry and stream."""
    np = needs.numpy()
    fake.setup(KIND_SIZES)
    fast = function(fake, True, sizes=KIND_SIZES, signature=KIND_SIGNATURE)
    slow = function(fake, False, sizes=KIND_SIZES, signature=KIND_SIGNATURE)
    kinds = kind_arguments(np)
    rounds = max(len(k) for k in kinds)
    by_c = python = 0
    for r in range(rounds):
        args = tuple(k[r % len(k)] for k in kinds)
        for step in range(len(GEOMETRIES) * 2):
            grid, block, shared, cooperative = GEOMETRIES[(step + r) % len(GEOMETRIES)]()
            stream = STREAMS[(step * 3 + r) % len(STREAMS)]
            kwargs = {"shared_mem": shared, "stream": stream, "cooperative": cooperative}
            if step % 3 == 0:  # the defaults, by leaving them out
                kwargs = {}
            got, want, from_c = launch_both(fast, slow, fake, grid, block, args, kwargs)
            assert got == want, (r, step, args, grid, block, kwargs)
            assert got[0] == "launched" and got[1][1] == HANDLE
            assert fast._sig._buffer.raw == slow._sig._buffer.raw
            if step >= 2:  # primed by now (the stream handle's class too)
                assert from_c == 1, (r, step, args, grid, block, kwargs)
            by_c += from_c
            python += 1 - from_c
    assert fast._fast.primed and by_c > 5 * python


def test_cudart_arrays_are_read_by_their_ptr_in_c(fake):
    """Issue 23: cudart.arrays.DeviceArray's interface is a dict built per read; C reads
    its `ptr`, which that dict's address is, and launches what Python launches. A
    subclass (which may define its own interface) takes the interface."""
    from cudart.arrays import DeviceArray as Own
    from cudart.kernels import _launch

    assert _launch._address_route(Own) == _launch._ROUTE_PTR

    class Sub(Own):
        __slots__ = ()

    assert _launch._address_route(Sub) == _launch._ROUTE_ARRAY
    sizes = (4, 8, 8, 4)
    fake.setup(sizes)
    fast = function(fake, True, sizes=sizes, image_types=AXPY_PTX)
    slow = function(fake, False, sizes=sizes, image_types=AXPY_PTX)
    for k in range(6):
        x = cudart.as_array(0x10000 + 64 * k, 16, "float32")
        y = cudart.as_array(0x20000 + 64 * k, (4, 4), "<f4", strides=(32, 4))
        got = outcome(fast, fake, sizes, 1, 32, (2.0, x, y, 16), {})
        assert got == outcome(slow, fake, sizes, 1, 32, (2.0, x, y, 16), {})
        assert got[1][2][1:3] == (x.ptr.to_bytes(8, "little"), y.ptr.to_bytes(8, "little"))
    assert fast._fast.launches == 5  # the first primed C


def test_untyped_parameters_take_typed_scalars_through_c(fake):
    """Without parameter types, NumPy floats and ctypes values pack as their own bytes,
    bytes as themselves: through C as through Python."""
    np = needs.numpy()
    sizes = (4, 8, 4, 2, 8)
    fake.setup(sizes)
    fast, slow = function(fake, True, sizes=sizes), function(fake, False, sizes=sizes)
    sequence = [
        (np.float32(1.5), np.float64(2.5), ctypes.c_float(3.5), b"\x01\x02", 7),
        (np.float32(-0.0), np.float64(1e-300), ctypes.c_float(-1.0), b"\xff\xfe", 2**64 - 1),
        (
            np.float32("nan"),
            np.float64("inf"),
            ctypes.c_float(1e-40),
            bytearray(b"ab")[:0] + b"cd",
            0,
        ),
    ]
    for args in sequence:
        for repeat in range(3):
            before = fake.calls
            got = outcome(fast, fake, sizes, (repeat + 1, 2), 32, args, {})
            from_c = fake.calls[0] - before[0]
            assert got == outcome(slow, fake, sizes, (repeat + 1, 2), 32, args, {})
            assert got[0] == "launched"
            if repeat:
                assert from_c == 1, (args, repeat)


def refused_cases(np):
    """(grid, block, args, kwargs) the Python path refuses, after a launch with
    `kind_arguments`' first kinds: every one must raise the same through C."""
    good = (7, 1.5, 0x1000, 0.25, 200)
    released = host_memory()
    released._release()
    destroyed = cudart.sys.cudaStream_t(0x8000)
    from cudart._handles import mark_destroyed

    mark_destroyed(destroyed, "cudaStreamDestroy")

    def args(k, value):
        return good[:k] + (value,) + good[k + 1 :]

    geometry = [
        (2**32, 32, good, {}),
        ((1, 2, 3, 4), 32, good, {}),
        ((), 32, good, {}),
        ((1, -1), 32, good, {}),
        (1.5, 32, good, {}),
        ((1, 2.0), 32, good, {}),
        (1, "x", good, {}),
        (1, [32], good, {}),  # a list: Python takes it (tuple(value)); fine through C too
        (1, 32, good, {"shared_mem": -1}),
        (1, 32, good, {"shared_mem": 2**32}),
        (1, 32, good, {"shared_mem": 1.0}),
        (1, 32, good, {"stream": -1}),
        (1, 32, good, {"stream": 2**64}),
        (1, 32, good, {"stream": 1.5}),
        (1, 32, good, {"stream": destroyed}),
        (1, 32, good, {"stream": cudart.sys.cudaEvent_t(0x10)}),
        (1, 32, good, {"stream": ForeignStream((1, 0x10))}),
        (1, 32, good, {"stream": ForeignStream((0, -1))}),
        (1, 32, good, {"stream": ForeignStream(("0", 0x10))}),
        (1, 32, good, {"stream": ForeignStream((0, True))}),
        (1, 32, good, {"streams": 0}),
    ]
    arguments = [
        args(0, np.int64(2**31)),
        args(0, 2**31),
        args(0, ctypes.c_float(1.0)),
        args(0, 1.0),
        args(1, 1),
        args(1, np.int32(1)),
        args(1, 1e39),
        args(1, np.float64(1e39)),
        args(2, DeviceArray(-1)),
        args(2, DeviceArray(2**64)),
        args(2, IntAddress(-5)),
        args(2, released),
        args(2, 1.5),
        args(2, np.float32(1.0)),
        args(2, "0x1000"),
        args(2, np.zeros(4)),  # host memory
        args(4, 256),
        args(4, np.uint16(300)),
        args(4, ctypes.c_uint16(3)),
        good[:4],
        good + (1,),
    ]
    return geometry + [(1, 32, a, {}) for a in arguments]


def test_refusals_through_c_raise_what_python_raises(fake):
    """Every refused launch raises the same exception class and message through C as
    through Python, launches nothing, and leaves the slots and configuration as they
    were; then C serves again."""
    np = needs.numpy()
    fake.setup(KIND_SIZES)
    fast = function(fake, True, sizes=KIND_SIZES, signature=KIND_SIGNATURE)
    slow = function(fake, False, sizes=KIND_SIZES, signature=KIND_SIGNATURE)
    kinds = kind_arguments(np)
    for r, (grid, block, args, kwargs) in enumerate(refused_cases(np)):
        # Primed with a Signature of another round's kinds and a stream handle, each time.
        good = tuple(k[r % len(k)] for k in kinds)
        for fn in (fast, slow):
            fn.launch(2, 64, *good, stream=STREAMS[2])
            fn.launch(2, 64, *good, stream=STREAMS[2])
        assert fast._fast.primed
        sig = fast._sig
        slots, config, calls = sig._buffer.raw, geometry(fast._config), fake.calls
        got = outcome(fast, fake, KIND_SIZES, grid, block, args, kwargs)
        want = outcome(slow, fake, KIND_SIZES, grid, block, args, kwargs)
        assert got == want, (grid, block, args, kwargs)
        if got[0] == "launched":
            continue  # the list block: taken by both
        assert fake.calls == calls, (grid, block, args, kwargs)  # nothing launched
        # The primed slots (arguments of other kinds may have packed into their own).
        assert sig._buffer.raw == slots, (r, grid, block, args, kwargs)
        assert geometry(fast._config) == config, (r, grid, block, args, kwargs)
        fast.launch(2, 64, *good, stream=STREAMS[2])  # primes C again where args repacked
        before = fake.calls
        fast.launch(2, 64, *good, stream=STREAMS[2])
        assert fake.calls == (before[0] + 1, before[1])  # C's again


def test_c_configures_a_new_geometry_itself(fake):
    """Issue 23: a new grid, block, shared_mem, stream or cooperative flag each launch
    stays in C (the old launcher sent every one to Python), and the Python path that
    follows sees the configuration C left."""
    sizes = (4, 8, 8, 4)
    fake.setup(sizes)
    fast = function(fake, True, sizes=sizes, image_types=AXPY_PTX)
    slow = function(fake, False, sizes=sizes, image_types=AXPY_PTX)
    args = (2.0, 0x1000, 0x2000, 4)
    for fn in (fast, slow):
        fn.launch(1, 32, *args)
    stream = cudart.sys.cudaStream_t(0x8000)
    before = fake.calls
    for n in range(2, 40):
        kwargs = {
            "stream": stream if n % 2 else n << 12,
            "shared_mem": n,
            "cooperative": n % 3 == 0,
        }
        got = outcome(fast, fake, sizes, (n, n + 1), (32, n % 4 + 1), args, kwargs)
        assert got == outcome(slow, fake, sizes, (n, n + 1), (32, n % 4 + 1), args, kwargs)
    assert fake.calls[0] - before[0] >= 37  # the first handle of its class taught C
    assert fast._fast.launches >= 37
    # Back to the first geometry: equal to what Python configured first, not to what C
    # configured last; the Python path (a keyword C leaves to it) must configure it.
    fallbacks = fast._fast.fallbacks
    got = outcome(fast, fake, sizes, 1, 32, args, {"cooperative": 0})
    assert got == outcome(slow, fake, sizes, 1, 32, args, {"cooperative": 0})
    assert fast._fast.fallbacks == fallbacks + 1
    assert got[1][0][:2] == ((1, 1, 1), (32, 1, 1))


def test_c_state_dropped_by_another_thread_leaves_no_stale_geometry(fake):
    """C configured a new grid, then another thread dropped C's state (prime(None)): the
    Python path that serves the next launch cannot know what the configuration holds,
    and writes it, rather than trust the key of its own last launch."""
    sizes = (4, 8, 8, 4)
    fake.setup(sizes)
    fn = function(fake, True, sizes=sizes, image_types=AXPY_PTX)
    args = (2.0, 0x1000, 0x2000, 4)
    fn.launch(1, 32, *args)  # the Python path: its key is (1, 32, ...)
    fn.launch(2, 32, *args)  # C: the configuration now holds grid 2
    assert fn._fast.launches == 1 and fake.seen(sizes)[0][0] == (2, 1, 1)
    dropper = threading.Thread(target=fn._fast.prime, args=(None,))
    dropper.start()
    dropper.join()
    fallbacks = fn._fast.fallbacks
    fn.launch(1, 32, *args)
    assert fn._fast.fallbacks == fallbacks + 1
    assert fake.seen(sizes)[0][:2] == ((1, 1, 1), (32, 1, 1))


def test_a_launch_from_a_property_takes_the_python_path(fake):
    """Python code C runs while converting (a device array's property) may launch the
    same kernel, which primes the launcher again: both launches stay right."""
    sizes = (8, 4)
    fake.setup(sizes)
    fn = function(fake, True, sizes=sizes, signature="const float *p, int")
    inner = []

    class Reentrant(DeviceArray):
        @property
        def __cuda_array_interface__(self):
            if len(inner) < 3:
                inner.append(1)
                fn.launch(5, 5, 0x9000, 9)  # another Signature: int, int
            return {"shape": (1,), "typestr": "<f4", "data": (self.address, False), "version": 3}

    for k in range(4):
        fn.launch(1, 32, Reentrant(0x1000 + k), k)
        assert fake.seen(sizes)[0][0] == (1, 1, 1)
        assert fake.seen(sizes)[2] == (
            (0x1000 + k).to_bytes(8, "little"),
            k.to_bytes(4, "little"),
        )


def test_one_integer_range_rule_for_both_c_sources(monkeypatch):
    """Issue 23: the C launcher's integer conversion, the compiled backend's and the
    record members' (cudart/_fields.c) are one (cudart/_cint.h), which every extension's
    build depends on."""
    import runpy

    import setuptools
    from suite import REPO

    cudart_dir = REPO / "cudart"
    shared = (cudart_dir / "_cint.h").read_text()
    assert "PyLong_AsLongLongAndOverflow" in shared
    for user, include in (
        (cudart_dir / "_fastcall.h", '#include "_cint.h"'),
        (cudart_dir / "kernels" / "_fastlaunch.c", '#include "../_cint.h"'),
        (cudart_dir / "_fields.c", '#include "_cint.h"'),
    ):
        text = user.read_text()
        assert include in text, user
        assert "PyLong_AsLongLongAndOverflow" not in text, user  # not written again
    made: dict = {}
    monkeypatch.setattr(setuptools, "setup", lambda **options: made.update(options))
    monkeypatch.chdir(REPO)
    runpy.run_path(str(REPO / "setup.py"))
    extensions = made["ext_modules"]
    assert any(e.name == "cudart.kernels._fastlaunch" for e in extensions)
    assert len(extensions) > 1
    for ext in extensions:
        assert "cudart/_cint.h" in ext.depends, ext.name


def test_c_learns_no_destroyed_stream_class(fake):
    """A destroyed stream equal to the configured one (same kind and address) is
    converted again by both paths (the key holds the class its stream was converted
    as), which refuses it; C must not learn its class from a key, so another destroyed
    stream of the class is refused as Python refuses it."""
    from cudart._handles import mark_destroyed

    sizes = (4,)
    fake.setup(sizes)
    fast, slow = function(fake, True, sizes=sizes), function(fake, False, sizes=sizes)
    live = cudart.sys.cudaStream_t(0x8000)
    dead, other = cudart.sys.cudaStream_t(0x8000), cudart.sys.cudaStream_t(0x9000)
    for handle in (dead, other):
        mark_destroyed(handle, "cudaStreamDestroy")
    assert type(dead) is type(other) is not type(live)
    for stream in (live, live, dead, dead, other):
        got = outcome(fast, fake, sizes, 1, 32, (7,), {"stream": stream})
        assert got == outcome(slow, fake, sizes, 1, 32, (7,), {"stream": stream}), stream
    assert got[0] is cudart.errors.HandleDestroyedError


def _refusal(call):
    try:
        call()
    except Exception as exc:  # noqa: BLE001 - compared whole below
        return type(exc), str(exc)
    return "launched"


@pytest.mark.parametrize("through_c", [True, False], ids=["C", "Python"])
def test_a_stream_destroyed_after_launches_on_it_is_refused(fake, through_c):
    """A checked destroy marks the stream object (cudart._handles), and the launch that
    repeats its configuration with that object (C's and Python's unchanged key) or with
    another object of its value (Python's equal key) must refuse it as the checked layer
    does, launching nothing; again on every try, and a live stream launches after."""
    from cudart._handles import mark_destroyed

    sizes = (4,)
    fake.setup(sizes)
    fn = function(fake, through_c, sizes=sizes)
    stream = cudart.sys.cudaStream_t(0x8000)
    equal = cudart.sys.cudaStream_t(0x8000)
    for _ in range(3):  # the first primes C, the others are C's
        fn.launch(1, 32, 7, stream=stream)
    mark_destroyed(stream, "cudaStreamDestroy")
    want = _refusal(lambda: cudart.cudaStreamQuery(stream))
    assert want[0] is cudart.errors.HandleDestroyedError
    calls = fake.calls
    for _ in range(3):
        assert _refusal(lambda: fn.launch(1, 32, 7, stream=stream)) == want
    # Another object of the value configured: equal to the key, refused all the same.
    fn.launch(2, 32, 7, stream=equal)
    calls = fake.calls
    for _ in range(3):
        assert _refusal(lambda: fn.launch(2, 32, 7, stream=stream)) == want
    assert fake.calls == calls  # nothing launched
    # A live object of that value is the caller's promise, as in the checked layer.
    for _ in range(3):
        fn.launch(2, 32, 7, stream=equal)
    assert int(fake.seen(sizes)[0][3]) == 0x8000
    assert fake.calls[0 if through_c else 1] > calls[0 if through_c else 1]
    if through_c:
        assert fake.calls[0] - calls[0] >= 2  # C serves the live stream again


def test_the_stream_check_is_one_class_comparison(fake):
    """The check a repeated configuration costs is the stream's class against the key's:
    C's repeated launches stay C's, a new object of the value and class included."""
    sizes = (4,)
    fake.setup(sizes)
    fn = function(fake, True, sizes=sizes)
    stream = cudart.sys.cudaStream_t(0x8000)
    fn.launch(1, 32, 7, stream=stream)
    fn.launch(1, 32, 7, stream=stream)
    before, fallbacks = fake.calls, fn._fast.fallbacks
    for _ in range(5):
        fn.launch(1, 32, 7, stream=stream)
        fn.launch(1, 32, 7, stream=cudart.sys.cudaStream_t(0x8000))
    assert fake.calls == (before[0] + 10, before[1])
    assert fn._fast.fallbacks == fallbacks


@pytest.mark.parametrize("through_c", [True, False], ids=["C", "Python"])
def test_a_handle_destroyed_between_launches_is_refused_as_an_argument(fake, through_c):
    """A texture object (an integer handle) or a pointer handle passed to a kernel, then
    ended by a checked destroy, is refused at the next launch that repeats it (its class
    changed: C leaves it to Python, whose Signature for the new class refuses it), and by
    `pack`; a released HostMemory likewise (its own check, each launch)."""
    from cudart._handles import integer_handle_class, mark_destroyed

    sizes = (8, 8)
    fake.setup(sizes)
    fn = function(fake, through_c, sizes=sizes, signature="const float *p, unsigned long long t")
    memory, texture = host_memory(), integer_handle_class("cudaTextureObject_t")(0x77)
    event = cudart.sys.cudaEvent_t(0x99)
    cases = [
        (texture, (memory, texture), lambda: mark_destroyed(texture, "cudaDestroyTextureObject")),
        (event, (event, 5), lambda: mark_destroyed(event, "cudaEventDestroy")),
    ]
    for handle, args, destroy in cases:
        for _ in range(3):
            fn.launch(1, 32, *args)
        destroy()
        calls = fake.calls
        for attempt in (functools.partial(fn.launch, 1, 32), fn.pack):
            with pytest.raises(cudart.errors.HandleDestroyedError) as caught:
                attempt(*args)
            error = caught.value
            assert (error.kind, error.address, error.parameter) == (
                type(handle).__name__,
                int(handle),
                f"argument {args.index(handle)}",
            )
        assert fake.calls == calls  # nothing launched
    for _ in range(3):
        fn.launch(1, 32, memory, 5)
    memory._release()
    calls = fake.calls
    with pytest.raises(ValueError, match="freed|released"):
        fn.launch(1, 32, memory, 5)
    assert fake.calls == calls


@pytest.mark.parametrize("through_c", [True, False], ids=["C", "Python"])
def test_a_handle_in_the_slot_of_a_plain_int_is_checked(fake, through_c):
    """Launches whose arguments were all plain ints pack with struct, which takes any int
    subclass: a texture object (a live one, then a destroyed one) given in an int's place
    must still be checked as its own class, never packed as a plain int unchecked."""
    from cudart._handles import integer_handle_class, mark_destroyed

    sizes = (8, 8)
    fake.setup(sizes)
    fn = function(fake, through_c, sizes=sizes, signature="unsigned long long a, long long b")
    for _ in range(3):
        fn.launch(1, 32, 7, 5)
    texture = integer_handle_class("cudaTextureObject_t")(0x77)
    fn.launch(1, 32, texture, 5)
    mark_destroyed(texture, "cudaDestroyTextureObject")
    for _ in range(3):
        fn.launch(1, 32, 7, 5)  # the plain signature again
    calls = fake.calls
    with pytest.raises(cudart.errors.HandleDestroyedError) as caught:
        fn.launch(1, 32, texture, 5)
    assert (caught.value.address, caught.value.parameter) == (0x77, "argument 0")
    assert fake.calls == calls  # nothing launched


class LyingArray:
    """A device array whose __cuda_array_interface__ changes between launches."""

    def __init__(self, address: int, **changed):
        self.interface = {
            "shape": (4,),
            "typestr": "<f4",
            "data": (address, False),
            "version": 3,
            **changed,
        }

    @property
    def __cuda_array_interface__(self):
        return self.interface


def test_c_takes_an_array_interface_only_as_python_does(fake):
    """Issue 33, item 19: C reads an interface's address only where Python would (data a
    2-tuple, no mask): a masked one, or data of three items, after launches that primed
    C for the class, is refused as Python refuses it, and never launched."""
    sizes = (4, 8, 8, 4)
    fake.setup(sizes)
    fast = function(fake, True, sizes=sizes, image_types=AXPY_PTX)
    slow = function(fake, False, sizes=sizes, image_types=AXPY_PTX)
    y = LyingArray(0x20000)
    for k in range(4):  # primes C for LyingArray's class, then launches through it
        x = LyingArray(0x10000 + 64 * k)
        assert outcome(fast, fake, sizes, 1, 32, (2.0, x, y, 16), {}) == outcome(
            slow, fake, sizes, 1, 32, (2.0, x, y, 16), {}
        )
    launched = fast._fast.launches
    assert launched >= 2
    for lie in (
        {"mask": LyingArray(0x30000)},
        {"data": (0x10000, False, 0)},
        {"data": (0x10000,)},
    ):
        x = LyingArray(0x10000, **lie)
        got = outcome(fast, fake, sizes, 1, 32, (2.0, x, y, 16), {})
        assert got == outcome(slow, fake, sizes, 1, 32, (2.0, x, y, 16), {})
        assert got[0] in (TypeError, ValueError), (lie, got)
    assert fast._fast.launches == launched  # C launched none of them
