"""Many threads at once on what cudart does on first use (issue 25), under a GIL build and
a free-threaded one (3.13t, where the GIL stays off: each run asserts it).

Each case runs in a fresh interpreter (`-X faulthandler`, so a crash shows its stacks),
where THREADS threads wait at a threading.Barrier and are released together onto a
first access: a lazy `cudart.<name>`, a raw function's first binding, the first error of
a code, the first compile, the first read of a zstd fatbin, the driver API's first name.
Each thread's results must be exactly what one thread gets afterwards (values, and the
identity of what the package hands out once per process), and registries must hold
exactly what was left in them. The real libraries of one pinned version serve
(libcudart answers without a GPU; NVRTC and nvJitLink work on the CPU); the driver is
the stand-in libcuda (tests/support/driver_stub.py).
"""

from __future__ import annotations

import json
import textwrap

import pytest
from suite import REPO, run_python

from generator.fetch import fetch_version

pytestmark = pytest.mark.backend

KEY = "12.9"  # the runtime (and NVRTC, nvJitLink) serving the storms
OLDER = "12.5"  # a runtime older than KEY's bindings, for the forced-version warning
THREADS = 16
KERNELS = REPO / "tests" / "kernels"
SUPPORT = REPO / "tests" / "support"

# What every case's interpreter runs first: storm(fn) calls fn(i) in THREADS threads
# released together and returns their results (or raises what the first one raised).
PRELUDE = f"""
import json, sys, threading, time
sys.path.insert(0, {str(SUPPORT)!r})
from thread_storm import FREE_THREADED, gil_enabled as gil, storm as _storm
THREADS = {THREADS}

def storm(fn, threads=THREADS):
    return _storm(fn, threads)

def report(**values):
    values["free_threaded"] = FREE_THREADED
    values["gil"] = gil()
    print(json.dumps(values))
"""


@pytest.fixture(scope="module")
def libraries(manifest):
    """$CUDART_*LIBRARY for KEY's libcudart, libnvrtc and libnvJitLink."""

    def quiet(_message: str) -> None:
        pass

    found = {}
    for surface, env in (
        ("runtime", "CUDART_LIBRARY"),
        ("nvrtc", "CUDART_NVRTC_LIBRARY"),
        ("nvjitlink", "CUDART_NVJITLINK_LIBRARY"),
    ):
        found[env] = str(fetch_version(manifest, KEY, quiet, surface).library)
    return found


def _storm(code: str, env: dict[str, str]) -> dict:
    """Run PRELUDE + code in a fresh interpreter; its report()."""
    full = {"PYTHONFAULTHANDLER": "1", **env}
    proc = run_python(PRELUDE + textwrap.dedent(code), env=full)
    values = json.loads(proc.stdout.strip().splitlines()[-1])
    if values.pop("free_threaded"):
        assert values["gil"] is False, "the GIL came back on"
    values.pop("gil")
    return values


def test_first_access_of_package_names_gives_every_thread_the_same_objects(libraries):
    """The lazy `cudart.<name>` (the version pick, imports of the generated modules, the
    helper submodules, error classes made on first use) reached first by all threads."""
    values = _storm(
        """
        import cudart
        assert gil() is False or not FREE_THREADED
        NAMES = ("sys", "cudaGetErrorString", "cudaRuntimeGetVersion", "cudaError",
                 "cudaMemcpyKind", "cudaDeviceProp", "CudaErrorMemoryAllocation",
                 "callbacks", "kernels", "nvrtc", "arrays", "HostMemory", "compile",
                 "as_array", "load_module")

        def first(i):
            objects = [getattr(cudart, n) for n in (NAMES[i % 3:] + NAMES[:i % 3])]
            ids = sorted(id(o) for o in objects)
            return ids, cudart.cudaRuntimeGetVersion(), cudart.cudaGetErrorString(2)

        results = storm(first)
        after = (sorted(id(getattr(cudart, n)) for n in NAMES),
                 cudart.cudaRuntimeGetVersion(), cudart.cudaGetErrorString(2))
        report(same=[r == list(after) for r in map(list, results)], version=after[1])
        """,
        {"CUDART_LIBRARY": libraries["CUDART_LIBRARY"]},
    )
    assert values["same"] == [True] * THREADS
    assert values["version"] == 12090


