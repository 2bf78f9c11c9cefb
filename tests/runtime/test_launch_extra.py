"""The driver launches' `extra` as an argument buffer (issue 33 item 15), without a GPU.

cuda.h's `extra` is a NULL-terminated option list: {CU_LAUNCH_PARAM_BUFFER_POINTER, buf,
CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END}, buf the kernel's parameters
packed at their offsets. The checked cuLaunchKernel and cuLaunchKernelEx take the buffer
(anything with the buffer protocol, a ctypes Structure or array) and build that list;
the option list the caller built, an int address and None pass as before. What C
received is read from the stand-in libcuda (generator/render/stub.py, `record`: it logs
the five pointers, the size_t and the buffer's bytes), in a fresh interpreter on the
backend in force (make test-ctypes runs this on ctypes too). The GPU launches it both
ways in tests/gpu/test_driver_gpu.py.
"""

from __future__ import annotations

import json

import pytest
from suite import run_python, version_keys

from generator.render.stub import ARGUMENTS_SYMBOL, RECORD_SIZE

pytestmark = pytest.mark.backend


def _newest_of_each_major() -> list[str]:
    newest: dict[str, str] = {}
    for key in version_keys():  # ascending
        newest[key.split(".")[0]] = key
    return list(newest.values())


KEYS = _newest_of_each_major()

_PROBE = """
import ctypes, json, struct
import cudart
from cudart import _backend, _loader, driver

lib = _loader.load_driver().cdll
log = (ctypes.c_char * LOG_SIZE).in_dll(lib, "LOG_NAME")
out = {"backend": _backend.backend(), "markers": [driver.sys.CU_LAUNCH_PARAM_BUFFER_POINTER,
       driver.sys.CU_LAUNCH_PARAM_BUFFER_SIZE, driver.sys.CU_LAUNCH_PARAM_END]}


def seen(fn, *args):
    ctypes.memset(log, 0, LOG_SIZE)
    try:
        fn(*args)
        outcome = "returned"
    except Exception as exc:
        outcome = type(exc).__name__ + ": " + str(exc)
    return {"outcome": outcome, "c": log.value.decode()}


def launch(extra, params=None):
    return seen(driver.cuLaunchKernel, 0x1234, 2, 1, 1, 32, 1, 1, 0, None, params, extra)


class Axpy(ctypes.Structure):  # (float a, float *x, float *y, int n): 32 with tail padding
    _fields_ = [("a", ctypes.c_float), ("x", ctypes.c_void_p), ("y", ctypes.c_void_p),
                ("n", ctypes.c_int)]


packed = bytearray(struct.pack("=f4xQQi", 2.0, 0x10, 0x20, 4))  # the 28 bytes C reads
record = Axpy(2.0, 0x10, 0x20, 4)
out["packed"] = packed.hex()
out["packed_at"] = ctypes.addressof((ctypes.c_char * len(packed)).from_buffer(packed))
out["record"] = bytes(record).hex()
out["record_at"] = ctypes.addressof(record)
out["bytearray"] = launch(packed)
out["bytes"] = launch(bytes(packed))
out["memoryview"] = launch(memoryview(packed)[:12])
out["structure"] = launch(record)
out["empty"] = launch(b"")
size = ctypes.c_size_t(len(packed))
own = (ctypes.c_void_p * 5)(1, out["packed_at"], 2, ctypes.addressof(size), 0)
out["own"] = [own[i] or 0 for i in range(5)]
out["own_list"] = launch(own)
out["address"] = launch(ctypes.addressof(own))
out["none"] = launch(None)
out["zero"] = launch(0)
config = driver.sys.CUlaunchConfig(gridDimX=2, gridDimY=1, gridDimZ=1, blockDimX=32,
                                   blockDimY=1, blockDimZ=1)
out["ex"] = seen(driver.cuLaunchKernelEx, config, 0x1234, None, packed)
# Refused before C.
out["str"] = launch("abc")
out["float"] = launch(1.5)
out["object"] = launch(object())
out["negative"] = launch(-1)
out["handle"] = launch(driver.CUevent(0x5000))
out["both"] = launch(packed, 0x5000)
out["both_list"] = launch(own, 0x5000)
out["both_ex"] = seen(driver.cuLaunchKernelEx, config, 0x1234, 0x5000, packed)
class Device:
    __cuda_array_interface__ = {"shape": (28,), "typestr": "|u1", "data": (0x7000, False),
                                "version": 3}
out["device"] = launch(Device())
print(json.dumps(out))
"""


def _fields(line: str) -> dict[str, str]:
    """`symbol name=value ...` -> {"symbol": symbol, name: value}."""
    symbol, *rest = line.split(" ")
    return {"symbol": symbol} | dict(item.split("=", 1) for item in rest)


def _span_queries(c: str) -> list[dict[str, str]]:
    """The cuFuncGetParamInfo calls C received: the checked layer asks the kernel's
    parameters' span (the stand-in answers CUDA_ERROR_STUB_LIBRARY: no span, so the
    buffer's own size is passed)."""
    return [_fields(line) for line in c.splitlines() if line.startswith("cuFuncGetParamInfo ")]


