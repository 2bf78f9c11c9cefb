"""Arguments that lie about what they are (issue 33, "Adversarial CPU probes", items
17-24 and 26): numbers that are no integers where C takes an address or a handle, a
__cuda_array_interface__ or a DLPack capsule that describes memory it cannot be, a
NUL in a string, read-only memory where C writes, a ctypes function pointer of another
prototype, an enum member of no value of its enum, and device arrays that describe
more than the address space. Each is refused before C (a TypeError, ValueError or
OverflowError, never a KeyError, a truncated value or a crash), on both backends, called
positionally (the compiled checked functions' C fast path) and by keyword (the Python
reference); what is what it claims still reaches C.

Every case runs in a fresh interpreter with the real 12.5 runtime and the stand-in
libcuda (no GPU: a call that reaches C gets an error status back without touching its
memory), so one that gets through to C and crashes fails the test, not the suite.
"""

from __future__ import annotations

import json

import pytest
from fast_support import fast_module
from suite import run_python

KEY = "12.5"

# "C" where the call reached C (it returned, or raised the status C returned), else the
# class of the exception that refused it.
_PRELUDE = r"""
import ctypes, inspect, json, sys
import numpy
import cudart
from cudart import driver
from cudart.arrays import as_array
from cudart.errors import StatusError
out = {}

def record(label, call):
    try:
        call()
        out[label] = "C"
    except StatusError:
        out[label] = "C"
    except Exception as exc:
        out[label] = type(exc).__name__

def case(label, fn, *args):
    # Positionally (the compiled backend's C path takes those) and by keyword.
    record(label + " pos", lambda: fn(*args))
    names = list(inspect.signature(fn).parameters)
    record(label + " kw", lambda: fn(**dict(zip(names, args))))

CUDA = (2, 0)
good = as_array(0x10000, (4,), "f4", device=CUDA)

class CAI:
    def __init__(self, interface):
        self.__cuda_array_interface__ = interface

def interface(**changed):
    return {"shape": (4,), "typestr": "<f4", "version": 3, "data": (0x10000, False), **changed}

_new = ctypes.pythonapi.PyCapsule_New
_new.restype = ctypes.py_object
_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

class Producer:
    # DLPack only: __dlpack_device__ says `device`, __dlpack__ hands over `capsule`.
    def __init__(self, capsule, device=CUDA):
        self.capsule, self.device = capsule, device
    def __dlpack_device__(self):
        return self.device
    def __dlpack__(self, **kwargs):
        return self.capsule

from cudart import _dlpack
_kept = []

def capsule(versioned=False, major=1, device_type=2, flags=0):
    # A well-formed managed tensor of 4 floats at 0x10000, kept alive by the script.
    managed = _dlpack.DLManagedTensorVersioned() if versioned else _dlpack.DLManagedTensor()
    if versioned:
        managed.version.major, managed.flags = major, flags
    tensor = managed.dl_tensor
    tensor.data, tensor.device.device_type, tensor.ndim = 0x10000, device_type, 1
    shape = (ctypes.c_int64 * 1)(4)
    tensor.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
    tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes = 2, 32, 1
    _kept.append((managed, shape))
    name = _dlpack.VERSIONED_NAME if versioned else _dlpack.LEGACY_NAME
    return _new(ctypes.addressof(managed), name, None)
"""


@pytest.fixture(params=["ctypes", "compiled"])
def run(request, header_sets, driver_stub):
    """Runs a case script on one backend; its `out` as a dict (the backend checked)."""
    backend = request.param
    if backend == "compiled":
        fast_module(12050)  # skips where it cannot be built here, fails where it should be
    env = {
        "CUDART_BACKEND": backend,
        "CUDART_LIBRARY": str(header_sets[KEY].library),
        "CUDART_DRIVER_LIBRARY": str(driver_stub(KEY)),
    }

    def run(code: str) -> dict:
        script = _PRELUDE + code + "\nout['compiled'] = type(cudart.cudaMemset).__name__"
        proc = run_python(script + "\nprint(json.dumps(out))", env=env)
        out = json.loads(proc.stdout.splitlines()[-1])
        compiled = out.pop("compiled") == "compiled_checked_function"
        assert compiled == (backend == "compiled"), out
        return out

    return run


def both(label: str, outcome: str) -> dict[str, str]:
    return {f"{label} pos": outcome, f"{label} kw": outcome}


# ---------------------------------------------------------------- 18: integers only


