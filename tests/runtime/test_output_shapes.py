"""Output shapes the header decides, at run time (issue 21, item 11): what a checked
function whose parameters the header documents unusually takes and gives back.

Without a GPU the real C function only returns an error code, so where the shape is
what C reads or writes, the C function is replaced by a recorder (as in
test_handle_lifetimes.py) that sees the arguments C would get and writes what C would.
"""

from __future__ import annotations

import ctypes
import importlib
import inspect
import subprocess
import warnings

import pytest
from fast_support import compiler, stand_in_for_c
from suite import probe_each_version

import cudart
from cudart import HandleDestroyedError
from cudart._handles import mark_destroyed

# The calls go through the backend in force: make test-ctypes runs them on ctypes too.
pytestmark = pytest.mark.backend

VERSIONS = cudart.available_versions()


@pytest.fixture(params=VERSIONS, ids=[f"checked_{v}" for v in VERSIONS])
def version(request):
    return request.param


def modules(version: int, raw: str = "sys"):
    """(checked, raw) views of a version: the runtime's, or raw="driver"'s."""
    checked = "checked" if raw == "sys" else f"{raw}_checked"
    return (
        importlib.import_module(f"cudart.{checked}_{version}"),
        importlib.import_module(f"cudart.{raw}_{version}"),
    )


class Writer:
    """Stands for a C function: records its arguments and writes `data` into the
    storage its first argument refers to (a byref() of it), as C writes an output."""

    def __init__(self, data: bytes = b"") -> None:
        self.calls: list[tuple] = []
        self.data = data
        self.written_size: int | None = None

    def __call__(self, *args):
        self.calls.append(args)
        if self.data:
            storage = args[0]._obj
            self.written_size = ctypes.sizeof(storage)
            ctypes.memmove(ctypes.addressof(storage), self.data, len(self.data))
        return 0


def replace_c(monkeypatch, module, name: str, data: bytes = b"") -> Writer:
    writer = Writer(data)
    stand_in_for_c(monkeypatch, module, name, writer)
    return writer


def pointee(argument) -> int:
    """The handle value a `H *` argument points at."""
    return ctypes.c_void_p.from_buffer(argument).value or 0


# ---------------------------------------------------- cudaMemPoolExportToShareableHandle

# cudaMemAllocationHandleType's enumerators' docs: the C type of each handle, its size.
HANDLE_SIZES = {
    "cudaMemHandleTypePosixFileDescriptor": ctypes.sizeof(ctypes.c_int),  # (int)
    "cudaMemHandleTypeWin32": ctypes.sizeof(ctypes.c_void_p),  # (HANDLE)
    "cudaMemHandleTypeWin32Kmt": ctypes.sizeof(ctypes.c_uint),  # (D3DKMT_HANDLE)
}
FABRIC_SIZE = 64  # cudaMemFabricHandle_t: unsigned char data[64]


def test_export_takes_no_storage(version):
    checked, _ = modules(version)
    fn = checked.cudaMemPoolExportToShareableHandle
    assert list(inspect.signature(fn).parameters) == ["memPool", "handleType", "flags"]


@pytest.mark.parametrize("name", sorted(HANDLE_SIZES))
def test_export_returns_an_int_sized_by_the_handle_type(version, monkeypatch, name):
    checked, raw = modules(version)
    size = HANDLE_SIZES[name]
    value = 0x1234567 if size == 8 else 37
    writer = replace_c(
        monkeypatch, checked, "cudaMemPoolExportToShareableHandle", value.to_bytes(size, "little")
    )
    got = checked.cudaMemPoolExportToShareableHandle(
        raw.cudaMemPool_t(0x10000), getattr(raw, name), 0
    )
    assert got == value and type(got) is int
    assert writer.written_size == size
    _, pool, handle_type, flags = writer.calls[0]
    assert handle_type == getattr(raw, name) and flags == 0


