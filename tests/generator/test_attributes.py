"""Attribute values (issue 10, item 6): the setters and getters whose `void *` / union
value the attribute argument types take and return Python values.

Held here without a GPU: the generator's table (generator/attributes.py) decides every
attribute of every version, its reviewed entries are needed and agree with the docs
where both speak, every function with such a value is decided; the run-time
conversion (cudart._convert) hands C the bytes of the attribute's C type and refuses
what does not fit; each real library is reached (a CudaError, not a TypeError).
"""

from __future__ import annotations

import ctypes
import importlib
import importlib.util
import json
import struct

import pytest
from suite import probe_each_version, run_python, version_keys

import cudart._convert as _convert
from generator.attributes import FUNCTIONS, GETTERS, LEFT, REVIEWED, AttributeTypes, listing
from generator.cli import main
from generator.ctypes_map import TypeKind, TypeMapper
from generator.model import EnumRef


def checked(manifest, key):
    return importlib.import_module(f"cudart.checked_{manifest.get(key).number}")


# The runtime's functions and the driver's (cuda.h): each family's models hold its own.
RUNTIME = {f for f in FUNCTIONS if f.startswith("cuda")}
DRIVER = set(FUNCTIONS) - RUNTIME
# Driver attribute functions newer than the first pinned version: the first one has each.
DRIVER_SINCE = {
    "cuCoredumpGetAttribute": "12.1",
    "cuCoredumpGetAttributeGlobal": "12.1",
    "cuCoredumpSetAttribute": "12.1",
    "cuCoredumpSetAttributeGlobal": "12.1",
}


@pytest.fixture(scope="module")
def driver_models(manifest):
    """Every version's cuda.h model."""
    from models import models_for

    from generator.fetch import fetch_version

    return models_for(
        {key: fetch_version(manifest, key, lambda _: None, "driver") for key in version_keys()}
    )


def _undecided(attributes: AttributeTypes, functions) -> list[str]:
    return [
        f"{function}: {d.enumerator}"
        for function in sorted(functions)
        if function in attributes.functions
        for d in attributes.decisions(function)
        if d.source == "undecided"
    ]


# ---------------------------------------------------------------- the table


@pytest.mark.parametrize("key", version_keys())
def test_every_attribute_of_every_function_is_decided(models, key):
    """A new attribute in a new version without a decision fails here (and generation
    reports it): add it to REVIEWED with its reason, or teach the docs reading."""
    attributes = AttributeTypes(models[key])
    assert _undecided(attributes, RUNTIME) == []
    assert all(d.type for f in RUNTIME for d in attributes.decisions(f))  # none refused
    # Every member of each attribute enum has its row (no enumerator dropped).
    for function in FUNCTIONS:
        if function in attributes.functions:
            enum = attributes.types.enums[attributes.enum_of(function)]
            rows = attributes.decisions(function)
            assert [d.enumerator for d in rows] == [k.name for k in enum.enumerators]


@pytest.mark.parametrize("key", version_keys())
def test_every_driver_attribute_is_decided(driver_models, key):
    """The driver's attribute functions (cuda.h), as the runtime's: each attribute
    typed, or refused with its reason (attributes.REFUSED)."""
    attributes = AttributeTypes(driver_models[key])
    assert _undecided(attributes, DRIVER) == []
    refused = {
        d.enumerator
        for f in DRIVER
        if f in attributes.functions
        for d in attributes.decisions(f)
        if d.type is None
    }
    coredump = "cuCoredumpGetAttribute" in attributes.functions  # 12.1+
    assert refused == {"CU_POINTER_ATTRIBUTE_P2P_TOKENS"} | (
        {"CU_COREDUMP_MAX"} if coredump else set()
    )
    types = TypeMapper(driver_models[key])
    found = {f.name for f in driver_models[key].functions if _attribute_like(types, f)}
    assert found - DRIVER - set(LEFT) == set()