def test_raw_functions_bound_by_many_threads_at_once_are_one_function_each(libraries):
    """The raw layer binds a function on its first lookup (cudart._binding): threads that
    look a name up first together all get the function the module keeps."""
    values = _storm(
        """
        import cudart
        rt = cudart.sys
        names = sorted(rt._FUNCTIONS)[:200]

        def first(i):
            mine = names[i % 7:] + names[:i % 7]  # each thread starts elsewhere
            return {n: id(getattr(rt, n)) for n in mine}

        results = storm(first)
        kept = {n: id(getattr(rt, n)) for n in names}
        differ = sorted({n for r in results for n in names if r[n] != kept[n]})
        # A bound function calls C as one thread's does.
        codes = range(0, 1000)
        alone = [rt.cudaGetErrorName(c) for c in codes]
        names_seen = storm(lambda i: [rt.cudaGetErrorName(c) for c in codes])
        report(differ=differ, count=len(names),
               same_names=[n == alone for n in names_seen])
        """,
        {"CUDART_LIBRARY": libraries["CUDART_LIBRARY"]},
    )
    assert values["count"] == 200
    assert values["differ"] == []
    assert values["same_names"] == [True] * THREADS


def test_errors_raised_by_many_threads_at_once_are_those_of_one_thread(libraries):
    """Checked calls failing together (no GPU here: each device call fails) and the
    error-string queries: the same class (one per code, made by whichever thread was
    first), name and message in every thread, as one thread gets them afterwards."""
    values = _storm(
        """
        import cudart
        from cudart import _checked
        CODES = [int(m) for m in cudart.sys.cudaError]

        def fail(i=0):
            # Half the threads make the classes from the first code, half from the last:
            # each pair crosses where both may be making one class at once.
            order = CODES if i % 2 == 0 else CODES[::-1]
            classes = {c: id(_checked.error_class(c, cudart.sys.cudaError)) for c in order}
            seen = []
            for _ in range(20):
                try:
                    cudart.cudaMalloc(256)
                except cudart.CudaError as exc:
                    seen.append((id(type(exc)), type(exc).__name__, str(exc)))
                try:
                    cudart.cudaSetDevice(10**6)
                except cudart.CudaError as exc:
                    seen.append((id(type(exc)), type(exc).__name__, str(exc)))
            strings = [cudart.cudaGetErrorString(c) for c in CODES]
            return seen, classes, strings

        results = storm(fail)
        alone = fail()
        report(same=[r == alone for r in results], kinds=sorted({s[1] for s in alone[0]}))
        """,
        {"CUDART_LIBRARY": libraries["CUDART_LIBRARY"]},
    )
    assert values["same"] == [True] * THREADS
    assert values["kinds"] and all(k.startswith("CudaError") for k in values["kinds"])


def test_a_forced_newer_version_warns_once_whichever_threads_ask_first(manifest):
    """The version pick's warning (bindings newer than the runtime) is given once per
    process, not once per thread that arrived while the first was loading libcudart."""
    library = str(fetch_version(manifest, OLDER, lambda _m: None).library)
    values = _storm(
        """
        import warnings
        warnings.simplefilter("always")
        seen = []
        warnings.showwarning = lambda message, *rest: seen.append(str(message))
        import cudart

        versions = storm(lambda i: cudart.sys.CUDA_VERSION)
        report(versions=sorted(set(versions)), warnings=seen)
        """,
        {"CUDART_LIBRARY": library, "CUDART_BINDINGS_VERSION": "12090"},
    )
    assert values["versions"] == [12090]
    assert len(values["warnings"]) == 1, values["warnings"]
    assert "newer than the loaded CUDA 12.5 runtime" in values["warnings"][0]