def test_an_address_or_handle_is_an_integer_never_a_truncated_number(run):
    out = run(r"""
from decimal import Decimal
from fractions import Fraction

class Index:  # an integer by __index__
    def __index__(self):
        return 0x10000

class Handle:  # no number, an address by __int__ (cuda-bindings' handles)
    def __int__(self):
        return 0x10000

values = {
    "Decimal": Decimal("65536.5"), "float32": numpy.float32(65536.7),
    "Fraction": Fraction(131073, 2), "float64": numpy.float64(65536.5), "float": 65536.5,
    "int64": numpy.int64(0x10000), "__index__": Index(), "__int__": Handle(),
}
for name, v in values.items():
    case(f"cudaStreamSynchronize {name}", cudart.cudaStreamSynchronize, v)
    case(f"cudaMemcpy src {name}", cudart.cudaMemcpy, 0x20000, v, 0, 3)
    case(f"cuStreamSynchronize {name}", driver.cuStreamSynchronize, v)
    case(f"cuMemsetD8 {name}", driver.cuMemsetD8, v, 0, 0)
    if name in ("Decimal", "Fraction", "float"):
        # The raw layer: ctypes takes none of these for a `void *`, nor do the compiled
        # raw functions, which took a Decimal's and a Fraction's __int__.
        record(f"raw cudaMemset {name}", lambda: cudart.sys.cudaMemset(v, 0, 0))
""")
    expected = {}
    for name in ("Decimal", "float32", "Fraction", "float64", "float"):
        for call in ("cudaStreamSynchronize", "cudaMemcpy src", "cuStreamSynchronize"):
            expected |= both(f"{call} {name}", "TypeError")
    # A `const void *` takes host memory: a NumPy scalar is a 4- or 8-byte buffer, its
    # own bytes (a copy of them), never its value as an address.
    expected |= both("cudaMemcpy src float32", "C") | both("cudaMemcpy src float64", "C")
    for name in ("int64", "__index__", "__int__"):
        for call in ("cudaStreamSynchronize", "cudaMemcpy src", "cuStreamSynchronize"):
            expected |= both(f"{call} {name}", "C")
    # A device address parameter (CUdeviceptr): an integer, never host memory (a NumPy
    # scalar has the buffer protocol).
    for name in ("Decimal", "Fraction", "float"):
        expected |= both(f"cuMemsetD8 {name}", "TypeError")
    for name in ("float32", "float64"):
        expected |= both(f"cuMemsetD8 {name}", "TypeError")
    for name in ("int64", "__index__", "__int__"):
        expected |= both(f"cuMemsetD8 {name}", "C")
    for name in ("Decimal", "Fraction", "float"):
        expected[f"raw cudaMemset {name}"] = "ArgumentError"
    assert out == expected


# ---------------------------------------------------------------- 19: the array interface


def test_a_cuda_array_interface_is_believed_only_where_it_is_one(run):
    out = run(r"""
lies = {
    "float address": interface(data=(65536.9, False)),
    "str address": interface(data=("65536", False)),
    "bool address": interface(data=(True, False)),
    "negative address": interface(data=(-1, False)),
    "2**64": interface(data=(1 << 64, False)),
    "data an int": interface(data=0x10000),
    "data a list": interface(data=[0x10000, False]),
    "data of three": interface(data=(0x10000, False, 0)),
    "read-only a str": interface(data=(0x10000, "no")),
    "a mask": interface(mask=CAI(interface(data=(0x20000, False)))),
    "empty": {},
    "not a dict": 5,
    "mask None": interface(mask=None),
    "true": interface(),
}
for name, d in lies.items():
    case(f"cudaMemcpy {name}", cudart.cudaMemcpy, 0x20000, CAI(d), 0, 3)
    case(f"cuMemsetD8 {name}", driver.cuMemsetD8, CAI(d), 0, 0)
    record(f"as_array {name}", lambda: as_array(CAI(d), (1,), "f4", device=CUDA))
""")
    refused = {
        "float address": "TypeError",
        "str address": "TypeError",
        "bool address": "TypeError",
        "negative address": "ValueError",
        "2**64": "ValueError",
        "data an int": "TypeError",
        "data a list": "TypeError",
        "data of three": "TypeError",
        "read-only a str": "TypeError",
        "a mask": "ValueError",
        "empty": "ValueError",
        "not a dict": "TypeError",
        "mask None": "C",
        "true": "C",
    }
    expected = {}
    for name, outcome in refused.items():
        expected |= both(f"cudaMemcpy {name}", outcome)
        expected |= both(f"cuMemsetD8 {name}", outcome)
        expected[f"as_array {name}"] = outcome
    assert out == expected


# ---------------------------------------------------------------- 17, 20: DLPack imports


