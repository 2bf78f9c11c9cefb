"""The driver API (cudart.driver) on a machine without an NVIDIA driver: loading,
which cuda.h version serves, errors, the per-thread switch. libcuda.so.1 is absent
here; where a test needs one it is the stand-in rendered from the version's model
(generator/render/stub.py, built by the `driver_stub` fixture), whose every function
returns CUDA_ERROR_STUB_LIBRARY as NVIDIA's stub does. The real driver judges the rest
on the GPU machine (tests/gpu/). Each case runs in a fresh interpreter, several checks
to one, since a process loads one libcuda once.
"""

from __future__ import annotations

import ctypes
import json
import re
from itertools import pairwise

import pytest
from suite import REPO, run_python, version_keys

from generator.render.stub import RECORD_SIZE, RECORD_SYMBOL, STUB_STATUS, stub_symbols


def _newest_of_each_major() -> list[str]:
    newest: dict[str, str] = {}
    for key in version_keys():  # ascending
        newest[key.split(".")[0]] = key
    return list(newest.values())


KEYS = _newest_of_each_major()


def _number(key: str) -> int:
    major, minor = key.split(".")
    return int(major) * 1000 + int(minor) * 10


def _generated_driver_versions() -> list[int]:
    """The driver modules this checkout has (cudart.driver_<ver>: the table of views)."""
    from cudart._views import versions

    return versions("driver")


def _require_module(key: str) -> None:
    if _number(key) not in _generated_driver_versions():
        pytest.skip(f"cudart.driver_{_number(key)} is not generated in this checkout")


def _probe(code: str, env: dict[str, str]) -> dict:
    return json.loads(run_python(code, env=env).stdout.strip().splitlines()[-1])


def _system_has_libcuda() -> bool:
    # In a fresh interpreter: once a stub is loaded here, dlopen("libcuda.so.1") finds
    # it by its soname.
    code = "import ctypes; ctypes.CDLL('libcuda.so.1')"
    return run_python(code, check=False).returncode == 0


# ---------------------------------------------------------------- the stub itself


@pytest.mark.parametrize("key", KEYS)
def test_the_stub_exports_every_symbol_the_module_binds_and_each_says_stub(driver_stub, key):
    # NVIDIA's stub, from the model: each legacy and per-thread symbol the raw module
    # may bind is there, with the soname the system loader finds, and returns 34.
    _require_module(key)
    import importlib

    raw = importlib.import_module(f"cudart.driver_{_number(key)}")  # loads no library
    wanted = set(raw.SYMBOLS_LEGACY.values()) | set(raw.SYMBOLS_PER_THREAD.values())
    model = driver_stub.model(key)
    assert wanted <= set(stub_symbols(model))
    stub_value = next(k.value for e in model.enums for k in e.enumerators if k.name == STUB_STATUS)
    assert stub_value == raw.CUresult.CUDA_ERROR_STUB_LIBRARY == 34
    lib = ctypes.CDLL(str(driver_stub(key)))
    # Called without arguments: the stub's functions read none of theirs (each only
    # returns), and under the SysV ABIs the caller owns the argument registers.
    statuses = {}
    for symbol in sorted(wanted):
        fn = lib[symbol]
        fn.restype = ctypes.c_int
        statuses[symbol] = fn()
    assert set(statuses.values()) == {stub_value}, {s: v for s, v in statuses.items() if v != 34}
    assert driver_stub.soname == "libcuda.so.1"
    assert driver_stub(key).name == "libcuda.so.1"
    assert not driver_stub(key).is_relative_to(REPO)


def test_the_stub_variants_report_a_version_and_leave_out_symbols(driver_stub):
    key = KEYS[0]
    lib = ctypes.CDLL(str(driver_stub(key, driver_version=12345, omit=("cuMemAlloc_v2",))))
    version = ctypes.c_int()
    assert lib.cuDriverGetVersion(ctypes.byref(version)) == 0 and version.value == 12345
    assert lib.cuDriverGetVersion(None) == 1  # CUDA_ERROR_INVALID_VALUE, as the driver's
    assert lib.cuInit(0) == 34
    assert not hasattr(lib, "cuMemAlloc_v2") and hasattr(lib, "cuMemFree_v2")
    faithful = ctypes.CDLL(str(driver_stub(key)))
    assert faithful.cuDriverGetVersion(ctypes.byref(version)) == 34


