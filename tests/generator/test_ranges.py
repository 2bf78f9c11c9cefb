"""Issue 11, item 1: integer ranges, enum values and argument kinds in the checked layer.

The range of every integer parameter comes from the generator's one classification
(generator/ctypes_map.py's integer_range) and is emitted into the checked functions;
these tests hold the classification and then, against each pinned version's real
libcudart (no GPU needed: the refusals happen before C, and what passes gets C's
error code), the run-time behaviour. tests/runtime/test_fuzz_ranges.py covers every function.
"""

from __future__ import annotations

import ctypes

import pytest
from models import models_for
from suite import probe_each_version

from generator.ctypes_map import TypeMapper, integer_range, is_flags_enum
from generator.model import Builtin, Enum, Enumerator, EnumRef, Pointer, TypedefRef

# The enums whose values are bits C callers OR together, per the model's values
# (is_flags_enum); reviewed: each is named or documented as flags or a bit mask.
FLAGS_ENUMS = {
    "cudaGraphDebugDotFlags",  # "CUDA Graph debug write options"
    "cudaGraphInstantiateFlags",
    "cudaGraphicsRegisterFlags",
    "cudaMemAllocationHandleType",  # "Flags for specifying particular handle types"
    "cudaAtomicOperationCapability",  # 13.0+: capability bits
    "cudaDevSmResourceGroup_flags",  # 13.5
}


@pytest.fixture(scope="module")
def models(header_sets):
    return models_for({key: header_sets[key] for key in ("12.0", "12.5", "13.0", "13.5")})


def test_flags_enums_are_the_reviewed_ones(models):
    found = {e.name for model in models.values() for e in model.enums if is_flags_enum(e)}
    assert found == FLAGS_ENUMS
    enums = models["12.5"].by_name("enums")
    # Two bits are a choice, not flags; a value that is no bit makes it no flags enum.
    assert not is_flags_enum(enums["cudaStreamCaptureMode"])
    assert not is_flags_enum(enums["cudaMemcpyKind"])


def test_is_flags_enum_rule():
    def enum(*values: int) -> Enum:
        return Enum("e", Builtin("unsigned int"), tuple(Enumerator(f"k{v}", v) for v in values))

    assert is_flags_enum(enum(0, 1, 2, 4))
    assert is_flags_enum(enum(1, 2, 4, 4))  # an alias is no new value
    assert not is_flags_enum(enum(0, 1, 2))
    assert not is_flags_enum(enum(1, 2, 3, 4))
    assert not is_flags_enum(enum(1, 2, -4))


def test_integer_ranges_of_the_c_types(models):
    model = models["12.5"]
    types = TypeMapper(model)
    cases = {
        Builtin("int"): (-(2**31), 2**31 - 1, "int"),
        Builtin("unsigned int"): (0, 2**32 - 1, "unsigned int"),
        Builtin("unsigned long long"): (0, 2**64 - 1, "unsigned long long"),
        Builtin("long long"): (-(2**63), 2**63 - 1, "long long"),
        Builtin("char"): (-128, 255, "char"),
        Builtin("unsigned char"): (0, 255, "unsigned char"),
        TypedefRef("size_t"): (0, 2**64 - 1, "size_t"),
        TypedefRef("cudaTextureObject_t"): (
            0,
            2**64 - 1,
            "cudaTextureObject_t (unsigned long long)",
        ),
    }
    for t, (low, high, name) in cases.items():
        r = integer_range(types, t)
        assert r is not None and (r.low, r.high, r.c_name) == (low, high, name), t
        assert r.enum is None and r.members is None
    kind = integer_range(types, EnumRef("cudaMemcpyKind"))
    assert kind is not None
    assert (kind.low, kind.high, kind.enum, kind.flags) == (0, 2**32 - 1, "cudaMemcpyKind", None)
    assert kind.members == frozenset({0, 1, 2, 3, 4})
    handles = integer_range(types, EnumRef("cudaMemAllocationHandleType"))
    assert handles is not None and handles.flags == 0b1111
    assert integer_range(types, Builtin("double")) is None
    assert integer_range(types, Pointer(Builtin("int"))) is None
    assert integer_range(types, TypedefRef("cudaStream_t")) is None