def test_a_capsule_pointer_that_is_no_managed_tensor_is_refused_not_read(run):
    """Item 17: a producer's capsule may hold any pointer; reading one that is not
    there was a SIGSEGV (run_python fails on it)."""
    out = run(r"""
pointers = {
    "0x10": 0x10, "0x1008": 0x1008, "misaligned": 0x10001, "unmapped": 0xDEAD0000000,
    "non-canonical": 1 << 63,
}
for name, address in pointers.items():
    for kind in (_dlpack.LEGACY_NAME, _dlpack.VERSIONED_NAME):
        p = Producer(_new(address, kind, None))
        label = f"{name} {kind.decode()}"
        case(f"cudaMemset {label}", cudart.cudaMemset, p, 0, 0)
        case(f"cuMemsetD8 {label}", driver.cuMemsetD8, p, 0, 0)
        record(f"as_array {label}", lambda: as_array(p, (1,), "f4"))
""")
    expected = {}
    for name in ("0x10", "0x1008", "misaligned", "unmapped", "non-canonical"):
        for kind in ("dltensor", "dltensor_versioned"):
            expected |= both(f"cudaMemset {name} {kind}", "ValueError")
            expected |= both(f"cuMemsetD8 {name} {kind}", "ValueError")
            expected[f"as_array {name} {kind}"] = "ValueError"
    assert out == expected


def test_a_dlpack_producer_is_believed_only_where_it_is_consistent(run):
    out = run(r"""
producers = {
    "legacy": Producer(capsule()),
    "versioned 1.0": Producer(capsule(True)),
    "versioned major 2": Producer(capsule(True, major=2)),
    "versioned major 0": Producer(capsule(True, major=0)),
    "CPU tensor behind a CUDA device": Producer(capsule(device_type=1)),
    "managed device, CUDA tensor": Producer(capsule(), device=(13, 0)),
    "float device type": Producer(capsule(), device=(2.0, 0)),
    "str device type": Producer(capsule(), device=("2", 0)),
    "one-item device": Producer(capsule(), device=(2,)),
    "no capsule": Producer(5),
}
for name, p in producers.items():
    case(f"cudaMemset {name}", cudart.cudaMemset, p, 0, 0)
    case(f"cuMemsetD8 {name}", driver.cuMemsetD8, p, 0, 0)
    record(f"as_array {name}", lambda: as_array(p, (1,), "f4"))
""")
    outcomes = {
        "legacy": "C",
        "versioned 1.0": "C",
        "versioned major 2": "ValueError",
        "versioned major 0": "ValueError",
        "CPU tensor behind a CUDA device": "ValueError",
        "managed device, CUDA tensor": "ValueError",
        "float device type": "TypeError",
        "str device type": "TypeError",
        "one-item device": "TypeError",
        "no capsule": "TypeError",
    }
    expected = {}
    for name, outcome in outcomes.items():
        expected |= both(f"cudaMemset {name}", outcome)
        expected |= both(f"cuMemsetD8 {name}", outcome)
        expected[f"as_array {name}"] = outcome
    assert out == expected


# ---------------------------------------------------------------- 21: NUL in strings


def test_a_string_with_a_nul_is_refused_not_cut_short(run):
    out = run(r"""
texts = {"str with a NUL": "k\0junk", "bytes with a NUL": b"k\0junk",
         "bytearray with a NUL": bytearray(b"k\0"), "str": "k", "bytes": b"k"}
for label, text in texts.items():
    case(f"cuModuleGetFunction {label}", driver.cuModuleGetFunction, 0x10000, text)
    case(f"cuModuleLoad {label}", driver.cuModuleLoad, text)
    case(f"cudaDeviceGetByPCIBusId {label}", cudart.cudaDeviceGetByPCIBusId, text)
""")
    expected = {}
    for label, outcome in (
        ("str with a NUL", "ValueError"),
        ("bytes with a NUL", "ValueError"),
        ("bytearray with a NUL", "ValueError"),
        ("str", "C"),
        ("bytes", "C"),
    ):
        for call in ("cuModuleGetFunction", "cuModuleLoad", "cudaDeviceGetByPCIBusId"):
            expected |= both(f"{call} {label}", outcome)
    assert out == expected


# ---------------------------------------------------------------- 22: read-only memory


