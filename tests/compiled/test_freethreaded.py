"""The compiled backend and free threading (issue 25): which build a free-threaded Python
(3.13t) takes, whether the GIL stays off with it, and the C state under many threads.

A free-threaded interpreter must never load the GIL build's limited-API extension
(`.abi3.so`, which it still lists among its suffixes and which crashes in its init
there): ctypes serves, with a warning naming the file. Its own build (setup.py under
3.13t: `.cpython-313t-*.so`) declares itself GIL-free (Py_mod_gil). The stress tests run
in a fresh interpreter, so that the threads' first calls fill the C caches together
(the by-value record classes, the per-code error classes), under the interpreter
running the suite and under 3.13t (tests/support/freethreaded_support.py says which).
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import needs
import pytest
from fast_support import extension, skip_or_fail_missing
from freethreaded_support import (
    RUNNING_FREE_THREADED,
    freethreaded_python,
    freethreaded_suffix,
)
from suite import REPO, run_python

pytestmark = pytest.mark.backend

# The runtime these tests load (every machine running the suite has its wheel cached).
RUNTIME = "12.5"
RUNTIME_MODULE = "_fast_12050"
# The extension holding it (one per family and major: generator/render/compiled.py).
RUNTIME_EXTENSION = "_fast_12"
LIMITED_API_SUFFIX = ".abi3.so"


def _runtime_env(header_sets, **extra: str) -> dict[str, str]:
    return {"CUDART_LIBRARY": str(header_sets[RUNTIME].library), **extra}


def _report(proc) -> dict:
    """The child's last stdout line (JSON), after checking it exited by itself: a crash
    (a signal: faulthandler's trace on stderr) or an exception fails here."""
    assert proc.returncode == 0, f"exit {proc.returncode}:\n{proc.stdout}\n{proc.stderr[-4000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------- the build a 3.13t takes


def _tree_with_only_abi3_builds(root: Path) -> Path:
    """The package as the GIL build left it, linked file by file into `root`: every
    extension of its own interpreter's build left out, the .abi3.so ones kept; a link
    of the checkout's (cudart/_generated/, generated/ itself) as one link to where it
    points."""
    for source in (REPO / "cudart").rglob("*"):
        if source.is_symlink() and source.is_dir():
            target = root / source.relative_to(REPO)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(source.resolve())
            continue
        if source.is_dir() or "__pycache__" in source.parts:
            continue
        if source.name.endswith(".so") and not source.name.endswith(LIMITED_API_SUFFIX):
            continue
        target = root / source.relative_to(REPO)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(source)
    return root


ABI3_CHILD = r"""
import json, sys, warnings
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    import cudart
    versions = [cudart.cudaRuntimeGetVersion() for _ in range(3)]
    backend = cudart.backend()
    try:
        cudart.cudaGetDevice()
        raised = None
    except cudart.CudaError as exc:
        raised = type(exc).__name__
print(json.dumps({
    "versions": versions, "backend": backend, "raised": raised,
    "gil": sys._is_gil_enabled(),
    "warnings": [(w.category.__name__, str(w.message)) for w in caught],
}))
"""


def test_a_free_threaded_python_takes_ctypes_over_an_abi3_build(tmp_path, header_sets):
    """Only the GIL build's .abi3.so present: 3.13t imports cudart and calls on ctypes,
    says why once (a warning naming the file), and does not crash (before: SIGSEGV in
    PyInit of the abi3 module, at the first call)."""
    python = freethreaded_python()
    abi3 = REPO / "cudart" / f"{RUNTIME_EXTENSION}{LIMITED_API_SUFFIX}"
    if not abi3.exists():
        skip_or_fail_missing()
    tree = _tree_with_only_abi3_builds(tmp_path / "tree")
    env = _runtime_env(header_sets, PYTHONPATH=str(tree), CUDART_BACKEND="")
    found = _report(run_python(ABI3_CHILD, env, python=python, check=False, cwd=tmp_path))
    assert found["versions"] == [12050] * 3
    assert found["backend"] == "ctypes" and found["raised"] and found["gil"] is False
    refused = str(tree / "cudart" / abi3.name)
    about = [m for c, m in found["warnings"] if c == "RuntimeWarning" and refused in m]
    assert len(about) == 1, found["warnings"]  # once, however often the bindings are used
    assert "free-threaded" in about[0] and "ctypes" in about[0]


def test_a_free_threaded_python_refuses_an_abi3_build_when_compiled_is_asked(tmp_path, header_sets):
    python = freethreaded_python()
    if not (REPO / "cudart" / f"{RUNTIME_EXTENSION}{LIMITED_API_SUFFIX}").exists():
        skip_or_fail_missing()
    tree = _tree_with_only_abi3_builds(tmp_path / "tree")
    env = _runtime_env(header_sets, PYTHONPATH=str(tree), CUDART_BACKEND="compiled")
    proc = run_python(
        "import cudart; cudart.cudaRuntimeGetVersion()",
        env,
        python=python,
        check=False,
        cwd=tmp_path,
    )
    assert proc.returncode == 1, f"exit {proc.returncode}:\n{proc.stderr[-3000:]}"
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: $CUDART_BACKEND=compiled, but "), last
    # The first extension the import asks for is refused (cudart._fields, for the records,
    # or the runtime's): the message names that file, in the tree, as an abi3 build.
    named = re.search(r"(/\S+" + re.escape(LIMITED_API_SUFFIX) + ")", last)
    assert named, last
    refused = Path(named.group(1))
    assert refused.parent == tree / "cudart" and refused.exists(), last
    assert "free-threaded" in last


# ---------------------------------------------------------------- the GIL stays off

GIL_CHILD = r"""
import ctypes, importlib, json, sys
names = json.loads(sys.argv[1])
import cudart
from cudart import _loader
from cudart.sys_12050 import cudaLaunchConfig_t
calls = {}
for name in names:
    module = importlib.import_module(name)
    if hasattr(module, "view"):  # a compiled backend's extension: one of its views
        module = module.view(12050 if 12050 in module.VERSIONS else module.VERSIONS[0])
    if name.endswith("_fastlaunch"):
        config, func = cudaLaunchConfig_t(), ctypes.c_void_p(1)
        launcher = module.Launcher(1, config, ctypes.addressof(config), func,
                                   ctypes.addressof(func), print, print)
        launcher.prime(None)
        calls[name] = launcher.primed
    elif "_driver_" in name:
        calls[name] = module.address("cuInit")  # unbound: no libcuda here
    elif name.endswith("_fields"):
        # The record member descriptor in force is this build's; a store goes through it.
        member = cudaLaunchConfig_t.__dict__["dynamicSmemBytes"]
        config = cudaLaunchConfig_t()
        config.dynamicSmemBytes = 2**64 - 1
        calls[name] = [type(member) is module.IntegerField, config.dynamicSmemBytes]
    else:
        handle = _loader.load_runtime().cdll._handle
        calls[name] = module.bind("cudaGetDevice", "cudaGetDevice", handle)
        if module.CUDA_VERSION == 12050:
            module.bind("cudaRuntimeGetVersion", "cudaRuntimeGetVersion", handle)
            version = ctypes.c_int()
            calls[name] = (module.cudaRuntimeGetVersion(ctypes.byref(version)), version.value)
try:
    cudart.cudaGetDevice()
except cudart.CudaError:
    pass
print(json.dumps({"gil": sys._is_gil_enabled(), "backend": cudart.backend(),
                  "files": [sys.modules[n].__file__ for n in names], "calls": calls}))
"""


def test_every_free_threaded_build_keeps_the_gil_off(header_sets):
    """Under 3.13t, importing each of its own builds and calling through it leaves
    `sys._is_gil_enabled()` False (a module without Py_mod_gil turns the GIL on, with a
    RuntimeWarning; an abi3 one crashes)."""
    python = freethreaded_python()
    suffix = freethreaded_suffix()
    builds = sorted(p for p in (REPO / "cudart").rglob(f"*{suffix}"))
    names = [".".join(p.relative_to(REPO).with_name(p.name[: -len(suffix)]).parts) for p in builds]
    if f"cudart.{RUNTIME_EXTENSION}" not in names:
        if RUNNING_FREE_THREADED:  # make test-freethreaded built it first: a broken build
            needs.missing(f"no build of the compiled backend for {python} ({suffix})")
        # `make test` (a GIL build) runs before 3.13t's own build is made in CI.
        pytest.skip(
            f"no build of the compiled backend for {python}: run `{python} setup.py "
            "build_ext --inplace`"
        )
    env = _runtime_env(header_sets, CUDART_BACKEND="")
    found = _report(
        run_python(
            f"import sys; sys.argv[1:] = [{json.dumps(json.dumps(names))}]\n" + GIL_CHILD,
            env,
            python=python,
            check=False,
        )
    )
    assert found["files"] == [str(p) for p in builds]
    assert found["calls"][f"cudart.{RUNTIME_EXTENSION}"] == [0, 12050]
    if "cudart._fields" in names:
        assert found["calls"]["cudart._fields"] == [True, 2**64 - 1]
    assert found["backend"] == "compiled"
    assert found["gil"] is False


# ---------------------------------------------------------------- the C state under threads

STRESS_CHILD = r"""
import ctypes, json, sys, threading
import cudart
from cudart import _backend, _checked, _loader, _serving

THREADS, ROUNDS = 16, 200
checked, raw = _serving.checked_module(), _serving.raw_module()
reference = vars(checked).get("_reference", {})
# Checked functions that fail on a machine without a GPU, each with its arguments.
CALLS = {"cudaGetDevice": (), "cudaGetDeviceCount": (), "cudaDeviceSynchronize": (),
         "cudaSetDevice": (0,), "cudaMalloc": (16,), "cudaStreamCreate": (),
         "cudaEventCreate": (), "cudaMemGetInfo": ()}
CALLS = {n: a for n, a in CALLS.items() if hasattr(checked, n)}
start = threading.Barrier(THREADS)
seen = [dict() for _ in range(THREADS)]
launch_status = [set() for _ in range(THREADS)]
refusals = [set() for _ in range(THREADS)]
versions = [set() for _ in range(THREADS)]
failures = []


def outcome(call):
    try:
        call()
    except Exception as exc:  # noqa: BLE001 - compared below
        cls = type(exc)
        return (cls.__module__, cls.__qualname__, repr(exc.args), str(exc),
                isinstance(exc, cudart.CudaError))
    return "returned"


class NotDim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


def worker(k):
    try:
        handle = _loader.load_runtime().cdll._handle
        fast = _backend.compiled_module(raw.CUDA_VERSION)
        version = ctypes.c_int()
        start.wait()  # every first call at once: the caches fill together
        for r in range(ROUNDS):
            for name, args in CALLS.items():
                got = outcome(lambda: getattr(checked, name)(*args))
                seen[k].setdefault(name, set()).add(got)
            # A record by value (dim3): its class looked up on first use.
            launch_status[k].add(raw.cudaLaunchKernel(None, raw.dim3(1, 1, 1),
                                                      raw.dim3(2, 1, 1), None, 0, None))
            refusals[k].add(outcome(lambda: raw.cudaLaunchKernel(
                None, NotDim3(), raw.dim3(), None, 0, None)))
            # bind() of the function other threads call through, meanwhile; and
            # checked() again (a reload of the checked module), which replaces what
            # the compiled functions read and empties the error cache under them.
            if fast is not None and k % 4 == 0:
                assert fast.bind("cudaRuntimeGetVersion", "cudaRuntimeGetVersion", handle)
            if fast is not None and k == 1:
                fast.checked(reference, _checked, vars(checked))
            versions[k].add((raw.cudaRuntimeGetVersion(ctypes.byref(version)), version.value))
            versions[k].add(checked.cudaRuntimeGetVersion())
    except BaseException as exc:  # noqa: BLE001 - reported
        failures.append(repr(exc))
        start.abort()


workers = [threading.Thread(target=worker, args=(k,)) for k in range(THREADS)]
for w in workers:
    w.start()
for w in workers:
    w.join()
# What the Python checked functions (the references) raise, asked after the stress.
expected = {n: outcome(lambda: (reference.get(n) or getattr(checked, n))(*a))
            for n, a in CALLS.items()}
mismatches = [(n, sorted(map(str, s)), str(expected[n]))
              for k in range(THREADS) for n, s in seen[k].items() if s != {expected[n]}]
print(json.dumps({
    "backend": cudart.backend(),
    "compiled": sorted(n for n in CALLS if type(getattr(checked, n)).__name__
                       == "compiled_checked_function"),
    "gil": getattr(sys, "_is_gil_enabled", lambda: True)(),
    "failures": failures, "mismatches": mismatches[:5],
    "launch": sorted(set().union(*launch_status)),
    "refusals": sorted(map(str, set().union(*refusals))),
    "versions": sorted(map(str, set().union(*versions))),
}))
"""


def _stress_python(which: str) -> str:
    if which == "this":
        return sys.executable
    if RUNNING_FREE_THREADED:
        pytest.skip("the suite itself runs free-threaded: 'this' covers it")
    return freethreaded_python()


@pytest.mark.parametrize("which", ["this", "free-threaded"])
def test_threads_filling_the_c_caches_together_raise_what_python_raises(header_sets, which):
    """16 threads released at once in a fresh process: the compiled checked functions'
    failures (each code's class and arguments cached on first use), a record by value
    (its class cached on first use) and its refusal, bind() of a function other threads
    call through, checked() run again (the error cache emptied under the calls): every
    outcome is the Python reference's, nothing crashes, and a
    free-threaded interpreter keeps its GIL off."""
    python = _stress_python(which)
    forced = os.environ.get("CUDART_BACKEND", "").strip().lower()
    # The allocator's debug hooks overwrite freed memory: a use after free crashes.
    env = _runtime_env(header_sets, PYTHONMALLOC="debug")
    found = _report(run_python(STRESS_CHILD, env, python=python, check=False))
    if forced != "ctypes" and found["backend"] != "compiled":
        if which == "this" or RUNNING_FREE_THREADED:
            needs.compiled_backend(found["backend"], python)
        # 3.13t's own build is made by `make test-freethreaded`, after `make test` in
        # CI; there the suite runs under 3.13t, and "this" above fails without it.
        pytest.skip(f"no compiled backend built for {python}: run its setup.py build_ext")
    assert not found["failures"], found["failures"]
    assert not found["mismatches"], found["mismatches"]
    if found["backend"] == "compiled":
        assert len(found["compiled"]) >= 5, found["compiled"]
    assert len(found["launch"]) == 1 and found["launch"][0] != 0
    assert len(found["refusals"]) == 1 and "expected dim3 instance" in found["refusals"][0]
    assert found["versions"] == ["(0, 12050)", "12050"]
    if which == "free-threaded" or RUNNING_FREE_THREADED:
        assert found["gil"] is False


# ---------------------------------------------------------------- one interpreter

SUBINTERPRETER_CHILD = r"""
import importlib, json, sys
try:
    import _interpreters as interpreters  # 3.13
except ImportError:
    import _xxsubinterpreters as interpreters  # 3.11, 3.12
import cudart._fast_12050, cudart.kernels._fastlaunch  # the main interpreter's
found = {}
for name in ("cudart._fast_12050", "cudart.kernels._fastlaunch"):
    other = interpreters.create()
    code = f"import sys; sys.path[:0] = {sys.path!r}; import {name}"
    try:
        failed = interpreters.run_string(other, code)  # 3.13 returns the failure
    except Exception as exc:  # noqa: BLE001 - 3.11, 3.12 raise it
        failed = exc
    found[name] = str(failed or "")
    interpreters.destroy(other)
print(json.dumps(found))
"""


def test_an_extension_loads_in_the_main_interpreter_only():
    """The extensions' state is static (multi-phase init, one interpreter): another
    interpreter's import raises ImportError instead of sharing it (a single-phase
    module was imported there)."""
    extension("cudart._fast_12050")
    extension("cudart.kernels._fastlaunch")
    found = _report(run_python(SUBINTERPRETER_CHILD, check=False))
    # Refused by our exec (the limited API of 3.11) or by CPython for the module's
    # Py_mod_multiple_interpreters slot (3.12 and later, full API).
    said = ("main interpreter only", "does not support loading in subinterpreters")
    for name, failure in found.items():
        assert "ImportError" in failure and any(s in failure for s in said), (name, failure)