def test_callback_registry_after_a_storm_holds_exactly_what_was_left(libraries):
    """register/unregister from many threads, then every token's trampoline called from
    two threads at once through C (as CUDA's threads would): each callable runs once,
    the second call of each token is a recorded LookupError, and nothing is left."""
    values = _storm(
        """
        import ctypes
        import logging
        import cudart
        from cudart import callbacks

        logging.disable(logging.CRITICAL)  # each token's second call logs its LookupError

        PER = 200
        rt = cudart.sys
        ran = [0] * (THREADS * PER)
        counting = threading.Lock()

        def hit(k):
            with counting:
                ran[k] += 1

        def churn(i):
            kept = []
            for j in range(PER):
                k = i * PER + j
                token = callbacks.register(hit, k)
                extra = callbacks.register(hit, -1)
                assert callbacks.unregister(extra)
                assert not callbacks.unregister(extra)
                kept.append(token)
            return kept, id(callbacks.trampolines(rt))

        results = storm(churn)
        tokens = [t for kept, _ in results for t in kept]
        pending = callbacks.pending()
        # C's view of the trampoline: a bare function pointer, called as CUDA calls it.
        host = rt.cudaHostFn_t(ctypes.cast(callbacks.trampolines(rt).host, ctypes.c_void_p).value)
        half = len(tokens) // 2

        def fire(i):
            # Thread pairs (i, i ^ 1) call the same tokens at the same time.
            pair = i // 2
            for token in tokens[pair::THREADS // 2]:
                host(token)

        storm(fire)
        report(
            unique=len(set(tokens)) == len(tokens) == THREADS * PER,
            trampolines=len({t for _, t in results}),
            pending_before=pending,
            pending_after=callbacks.pending(),
            ran=sorted(set(ran)),
            failures=callbacks.failure_count(),
            lookup=all(isinstance(f.exception, LookupError) for f in callbacks.failures()),
        )
        """,
        {"CUDART_LIBRARY": libraries["CUDART_LIBRARY"]},
    )
    assert values["unique"] is True
    assert values["trampolines"] == 1
    assert values["pending_before"] == THREADS * 200
    assert values["pending_after"] == 0
    assert values["ran"] == [1]
    assert values["failures"] == THREADS * 200  # each token's second call
    assert values["lookup"] is True


def test_first_read_of_a_zstd_fatbin_by_many_threads_finds_its_parameter_types():
    """libzstd is found on the first read of a zstd-compressed image (for its PTX's
    parameter types): a thread arriving while another is still looking for it must not
    take it for missing."""
    values = _storm(
        f"""
        import ctypes.util
        from cudart.kernels import inspect_image
        data = open({str(KERNELS / "kernels_zstd.fatbin")!r}, "rb").read()
        results = storm(lambda i: inspect_image(data).params)
        alone = inspect_image(data).params
        report(alone=alone, same=[r == alone for r in results],
               zstd=ctypes.util.find_library("zstd") is not None)
        """,
        {},
    )
    if not values["zstd"]:
        pytest.skip("no libzstd on this machine")
    assert values["alone"]
    assert values["same"] == [True] * THREADS


def test_host_memory_classes_made_by_many_threads_at_once(libraries):
    """HostMemory's per-size classes, made and trimmed (past 512 sizes) by many threads:
    no thread fails, each object is its size, the table stays bounded."""
    values = _storm(
        """
        import ctypes
        from cudart import _hostmem

        buffer = ctypes.create_string_buffer(4096)
        address = ctypes.addressof(buffer)

        def make(i):
            wrong = 0
            for round_ in range(3):
                for size in range(1 + i, 2000, 3):
                    m = _hostmem.host_memory(address, size)
                    wrong += len(m) != size or int(m) != address
            return wrong

        wrong = storm(make)
        report(wrong=sum(wrong), classes=len(_hostmem._classes),
               limit=_hostmem._MAX_CLASSES)
        """,
        {"CUDART_LIBRARY": libraries["CUDART_LIBRARY"]},
    )
    assert values["wrong"] == 0
    assert 0 < values["classes"] <= values["limit"]