def _options(c: str) -> tuple[list[int], dict[str, str]]:
    lines = [line for line in c.splitlines() if not line.startswith("cuFuncGetParamInfo ")]
    # One launch reached C; then the error path asked the stub's status its name.
    assert {_fields(line)["symbol"] for line in lines[1:]} <= {"cuGetErrorName", "cuGetErrorString"}
    fields = _fields(lines[0])
    return [int(v, 16) for v in fields["extra"].split(",")], fields


@pytest.fixture(scope="module", params=KEYS)
def probe(request, header_sets, driver_stub):
    key = request.param
    stub = driver_stub(key, record=True)
    code = _PROBE.replace("LOG_SIZE", str(RECORD_SIZE)).replace("LOG_NAME", ARGUMENTS_SYMBOL)
    env = {"CUDART_LIBRARY": str(header_sets[key].library), "CUDART_DRIVER_LIBRARY": str(stub)}
    proc = run_python(code, env=env)
    return json.loads(proc.stdout.strip().splitlines()[-1])


STUB = "CudaDriverErrorStubLibrary"


def test_a_buffer_reaches_c_as_cuda_h_s_five_pointers(probe):
    start, size_marker, end = probe["markers"]
    assert (start, size_marker, end) == (1, 2, 0)  # cuda.h's ((void*)0x01) ...
    for case, data, address in (
        ("bytearray", probe["packed"], probe["packed_at"]),  # writable: not copied
        ("bytes", probe["packed"], None),  # read-only: a copy
        ("memoryview", probe["packed"][:24], probe["packed_at"]),  # a slice of it
        ("structure", probe["record"], probe["record_at"]),  # the record's own memory
    ):
        seen = probe[case]
        assert seen["outcome"].startswith(STUB), (case, seen)
        options, fields = _options(seen["c"])
        assert fields["symbol"] == "cuLaunchKernel" and fields["gridDimX"] == "2", seen
        assert len(options) == 5 and options[0] == start and options[2] == size_marker
        assert options[4] == end and options[1] and options[3], (case, options)
        if address is not None:
            assert options[1] == address, case
        assert fields["extra.size"] == str(len(data) // 2), case
        assert fields["extra.bytes"] == data, case
        (query,) = _span_queries(seen["c"])  # its first parameter; the stub says nothing
        assert query["paramIndex"] == "0", (case, query)
    assert len(probe["packed"]) == 2 * 28 and len(probe["record"]) == 2 * 32


def test_an_empty_buffer_is_a_kernel_without_parameters(probe):
    # cuda.h: the buffer pointer is required only where the size is not zero.
    options, fields = _options(probe["empty"]["c"])
    assert options[0] == 1 and options[2] == 2 and options[4] == 0
    assert fields["extra.size"] == "0" and fields["extra.bytes"] == ""


def test_the_callers_option_list_an_address_and_null_pass_as_before(probe):
    for case in ("own_list", "address"):
        options, fields = _options(probe[case]["c"])
        assert options == probe["own"], case
        assert fields["extra.size"] == "28" and fields["extra.bytes"] == probe["packed"]
        assert not _span_queries(probe[case]["c"]), case  # the caller's list: no query
    for case in ("none", "zero"):
        assert _fields(probe[case]["c"].splitlines()[0])["extra"] == "NULL", case


def test_cu_launch_kernel_ex_takes_a_buffer_too(probe):
    seen = probe["ex"]
    assert seen["outcome"].startswith(STUB), seen
    options, fields = _options(seen["c"])
    assert fields["symbol"] == "cuLaunchKernelEx" and len(options) == 5
    assert options[1] == probe["packed_at"] and fields["extra.bytes"] == probe["packed"]


@pytest.mark.parametrize(
    ("case", "error", "match"),
    [
        ("str", "TypeError", "'extra' must be an argument buffer .* not str"),
        ("float", "TypeError", "'extra' must be an argument buffer .* not float"),
        ("object", "TypeError", "'extra' must be an argument buffer .* not object"),
        ("device", "TypeError", "'extra' must be an argument buffer .* not Device"),
        ("negative", "OverflowError", "'extra' is -1: an address is 0 <= extra < 2\\*\\*64"),
        ("handle", "TypeError", "'extra' must be a pointer to memory, not a CUevent"),
        ("both", "ValueError", "cuLaunchKernel: 'kernelParams' and 'extra' are mutually"),
        ("both_list", "ValueError", "cuLaunchKernel: 'kernelParams' and 'extra' are mutually"),
        ("both_ex", "ValueError", "cuLaunchKernelEx: 'kernelParams' and 'extra' are mutually"),
    ],
)
def test_what_c_cannot_take_is_refused_before_c(probe, case, error, match):
    import re

    seen = probe[case]
    assert seen["c"] == "", seen  # nothing reached C
    kind, _, message = seen["outcome"].partition(": ")
    assert kind == error and re.search(match, message), seen