PROBE = r"""
import json, warnings
import cudart
warnings.simplefilter("ignore")
out = {}
def attempt(label, fn, *args):
    try:
        value = fn(*args)
        out[label] = ["ok", repr(value)]
    except cudart.CudaError as exc:
        out[label] = ["C", type(exc).__name__]
    except Exception as exc:
        out[label] = [type(exc).__name__, str(exc)]
attempt("malloc_2**64+16", cudart.cudaMalloc, (1 << 64) + 16)
attempt("malloc_-1", cudart.cudaMalloc, -1)
attempt("malloc_float", cudart.cudaMalloc, 16.0)
attempt("malloc_max", cudart.cudaMalloc, (1 << 64) - 1)
attempt("error_name_2**70", cudart.cudaGetErrorName, 2**70)
attempt("error_name_-1", cudart.cudaGetErrorName, -1)
attempt("error_name_12345", cudart.cudaGetErrorName, 12345)
attempt("error_name_2", cudart.cudaGetErrorName, 2)
attempt("error_name_member", cudart.cudaGetErrorName, cudart.cudaErrorInvalidValue)
attempt("error_name_other_enum", cudart.cudaGetErrorName, cudart.cudaMemcpyHostToDevice)
attempt("memcpy_kind_7", cudart.cudaMemcpy, 0, 0, 1, 7)
attempt("memcpy_kind_member", cudart.cudaMemcpy, 0, 0, 1, cudart.cudaMemcpyDeviceToDevice)
attempt("memcpy_count_2**64", cudart.cudaMemcpy, 0, 0, 1 << 64, 1)
attempt("memcpy_dst_-1", cudart.cudaMemcpy, -1, 0, 1, 1)
attempt("memcpy_src_2**64", cudart.cudaMemcpy, 0, 1 << 64, 1, 1)
attempt("memcpy_src_event", cudart.cudaMemcpy, 0, cudart.cudaEvent_t(0x1234), 1, 1)
attempt("set_device_2**31", cudart.cudaSetDevice, 1 << 31)
attempt("set_device_-2**31-1", cudart.cudaSetDevice, -(1 << 31) - 1)
attempt("set_device_flags_2**32", cudart.cudaSetDeviceFlags, 1 << 32)
attempt("pool_import_or", cudart.cudaMemPoolImportFromShareableHandle, None, 1 | 2, 0)
attempt("pool_import_16", cudart.cudaMemPoolImportFromShareableHandle, None, 16, 0)
attempt("stream_query_-1", cudart.cudaStreamQuery, -1)
attempt("stream_query_2**64", cudart.cudaStreamQuery, 1 << 64)
attempt("stream_query_event", cudart.cudaStreamQuery, cudart.cudaEvent_t(0x1234))
attempt("stream_query_void_p", cudart.cudaStreamQuery, __import__("ctypes").c_void_p(0))
attempt("export_-1", cudart.cudaGetExportTable, -1)
attempt("export_event", cudart.cudaGetExportTable, cudart.cudaEvent_t(0x1234))
attempt("export_5", cudart.cudaGetExportTable, 5)
attempt("export_bytes1", cudart.cudaGetExportTable, b"x")
attempt("export_other_record", cudart.cudaGetExportTable, cudart.cudaExtent())
attempt("export_uuid", cudart.cudaGetExportTable, cudart.cudaUUID_t())
attempt("export_bytes16", cudart.cudaGetExportTable, bytes(16))
attempt("launch_func_event", cudart.cudaLaunchKernel, cudart.cudaEvent_t(0x1234),
        cudart.dim3(1, 1, 1), cudart.dim3(1, 1, 1), None, 0, None)
attempt("host_fn_-1", cudart.cudaLaunchHostFunc, None, -1, None)
attempt("extent_2**64", cudart.make_cudaExtent, 1 << 64, 1, 1)
attempt("extent_ok", lambda: tuple(getattr(cudart.make_cudaExtent(1, 2, 3), f)
                                   for f in ("width", "height", "depth")))
attempt("int2_2**31", cudart.make_int2, 1 << 31, 0)
attempt("char1_200", cudart.make_char1, 200)
attempt("uchar1_255", lambda: cudart.make_uchar1(255).x)
attempt("pitched_-1", cudart.make_cudaPitchedPtr, -1, 1, 1, 1)
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def results(header_sets):
    return probe_each_version(PROBE, header_sets)


@pytest.mark.backend
def test_item_1_on_every_version(results):
    for key, out in results.items():
        got = {label: value[0] for label, value in out.items()}
        expected = {
            "malloc_2**64+16": "OverflowError",
            "malloc_-1": "OverflowError",
            "malloc_float": "TypeError",
            "malloc_max": "C",  # in range: C answers (no GPU here)
            "error_name_2**70": "OverflowError",
            "error_name_-1": "OverflowError",
            "error_name_12345": "ValueError",
            "error_name_2": "ok",
            "error_name_member": "ok",
            "error_name_other_enum": "TypeError",
            "memcpy_kind_7": "ValueError",
            "memcpy_kind_member": "C",
            "memcpy_count_2**64": "OverflowError",
            "memcpy_dst_-1": "OverflowError",
            "memcpy_src_2**64": "OverflowError",
            "memcpy_src_event": "TypeError",
            "set_device_2**31": "OverflowError",
            "set_device_-2**31-1": "OverflowError",
            "set_device_flags_2**32": "OverflowError",
            "pool_import_or": "C",  # an OR of cudaMemAllocationHandleType's flags
            "pool_import_16": "ValueError",
            "stream_query_-1": "OverflowError",
            "stream_query_2**64": "OverflowError",
            "stream_query_event": "TypeError",
            "stream_query_void_p": "C",
            "export_-1": "OverflowError",
            "export_event": "TypeError",
            "export_5": "ValueError",
            "export_bytes1": "ValueError",
            "export_other_record": "TypeError",
            "export_uuid": "C",
            "export_bytes16": "C",
            "launch_func_event": "TypeError",
            "host_fn_-1": "OverflowError",
            "extent_2**64": "OverflowError",
            "extent_ok": "ok",
            "int2_2**31": "OverflowError",
            "char1_200": "OverflowError",  # signed char: -128..127
            "uchar1_255": "ok",
            "pitched_-1": "OverflowError",
        }
        assert got == expected, key
        # The messages name the function, the parameter and the range or both kinds.
        assert out["malloc_2**64+16"][1] == (
            "cudaMalloc() argument 'size': 18446744073709551632 is outside size_t's range "
            "0..18446744073709551615"
        )
        assert "cudaGetErrorName() argument 'error'" in out["error_name_2**70"][1]
        assert "cudaError" in out["error_name_2**70"][1]
        assert "not a cudaError value" in out["error_name_12345"][1]
        assert "cudaError, not a cudaMemcpyKind" in out["error_name_other_enum"][1]
        assert "'stream' must be a cudaStream_t, not a cudaEvent_t" in out["stream_query_event"][1]
        assert "cudaEvent_t" in out["export_event"][1] and "CUuuid_st" in out["export_event"][1]
        assert "'src' must be a pointer to memory, not a cudaEvent_t" in out["memcpy_src_event"][1]
        assert "2**64" in out["export_-1"][1]
        assert out["error_name_2"][1] == "'cudaErrorMemoryAllocation'"
        assert out["extent_ok"][1] == "(1, 2, 3)"
        assert out["uchar1_255"][1] == "255"
        assert "make_cudaExtent() argument 'w'" in out["extent_2**64"][1]


def test_convert_ranges_directly():
    # The conversions the generated fast path falls back to, on their own.
    from cudart import _convert

    spec = (0, 9, "int")
    assert _convert.integer(True, spec, "f", "x") == 1
    assert _convert.integer(ctypes.c_int(5).value, spec, "f", "x") == 5
    with pytest.raises(TypeError, match="ctypes c_int"):
        _convert.integer(ctypes.c_int(5), spec, "f", "x")
    with pytest.raises(OverflowError, match=r"f\(\) argument 'x': 10 is outside int's range 0..9"):
        _convert.integer(10, spec, "f", "x")
    with pytest.raises(TypeError, match="must be an int, not str"):
        _convert.integer("1", spec, "f", "x")
    with pytest.raises(OverflowError):
        _convert.pointer(-1, "p", False)
    with pytest.raises(OverflowError):
        _convert.handle(1 << 64, _convert.cudaStream_t, "s")


def test_builder_addresses_are_addresses_not_handles():
    # A record's `void *` field holds the number: a handle object there is a handle's
    # value mistaken for memory (issue 20: the fuzz grid's builders).
    import cudart

    with pytest.raises(TypeError, match="'d' must be an address"):
        cudart.make_cudaPitchedPtr(cudart.cudaEvent_t(0x1234), 1, 1, 1)
    # Memory is an address (issue 21): a buffer of at least pitch * ysize bytes.
    buffer = bytearray(8)
    record = cudart.make_cudaPitchedPtr(buffer, 4, 4, 2)
    assert record.ptr == ctypes.addressof((ctypes.c_char * 8).from_buffer(buffer))
    with pytest.raises(ValueError, match="p \\* ysz = 12 bytes, but 'd' is a buffer of 8"):
        cudart.make_cudaPitchedPtr(buffer, 4, 4, 3)
    assert cudart.make_cudaPitchedPtr(ctypes.c_void_p(0x5000), 1, 1, 1).ptr == 0x5000
    assert cudart.make_cudaPitchedPtr(None, 1, 1, 1).ptr is None
