"""`char x[N]` members: text reads up to the first zero, bytes read all N (issue #10).

ctypes reads a `c_char * N` member up to its first zero byte. The generator decides
which plain `char` arrays hold bytes (generator/ctypes_map.py,
`TypeMapper.binary_char_array`) and the raw module makes those read and write all N
bytes (cudart._layout.binary_fields). The table below is the review of that decision:
every `char` array member of every supported version, text or bytes, of the runtime's
raw modules (sys_) and the driver's (driver_). A version that
adds one fails here until it is added, with its reason.
"""

from __future__ import annotations

import ctypes
import importlib

import pytest

from cudart._layout import BinaryField, LayoutError, binary_fields
from cudart._views import versions
from generator.ctypes_map import TypeMapper
from generator.model import ApiModel, Array, Builtin, Field

VERSIONS = [str(v) for v in versions("sys")]
# The raw modules reviewed: the runtime's (sys_) and the driver's (driver_), each of
# every generated version.
RAW_MODULES = [f"sys_{v}" for v in VERSIONS] + [f"driver_{v}" for v in versions("driver")]

# (record class, member) -> (holds bytes, why)
CHAR_ARRAYS = {
    ("cudaDeviceProp", "name"): (False, 'a name: "ASCII string identifying device"'),
    ("cudaDeviceProp", "luid"): (True, '"8-byte locally unique identifier"'),
    ("CUuuid_st", "bytes"): (True, "the 16 bytes of a UUID (cudaUUID_t)"),
    ("cudaIpcEventHandle_st", "reserved"): (True, "an opaque IPC handle"),
    ("cudaIpcMemHandle_st", "reserved"): (True, "an opaque IPC handle"),
    ("cudaMemFabricHandle_st", "reserved"): (True, "an opaque fabric handle (12.3+)"),
    ("cudaLaunchAttributeValue", "pad"): (True, "padding of the union"),
    ("cudaLaunchAttribute_st", "pad"): (True, "padding after the attribute id"),
    # The driver's (cuda.h); CUuuid_st is the runtime's cudaUUID_t, above.
    ("CUipcEventHandle_st", "reserved"): (True, "an opaque IPC handle"),
    ("CUipcMemHandle_st", "reserved"): (True, "an opaque IPC handle"),
    ("CUlaunchAttributeValue_union", "pad"): (True, "padding of the union"),
    ("CUlaunchAttribute_st", "pad"): (True, "padding after the attribute id"),
    ("CUgraphNodeParams_st", "asBytes"): (True, '"Padding as bytes": the union as bytes (13.3+)'),
    ("CUcheckpointCheckpointArgs_st", "reserved"): (True, '"Reserved ... must be zeroed"'),
    ("CUcheckpointRestoreArgs_st", "reserved"): (True, '"Reserved ... must be zeroed"'),
}


def raw(version: str):
    return importlib.import_module(f"cudart.sys_{version}")


def char_arrays(mod) -> dict[tuple[str, str], bool]:
    """(record, member) -> whether it reads all its bytes. An anonymous member's char
    arrays are read through the record holding it (ctypes promotes them), so they are
    listed, and decided, under that record."""
    records = {
        name: cls
        for name, cls in vars(mod).items()
        if isinstance(cls, type)
        and issubclass(cls, (ctypes.Structure, ctypes.Union))
        and cls.__name__ == name  # a typedef of a record: listed under its own name
    }
    anonymous = {
        dict(cls._fields_)[member]
        for cls in records.values()
        for member in cls.__dict__.get("_anonymous_", ())
    }
    found = {}
    for name, cls in records.items():
        if cls in anonymous:
            continue
        for member, ctype in _members(cls):
            if issubclass(ctype, ctypes.Array) and ctype._type_ is ctypes.c_char:
                found[(name, member)] = isinstance(cls.__dict__[member], BinaryField)
    return found


def _members(cls) -> list[tuple[str, type]]:
    """A record's members as Python reads them: an anonymous member's in its place."""
    out = []
    for member, ctype in cls.__dict__.get("_fields_", ()):
        if member in cls.__dict__.get("_anonymous_", ()):
            out += _members(ctype)
        else:
            out.append((member, ctype))
    return out


@pytest.mark.parametrize("module", RAW_MODULES)
def test_every_char_array_is_reviewed(module):
    found = char_arrays(importlib.import_module(f"cudart.{module}"))
    assert found, "no char array members at all"
    unreviewed = set(found) - set(CHAR_ARRAYS)
    assert not unreviewed, f"char arrays to review in CHAR_ARRAYS: {sorted(unreviewed)}"
    assert found == {key: CHAR_ARRAYS[key][0] for key in found}


def test_every_reviewed_char_array_is_in_some_module():
    # A row no version has any more (or a misspelt one) is no review.
    seen = set()
    for module in RAW_MODULES:
        seen |= set(char_arrays(importlib.import_module(f"cudart.{module}")))
    assert set(CHAR_ARRAYS) - seen == set()


