"""Records of the checked layer as C code fills them and reads them: field by field
(a host node's `fn` and `userData` in either order), pointer members and builders
that take buffers and keep them alive, and records read out of records (views) with
`copy.copy` giving a detached value. No GPU: building and filling records is Python
and ctypes over the real libcudart's modules."""

from __future__ import annotations

import ctypes
import importlib

import needs
import pytest

import cudart

VERSIONS = [v for v in cudart.available_versions() if v in (12050, 13050)]


@pytest.fixture(params=VERSIONS, ids=[f"checked_{v}" for v in VERSIONS])
def checked(request):
    return importlib.import_module(f"cudart.checked_{request.param}")


# ---------------------------------------------------------------- host node records


def test_host_node_fn_set_after_construction(checked):
    params = checked.cudaHostNodeParams()
    params.fn = print
    assert params._python_fn_ == (print, None)
    assert not ctypes.cast(params.fn, ctypes.c_void_p).value  # the raw layer sees NULL


@pytest.mark.parametrize("data", [["any", "object"], 5, "text"])
def test_host_node_user_data_before_fn(checked, data):
    params = checked.cudaHostNodeParams()
    params.userData = data
    params.fn = print
    assert params._python_fn_ == (print, data)
    assert params.userData is None  # C's field holds nothing: the callable's data is Python's


def test_host_node_user_data_after_fn(checked):
    params = checked.cudaHostNodeParams()
    params.fn = print
    params.userData = {"k": 1}
    assert params._python_fn_ == (print, {"k": 1})


def test_host_node_python_fn_replaced_by_c_pointer_keeps_int_data(checked):
    params = checked.cudaHostNodeParams(fn=print, userData=1234)
    c_fn = checked._lib.cudaHostFn_t(lambda data: None)
    params.fn = c_fn
    assert params._python_fn_ is None
    assert params.userData == 1234
    params.fn = print  # and back: the data follows
    assert params._python_fn_ == (print, 1234)


def test_host_node_fn_none_clears_the_callable(checked):
    params = checked.cudaHostNodeParams(print, "x")
    params.fn = None
    assert params._python_fn_ is None
    params.fn = len
    assert params._python_fn_ == (len, "x")


# ---------------------------------------------------------------- memory in records

np = needs.numpy()


@pytest.fixture
def host():
    """A HostMemory over memory ctypes owns (no GPU to allocate it), with its backing."""
    from cudart._hostmem import host_memory

    backing = ctypes.create_string_buffer(256)
    return host_memory(ctypes.addressof(backing), 256), backing


def _address_of(buffer):
    return ctypes.addressof((ctypes.c_char * len(buffer)).from_buffer(buffer))


@pytest.mark.backend
def test_pitched_builder_takes_what_pointer_parameters_take(checked, host):
    memory, backing = host
    array = np.zeros(256, np.uint8)
    data = bytearray(256)
    cases = [
        (array, array.ctypes.data),
        (data, _address_of(data)),
        (memory, ctypes.addressof(backing)),
        (backing, ctypes.addressof(backing)),
        (ctypes.byref(backing), ctypes.addressof(backing)),
    ]
    for given, expected in cases:
        record = checked.make_cudaPitchedPtr(given, 64, 16, 4)
        assert (record.ptr, record.pitch, record.xsize, record.ysize) == (expected, 64, 16, 4)


@pytest.mark.backend
def test_pitched_builder_refuses_a_buffer_smaller_than_pitch_times_ysize(checked, host):
    memory, _ = host
    for given in (np.zeros(256, np.uint8), bytearray(256), memory):
        checked.make_cudaPitchedPtr(given, 64, 64, 4)  # exactly 256 bytes
        with pytest.raises(ValueError, match=r"p \* ysz = 320 bytes, but 'd' is a buffer of 256"):
            checked.make_cudaPitchedPtr(given, 64, 16, 5)
    # An int is the caller's promise, as in C.
    assert checked.make_cudaPitchedPtr(0x10000, 64, 16, 5).ptr == 0x10000


@pytest.mark.backend
def test_pitched_builder_still_refuses_handles_and_freed_memory(checked, host):
    memory, _ = host
    with pytest.raises(TypeError, match="a handle is no memory"):
        checked.make_cudaPitchedPtr(checked.cudaEvent_t(0x1234), 1, 1, 1)
    memory._release()
    with pytest.raises(ValueError, match="was freed"):
        checked.make_cudaPitchedPtr(memory, 1, 1, 1)