def test_the_stub_is_rendered_from_the_model_of_cuda_h(driver_stub, header_sets):
    from dataclasses import replace

    from models import model_for

    from generator.render.stub import StubError, render_stub

    model = driver_stub.model(KEYS[0])
    # The status is the model's enumerator's value, not a number of the renderer's.
    renumbered = replace(
        model,
        enums=[
            replace(
                e,
                enumerators=tuple(
                    replace(k, value=77) if k.name == STUB_STATUS else k for k in e.enumerators
                ),
            )
            for e in model.enums
        ],
    )
    assert "#define STUB_STATUS ((CUresult)34)" in render_stub(model)
    assert "#define STUB_STATUS ((CUresult)77)" in render_stub(renumbered)
    with pytest.raises(StubError, match="cuNoSuchFunction"):
        render_stub(model, omit=("cuNoSuchFunction",))
    # The runtime's headers have no CUresult: no stub libcuda from them.
    with pytest.raises(StubError, match=STUB_STATUS):
        render_stub(model_for(header_sets[KEYS[0]]))


# ---------------------------------------------------------------- without libcuda


_WITHOUT = """
import importlib, json, cudart
from cudart import driver
out = {"has_cuInit": "cuInit" in dir(driver), "sys": driver.sys.__name__,
       "version": driver.bindings_version, "runtime": cudart.sys.CUDA_VERSION}
try:
    driver.cuInit(0)
except cudart.DriverNotFoundError as exc:
    out["error"] = str(exc)
    out["is_library_error"] = isinstance(exc, cudart.LibraryNotFoundError)
print(json.dumps(out))
"""


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("where", ["/nonexistent/libcuda.so.1", None])
def test_without_libcuda_the_module_imports_and_a_call_says_a_driver_is_needed(
    header_sets, key, where
):
    _require_module(key)
    if where is None and _system_has_libcuda():
        pytest.skip("this machine has a libcuda.so.1")
    env = {"CUDART_LIBRARY": str(header_sets[key].library)}
    if where is not None:
        env["CUDART_DRIVER_LIBRARY"] = where
    out = _probe(_WITHOUT, env)
    assert out["has_cuInit"]
    # Where a runtime loads, the driver's headers are the runtime's version's.
    assert out["version"] == out["runtime"] == _number(key)
    assert out["sys"] == f"cudart.driver_{_number(key)}"
    assert "libcuda.so.1" in out["error"] and "NVIDIA driver" in out["error"]
    assert out["is_library_error"]
    if where is not None:
        assert where in out["error"]


def test_without_any_library_the_driver_modules_still_import_and_a_call_says_why():
    versions = _generated_driver_versions()
    assert versions, "no driver module generated"
    code = (
        "import importlib, json, cudart\n"
        f"for v in {versions}:\n"
        "    importlib.import_module(f'cudart.driver_{v}')\n"
        "from cudart import driver\n"
        "try:\n"
        "    driver.cuInit\n"
        "except cudart.DriverNotFoundError as exc:\n"
        "    print(json.dumps(str(exc)))\n"
    )
    env = {"CUDART_LIBRARY": "/nonexistent/libcudart.so", "CUDART_DRIVER_LIBRARY": "/nonexistent"}
    message = json.loads(run_python(code, env=env).stdout)
    assert "libcuda.so.1" in message and "NVIDIA driver" in message


def test_without_any_library_dir_lists_the_newest_bindings_names():
    # Nothing picks the serving version without a driver or a runtime: dir() lists what
    # the newest bindings would serve, and a lookup still says what is missing.
    newest = _generated_driver_versions()[-1]
    code = (
        "import importlib, json, cudart\n"
        "from cudart import driver\n"
        "names = dir(driver)\n"
        f"raw = importlib.import_module('cudart.driver_{newest}')\n"
        f"checked = importlib.import_module('cudart.driver_checked_{newest}')\n"
        "newest = {n for m in (raw, checked) for n in vars(m) if not n.startswith('_')}\n"
        "try:\n"
        "    driver.cuInit\n"
        "    error = None\n"
        "except cudart.DriverNotFoundError as exc:\n"
        "    error = str(exc)\n"
        "print(json.dumps({'names': names, 'newest': sorted(newest), 'error': error}))\n"
    )
    env = {"CUDART_LIBRARY": "/nonexistent/libcudart.so", "CUDART_DRIVER_LIBRARY": "/nonexistent"}
    out = json.loads(run_python(code, env=env).stdout)
    assert out["names"] == sorted({*out["newest"], "bindings_version", "sys"})
    assert {"cuInit", "cuMemAlloc", "CUresult", "CudaDriverError"} <= set(out["names"])
    assert out["error"] is not None and "libcuda.so.1" in out["error"]