def test_read_only_device_memory_is_refused_where_c_writes(run):
    out = run(r"""
ro = as_array(0x10000, (4,), "f4", readonly=True, device=CUDA)
ro_cai = CAI(interface(data=(0x10000, True)))
ro_dlpack = Producer(capsule(True, flags=_dlpack.FLAG_READ_ONLY))
for name, m in {"DeviceArray": ro, "CAI": ro_cai, "DLPack": ro_dlpack, "writable": good}.items():
    case(f"cudaMemset {name}", cudart.cudaMemset, m, 0, 16)
    case(f"cudaMemcpy dst {name}", cudart.cudaMemcpy, m, good, 16, 3)
    case(f"cudaMemcpy src {name}", cudart.cudaMemcpy, good, m, 16, 3)
    case(f"cuMemsetD8 {name}", driver.cuMemsetD8, m, 0, 16)
    case(f"cuMemcpyDtoD dst {name}", driver.cuMemcpyDtoD, m, good, 16)
    case(f"cuMemcpyDtoD src {name}", driver.cuMemcpyDtoD, good, m, 16)
    case(f"cuStreamWriteValue32 {name}", driver.cuStreamWriteValue32, None, m, 0, 0)
    case(f"cuStreamWaitValue32 {name}", driver.cuStreamWaitValue32, None, m, 0, 0)
# A view of read-only memory is read-only.
out["view"] = as_array(ro_cai, (4,), "f4", device=CUDA).readonly
""")
    assert out.pop("view") is True
    expected = {}
    for name in ("DeviceArray", "CAI", "DLPack", "writable"):
        written = "C" if name == "writable" else "TypeError"
        for call in ("cudaMemset", "cudaMemcpy dst", "cuMemsetD8", "cuMemcpyDtoD dst"):
            expected |= both(f"{call} {name}", written)
        expected |= both(f"cuStreamWriteValue32 {name}", written)
        for call in ("cudaMemcpy src", "cuMemcpyDtoD src", "cuStreamWaitValue32"):
            expected |= both(f"{call} {name}", "C")
    assert out == expected


# ---------------------------------------------------------------- 23: callback prototypes


def test_a_function_pointer_of_another_prototype_is_no_callback(run):
    out = run(r"""
from ctypes import CFUNCTYPE, c_char_p, c_double, c_int, c_void_p
def f(*args):
    pass
keep = {
    "(double, double)": CFUNCTYPE(None, c_double, c_double)(f),
    "(void *) -> double": CFUNCTYPE(c_double, c_void_p)(f),
    "(void *, int, void *)": CFUNCTYPE(None, c_void_p, c_int, c_void_p)(f),
    "(void *)": CFUNCTYPE(None, c_void_p)(f),
    "(char *)": CFUNCTYPE(None, c_char_p)(f),
    "the typedef's": driver.CUhostFn(f),
}
for name, fp in keep.items():
    case(f"cuLaunchHostFunc {name}", driver.cuLaunchHostFunc, None, fp, None)
    case(f"cudaLaunchHostFunc {name}", cudart.cudaLaunchHostFunc, None, fp, None)
    case(f"cudaStreamAddCallback {name}", cudart.cudaStreamAddCallback, None, fp, None, 0)
    case(f"cudaDeviceRegisterAsyncNotification {name}",
         cudart.cudaDeviceRegisterAsyncNotification, 0, fp, None)
# A C function whose argtypes ctypes was never told: the caller's promise, as an int.
libc = ctypes.CDLL(None)
case("cuLaunchHostFunc unset argtypes", driver.cuLaunchHostFunc, None, libc.free, None)
""")
    host = {"(void *)", "(char *)", "the typedef's"}  # void (*)(void *)
    expected = both("cuLaunchHostFunc unset argtypes", "C")
    for name in ("(double, double)", "(void *) -> double", "(void *, int, void *)", *host):
        for call in ("cuLaunchHostFunc", "cudaLaunchHostFunc"):
            expected |= both(f"{call} {name}", "C" if name in host else "TypeError")
        # cudaStreamCallback_t and cudaAsyncCallback take (void *, int or void *, void *).
        stream = name == "(void *, int, void *)"
        expected |= both(f"cudaStreamAddCallback {name}", "C" if stream else "TypeError")
        notification = "TypeError"
        expected |= both(f"cudaDeviceRegisterAsyncNotification {name}", notification)
    assert out == expected


# ---------------------------------------------------------------- 24: forged enum members