def test_record_keeps_the_builders_buffer_alive(checked):
    import gc
    import weakref

    array = np.zeros(64, np.uint8)
    gone = weakref.ref(array)
    record = checked.make_cudaPitchedPtr(array, 64, 64, 1)
    del array
    gc.collect()
    assert gone() is not None and record.ptr == gone().ctypes.data
    del record
    gc.collect()
    assert gone() is None


def test_pointer_fields_take_memory_and_keep_it_alive(checked, host):
    import gc
    import weakref

    memory, backing = host
    params = checked.cudaMemsetParams()
    params.dst = memory
    assert params.dst == ctypes.addressof(backing)
    array = np.zeros(64, np.uint8)
    gone = weakref.ref(array)
    params.dst = array
    del array
    gc.collect()
    assert gone() is not None and params.dst == gone().ctypes.data
    params.dst = 0x20000  # a store releases what the member held
    gc.collect()
    assert gone() is None and params.dst == 0x20000
    built = checked.cudaMemsetParams(dst=memory)
    assert built.dst == ctypes.addressof(backing)


def test_pointer_fields_refuse_handles_and_non_addresses(checked):
    params = checked.cudaMemsetParams()
    with pytest.raises(TypeError, match="a handle is no memory"):
        params.dst = checked.cudaStream_t(0x1234)
    with pytest.raises(TypeError, match="must be a pointer"):
        params.dst = 1.5
    with pytest.raises(OverflowError):
        params.dst = -1
    assert params.dst is None  # nothing stored by a refusal


def test_host_node_user_data_memory_for_a_c_function(checked):
    data = bytearray(16)
    params = checked.cudaHostNodeParams()
    params.userData = data
    params.fn = checked._lib.cudaHostFn_t(lambda p: None)
    assert params.userData == _address_of(data)
    other = checked.cudaHostNodeParams(userData=["python", "object"])
    with pytest.raises(TypeError, match="C function pointer as fn takes an address"):
        other.fn = checked._lib.cudaHostFn_t(lambda p: None)
    other.fn = print  # a Python callable takes it
    assert other._python_fn_ == (print, ["python", "object"])


# ---------------------------------------------------------------- records out of records


def _frame(checked):
    frame = checked.cudaEglFrame()
    frame.frame.pPitch[0].pitch = 123
    return frame


def test_a_record_read_out_of_a_record_is_a_view(checked):
    frame = _frame(checked)
    pitched = frame.frame.pPitch[0]
    pitched.pitch = 1234
    assert frame.frame.pPitch[0].pitch == 1234


@pytest.mark.parametrize("how", ["copy", "deepcopy"])
def test_copy_of_a_record_read_out_of_a_record_is_detached(checked, how):
    import copy

    duplicate = getattr(copy, how)
    frame = _frame(checked)
    pitched = duplicate(frame.frame.pPitch[0])  # a record in an array in a union
    pitched.pitch = 1234
    assert frame.frame.pPitch[0].pitch == 123 and pitched.pitch == 1234
    whole = duplicate(frame)  # nested records
    whole.frame.pPitch[0].pitch = 5
    assert frame.frame.pPitch[0].pitch == 123 and whole.frame.pPitch[0].pitch == 5
    array = duplicate(frame.frame.pPitch)  # an array of records
    array[0].pitch = 9
    assert frame.frame.pPitch[0].pitch == 123 and array[0].pitch == 9
    assert type(array) is type(frame.frame.pPitch) and len(array) == 3


def test_a_copy_keeps_the_memory_its_pointers_refer_to(checked):
    import copy
    import gc
    import weakref

    array = np.zeros(64, np.uint8)
    gone = weakref.ref(array)
    frame = checked.cudaEglFrame()
    frame.frame.pPitch[1] = checked.make_cudaPitchedPtr(array, 64, 64, 1)
    pitched = copy.copy(frame.frame.pPitch[1])
    del array, frame
    gc.collect()
    assert gone() is not None and pitched.ptr == gone().ctypes.data