def test_a_module_hands_out_one_function_per_kernel_and_closes_once(libraries):
    """Module.get_function / get_global / a declared signature, first asked by many
    threads: one object per name (so close() reaches each), and close() from many
    threads unloads once. The loader stands for a GPU's (tests/gpu/test_threads_gpu.py
    does this with a real image)."""
    values = _storm(
        """
        from cudart import _serving
        from cudart.kernels import Module

        class Loader:
            route = "library"

            def __init__(self):
                self.closed = 0
                self.asked = 0

            def find(self, name):
                self.asked += 1
                time.sleep(0.001)  # a driver look-up takes a while
                return 0x1000 + len(name)

            def variable(self, name):
                time.sleep(0.001)
                return None, 0x2000, 16

            def names(self):
                return ("k", "kernel")

            def close(self):
                self.closed += 1

        loader = Loader()
        module = Module(_serving.raw_module(), "cubin", b"", loader)

        def ask(i):
            return [id(module.get_function("k")), id(module.get_function("kernel")),
                    id(module.get_function("k", signature="int")), id(module.get_global("g"))]

        results = storm(ask)
        fns = [module.get_function("k"), module.get_function("kernel"),
               module.get_function("k", signature="int")]
        storm(lambda i: module.close())
        stale = []
        for fn in fns:
            try:
                fn.handle
                stale.append(fn.name)
            except ValueError:
                pass
        report(same=[r == results[0] for r in results],
               kept=results[0] == [id(f) for f in fns] + [results[0][3]],
               closed=loader.closed, stale=stale)
        """,
        {"CUDART_LIBRARY": libraries["CUDART_LIBRARY"]},
    )
    assert values["same"] == [True] * THREADS
    assert values["kept"] is True
    assert values["closed"] == 1
    assert values["stale"] == []


SOURCE = r"""
extern "C" __device__ float twice(float x) { return 2.0f * x; }
extern "C" __global__ void scale(float* y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = twice(y[i]);
}
"""


def test_first_compile_and_link_from_many_threads(libraries, tmp_path):
    """cudart.compile (NVRTC loaded, its bindings picked, the caches filled) and
    cudart.link (nvJitLink likewise), first called by several threads together: each gets
    the image one thread compiles afterwards without the caches."""
    values = _storm(
        f"""
        import cudart
        SOURCE = {SOURCE!r}

        def build(i):
            cubin = cudart.compile(SOURCE, arch="sm_90", load=False)
            ltoir = cudart.compile(SOURCE, arch="sm_90", output="ltoir")
            return cubin, ltoir, cudart.link([ltoir], arch="sm_90", load=False)

        results = storm(build, threads=4)
        cubin = cudart.compile(SOURCE, arch="sm_90", load=False, cache=False)
        ltoir = cudart.compile(SOURCE, arch="sm_90", output="ltoir", cache=False)
        linked = cudart.link([ltoir], arch="sm_90", load=False)
        report(cubin=[r[0] == cubin for r in results], ltoir=[r[1] == ltoir for r in results],
               linked=[r[2] == linked for r in results], size=len(linked))
        """,
        {**libraries, "CUDART_KERNEL_CACHE": str(tmp_path / "cache")},
    )
    assert values["cubin"] == [True] * 4
    assert values["ltoir"] == [True] * 4
    assert values["linked"] == [True] * 4
    assert values["size"] > 0


def test_first_access_of_the_driver_api_from_many_threads(libraries, driver_stub):
    """cudart.driver's first names (its version pick, the driver's load, its error
    classes) from many threads, on the stand-in libcuda that fails every call as
    NVIDIA's stub does: every thread sees the same objects and the same error."""
    values = _storm(
        """
        import cudart

        def first(i):
            drv = cudart.driver
            objects = (drv.sys, drv.CUresult, drv.cuInit, drv.CudaDriverErrorStubLibrary)
            try:
                drv.cuInit(0)
                raised = None
            except cudart.CudaDriverError as exc:
                raised = (id(type(exc)), str(exc))
            return [id(o) for o in objects], drv.bindings_version, raised

        results = storm(first)
        alone = first(0)
        report(same=[r == alone for r in results], version=alone[1],
               raised=alone[2] is not None)
        """,
        {
            "CUDART_LIBRARY": libraries["CUDART_LIBRARY"],
            "CUDART_DRIVER_LIBRARY": str(driver_stub(KEY)),
        },
    )
    assert values["same"] == [True] * THREADS
    assert values["version"] == 12090
    assert values["raised"] is True