# ---------------------------------------------------------------- with the stub


_STUB = """
import ctypes, json, cudart
from cudart import driver, _loader
from cudart.errors import CudaDriverError
out = {"version": driver.bindings_version, "runtime": cudart.sys.CUDA_VERSION,
       "sys": driver.sys.__name__, "path": _loader.load_driver().path}
try:
    driver.cuInit(0)
except CudaDriverError as exc:
    out.update(cls=type(exc).__name__, same_class=type(exc) is driver.CudaDriverErrorStubLibrary,
               code=int(exc.code), is_member=exc.code is driver.CUresult.CUDA_ERROR_STUB_LIBRARY,
               name=exc.name, message=exc.message, text=str(exc))
log = (ctypes.c_char * SIZE).in_dll(_loader.load_driver().cdll, "LOG")
out["calls"] = log.value.decode().split()
print(json.dumps(out))
"""


@pytest.mark.parametrize("key", KEYS)
def test_a_call_through_the_stub_raises_its_status_and_the_runtime_picks_the_headers(
    header_sets, driver_stub, key
):
    _require_module(key)
    stub = driver_stub(key, record=True)
    code = _STUB.replace("SIZE", str(RECORD_SIZE)).replace("LOG", RECORD_SYMBOL)
    out = _probe(
        code, {"CUDART_LIBRARY": str(header_sets[key].library), "CUDART_DRIVER_LIBRARY": str(stub)}
    )
    assert out["path"] == str(stub)
    assert out["version"] == out["runtime"] == _number(key)
    assert out["sys"] == f"cudart.driver_{_number(key)}"
    assert out["cls"] == "CudaDriverErrorStubLibrary" and out["same_class"]
    assert out["code"] == 34 and out["is_member"]
    # The stub's cuGetErrorName and cuGetErrorString fail too: the enumerator's name
    # stands, and the header's description of it is the message.
    assert out["name"] == "CUDA_ERROR_STUB_LIBRARY"
    doc = next(
        k.doc for e in driver_stub.model(key).enums for k in e.enumerators if k.name == STUB_STATUS
    )
    assert "stub library" in doc and out["message"] == doc
    assert out["text"] == f"CUDA_ERROR_STUB_LIBRARY (34): {doc}"
    # Loading asks the version; then the call, and the error path asks for the name.
    assert out["calls"][:2] == ["cuDriverGetVersion", "cuInit"]
    assert "cuGetErrorName" in out["calls"][2:]


# ---------------------------------------------------------------- no runtime


_NO_RUNTIME = """
import json, cudart
from cudart import driver
try:
    out = {"version": driver.bindings_version, "sys": driver.sys.__name__}
except cudart.BindingsVersionError as exc:
    out = {"error": str(exc)}
print(json.dumps(out))
"""


def test_without_a_runtime_a_driver_that_cannot_say_its_version_is_a_clear_error(
    driver_stub,
):
    stub = driver_stub(KEYS[-1])
    out = _probe(
        _NO_RUNTIME,
        {"CUDART_LIBRARY": "/nonexistent/libcudart.so", "CUDART_DRIVER_LIBRARY": str(stub)},
    )
    assert "cannot report its version" in out["error"], out
    assert str(stub) in out["error"]


