"""Arguments built to get past the conversions (issue 20): ctypes objects holding small
addresses where C reads a record, byref() offsets outside their object, integers whose
__index__ answers differently each time, ctypes objects of the wrong class where C
takes an integer or a record by value. Each is refused before C, or reaches C exactly
as ctypes would pass it, on both backends.

Every case runs in a fresh interpreter with the real 12.5 library (no GPU: a call that
reaches C gets an error status back without touching its memory), so a conversion that
lets one through to C crashes that interpreter, not the suite.
"""

from __future__ import annotations

import json

import pytest
from fast_support import fast_module
from suite import run_python

# What each case records: "C" where the call reached C (it returned, or raised the
# CudaError of the status C returned), else the class of the exception that refused it.
_PRELUDE = r"""
import ctypes, json, sys, cudart
out = {}

def case(label, call):
    try:
        call()
        out[label] = "C"
    except cudart.CudaError:
        out[label] = "C"
    except Exception as exc:
        out[label] = type(exc).__name__
"""


@pytest.fixture(params=["ctypes", "compiled"])
def run(request, header_sets):
    """Runs a case script on one backend; its `out` as a dict."""
    backend = request.param
    if backend == "compiled":
        fast_module(12050)  # skips where it cannot be built here, fails where it should be
    env = {"CUDART_BACKEND": backend, "CUDART_LIBRARY": str(header_sets["12.5"].library)}

    def run(code: str) -> dict:
        proc = run_python(_PRELUDE + code + "\nprint(json.dumps(out))", env=env)
        return json.loads(proc.stdout.splitlines()[-1])

    return run


# ---------------------------------------------------------------- record pointers

_FORMS = (
    "c_void_p",
    "ctypes pointer",
    "c_char_p",
    "function pointer",
    "_as_parameter_ int",
    "_as_parameter_ c_void_p",
    "__int__",
)


def test_a_record_pointer_is_never_a_small_address_in_any_form(run):
    # cudaGetExportTable(const void **, const cudaUUID_t *): C reads 16 bytes there.
    out = run(r"""
uuid = cudart.cudaUUID_t()

class AsParameter:
    def __init__(self, value):
        self._as_parameter_ = value

class IntLike:
    def __init__(self, value):
        self.value = value
    def __int__(self):
        return self.value

forms = {
    "c_void_p": ctypes.c_void_p,
    "ctypes pointer": lambda a: ctypes.cast(a, ctypes.POINTER(ctypes.c_char)),
    "c_char_p": ctypes.c_char_p,
    "function pointer": ctypes.CFUNCTYPE(None),
    "_as_parameter_ int": AsParameter,
    "_as_parameter_ c_void_p": lambda a: AsParameter(ctypes.c_void_p(a)),
    "__int__": IntLike,
}
for name, make in forms.items():
    for address in (1, 0xFFFF, ctypes.addressof(uuid)):
        case(f"{name} {address:#x}", lambda: cudart.cudaGetExportTable(make(address)))
out["record"] = hex(ctypes.addressof(uuid))
""")
    record = out.pop("record")
    assert set(out) == {f"{f} {a}" for f in _FORMS for a in ("0x1", "0xffff", record)}
    for form in _FORMS:
        assert out[f"{form} 0x1"] == out[f"{form} 0xffff"] == "ValueError", form
        assert out[f"{form} {record}"] == "C", form  # the record's own address passes


# ---------------------------------------------------------------- byref offsets


def test_a_byref_offset_must_lie_within_its_object(run):
    out = run(r"""
buf = (ctypes.c_char * 16)()
big = (ctypes.c_char * 32)()
export = cudart.cudaGetExportTable  # reads a 16-byte record
copy = lambda dst, n: cudart.cudaMemcpy(dst, 0x10000, n, cudart.cudaMemcpyDeviceToHost)
case("record, 2**40 bytes on", lambda: export(ctypes.byref(buf, 1 << 40)))
case("record, one byte before", lambda: export(ctypes.byref(big, -1)))
case("record, 15 bytes left", lambda: export(ctypes.byref(big, 17)))
case("record, 16 bytes left", lambda: export(ctypes.byref(big, 16)))
case("copy 16, 1 byte left", lambda: copy(ctypes.byref(buf, 15), 16))
case("copy 16, 16 bytes left", lambda: copy(ctypes.byref(big, 16), 16))
case("copy 0, at the end", lambda: copy(ctypes.byref(buf, 16), 0))
case("copy 0, past the end", lambda: copy(ctypes.byref(buf, 17), 0))
case("copy 1, one byte before", lambda: copy(ctypes.byref(big, -1), 1))
""")
    assert out == {
        "record, 2**40 bytes on": "ValueError",
        "record, one byte before": "ValueError",
        "record, 15 bytes left": "ValueError",
        "record, 16 bytes left": "C",
        "copy 16, 1 byte left": "ValueError",
        "copy 16, 16 bytes left": "C",
        "copy 0, at the end": "C",
        "copy 0, past the end": "ValueError",
        "copy 1, one byte before": "ValueError",
    }