def test_a_copy_of_a_host_node_record_keeps_its_callable(checked):
    import copy

    params = checked.cudaHostNodeParams(fn=print, userData="x")
    twin = copy.copy(params)
    assert type(twin) is type(params) and twin._python_fn_ == (print, "x")
    twin.userData = "y"
    assert params._python_fn_ == (print, "x")


# ---------------------------------------------------------------- HostMemory as an address


def test_host_memory_for_ctypes_views_through_int_or_from_buffer(host):
    memory, backing = host
    floats = (ctypes.c_float * 4).from_buffer(memory)
    floats[0] = 2.5
    assert (ctypes.c_float * 4).from_address(int(memory))[0] == 2.5
    assert ctypes.c_float.from_buffer(backing).value == 2.5


@pytest.mark.backend
def test_integer_parameters_refuse_host_memory(checked, host):
    from cudart import _convert

    memory, _ = host
    with pytest.raises(
        TypeError, match=r"argument 'size': must be an int, not a HostMemory.*int\(h\)"
    ):
        checked.cudaMalloc(memory)
    with pytest.raises(TypeError, match=r"not a HostMemory .*int\(h\) is its address"):
        _convert.c_integer(memory, ctypes.c_int, "value")  # attribute values


def test_a_record_stored_in_a_record_brings_its_memory(checked):
    # cuda-bindings' cudaMemcpy3DAsync test: an ndarray through make_cudaPitchedPtr into
    # cudaMemcpy3DParms, by keyword and by assignment, and a nested member set in place.
    import gc
    import weakref

    array = np.zeros(64, np.uint8)
    gone = weakref.ref(array)
    by_keyword = checked.cudaMemcpy3DParms(srcPtr=checked.make_cudaPitchedPtr(array, 64, 64, 1))
    assigned = checked.cudaMemcpy3DParms()
    assigned.dstPtr = checked.make_cudaPitchedPtr(None, 64, 64, 1)
    assigned.dstPtr.ptr = array
    del array
    gc.collect()
    assert by_keyword.srcPtr.ptr == assigned.dstPtr.ptr == gone().ctypes.data
    del by_keyword, assigned
    gc.collect()
    assert gone() is None


# ---------------------------------------------------------------- integer members
#
# ctypes masks what an integer member cannot hold: `params.value = 2**32` stored 0, and
# -1 into an unsigned member 2**32-1. cudart._layout.integer_fields refuses both, as the
# checked layer refuses such an argument (cudart._fields in C where built, the Python
# descriptor under CUDART_BACKEND=ctypes: both backends run these).

_INTEGER_TYPES = (
    ctypes.c_byte,
    ctypes.c_ubyte,
    ctypes.c_short,
    ctypes.c_ushort,
    ctypes.c_int,
    ctypes.c_uint,
    ctypes.c_long,
    ctypes.c_ulong,
    ctypes.c_longlong,
    ctypes.c_ulonglong,
)


def _c_range(ctype):
    bits = 8 * ctypes.sizeof(ctype)
    if ctype(-1).value < 0:
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1


def _integer_members(raw):
    """(record class, member, ctypes type) of every integer member Python reads on a
    record of `raw` (an anonymous member's own on the record that holds it)."""
    from cudart._layout import _member_types

    classes = [
        cls
        for cls in vars(raw).values()
        if isinstance(cls, type)
        and issubclass(cls, (ctypes.Structure, ctypes.Union))
        and "_fields_" in cls.__dict__
    ]
    anonymous = {
        dict((f[0], f[1]) for f in cls._fields_)[name]
        for cls in classes
        for name in cls.__dict__.get("_anonymous_", ())
    }
    return [
        (cls, name, ctype)
        for cls in classes
        if cls not in anonymous
        for name, ctype in _member_types(cls).items()
        if ctype in _INTEGER_TYPES and name in cls.__dict__
    ]


def _driver(version):
    return importlib.import_module(f"cudart.driver_{version}")