def test_export_returns_the_fabric_handle_record(version, monkeypatch):
    checked, raw = modules(version)
    if not hasattr(raw, "cudaMemHandleTypeFabric"):
        pytest.skip("no fabric handles before CUDA 12.3")
    data = bytes(range(FABRIC_SIZE))
    writer = replace_c(monkeypatch, checked, "cudaMemPoolExportToShareableHandle", data)
    got = checked.cudaMemPoolExportToShareableHandle(None, raw.cudaMemHandleTypeFabric, 0)
    assert isinstance(got, raw.cudaMemFabricHandle_t)
    assert writer.written_size == FABRIC_SIZE == ctypes.sizeof(got)
    assert bytes(got) == data


@pytest.mark.parametrize("handle_type", [0, 3, 16, 8 | 1])
def test_export_refuses_what_is_not_one_handle_type(version, monkeypatch, handle_type):
    checked, raw = modules(version)
    writer = replace_c(monkeypatch, checked, "cudaMemPoolExportToShareableHandle")
    if handle_type == 8 and hasattr(raw, "cudaMemHandleTypeFabric"):
        pytest.skip("a handle type of this version")
    with pytest.raises(ValueError, match="handleType"):
        checked.cudaMemPoolExportToShareableHandle(None, handle_type, 0)
    assert writer.calls == [], "C would have written a handle of unknown size"


# The driver's (cuda.h) exports: the same output, typed by CUmemAllocationHandleType (a
# CUmemRangeHandleType for the range's dma_buf fd), where the caller passed storage.
DRIVER_EXPORTS = {
    # function: (the arguments before handleType, the handle type enumerators)
    "cuMemPoolExportToShareableHandle": ((0x10000,), "CU_MEM_HANDLE_TYPE_"),
    "cuMemExportToShareableHandle": ((0x42,), "CU_MEM_HANDLE_TYPE_"),
    "cuMemGetHandleForAddressRange": ((0x20000, 4096), "CU_MEM_RANGE_HANDLE_TYPE_"),
}
DRIVER_HANDLE_SIZES = {
    "CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR": ctypes.sizeof(ctypes.c_int),
    "CU_MEM_HANDLE_TYPE_WIN32": ctypes.sizeof(ctypes.c_void_p),
    "CU_MEM_HANDLE_TYPE_WIN32_KMT": ctypes.sizeof(ctypes.c_uint),
    "CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD": ctypes.sizeof(ctypes.c_int),
}


@pytest.fixture(scope="module")
def driver():
    from cudart import _serving

    return _serving.driver_modules()


@pytest.mark.parametrize("function", sorted(DRIVER_EXPORTS))
def test_driver_exports_return_the_handle_sized_by_its_type(driver, monkeypatch, function):
    raw, checked = driver
    before, prefix = DRIVER_EXPORTS[function]
    fn = getattr(checked, function)
    assert list(inspect.signature(fn).parameters)[-2:] == ["handleType", "flags"]
    assert len(inspect.signature(fn).parameters) == len(before) + 2  # no storage to pass
    for name, size in DRIVER_HANDLE_SIZES.items():
        if not name.startswith(prefix):
            continue
        value = 0x1234567 if size == 8 else 37
        writer = replace_c(monkeypatch, checked, function, value.to_bytes(size, "little"))
        got = fn(*before, getattr(raw, name), 0)
        assert got == value and type(got) is int, name
        assert writer.written_size == size, name
        assert writer.calls[0][-2] == getattr(raw, name)
    if prefix == "CU_MEM_HANDLE_TYPE_" and hasattr(raw, "CU_MEM_HANDLE_TYPE_FABRIC"):
        data = bytes(range(FABRIC_SIZE))
        writer = replace_c(monkeypatch, checked, function, data)
        got = fn(*before, raw.CU_MEM_HANDLE_TYPE_FABRIC, 0)
        assert isinstance(got, raw.CUmemFabricHandle) and bytes(got) == data
        assert writer.written_size == FABRIC_SIZE
    # No one handle type (none, an OR of two, unknown): refused before C writes.
    writer = replace_c(monkeypatch, checked, function)
    for handle_type in (0, 3, 16):
        with pytest.raises(ValueError, match="handleType"):
            fn(*before, handle_type, 0)
    assert writer.calls == []