# ---------------------------------------------------------------- integers read once


def test_an_integer_argument_is_read_once_and_c_gets_that_value(run):
    # An object whose __index__ answers `first`, then a million: the size check and the
    # call must see the same number, and C must get the int it became.
    out = run(r"""
class Fickle:
    def __init__(self, first):
        self.first = first
        self.reads = 0
    def __index__(self):
        self.reads += 1
        return self.first if self.reads == 1 else 10**6

module = sys.modules[cudart.cudaMemcpy.__module__]
passed = {}

def spy(name, position):
    case("bind " + name, lambda: getattr(cudart, name)(*args[name]))  # binds _<name>
    real = vars(module)["_" + name]
    def call(*a):
        passed[name] = repr(a[position])
        return real(*a)
    vars(module)["_" + name] = call

args = {
    "cudaMemcpy": [None, None, 0, cudart.cudaMemcpyDeviceToHost],
    "cudaGraphAddDependencies": [None, [None], [None], 1],
}
spy("cudaMemcpy", 2)
spy("cudaGraphAddDependencies", 3)
count = Fickle(10)
d2h = cudart.cudaMemcpyDeviceToHost
case("copy", lambda: cudart.cudaMemcpy(bytearray(10), 0x10000, count, d2h))
edges = Fickle(1)
case("edges", lambda: cudart.cudaGraphAddDependencies(None, [None], [None], edges))
out["reads"] = [count.reads, edges.reads]
out["passed"] = passed
""")
    assert out["copy"] == out["edges"] == "C"
    assert out["reads"] == [1, 1]
    assert out["passed"] == {"cudaMemcpy": "10", "cudaGraphAddDependencies": "1"}


# ---------------------------------------------------------------- the raw layer


def test_an_integer_parameter_takes_ints_and_its_own_ctypes_class_only(run):
    # As ctypes takes an argument for a c_uint (c_int) argtype: an int, or an instance
    # of that class, passed as its memory holds it.
    out = run(r"""
raw = cudart.sys

class Flags(ctypes.c_uint):
    pass

class Itself(ctypes.c_int):
    value = property(lambda self: self)

case("int", lambda: raw.cudaSetDeviceFlags(4))
case("c_uint", lambda: raw.cudaSetDeviceFlags(ctypes.c_uint(4)))
case("c_uint subclass", lambda: raw.cudaSetDeviceFlags(Flags(4)))
case("c_int whose value is itself", lambda: raw.cudaSetDevice(Itself(3)))
case("c_int", lambda: raw.cudaSetDeviceFlags(ctypes.c_int(4)))
case("c_ulong", lambda: raw.cudaSetDeviceFlags(ctypes.c_ulong(4)))
case("c_void_p", lambda: raw.cudaSetDeviceFlags(ctypes.c_void_p(4)))
case("handle", lambda: raw.cudaSetDeviceFlags(raw.cudaEvent_t(0x1234)))
case("float", lambda: raw.cudaSetDeviceFlags(4.0))
""")
    assert out == {
        "int": "C",
        "c_uint": "C",
        "c_uint subclass": "C",
        "c_int whose value is itself": "C",
        "c_int": "ArgumentError",
        "c_ulong": "ArgumentError",
        "c_void_p": "ArgumentError",
        "handle": "ArgumentError",
        "float": "ArgumentError",
    }


def test_a_record_by_value_is_an_instance_of_its_own_class(run):
    # cudaMemset3D(cudaPitchedPtr, int, cudaExtent): ctypes takes the argtype's class
    # (or a subclass), not another class of the same name and size.
    out = run(r"""
import importlib
raw = cudart.sys
other = importlib.import_module("cudart.sys_13050")
fields = [(n, ctypes.c_size_t) for n in ("width", "height", "depth")]
SameName = type("cudaExtent", (ctypes.Structure,), {"_fields_": fields})

class Mine(raw.cudaExtent):
    pass

def memset(extent):
    return raw.cudaMemset3D(raw.cudaPitchedPtr(), 0, extent)

case("its class", lambda: memset(raw.make_cudaExtent(1, 2, 3)))
case("a subclass", lambda: memset(Mine(1, 2, 3)))
case("same name and size", lambda: memset(SameName(1, 2, 3)))
case("another version's", lambda: memset(other.cudaExtent(1, 2, 3)))
""")
    assert out == {
        "its class": "C",
        "a subclass": "C",
        "same name and size": "ArgumentError",
        "another version's": "ArgumentError",
    }