@pytest.mark.backend
@pytest.mark.parametrize("api", ["runtime", "driver"])
def test_every_integer_member_refuses_what_its_c_type_cannot_hold(checked, api):
    version = int(checked.__name__.rsplit("_", 1)[1])
    raw = checked._lib if api == "runtime" else _driver(version)
    members = _integer_members(raw)
    assert len(members) > 300
    for cls, name, ctype in members:
        low, high = _c_range(ctype)
        record_ = cls()
        for value in (low, high):
            setattr(record_, name, value)
            assert getattr(record_, name) == value, (cls.__name__, name)
        for value in (low - 1, high + 1):
            refused = rf"^{cls.__name__}\.{name}: {value} is outside"
            with pytest.raises(OverflowError, match=refused):
                setattr(record_, name, value)
        assert getattr(record_, name) == high  # nothing stored by a refusal
        # An int's refusal, or a CUdeviceptr's ("must be a device address ... not float").
        with pytest.raises(TypeError, match=rf"^{cls.__name__}\.{name}: must be .* float$"):
            setattr(record_, name, 1.0)


@pytest.mark.backend
def test_an_integer_member_names_its_c_type_and_takes_what_an_int_parameter_takes(checked):
    import enum

    params = checked.cudaMemsetParams()
    with pytest.raises(
        OverflowError,
        match=r"^cudaMemsetParams\.value: 4294967296 is outside unsigned int's range "
        r"0\.\.4294967295$",
    ):
        params.value = 1 << 32
    with pytest.raises(OverflowError, match=r"cudaMemsetParams\.width: -1 is outside size_t's"):
        params.width = -1
    for wrong in ("1", b"\x01", None, checked.cudaStream_t(5)):
        with pytest.raises(TypeError, match=r"cudaMemsetParams\.value: must be an int"):
            params.value = wrong

    class Small(enum.IntEnum):
        THREE = 3

    for given, stored in ((True, 1), (Small.THREE, 3), (np.uint8(200), 200), (np.int64(7), 7)):
        params.value = given
        assert params.value == stored and type(params.value) is int
    # The constructor sets members by name and by position through the same descriptors.
    with pytest.raises(OverflowError, match=r"cudaMemsetParams\.elementSize: -1 is outside"):
        checked.cudaMemsetParams(elementSize=-1)
    assert checked.cudaMemsetParams(None, 8, 5).value == 5
    with pytest.raises(OverflowError, match=r"cudaMemsetParams\.value"):
        checked.cudaMemsetParams(None, 8, -5)
    # A signed member: int's range, both ends.
    attributes = checked.cudaFuncAttributes(maxThreadsPerBlock=-(1 << 31))
    assert attributes.maxThreadsPerBlock == -(1 << 31)
    with pytest.raises(OverflowError, match=r"outside int's range -2147483648\.\.2147483647"):
        attributes.maxThreadsPerBlock = 1 << 31


@pytest.mark.backend
def test_an_integer_member_still_says_its_offset_and_size(checked):
    from cudart import _backend

    member = checked.cudaMemsetParams.width
    # cudart/_fields.c where the compiled backend is built and in force, else the Python one.
    compiled = _backend.fields_module() is not None
    assert type(member).__module__ == ("cudart._fields" if compiled else "cudart._layout")
    assert type(member).__name__ == "IntegerField"
    fields = dict((f[0], f[1]) for f in checked.cudaMemsetParams._fields_)
    assert member.size == ctypes.sizeof(fields["width"]) == 8
    # Members in C order, each after the one before it: a `void *`, size_t pitch, two
    # unsigned ints, then width at 24 (C's layout, which the gcc judge checks too).
    assert (checked.cudaMemsetParams.pitch.offset, member.offset) == (8, 24)
    assert "offset=24 size=8" in repr(member)


# ---------------------------------------------------------------- CUdeviceptr members

ADDRESS = 0x7F00_0000_1000


class DeviceMemory:
    """Stands for a CuPy array: __cuda_array_interface__ (read-only if asked)."""

    def __init__(self, address, readonly=False):
        self.__cuda_array_interface__ = {
            "shape": (16,),
            "typestr": "|u1",
            "data": (address, readonly),
            "version": 3,
        }


def _device_address_members(model):
    """(record, member) of every CUdeviceptr member of the driver's model, as Python
    reads them (an anonymous member's on the record that holds it)."""
    from generator.model import RecordRef, TypedefRef

    records = {r.name: r for r in model.records}
    nested = {f.type.name for r in model.records for f in r.fields if f.anonymous}

    def flat(rec):
        for f in rec.fields:
            if f.anonymous and isinstance(f.type, RecordRef):
                yield from flat(records[f.type.name])
            else:
                yield f

    return [
        (rec.name, f.name)
        for rec in model.records
        if not rec.opaque and rec.name not in nested
        for f in flat(rec)
        if isinstance(f.type, TypedefRef) and f.type.name in ("CUdeviceptr", "CUdeviceptr_v2")
    ]