def _reported_versions() -> list[tuple[int, int | None]]:
    """(version the driver reports, the module expected: the newest not newer)."""
    versions = _generated_driver_versions()
    cases = [(v, v) for v in (versions[0], versions[-1])]
    cases.append((versions[-1] // 1000 * 1000 + 990, versions[-1]))  # a newer driver
    cases.append((versions[0] - 10, None))  # older than every module
    between = [(a + 10, a) for a, b in pairwise(versions) if b - a > 10]
    return cases + between[:1]


def test_without_a_runtime_the_newest_module_not_newer_than_the_driver_serves(driver_stub):
    assert len(_generated_driver_versions()) >= 2, "needs two driver modules to choose among"
    for reported, expected in _reported_versions():
        stub = driver_stub(KEYS[-1], driver_version=reported)
        out = _probe(
            _NO_RUNTIME,
            {"CUDART_LIBRARY": "/nonexistent/libcudart.so", "CUDART_DRIVER_LIBRARY": str(stub)},
        )
        if expected is None:
            assert "no driver API bindings fit" in out["error"], (reported, out)
            continue
        assert out == {"version": expected, "sys": f"cudart.driver_{expected}"}, reported


# ---------------------------------------------------------------- missing functions


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("reports", [True, False], ids=["version", "no version"])
def test_a_function_the_driver_lacks_names_the_headers_that_declare_it(
    header_sets, driver_stub, key, reports
):
    _require_module(key)
    version = _number(key) if reports else None
    stub = driver_stub(key, driver_version=version, omit=("cuMemAlloc_v2",))
    code = (
        "import json, cudart\n"
        "from cudart import driver\n"
        "out = {}\n"
        "for name, call in (('checked', lambda: driver.cuMemAlloc(16)),\n"
        "                   ('raw', lambda: driver.sys.cuMemAlloc(None, 16))):\n"
        "    try:\n"
        "        call()\n"
        "    except cudart.FunctionNotFoundError as exc:\n"
        "        out[name] = str(exc)\n"
        "try:\n"
        "    driver.cuInit(0)\n"
        "except cudart.CudaDriverError as exc:\n"
        "    out['cuInit'] = exc.name\n"
        "print(json.dumps(out))\n"
    )
    out = _probe(
        code, {"CUDART_LIBRARY": str(header_sets[key].library), "CUDART_DRIVER_LIBRARY": str(stub)}
    )
    loaded = f"libcuda {key}" if reports else "libcuda of an unknown version"
    for layer in ("checked", "raw"):
        message = out[layer]
        assert message.startswith("cuMemAlloc (symbol cuMemAlloc_v2) is declared by"), message
        assert f"CUDA {key} headers" in message and "NVIDIA driver" in message
        assert f"the loaded {loaded} ({stub})" in message
    assert out["cuInit"] == "CUDA_ERROR_STUB_LIBRARY"  # the rest of the driver still binds


# ---------------------------------------------------------------- the per-thread switch


_PER_THREAD = """
import ctypes, json, cudart
from cudart import driver, _loader
log = (ctypes.c_char * SIZE).in_dll(_loader.load_driver().cdll, "LOG")
log.value = b""  # (loading asked cuDriverGetVersion)
out = {"symbol": driver.sys.SYMBOLS["cuMemcpyHtoDAsync"],
       "map": "per-thread" if driver.sys.SYMBOLS is driver.sys.SYMBOLS_PER_THREAD else
              "legacy" if driver.sys.SYMBOLS is driver.sys.SYMBOLS_LEGACY else "neither",
       "raw_status": driver.sys.cuMemcpyHtoDAsync(0, None, 0, None)}
driver.sys.cuMemcpy(0, 0, 0)  # a _ptds symbol (the null stream, synchronous)
out["raw"] = log.value.decode().split()
log.value = b""
try:
    driver.cuMemcpyHtoDAsync(0, b"ab", 2, None)
except driver.CudaDriverErrorStubLibrary:
    out["checked"] = log.value.decode().split()
print(json.dumps(out))
"""


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize(
    "switch",
    [
        {},
        {"CUDART_PER_THREAD_DEFAULT_STREAM": "1"},
        {"CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM": "1"},
    ],
    ids=["legacy", "ours", "cuda-python's"],
)
def test_the_per_thread_switch_calls_the_drivers_per_thread_symbols(
    header_sets, driver_stub, key, switch
):
    _require_module(key)
    stub = driver_stub(key, record=True)
    code = _PER_THREAD.replace("SIZE", str(RECORD_SIZE)).replace("LOG", RECORD_SYMBOL)
    env = {"CUDART_LIBRARY": str(header_sets[key].library), "CUDART_DRIVER_LIBRARY": str(stub)}
    out = _probe(code, env | switch)
    expected = "cuMemcpyHtoDAsync_v2_ptsz" if switch else "cuMemcpyHtoDAsync_v2"
    assert out["symbol"] == expected
    assert out["map"] == ("per-thread" if switch else "legacy")
    assert out["raw_status"] == 34
    assert out["raw"] == [expected, "cuMemcpy_ptds" if switch else "cuMemcpy"]
    assert out["checked"][0] == expected
    # The error path asks the driver for the name and the message; nothing else ran.
    assert set(out["checked"][1:]) <= {"cuGetErrorName", "cuGetErrorString"}
    assert re.fullmatch(r"cuMemcpyHtoDAsync_v2(_ptsz)?", out["checked"][0])