@pytest.mark.backend
@pytest.mark.parametrize("version", VERSIONS)
def test_uuid_and_luid_read_every_byte(version):
    mod = raw(version)
    prop_t = mod.cudaDeviceProp
    uuid = bytes([0xAB, 0x00, 0xCD, 0x00] + list(range(1, 13)))
    luid = b"\x00\x11\x00\x22\x00\x33\x00\x44"
    buffer = bytearray(ctypes.sizeof(prop_t))
    buffer[: len(b"Test GPU")] = b"Test GPU"
    buffer[prop_t.name.offset + 9 : prop_t.name.offset + 12] = b"xyz"  # after the NUL
    uuid_at = prop_t.uuid.offset + mod.cudaUUID_t.bytes.offset
    buffer[uuid_at : uuid_at + 16] = uuid
    buffer[prop_t.luid.offset : prop_t.luid.offset + 8] = luid
    prop = prop_t.from_buffer_copy(bytes(buffer))
    assert prop.uuid.bytes == uuid and len(prop.uuid.bytes) == 16
    assert prop.luid == luid
    assert prop.name == b"Test GPU"  # a name is text: it stops at the NUL, as before
    # Writing: all N bytes, zeros included; a shorter value is zero-filled.
    prop.uuid.bytes = uuid[::-1]
    assert prop.uuid.bytes == uuid[::-1]
    assert bytes(prop)[uuid_at : uuid_at + 16] == uuid[::-1]
    prop.luid = b"\x00\x01"
    assert prop.luid == b"\x00\x01" + bytes(6)
    with pytest.raises(ValueError):
        prop.luid = bytes(9)
    standalone = mod.cudaUUID_t(uuid)
    assert standalone.bytes == uuid and bytes(standalone) == uuid


@pytest.mark.parametrize("version", VERSIONS)
def test_layout_unchanged(version):
    mod = raw(version)
    assert ctypes.sizeof(mod.cudaUUID_t) == 16 and ctypes.alignment(mod.cudaUUID_t) == 1
    assert (mod.cudaUUID_t.bytes.offset, mod.cudaUUID_t.bytes.size) == (0, 16)
    assert mod.cudaDeviceProp.luid.size == 8
    assert mod.cudaDeviceProp.luid.offset == mod.cudaDeviceProp.uuid.offset + 16
    assert ctypes.sizeof(mod.cudaIpcMemHandle_t) == 64


@pytest.mark.backend
@pytest.mark.parametrize("version", VERSIONS)
def test_ipc_handle_reads_every_byte(version):
    mod = raw(version)
    handle = bytes(range(64))  # starts with a zero byte
    h = mod.cudaIpcMemHandle_t.from_buffer_copy(handle)
    assert h.reserved == handle
    value = mod.cudaLaunchAttributeValue()
    value.pad = b"\x00\x07" * 32
    assert value.pad == b"\x00\x07" * 32


def _field(name: str, doc: str = "", element: str = "char") -> Field:
    return Field(name, Array(Builtin(element), 8), 0, doc=doc)


@pytest.mark.parametrize(
    ("field", "binary"),
    [
        (_field("name", "ASCII string identifying device"), False),
        (_field("deviceName"), False),
        (_field("dev_name"), False),
        (_field("label", "A NUL-terminated string"), False),
        (_field("luid", "8-byte locally unique identifier"), True),
        (_field("bytes"), True),
        (_field("reserved"), True),
        (_field("pad", "Pad to 64 bytes"), True),
        (_field("names_of"), True),  # not a name: the rule looks at the end of the member
        (_field("raw", element="unsigned char"), False),  # c_ubyte arrays read all bytes already
        (Field("c", Builtin("char"), 0), False),
    ],
)
def test_binary_char_array_rule(field, binary):
    types = TypeMapper(ApiModel(cuda_version=12050))
    assert types.binary_char_array(field) is binary


def test_binary_fields_rejects_other_members():
    class R(ctypes.Structure):
        _fields_ = [("x", ctypes.c_ubyte * 4), ("y", ctypes.c_char * 4)]

    with pytest.raises(LayoutError):
        binary_fields(R, "x")
    binary_fields(R, "y")
    r = R()
    r.y = bytearray(b"\x00ab\x00")
    assert r.y == b"\x00ab\x00" and list(r.x) == [0] * 4
    with pytest.raises(TypeError):
        r.y = 5


def test_a_bytes_member_takes_c_chars():
    # cuda-bindings' records take a char array as a list of ints, a negative one as C's
    # signed char holds it (its test_char_range); -1 and 255 are the same byte.
    r = raw("12050").cudaIpcMemHandle_st()
    for x in range(-128, 256):
        r.reserved = [x] * 64
        assert r.reserved == bytes([x & 0xFF]) * 64
    r.reserved = (1, -2)
    assert r.reserved == b"\x01\xfe" + bytes(62)
    for wrong, error in (([256], OverflowError), ([-129], OverflowError), ([1.0], TypeError)):
        with pytest.raises(error):
            r.reserved = wrong
    with pytest.raises(ValueError, match="65 bytes for a member of 64"):
        r.reserved = [0] * 65
    assert r.reserved == b"\x01\xfe" + bytes(62)  # a refused value leaves it as it was