def test_functions_exist_in_every_version(models, driver_models):
    for key, model in models.items():
        names = {f.name for f in model.functions}
        driver = {f.name for f in driver_models[key].functions}
        assert RUNTIME <= names, (key, RUNTIME - names)
        since = {
            f
            for f, first in DRIVER_SINCE.items()
            if key in version_keys()[: version_keys().index(first)]
        }
        assert DRIVER - since <= driver, (key, DRIVER - since - driver)
        assert since.isdisjoint(driver), (key, since & driver)  # DRIVER_SINCE says when
        assert set(LEFT) <= names | driver, (key, set(LEFT) - names - driver)
    assert GETTERS <= set(FUNCTIONS)
    assert all(reason for reason in LEFT.values())


def test_reviewed_entries_are_needed_and_agree_with_the_docs(models, driver_models):
    """Each reviewed entry decides some version's attribute the docs leave open, and
    where a version's docs do say the type, they say what the entry says."""
    used = set()
    for model in [*models.values(), *driver_models.values()]:
        attributes = AttributeTypes(model)
        for function in [f for f in FUNCTIONS if f in attributes.functions]:
            enum = attributes.enum_of(function)
            documented = attributes.documented(function)
            for name, (value_type, _) in REVIEWED.items():
                if name[0] != enum or name[1] not in {
                    k.name for k in attributes.types.enums[enum].enumerators
                }:
                    continue
                if name[1] in documented:
                    assert documented[name[1]] == value_type, name
                else:
                    used.add(name)
    assert used == set(REVIEWED)
    assert all(reason for _, reason in REVIEWED.values()), "every entry says why"


def _attribute_like(types: TypeMapper, f) -> bool:
    """An attribute enum argument beside a `void *` or union pointer value."""
    enums = [
        p
        for p in f.params
        if types.classify(p.type) is TypeKind.ENUM
        # cudaMemPoolAttr, cudaLaunchAttributeID, CUpointer_attribute
        and "attr" in types.resolve(p.type).name.lower()
    ]
    values = []
    for p in f.params:
        kind = types.classify(p.type)
        if kind is TypeKind.VOID_POINTER and not types.points_to_const(p.type):
            values.append(p)
        elif kind is TypeKind.POINTER:
            pointee = types.pointee(p.type)
            if types.classify(pointee) is TypeKind.RECORD:
                if types.records[types.resolve(pointee).name].kind == "union":
                    values.append(p)
            elif types.classify(pointee) is TypeKind.VOID_POINTER:
                values.append(p)
    pointers_to_enums = [  # cudaMemRangeGetAttributes' array of attributes
        p
        for p in f.params
        if types.classify(p.type) is TypeKind.POINTER
        and types.classify(types.pointee(p.type)) is TypeKind.ENUM
        and "attr" in types.resolve(types.pointee(p.type)).name.lower()
    ]
    return bool(values) and bool(enums or pointers_to_enums)


@pytest.mark.parametrize("key", version_keys())
def test_every_attribute_value_function_has_a_decision(models, key):
    """Each function whose value an attribute argument types is converted
    (FUNCTIONS) or left as a pointer with a reason (LEFT)."""
    types = TypeMapper(models[key])
    found = {f.name for f in models[key].functions if _attribute_like(types, f)}
    assert found - RUNTIME - set(LEFT) == set()
    assert RUNTIME <= found