def test_driver_import_takes_the_handle_as_the_export_gave_it(driver, monkeypatch):
    """Issue 33 item 14: cuMemImportFromShareableHandle's `void *osHandle` is the handle
    itself for a file descriptor (C's `(void *)(uintptr_t)fd`: the int the export
    returned, small as it is, goes to C as that value) and a pointer to the record for a
    fabric handle (the record the export returned, by address)."""
    raw, checked = driver
    writer = replace_c(monkeypatch, checked, "cuMemImportFromShareableHandle")
    checked.cuMemImportFromShareableHandle(5, raw.CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
    assert writer.calls[-1][1:] == (5, raw.CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
    if hasattr(raw, "CU_MEM_HANDLE_TYPE_FABRIC"):
        record = raw.CUmemFabricHandle()
        checked.cuMemImportFromShareableHandle(record, raw.CU_MEM_HANDLE_TYPE_FABRIC)
        given = writer.calls[-1][1]
        assert ctypes.cast(given, ctypes.c_void_p).value == ctypes.addressof(record)
    for bad, error in ((-1, OverflowError), (1.5, TypeError), ("5", TypeError)):
        with pytest.raises(error, match="osHandle"):
            checked.cuMemImportFromShareableHandle(
                bad, raw.CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
            )
    assert len(writer.calls) == 1 + hasattr(raw, "CU_MEM_HANDLE_TYPE_FABRIC")


# ---------------------------------------------------------------- the EGL stream functions


def test_egl_connection_and_stream_inputs_take_the_handles(version, monkeypatch):
    checked, raw = modules(version)
    writer = replace_c(monkeypatch, checked, "cudaEGLStreamProducerPresentFrame")
    conn, stream = raw.cudaEglStreamConnection(0x50000), raw.cudaStream_t(0x60000)
    checked.cudaEGLStreamProducerPresentFrame(conn, raw.cudaEglFrame(), stream)
    checked.cudaEGLStreamProducerPresentFrame(0x50000, raw.cudaEglFrame(), None)
    (c1, _, s1), (c2, _, s2) = writer.calls
    assert (pointee(c1), pointee(s1)) == (0x50000, 0x60000)
    assert (pointee(c2), pointee(s2)) == (0x50000, 0)
    with pytest.raises(TypeError, match="cudaEglStreamConnection"):
        checked.cudaEGLStreamProducerPresentFrame(stream, raw.cudaEglFrame(), stream)
    # The same kinds from another version's module, and a plain c_void_p: by address.
    other = importlib.import_module(f"cudart.sys_{VERSIONS[0]}")
    checked.cudaEGLStreamProducerPresentFrame(
        other.cudaEglStreamConnection(0x50000), raw.cudaEglFrame(), ctypes.c_void_p(0x60000)
    )
    c3, _, s3 = writer.calls[2]
    assert (pointee(c3), pointee(s3)) == (0x50000, 0x60000)
    mark_destroyed(stream, "cudaStreamDestroy")
    with pytest.raises(HandleDestroyedError):
        checked.cudaEGLStreamProducerPresentFrame(conn, raw.cudaEglFrame(), stream)
    assert len(writer.calls) == 3


def test_egl_return_frame_takes_the_stream_and_returns_the_frame(version, monkeypatch):
    checked, raw = modules(version)
    fn = checked.cudaEGLStreamProducerReturnFrame
    assert list(inspect.signature(fn).parameters) == ["conn", "pStream"]
    writer = replace_c(monkeypatch, checked, "cudaEGLStreamProducerReturnFrame")
    frame = fn(raw.cudaEglStreamConnection(0x50000), raw.cudaStream_t(0x60000))
    assert isinstance(frame, raw.cudaEglFrame)
    conn, written, stream = writer.calls[0]
    assert (pointee(conn), pointee(stream)) == (0x50000, 0x60000)


# A stand-in for the two disconnects, in C: what C is handed (ctypes' conversion of the
# argument, which a Python stand-in never sees) and what it reads through it.
DISCONNECTS = ("cudaEGLStreamConsumerDisconnect", "cudaEGLStreamProducerDisconnect")
DISCONNECT_STAND_IN = "void *seen_argument, *seen_pointee;\n" + "".join(
    f"int {name}(void **conn) {{ seen_argument = conn; seen_pointee = conn ? *conn : 0; "
    "return 0; }\n"
    for name in DISCONNECTS
)


@pytest.fixture(scope="module")
def disconnect_library(tmp_path_factory):
    if compiler() is None:
        pytest.skip("no C compiler")
    folder = tmp_path_factory.mktemp("egl_stand_in")
    (folder / "egl.c").write_text(DISCONNECT_STAND_IN)
    library = folder / "libegl_stand_in.so"
    command = [compiler(), "-shared", "-fPIC", "-o", str(library), str(folder / "egl.c")]
    subprocess.run(command, check=True, capture_output=True)
    return ctypes.CDLL(str(library))


def test_egl_disconnect_hands_c_a_pointer_to_the_connection(
    version, monkeypatch, disconnect_library
):
    """C takes `cudaEglStreamConnection *conn`: it must get the address of storage that
    holds the connection (issue 33, item 25), from a handle object or an int alike."""
    checked, raw = modules(version)
    lib = disconnect_library
    # The connection's value is the address of a cell of ours: C reading through the
    # handle itself (passed where its address belongs) reads the cell, not unmapped memory.
    cell = ctypes.c_void_p(0x5EED)
    address = ctypes.addressof(cell)
    for name in DISCONNECTS:
        # The C function as the checked module binds it (its restype and argtypes).
        unbound = vars(checked)["_UNBOUND"]["_" + name]
        fn = lib[name]
        fn.restype, fn.argtypes = unbound.restype, unbound.argtypes
        stand_in_for_c(monkeypatch, checked, name, fn)
        for conn in (raw.cudaEglStreamConnection(address), address):
            ctypes.c_void_p.in_dll(lib, "seen_pointee").value = None
            getattr(checked, name)(conn)
            given = ctypes.c_void_p.in_dll(lib, "seen_argument").value
            assert ctypes.c_void_p.in_dll(lib, "seen_pointee").value == address, (name, conn)
            assert given not in (None, address), (name, conn)
        destroyed = raw.cudaEglStreamConnection(address)
        getattr(checked, name)(destroyed)
        with pytest.raises(HandleDestroyedError):
            getattr(checked, name)(destroyed)


# ---------------------------------------------------------------- `_vN` twins


def test_elapsed_time_v2_returns_ms_as_its_twin_does(version):
    checked, _ = modules(version)
    fn = getattr(checked, "cudaEventElapsedTime_v2", None)
    if fn is None:
        pytest.skip("cudaEventElapsedTime_v2 is declared by CUDA 12.8 and 12.9 only")
    twin = inspect.signature(checked.cudaEventElapsedTime)
    assert inspect.signature(fn) == twin
    assert list(twin.parameters) == ["start", "end"] and twin.return_annotation == "float"


# ---------------------------------------------------------------- the real libraries

PROBE = r"""
import json
from cudart import _serving
checked = _serving.checked_module()
raw = _serving.raw_module()
calls = {
    "export": lambda: checked.cudaMemPoolExportToShareableHandle(
        None, raw.cudaMemHandleTypePosixFileDescriptor, 0
    ),
}
if hasattr(checked, "cudaEventElapsedTime_v2"):
    calls["elapsed_v2"] = lambda: checked.cudaEventElapsedTime_v2(None, None)
found = {}
for name, call in calls.items():
    try:
        call()
        found[name] = "returned"
    except Exception as exc:
        found[name] = [type(exc).__name__, isinstance(exc, cudart.CudaError)]
print(json.dumps(found))
"""


def test_the_new_shapes_reach_the_real_library(header_sets):
    """Without a GPU the calls fail in C with an error code, not in Python: the
    arguments the checked functions make are ones the library takes."""
    results = probe_each_version("import cudart\n" + PROBE, header_sets)
    assert sum("elapsed_v2" in found for found in results.values()) >= 2
    for key, found in results.items():
        for name, outcome in found.items():
            assert outcome != "returned" and outcome[1], (key, name, outcome)


# ------------------------------------- outputs the output judge found planned wrong (#33)

DRIVER_13 = [v for v in (13030, 13040, 13050) if v in cudart._versions.VIEWS["driver_checked"]]


@pytest.mark.parametrize("version", DRIVER_13)
def test_logical_endpoint_export_returns_the_fabric_handle(version, monkeypatch):
    # "\param[out] handle": C stores the handle handleType names; the caller passes none.
    checked, raw = modules(version, "driver")
    fn = checked.cuLogicalEndpointExport
    assert list(inspect.signature(fn).parameters) == ["leId", "handleType"]
    size = ctypes.sizeof(raw.CUlogicalEndpointFabricHandle)
    data = bytes(range(size))
    writer = replace_c(monkeypatch, checked, "cuLogicalEndpointExport", data)
    got = fn(7, raw.CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC)
    assert isinstance(got, raw.CUlogicalEndpointFabricHandle) and bytes(got) == data
    assert writer.written_size == size and writer.calls[0][1:] == (7, 1)
    writer = replace_c(monkeypatch, checked, "cuLogicalEndpointExport")
    with pytest.raises(ValueError, match="handleType"):
        fn(7, raw.CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_NONE)  # exports nothing
    assert writer.calls == []


@pytest.mark.parametrize("version", [v for v in DRIVER_13 if v >= 13040])
def test_clique_info_fills_the_array_the_count_sizes(version, monkeypatch):
    # "User must specify the size of the cliqueInfo array in count. The same parameter
    # count will return the actual number of entries updated."
    checked, raw = modules(version, "driver")
    item = ctypes.sizeof(raw.CUcliqueInfo)
    seen = []

    def c(array, count, dev):
        n = count.value  # the stand-in gets the c_size_t itself
        seen.append((n, dev))
        ctypes.memset(array, 0xAB, 2 * item)
        count.value = 2
        return 0

    stand_in_for_c(monkeypatch, checked, "cuDeviceGetCliqueInfo", c)
    infos, written = checked.cuDeviceGetCliqueInfo(5, 0)
    assert seen == [(5, 0)] and written == 2 and len(infos) == 2
    assert all(bytes(i) == b"\xab" * item for i in infos)
    with pytest.raises((ValueError, OverflowError)):
        checked.cuDeviceGetCliqueInfo(-1, 0)


@pytest.mark.parametrize("version", [v for v in DRIVER_13 if v >= 13040])
def test_location_info_takes_an_array_of_one_record_per_region(version, monkeypatch):
    # "The total number of locations returned will be ceil(size/summaryGranularity). The
    # user is expected to allocate the location_out array": a smaller array is refused.
    checked, raw = modules(version, "driver")
    calls = []
    stand_in_for_c(monkeypatch, checked, "cuMemGetLocationInfo", lambda *a: calls.append(a) or 0)
    fn = checked.cuMemGetLocationInfo
    assert list(inspect.signature(fn).parameters)[-1] == "location_out"
    regions = (raw.CUmemLocation * 3)()
    fn(0x10000, 5 << 20, 2 << 20, 0, regions)  # ceil(5 / 2) = 3 regions
    assert len(calls) == 1
    with pytest.raises(ValueError, match="summaryGranularity"):
        fn(0x10000, 5 << 20, 2 << 20, 0, (raw.CUmemLocation * 2)())
    with pytest.raises(ValueError, match="summaryGranularity"):
        fn(0x10000, 5 << 20, 2 << 20, 0, raw.CUmemLocation())
    assert len(calls) == 1


# ------------------------ memory C fills for the caller takes no copy (resolve.FILLED_INPUTS)


@pytest.mark.parametrize("version", [v for v in DRIVER_13 if v >= 13040])
@pytest.mark.parametrize("given", [list, tuple])
def test_location_info_refuses_a_list_c_would_fill_a_copy_of(version, monkeypatch, given):
    # ref() would copy a list into a new array: C's locations would go to the copy.
    checked, raw = modules(version, "driver")
    calls = []
    stand_in_for_c(monkeypatch, checked, "cuMemGetLocationInfo", lambda *a: calls.append(a) or 0)
    records = given(raw.CUmemLocation() for _ in range(3))
    with pytest.raises(TypeError, match="'location_out' is filled by the function"):
        checked.cuMemGetLocationInfo(0x10000, 5 << 20, 2 << 20, 0, records)
    assert calls == []


@pytest.mark.parametrize("version", [v for v in DRIVER_13 if v >= 13040])
def test_location_info_fills_the_callers_own_array(version, monkeypatch):
    checked, raw = modules(version, "driver")

    def c(ptr, size, summary, sampling, out):
        # What C does: one record per region, written through the pointer it was given.
        records = ctypes.cast(out, ctypes.POINTER(raw.CUmemLocation))
        for i in range(3):
            records[i].id = 40 + i
        return 0

    stand_in_for_c(monkeypatch, checked, "cuMemGetLocationInfo", c)
    regions = (raw.CUmemLocation * 3)()
    checked.cuMemGetLocationInfo(0x10000, 5 << 20, 2 << 20, 0, regions)
    assert [r.id for r in regions] == [40, 41, 42]


def test_alloc_node_params_refuse_a_list_and_take_the_record(version, monkeypatch):
    # "it returns the address of the allocation in nodeParams.dptr": the caller reads it
    # from the record it gave, so a one-record list (copied) is refused.
    checked, raw = modules(version)

    def c(node, graph, deps, count, params):
        ctypes.cast(params, ctypes.POINTER(raw.cudaMemAllocNodeParams))[0].dptr = 0xD000
        return 0

    stand_in_for_c(monkeypatch, checked, "cudaGraphAddMemAllocNode", c)
    params = raw.cudaMemAllocNodeParams()
    with pytest.raises(TypeError, match="'nodeParams' is filled by the function"):
        checked.cudaGraphAddMemAllocNode(None, [], 0, [params])
    checked.cudaGraphAddMemAllocNode(None, [], 0, params)
    assert params.dptr == 0xD000


# ------------------- coredump attributes and the border color (issue 33, items 7 and 15)

DRIVER_COREDUMP = [v for v in cudart._versions.VIEWS["driver_checked"] if v >= 12010]
COREDUMP_GETTERS = ("cuCoredumpGetAttribute", "cuCoredumpGetAttributeGlobal")
COREDUMP_SETTERS = ("cuCoredumpSetAttribute", "cuCoredumpSetAttributeGlobal")
# cuCoredumpGetAttribute's list: "Bool where ::true ...", "String of up to 1023 characters".
COREDUMP_BOOLS = (
    "CU_COREDUMP_ENABLE_ON_EXCEPTION",
    "CU_COREDUMP_TRIGGER_HOST",
    "CU_COREDUMP_LIGHTWEIGHT",
    "CU_COREDUMP_ENABLE_USER_TRIGGER",
)
COREDUMP_STRINGS = ("CU_COREDUMP_FILE", "CU_COREDUMP_PIPE")


class CoredumpC:
    """Stands for a coredump getter or setter: records (attrib, the value's bytes as
    handed, the size C is told) and, as a getter, writes `data` and the size of what it
    wrote back through the size pointer (it is in/out)."""

    def __init__(self, data: bytes = b"", written: int | None = None, argtypes=()) -> None:
        self.calls: list[tuple[int, bytes, int]] = []
        self.data = data
        self.written = written
        self.argtypes = argtypes

    def __call__(self, attrib, value, size):
        for argument, argtype in zip((attrib, value, size), self.argtypes, strict=True):
            argtype.from_param(argument)  # what ctypes takes on the way to the real C
        storage = value._obj  # a byref() of the value's storage
        size = size._obj  # and of a size_t: C may write it back
        assert type(size) is ctypes.c_size_t
        self.calls.append(
            (int(attrib), ctypes.string_at(ctypes.addressof(storage), size.value), size.value)
        )
        if self.data:
            ctypes.memmove(ctypes.addressof(storage), self.data, len(self.data))
        if self.written is not None:
            size.value = self.written
        return 0


def coredump_c(monkeypatch, checked, function: str, *args, **kwargs) -> CoredumpC:
    """A CoredumpC in the C function's place, checking its arguments against the argtypes
    the checked module declares for it."""
    argtypes = vars(checked)["_" + function].argtypes
    c = CoredumpC(*args, **kwargs, argtypes=argtypes)
    stand_in_for_c(monkeypatch, checked, function, c)
    return c


@pytest.mark.parametrize("version", DRIVER_COREDUMP)
@pytest.mark.parametrize("function", COREDUMP_GETTERS)
def test_coredump_getters_return_the_value_typed_by_attrib(version, monkeypatch, function):
    checked, raw = modules(version, "driver")
    fn = getattr(checked, function)
    assert list(inspect.signature(fn).parameters) == ["attrib"]  # no buffer, no size
    for name in COREDUMP_BOOLS:
        c = coredump_c(monkeypatch, checked, function, b"\x01", written=1)
        got = getattr(checked, function)(getattr(raw, name))
        assert got is True, name
        assert c.calls == [(getattr(raw, name), b"\x00", 1)]  # C's bool: one byte
        coredump_c(monkeypatch, checked, function, b"\x00")
        assert getattr(checked, function)(getattr(raw, name)) is False
    for name in COREDUMP_STRINGS:
        c = coredump_c(monkeypatch, checked, function, b"/tmp/core.%h\x00junk", written=13)
        got = getattr(checked, function)(getattr(raw, name))
        assert got == "/tmp/core.%h" and type(got) is str  # the bytes up to the NUL
        attrib, given, size = c.calls[0]
        assert attrib == getattr(raw, name) and size == 1024 == len(given)
    if hasattr(raw, "CU_COREDUMP_GENERATION_FLAGS"):  # 12.5+
        flags = raw.CU_COREDUMP_SKIP_GLOBAL_MEMORY | raw.CU_COREDUMP_SKIP_SHARED_MEMORY
        c = coredump_c(monkeypatch, checked, function, int(flags).to_bytes(4, "little"), written=4)
        got = getattr(checked, function)(raw.CU_COREDUMP_GENERATION_FLAGS)
        assert got == flags and type(got) is int
        assert c.calls[0][2] == 4  # an unsigned int


@pytest.mark.parametrize("version", DRIVER_COREDUMP)
@pytest.mark.parametrize("function", COREDUMP_SETTERS)
def test_coredump_setters_take_the_python_value(version, monkeypatch, function):
    checked, raw = modules(version, "driver")
    assert list(inspect.signature(getattr(checked, function)).parameters) == ["attrib", "value"]
    c = coredump_c(monkeypatch, checked, function)
    fn = getattr(checked, function)
    for name in COREDUMP_BOOLS:
        fn(getattr(raw, name), True)
        fn(getattr(raw, name), False)
        fn(getattr(raw, name), 1)
    assert [given for _, given, _ in c.calls] == [b"\x01", b"\x00", b"\x01"] * len(COREDUMP_BOOLS)
    assert {size for _, _, size in c.calls} == {1}  # C's bool: one byte
    c.calls.clear()
    fn(raw.CU_COREDUMP_FILE, "/tmp/dumps/core")
    fn(raw.CU_COREDUMP_PIPE, b"pipe")
    fn(raw.CU_COREDUMP_FILE, "x" * 1023)  # "up to 1023 characters"
    assert c.calls[0] == (raw.CU_COREDUMP_FILE, b"/tmp/dumps/core\x00", 16)  # len + 1: the NUL
    assert c.calls[1] == (raw.CU_COREDUMP_PIPE, b"pipe\x00", 5)
    assert c.calls[2][2] == 1024
    if hasattr(raw, "CU_COREDUMP_GENERATION_FLAGS"):  # 12.5+
        c.calls.clear()
        fn(raw.CU_COREDUMP_GENERATION_FLAGS, raw.CU_COREDUMP_SKIP_ABORT)
        flags = int(raw.CU_COREDUMP_SKIP_ABORT)
        assert c.calls == [(raw.CU_COREDUMP_GENERATION_FLAGS, flags.to_bytes(4, "little"), 4)]


@pytest.mark.parametrize("version", DRIVER_COREDUMP)
def test_coredump_refuses_max_and_wrong_types_before_c(version, monkeypatch):
    checked, raw = modules(version, "driver")
    calls = [coredump_c(monkeypatch, checked, f).calls for f in COREDUMP_GETTERS + COREDUMP_SETTERS]
    for function in COREDUMP_GETTERS:
        with pytest.raises(ValueError, match="CU_COREDUMP_MAX"):
            getattr(checked, function)(raw.CU_COREDUMP_MAX)
    for function in COREDUMP_SETTERS:
        fn = getattr(checked, function)
        with pytest.raises(ValueError, match="CU_COREDUMP_MAX"):
            fn(raw.CU_COREDUMP_MAX, 1)
        for value in ("yes", 2, -1, 1.0, None):
            with pytest.raises(TypeError, match="bool"):
                fn(raw.CU_COREDUMP_ENABLE_ON_EXCEPTION, value)
        for value in (5, True, None, ["/tmp"]):
            with pytest.raises(TypeError, match="str or bytes"):
                fn(raw.CU_COREDUMP_FILE, value)
        with pytest.raises(ValueError, match="1023"):
            fn(raw.CU_COREDUMP_FILE, "x" * 1024)  # with its NUL, more than char[1024]
        with pytest.raises(ValueError, match="NUL"):
            fn(raw.CU_COREDUMP_PIPE, "pipe\x00name")
        if hasattr(raw, "CU_COREDUMP_GENERATION_FLAGS"):
            with pytest.raises(OverflowError):
                fn(raw.CU_COREDUMP_GENERATION_FLAGS, 1 << 32)
    assert calls == [[]] * 4


DRIVER_ALL = list(cudart._versions.VIEWS["driver_checked"])


@pytest.mark.parametrize("version", DRIVER_ALL)
def test_border_color_getter_returns_the_four_floats(version, monkeypatch):
    # "pBorderColor[0] holds 'R' component ... pBorderColor[3] holds 'A' component"
    checked, raw = modules(version, "driver")
    seen = []

    def c(color, tex):
        seen.append((type(color), tex))
        for i, value in enumerate((1.0, 0.5, 0.25, 0.0)):
            color[i] = value
        return 0

    stand_in_for_c(monkeypatch, checked, "cuTexRefGetBorderColor", c)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecated since 11.0
        got = checked.cuTexRefGetBorderColor(raw.CUtexref(0x10000))
    assert got == [1.0, 0.5, 0.25, 0.0] and all(type(v) is float for v in got)
    assert seen[0][0] is ctypes.c_float * 4  # room for what C writes


@pytest.mark.parametrize("version", DRIVER_ALL)
def test_border_color_setter_takes_exactly_four_values(version, monkeypatch):
    checked, raw = modules(version, "driver")
    seen = []

    def c(tex, color):
        seen.append(list(ctypes.cast(color, ctypes.POINTER(ctypes.c_float * 4)).contents))
        return 0

    stand_in_for_c(monkeypatch, checked, "cuTexRefSetBorderColor", c)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecated since 11.0
        checked.cuTexRefSetBorderColor(raw.CUtexref(0x10000), [1.0, 0.5, 0.25, 0.0])
        checked.cuTexRefSetBorderColor(raw.CUtexref(0x10000), (0, 1, 0, 1))
        checked.cuTexRefSetBorderColor(raw.CUtexref(0x10000), (ctypes.c_float * 4)(4, 3, 2, 1))
        assert seen == [[1.0, 0.5, 0.25, 0.0], [0.0, 1.0, 0.0, 1.0], [4.0, 3.0, 2.0, 1.0]]
        for given in ([1.0, 0.5, 0.25], (1.0, 0.5, 0.25, 0.0, 1.0), []):
            with pytest.raises(ValueError, match="exactly 4"):
                checked.cuTexRefSetBorderColor(raw.CUtexref(0x10000), given)
        with pytest.raises(ValueError):
            checked.cuTexRefSetBorderColor(raw.CUtexref(0x10000), (ctypes.c_float * 3)())
    assert len(seen) == 3