@pytest.mark.backend
@pytest.mark.parametrize("key", ["12.5", "13.5"])
def test_every_cudeviceptr_member_takes_device_memory(driver_stub, key):
    # A CUdeviceptr member took ints only: `copy.srcDevice = cupy_array` was a TypeError.
    raw = _driver(int(key.replace(".", "0") + "0"))
    members = _device_address_members(driver_stub.model(key))
    assert ("CUDA_MEMCPY2D_st", "srcDevice") in members and len(members) > 10
    for record_name, name in members:
        record_ = getattr(raw, record_name)()
        setattr(record_, name, DeviceMemory(ADDRESS))
        assert getattr(record_, name) == ADDRESS, (record_name, name)
        setattr(record_, name, ctypes.c_void_p(ADDRESS + 8))
        assert getattr(record_, name) == ADDRESS + 8
        for wrong, error in ((1.5, TypeError), (bytearray(8), TypeError), (-1, OverflowError)):
            with pytest.raises(error, match=rf"^{record_name}\.{name}: "):
                setattr(record_, name, wrong)
        assert getattr(record_, name) == ADDRESS + 8


@pytest.mark.backend
def test_a_cudeviceptr_member_refuses_what_a_cudeviceptr_parameter_refuses():
    from cudart.arrays import DeviceArray

    raw = _driver(13050)
    copy = raw.CUDA_MEMCPY2D(srcDevice=DeviceMemory(ADDRESS), WidthInBytes=16)
    assert (copy.srcDevice, copy.WidthInBytes) == (ADDRESS, 16)
    copy.dstDevice = DeviceArray(ADDRESS, (4,), "<f4", None, None, None, False, (2, 0))
    assert copy.dstDevice == ADDRESS and type(copy.dstDevice) is int
    for wrong, error, message in (
        (raw.CUstream(ADDRESS), TypeError, "a CUstream is a handle, not a device address"),
        (bytearray(16), TypeError, "a bytearray is host memory"),
        ("0x1000", TypeError, "must be a device address"),
        (1 << 64, OverflowError, r"outside CUdeviceptr \(unsigned long long\)'s range"),
    ):
        with pytest.raises(error, match=message):
            copy.srcDevice = wrong
    # C writes a copy's destination (and a memset's): read-only device memory is refused
    # there as for cuMemcpy2D's parameters, and taken where C only reads.
    with pytest.raises(TypeError, match=r"CUDA_MEMCPY2D_st\.dstDevice .*read-only"):
        copy.dstDevice = DeviceMemory(ADDRESS, readonly=True)
    copy.srcDevice = DeviceMemory(ADDRESS + 16, readonly=True)
    with pytest.raises(TypeError, match=r"CUDA_MEMSET_NODE_PARAMS_st\.dst .*read-only"):
        raw.CUDA_MEMSET_NODE_PARAMS(dst=DeviceMemory(ADDRESS, readonly=True))
    # The constructor goes through the same descriptors, integers as well.
    with pytest.raises(OverflowError, match=r"CUDA_MEMCPY2D_st\.WidthInBytes: -1 is outside"):
        raw.CUDA_MEMCPY2D(srcDevice=DeviceMemory(ADDRESS), WidthInBytes=-1)


@pytest.mark.backend
@pytest.mark.parametrize("where", ["record", "view"])
def test_a_cudeviceptr_member_keeps_its_memory_alive_until_stored_again(where):
    import gc
    import weakref

    raw = _driver(13050)
    memory = DeviceMemory(ADDRESS)
    gone = weakref.ref(memory)
    if where == "record":
        owner = raw.CUDA_MEMCPY2D()
        target = owner
    else:  # a record inside a record: ctypes keeps what it holds in the outer one
        owner = raw.CUDA_MEMCPY_NODE_PARAMS()
        target = owner.copyParams
    target.srcDevice = memory
    del memory, target
    gc.collect()
    target = owner if where == "record" else owner.copyParams
    assert gone() is not None and target.srcDevice == ADDRESS
    target.srcDevice = ADDRESS + 64  # an int store releases what the member kept
    del target
    gc.collect()
    assert gone() is None