def test_docs_give_the_documented_types(models):
    """Spot checks of what the docs reading finds (13.5)."""
    attributes = AttributeTypes(models["13.5"])
    pool = {d.enumerator: d for d in attributes.decisions("cudaMemPoolSetAttribute")}
    assert pool["cudaMemPoolAttrReleaseThreshold"].type.ctype == "unsigned long long"
    assert pool["cudaMemPoolReuseAllowOpportunistic"].type.ctype == "int"
    assert pool["cudaMemPoolAttrLocationType"].type.ctype == "cudaMemLocationType"
    assert {d.source for d in pool.values()} == {"docs"}
    launch = {d.enumerator: d for d in attributes.decisions("cudaStreamGetAttribute")}
    assert launch["cudaLaunchAttributePriority"].type.member == "priority"
    assert launch["cudaLaunchAttributeAccessPolicyWindow"].type.member == "accessPolicyWindow"
    assert launch["cudaLaunchAttributeDeviceUpdatableKernelNode"].type.member == (
        "deviceUpdatableKernelNode"
    )
    assert launch["cudaLaunchAttributeIgnore"].type.whole_union
    ranges = {d.enumerator: d for d in attributes.decisions("cudaMemRangeGetAttribute")}
    assert ranges["cudaMemRangeAttributeAccessedBy"].type.array
    assert ranges["cudaMemRangeAttributeReadMostly"].type.ctype == "int"
    assert ranges["cudaMemRangeAttributeLastPrefetchLocationType"].type.ctype == (
        "cudaMemLocationType"
    )


