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