def test_an_enum_member_of_no_value_of_its_enum_never_reaches_c(run):
    out = run(r"""
kind = cudart.cudaMemcpyKind
forged = {"2**32 + 2": int.__new__(kind, 2**32 + 2), "77": int.__new__(kind, 77),
          "-1": int.__new__(kind, -1)}
record("bind", lambda: cudart.cudaMemcpy(0x10000, 0x20000, 0, kind.cudaMemcpyDeviceToDevice))
for name, k in forged.items():
    for attempt in range(3):  # the first call binds; later ones take the C path
        case(f"cudaMemcpy {name} #{attempt}", cudart.cudaMemcpy, 0x10000, 0x20000, 0, k)
        case(f"cuStreamBeginCapture {name} #{attempt}", driver.cuStreamBeginCapture, None,
             int.__new__(driver.CUstreamCaptureMode, 2**32 + 1))
case("cudaMemcpy a member", cudart.cudaMemcpy, 0x10000, 0x20000, 0, kind.cudaMemcpyDeviceToDevice)
""")
    expected = {"bind": "C", **both("cudaMemcpy a member", "C")}
    # cudaMemcpyKind's C type is unsigned (its values are), so -1 lies outside it too.
    for name, error in (
        ("2**32 + 2", "OverflowError"),
        ("77", "ValueError"),
        ("-1", "OverflowError"),
    ):
        for attempt in range(3):
            expected |= both(f"cudaMemcpy {name} #{attempt}", error)
            expected |= both(f"cuStreamBeginCapture {name} #{attempt}", "OverflowError")
    assert out == expected


# ---------------------------------------------------------------- 26: device arrays


def test_a_device_array_describes_only_memory_that_can_exist(run):
    out = run(r"""
def export(a):
    cap = a.__dlpack__(max_version=(1, 0))
    address = _dlpack.capsule_pointer(cap, _dlpack.VERSIONED_NAME)
    return _dlpack.DLManagedTensorVersioned.from_address(address).dl_tensor

record("shape 2**64 + 5", lambda: export(as_array(0x10000, (2**64 + 5,), "u1", device=CUDA)))
record("complex256", lambda: export(as_array(0x10000, (1,), numpy.complex256, device=CUDA)))
record("<f32", lambda: as_array(0x10000, (1,), "<f32", device=CUDA))
record("device (2**40, 0)", lambda: as_array(0x10000, (1,), "f4", device=(2**40, 0)))
record("device (99, 0)", lambda: as_array(0x10000, (1,), "f4", device=(99, 0)))
record("device (2, 2**40)", lambda: as_array(0x10000, (1,), "f4", device=(2, 2**40)))
record("(2**40, 2**40) float64", lambda: as_array(0x10000, (2**40, 2**40), "f8", device=CUDA))
record("(2**62,) float32 high", lambda: as_array(0x7F00 << 48, (2**62,), "f4", device=CUDA))
record("negative stride below 0", lambda: as_array(0x10, (4,), "f4", strides=(-8,), device=CUDA))
record("a fitting array", lambda: export(as_array(0x10000, (2, 3), "f8", device=CUDA)))

a = as_array(0x10000, (4,), "f4", device=CUDA)
def store(name, value):
    setattr(a, name, value)
for label, name, value in (
    ("ptr = 1.5", "ptr", 1.5), ("ptr = '4096'", "ptr", "4096"), ("ptr = -1", "ptr", -1),
    ("typestr = '<q8'", "typestr", "<q8"), ("typestr = 'float32'", "typestr", "float32"),
    ("shape = (2**64 + 5,)", "shape", (2**64 + 5,)), ("shape = (2**62,)", "shape", (2**62,)),
    ("strides = (2**63,)", "strides", (2**63,)), ("readonly = 'yes'", "readonly", "yes"),
    ("stream = 1.5", "stream", 1.5), ("ptr = 0x20000", "ptr", 0x20000),
):
    record(label, lambda: store(name, value))
out["ptr"] = a.ptr
case("cudaMemset after", cudart.cudaMemset, a, 0, 16)
""")
    assert out.pop("ptr") == 0x20000  # only the store that fits was made
    assert out == {
        "shape 2**64 + 5": "ValueError",
        "complex256": "BufferError",
        "<f32": "ValueError",
        "device (2**40, 0)": "ValueError",
        "device (99, 0)": "ValueError",
        "device (2, 2**40)": "ValueError",
        "(2**40, 2**40) float64": "ValueError",
        "(2**62,) float32 high": "ValueError",
        "negative stride below 0": "ValueError",
        "a fitting array": "C",
        "ptr = 1.5": "TypeError",
        "ptr = '4096'": "TypeError",
        "ptr = -1": "ValueError",
        "typestr = '<q8'": "ValueError",
        "typestr = 'float32'": "ValueError",
        "shape = (2**64 + 5,)": "ValueError",
        "shape = (2**62,)": "ValueError",
        "strides = (2**63,)": "ValueError",
        "readonly = 'yes'": "TypeError",
        "stream = 1.5": "TypeError",
        "ptr = 0x20000": "C",
        **both("cudaMemset after", "C"),
    }