def test_cli_lists_the_table(capsys):
    assert main(["outputs", "--attributes", "12.0"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# CUDA 12.0: ")
    assert (
        "  cudaMemPoolSetAttribute: cudaMemPoolAttrReleaseThreshold = unsigned long long (docs)"
        in out
    )
    assert "cudaStreamSetAttribute: cudaLaunchAttributePriority = union member priority " in out
    assert "(table: 12.0-12.2:" in out
    assert "UNDECIDED" not in out


# The listing of 12.5's cached model, made in a fresh interpreter under a given hash seed.
_LISTING = """
import json, sys
sys.path.insert(0, "tests/support")
from models import model_for
from suite import quiet
from generator.attributes import listing
from generator.fetch import fetch_version
from generator.manifest import Manifest
print(json.dumps(listing(model_for(fetch_version(Manifest.load(), "12.5", quiet)))))
"""


def test_listing_is_deterministic(models):
    # The table is reviewed as text: its order must not hang on set or dict order
    # across interpreters, so other hash seeds list what this process lists.
    here = listing(models["12.5"])
    assert len(here) > 50
    for seed in ("1", "2"):
        out = run_python(_LISTING, env={"PYTHONHASHSEED": seed}).stdout
        assert json.loads(out) == here, seed


# ---------------------------------------------------------------- the generated tables


def _tables(module):
    return {
        name: table
        for name, table in vars(module).items()
        if isinstance(table, _convert.AttributeTable)
    }


# struct formats of the C types the docs name: independent of ctypes' aliases.
_FORMATS = {
    "int": "<i",
    "unsigned long long": "<Q",
    "unsigned int": "<I",
    # cuda.h's (64-bit platforms: what CUDA supports)
    "CUdeviceptr": "<Q",
    "size_t": "<Q",
    # handles (CU_POINTER_ATTRIBUTE_CONTEXT, _MEMPOOL_HANDLE): pointers
    "CUcontext": "<Q",
    "CUmemoryPool": "<Q",
}


def _format(attributes: AttributeTypes, ctype: str) -> str:
    # An enum by its typedef (cuda.h's CUmemLocationType names CUmemLocationType_enum).
    t = attributes.types.resolve(attributes.c_type(ctype))
    enum = attributes.types.enums.get(t.name) if isinstance(t, EnumRef) else None
    return _FORMATS[enum.underlying.name if enum else ctype]


@pytest.mark.backend
@pytest.mark.parametrize("key", version_keys())
def test_setters_hand_c_the_bytes_of_the_attribute_type(manifest, models, key):
    """Every attribute of every number-typed table: its limits go through as C's bytes,
    one past them is an OverflowError, and 0 is a pointer to a zero (not NULL)."""
    module = checked(manifest, key)
    attributes = AttributeTypes(models[key])
    assert _setters_hand_c_their_bytes(module, attributes, RUNTIME) >= 20


def _driver_checked(manifest, key):
    name = f"cudart.driver_checked_{manifest.get(key).number}"
    if importlib.util.find_spec(name) is None:
        pytest.skip(f"{name} is not generated in this checkout")
    return importlib.import_module(name)


@pytest.mark.parametrize("key", version_keys())
def test_driver_setters_hand_c_the_bytes_of_the_attribute_type(manifest, driver_models, key):
    module = _driver_checked(manifest, key)
    attributes = AttributeTypes(driver_models[key])
    assert _setters_hand_c_their_bytes(module, attributes, DRIVER) >= 40


def _setters_hand_c_their_bytes(module, attributes: AttributeTypes, functions) -> int:
    checked_any = 0
    for function in sorted(functions):
        if function not in attributes.functions or attributes.union_of(function):
            continue
        table = getattr(module, attributes.table_name(function))
        for d in attributes.decisions(function):
            if d.type is None:  # refused (attributes.REFUSED)
                with pytest.raises(ValueError, match="has no value type decided"):
                    _convert.attribute_value(0, d.value, table, function, "value")
                continue
            if d.type.ctype == "_Bool":  # C's bool: one byte
                for sample, data in ((True, b"\x01"), (False, b"\x00"), (1, b"\x01")):
                    arg = _convert.attribute_value(sample, d.value, table, function, "value")
                    assert bytes(arg._obj) == data
                for outside in (2, -1, "1"):
                    with pytest.raises(TypeError, match="bool"):
                        _convert.attribute_value(outside, d.value, table, function, "v")
                checked_any += 1
                continue
            if d.type.length is not None:  # a string and its NUL, in char[length]
                longest = "x" * (d.type.length - 1)
                for sample in ("", "/tmp/core", longest):
                    arg = _convert.attribute_value(sample, d.value, table, function, "value")
                    assert bytes(arg._obj) == sample.encode() + b"\0"
                with pytest.raises(ValueError, match=f"at most {d.type.length - 1}"):
                    _convert.attribute_value(longest + "x", d.value, table, function, "v")
                checked_any += 1
                continue
            fmt = _format(attributes, d.type.ctype)
            bits = struct.calcsize(fmt) * 8
            low, high = (
                (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
                if fmt.islower()
                else (
                    0,
                    (1 << bits) - 1,
                )
            )
            samples = [low, high, 0] if not d.type.array else [[low, high, 0]]
            for sample in samples:
                arg = _convert.attribute_value(sample, d.value, table, function, "value")
                assert type(arg).__name__ == "CArgObject"  # byref: an address, never NULL
                items = sample if isinstance(sample, list) else [sample]
                assert bytes(arg._obj) == b"".join(struct.pack(fmt, v) for v in items)
            for outside in (low - 1, high + 1):
                with pytest.raises(OverflowError, match=f"{bits}-bit"):
                    _convert.attribute_value(
                        [outside] if d.type.array else outside, d.value, table, function, "v"
                    )
            checked_any += 1
    return checked_any


@pytest.mark.backend
@pytest.mark.parametrize("key", version_keys())
def test_getters_read_the_attribute_type(manifest, models, key):
    _getters_read_their_type(checked(manifest, key), AttributeTypes(models[key]), RUNTIME)


@pytest.mark.parametrize("key", version_keys())
def test_driver_getters_read_the_attribute_type(manifest, driver_models, key):
    module = _driver_checked(manifest, key)
    _getters_read_their_type(module, AttributeTypes(driver_models[key]), DRIVER)


def _getters_read_their_type(module, attributes: AttributeTypes, functions) -> None:
    for function in sorted(GETTERS & functions):
        if function not in attributes.functions:
            continue  # newer than this version (DRIVER_SINCE)
        table = getattr(module, attributes.table_name(function))
        union = attributes.union_of(function)
        for d in attributes.decisions(function):
            if d.type is None:
                continue  # refused: test_driver_setters_hand_c_the_bytes_of_the_attribute_type
            if d.type.ctype == "_Bool":
                storage = _convert.attribute_storage(d.value, table, function)
                assert ctypes.sizeof(storage) == 1
                ctypes.memmove(ctypes.byref(storage), b"\x01", 1)
                assert _convert.attribute_result(storage, d.value, table) is True
                continue
            if d.type.length is not None:
                storage = _convert.attribute_storage(d.value, table, function)
                assert ctypes.sizeof(storage) == d.type.length  # what C may write
                ctypes.memmove(ctypes.byref(storage), b"core.%p\0junk", 12)
                assert _convert.attribute_result(storage, d.value, table) == "core.%p"
                continue
            size = None
            if d.type.array:
                size = 12
            elif function in ("cudaMemRangeGetAttribute", "cuMemRangeGetAttribute"):
                size = struct.calcsize(_format(attributes, d.type.ctype))
            storage = _convert.attribute_storage(d.value, table, function, size)
            if union:
                assert type(storage).__name__ == union
                if d.type.member:
                    field = dict(type(storage)._fields_)[d.type.member]
                    if issubclass(field, ctypes.Structure):
                        result = _convert.attribute_result(storage, d.value, table)
                        assert type(result).__name__ == field.__name__
                        assert ctypes.addressof(result) == ctypes.addressof(storage)
                        continue
                    ctypes.memmove(ctypes.byref(storage), struct.pack("<i", 7), 4)
                    assert _convert.attribute_result(storage, d.value, table) == 7
                else:
                    assert _convert.attribute_result(storage, d.value, table) is storage
                continue
            fmt = _format(attributes, d.type.ctype)
            count = size // 4 if d.type.array else 1
            values = [(1 << 40) + 3 if fmt == "<Q" else 2] * count
            data = b"".join(struct.pack(fmt, v) for v in values)
            ctypes.memmove(ctypes.byref(storage), data, len(data))
            result = _convert.attribute_result(storage, d.value, table)
            if attributes.types.classify(attributes.c_type(d.type.ctype)) is TypeKind.HANDLE:
                # A handle comes back as the handle class's object, as other outputs do.
                assert type(result).__name__ == d.type.ctype, (function, d.enumerator)
                result = int(result)
            assert result == (values if d.type.array else values[0])
            enum = attributes.types.enum_class(attributes.c_type(d.type.ctype))
            if enum:
                assert type(result).__name__ == enum  # the enum's member, not a bare int


@pytest.mark.backend
def test_union_members_and_the_union_itself(manifest):
    module = checked(manifest, "13.5")
    raw = importlib.import_module("cudart.sys_13050")
    table = module._cudaLaunchAttributeID_values
    fn = "cudaStreamSetAttribute"
    arg = _convert.attribute_value(-3, raw.cudaLaunchAttributePriority, table, fn, "value")
    assert ctypes.sizeof(arg._obj) == ctypes.sizeof(raw.cudaLaunchAttributeValue)
    assert bytes(arg._obj)[:4] == struct.pack("<i", -3)
    window = raw.cudaAccessPolicyWindow(base_ptr=0x1000, num_bytes=4096, hitRatio=0.5)
    arg = _convert.attribute_value(
        window, raw.cudaLaunchAttributeAccessPolicyWindow, table, fn, "v"
    )
    assert bytes(arg._obj)[: ctypes.sizeof(window)] == bytes(window)
    union = raw.cudaLaunchAttributeValue()
    arg = _convert.attribute_value(union, raw.cudaLaunchAttributePriority, table, fn, "v")
    assert arg._obj is union  # passed as is, whatever the attribute
    with pytest.raises(TypeError, match="must be a cudaAccessPolicyWindow"):
        _convert.attribute_value(5, raw.cudaLaunchAttributeAccessPolicyWindow, table, fn, "v")
    with pytest.raises(TypeError, match="must be a cudaLaunchAttributeValue"):
        _convert.attribute_value(5, raw.cudaLaunchAttributeIgnore, table, fn, "v")
    with pytest.raises(OverflowError):
        _convert.attribute_value(2**31, raw.cudaLaunchAttributePriority, table, fn, "v")
    # An enum-typed member comes back as the enum's member.
    storage = _convert.attribute_storage(raw.cudaLaunchAttributeSynchronizationPolicy, table, fn)
    storage.syncPolicy = int(raw.cudaSyncPolicySpin)
    result = _convert.attribute_result(storage, raw.cudaLaunchAttributeSynchronizationPolicy, table)
    assert result is raw.cudaSynchronizationPolicy.cudaSyncPolicySpin


@pytest.mark.backend
def test_refusals_name_the_function_and_attribute(manifest):
    module = checked(manifest, "13.5")
    raw = importlib.import_module("cudart.sys_13050")
    table = module._cudaMemPoolAttr_values
    with pytest.raises(ValueError, match=r"cudaMemPoolSetAttribute: 999 is not an attribute"):
        _convert.attribute_value(1, 999, table, "cudaMemPoolSetAttribute", "value")
    with pytest.raises(TypeError, match="'value' for cudaMemPoolAttrReleaseThreshold must be"):
        module.cudaMemPoolSetAttribute(None, raw.cudaMemPoolAttrReleaseThreshold, 1.5)
    for pointer in (ctypes.c_void_p(8), ctypes.byref(ctypes.c_uint64(8))):
        with pytest.raises(TypeError, match="is the value itself, not a pointer to it"):
            module.cudaMemPoolSetAttribute(None, raw.cudaMemPoolAttrReleaseThreshold, pointer)
    # A ctypes scalar is read as its value; a bool is an int.
    arg = _convert.attribute_value(ctypes.c_uint64(9), 4, table, "f", "value")
    assert bytes(arg._obj) == struct.pack("<Q", 9)
    arg = _convert.attribute_value(True, 1, table, "f", "value")
    assert bytes(arg._obj) == struct.pack("<i", 1)
    ranges = module._cudaMemRangeAttribute_values
    with pytest.raises(ValueError, match="the size must be 4 bytes, not 8"):
        module.cudaMemRangeGetAttribute(8, raw.cudaMemRangeAttributeReadMostly, 0, 16)
    with pytest.raises(ValueError, match="positive multiple of 4 bytes, not 6"):
        _convert.attribute_storage(3, ranges, "cudaMemRangeGetAttribute", 6)


@pytest.mark.backend
def test_several_range_attributes_at_once(manifest):
    """cudaMemRangeGetAttributes: one storage per attribute, sized as C is told, behind
    the `void *` array C writes through; the values come back as a list."""
    module = checked(manifest, "13.5")
    raw = importlib.import_module("cudart.sys_13050")
    table = module._cudaMemRangeAttribute_values
    fn = "cudaMemRangeGetAttributes"
    attrs = [raw.cudaMemRangeAttributeReadMostly, raw.cudaMemRangeAttributeAccessedBy]
    storages = _convert.attribute_storages(attrs, table, fn, [4, 8], 2)
    assert [ctypes.sizeof(s) for s in storages._items] == [4, 8]
    assert list(storages) == [ctypes.addressof(s) for s in storages._items]
    storages._items[0].value = 1
    storages._items[1][:] = [0, -2]
    assert _convert.attribute_results(storages, attrs, table) == [1, [0, -2]]
    # What the checked layer made of the caller's lists (byref of ctypes arrays) works too.
    made = ctypes.byref((ctypes.c_size_t * 2)(4, 8))
    assert (
        len(
            _convert.attribute_storages(ctypes.byref((ctypes.c_uint * 2)(1, 3)), table, fn, made, 2)
        )
        == 2
    )
    with pytest.raises(ValueError, match="2 attributes and 1 sizes, for 2 attributes"):
        _convert.attribute_storages(attrs, table, fn, [4], 2)
    with pytest.raises(ValueError, match="the size must be 4 bytes, not 8"):
        _convert.attribute_storages(attrs, table, fn, [8, 8], 2)
    with pytest.raises(TypeError, match="must be sequences"):
        module.cudaMemRangeGetAttributes(16, 1, 1, 0, 16)


def test_signatures_and_docstrings(manifest):
    import inspect

    module = checked(manifest, "13.5")

    def sig(f):
        return inspect.signature(f)

    assert list(sig(module.cudaMemPoolSetAttribute).parameters) == ["memPool", "attr", "value"]
    assert sig(module.cudaMemPoolSetAttribute).parameters["value"].annotation == "int"
    assert sig(module.cudaMemPoolGetAttribute).return_annotation == "int"
    assert list(sig(module.cudaMemRangeGetAttribute).parameters) == [
        "dataSize",
        "attribute",
        "devPtr",
        "count",
    ]
    assert sig(module.cudaMemRangeGetAttribute).return_annotation == "int | list[int]"
    assert sig(module.cudaMemRangeGetAttributes).return_annotation == "list[int | list[int]]"
    assert list(sig(module.cudaMemRangeGetAttributes).parameters) == [
        "dataSizes",
        "attributes",
        "numAttributes",
        "devPtr",
        "count",
    ]
    stream = sig(module.cudaStreamGetAttribute).return_annotation
    assert stream.startswith("int | cudaAccessPolicyWindow | ")
    assert stream.endswith(" | cudaLaunchAttributeValue")
    doc = module.cudaMemPoolSetAttribute.__doc__
    assert "cudaMemPoolAttrReleaseThreshold: int (unsigned long long)" in doc
    assert "For a raw pointer, call the raw module's cudaMemPoolSetAttribute." in doc
    assert "cudaLaunchAttributePriority: int (member priority)" in (
        module.cudaStreamSetAttribute.__doc__
    )


# ---------------------------------------------------------------- the real libraries

_PROBE = """
import json, cudart as c
out = {}
def attempt(name, call):
    try:
        call()
        out[name] = "returned"
    except Exception as exc:
        out[name] = [type(exc).__name__, isinstance(exc, c.CudaError)]
pool = c.cudaMemPool_t(0)
attempt("set", lambda: c.cudaMemPoolSetAttribute(pool, c.cudaMemPoolAttrReleaseThreshold, 0))
attempt("flag", lambda: c.cudaMemPoolSetAttribute(pool, c.cudaMemPoolReuseAllowOpportunistic, 1))
attempt("get", lambda: c.cudaMemPoolGetAttribute(pool, c.cudaMemPoolAttrUsedMemCurrent))
attempt("graph_set", lambda: c.cudaDeviceSetGraphMemAttribute(0, c.cudaGraphMemAttrUsedMemHigh, 0))
attempt("graph_get", lambda: c.cudaDeviceGetGraphMemAttribute(0, c.cudaGraphMemAttrUsedMemHigh))
attempt("stream_set", lambda: c.cudaStreamSetAttribute(None, c.cudaLaunchAttributePriority, 0))
attempt("stream_get", lambda: c.cudaStreamGetAttribute(None, c.cudaLaunchAttributePriority))
attempt("node_get", lambda: c.cudaGraphKernelNodeGetAttribute(None, c.cudaLaunchAttributePriority))
attempt("range", lambda: c.cudaMemRangeGetAttribute(4, c.cudaMemRangeAttributeReadMostly, 0, 16))
attempt("ranges", lambda: c.cudaMemRangeGetAttributes([4, 8], [1, 3], 2, 0, 16))
print(json.dumps(out))
"""


@pytest.mark.backend
def test_each_real_library_is_reached(header_sets):
    """Without a GPU each runtime answers with an error code: the values were converted
    and C was called (a CudaError), where a NULL or refused value would not be."""
    for key, out in probe_each_version(_PROBE, header_sets).items():
        for name, result in out.items():
            assert result != "returned" and result[1], (key, name, result)
