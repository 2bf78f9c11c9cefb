"""The driver's checked layer (cuda.h) without a GPU: what generator/lifetimes.py,
sizes.py, attributes.py and resolve.py's tables decide for the driver, held against a
stand-in libcuda.so.1 built here (every symbol returns CUDA_ERROR_STUB_LIBRARY, 34; a few
write what the real driver writes, so that a result's shape can be seen).

Each test runs in a fresh interpreter with CUDART_DRIVER_LIBRARY naming the stand-in:
a refusal before C is a ValueError / TypeError / HandleDestroyedError, a call that
reached C is the stub's CudaDriverError (or its success).
"""

from __future__ import annotations

import textwrap

import pytest
from driver_stub import writing_libcuda
from suite import run_python

import cudart

# What the stand-in does beyond returning 34: the functions whose outputs the tests read.
_WRITERS = r"""
#include <stdlib.h>
int cuPointerGetAttribute(void *data, int attribute, unsigned long long ptr) {
    if (attribute == 7) { *(unsigned long long *)data = 0x123456789ULL; return 0; }
    if (attribute == 2) { *(unsigned int *)data = 2; return 0; }
    if (attribute == 9) { *(int *)data = -1; return 0; }
    if (attribute == 1) { *(void **)data = (void *)0xC000; return 0; }
    if (attribute == 17) { *(void **)data = (void *)0xD000; return 0; }
    return 1;
}
/* Each value in its attribute's own C type; an attribute not listed: 34. */
int cuPointerGetAttributes(unsigned int n, const int *attributes, void **data,
                           unsigned long long ptr) {
    for (unsigned int i = 0; i < n; i++) {
        switch (attributes[i]) {
        case 1: *(void **)data[i] = (void *)0xC000; break;          /* CONTEXT */
        case 2: *(unsigned int *)data[i] = 2; break;               /* MEMORY_TYPE */
        case 9: *(int *)data[i] = -1; break;                       /* DEVICE_ORDINAL */
        case 12: *(size_t *)data[i] = (size_t)ptr + 4096; break;   /* RANGE_SIZE */
        case 17: *(void **)data[i] = (void *)0xD000; break;        /* MEMPOOL_HANDLE */
        default: return 34;
        }
    }
    return 0;
}
int cuMemCreate(unsigned long long *handle, unsigned long long size, const void *prop,
                unsigned long long flags) { *handle = 0x42; return 0; }
int cuMemRelease(unsigned long long handle) { return 0; }
int cuStreamCreate(void **phStream, unsigned int flags) { *phStream = (void *)0x1000; return 0; }
int cuStreamDestroy_v2(void *hStream) { return 0; }
int cuMemAllocHost_v2(void **pp, size_t bytesize) { *pp = malloc(bytesize); return 0; }
int cuMemFreeHost(void *p) { free(p); return 0; }
int cuLinkCreate_v2(unsigned int n, void *options, void **values, void **stateOut) {
    *stateOut = (void *)0x77; return 0;
}
"""
_WRITTEN = {
    "cuPointerGetAttribute",
    "cuPointerGetAttributes",
    "cuMemCreate",
    "cuMemRelease",
    "cuStreamCreate",
    "cuStreamDestroy_v2",
    "cuMemAllocHost_v2",
    "cuMemFreeHost",
    "cuLinkCreate_v2",
}


@pytest.fixture(scope="module")
def libcuda(tmp_path_factory) -> str:
    return str(writing_libcuda(tmp_path_factory.mktemp("libcuda"), _WRITERS, _WRITTEN))


def _run(libcuda: str, body: str) -> str:
    code = "import cudart\nfrom cudart import driver\n" + textwrap.dedent(body)
    return run_python(code, env={"CUDART_DRIVER_LIBRARY": libcuda}).stdout


def test_the_stub_is_reached(libcuda):
    out = _run(
        libcuda,
        """
        try:
            driver.cuInit(0)
        except cudart.CudaDriverError as e:
            print(e.code)
        """,
    )
    assert out.split() == ["34"]


def test_a_short_buffer_is_refused_before_c(libcuda):
    out = _run(
        libcuda,
        """
        for call in (lambda: driver.cuMemcpyHtoD(0, b"ab", 100),
                     lambda: driver.cuMemcpyDtoH(bytearray(4), 0, 5)):
            try:
                call()
            except ValueError as e:
                print("refused", "ByteCount" in str(e))
        try:
            driver.cuMemcpyHtoD(0, b"ab", 2)  # fits: C is reached
        except cudart.CudaDriverError as e:
            print("reached", e.code)
        """,
    )
    assert out.split() == ["refused", "True", "refused", "True", "reached", "34"]


def test_a_wrong_enum_is_refused_before_c(libcuda):
    out = _run(
        libcuda,
        """
        for call in (lambda: driver.cuDeviceGetAttribute(987654, 0),
                     lambda: driver.cuPointerGetAttribute(987654, 0)):
            try:
                call()
            except (ValueError, TypeError) as e:
                print(type(e).__name__)
        """,
    )
    assert out.split() == ["ValueError", "ValueError"]


def test_pointer_attributes_come_back_typed(libcuda):
    """cuPointerGetAttribute(attribute, ptr) -> the attribute's own C type (was a
    `data` pointer input the caller sized)."""
    out = _run(
        libcuda,
        """
        print(hex(driver.cuPointerGetAttribute(7, 0)))   # BUFFER_ID: unsigned long long
        print(driver.cuPointerGetAttribute(2, 0))        # MEMORY_TYPE: unsigned int
        print(driver.cuPointerGetAttribute(9, 0))        # DEVICE_ORDINAL: int
        try:
            driver.cuPointerGetAttribute(5, 0)           # P2P_TOKENS: a record, refused
        except ValueError as e:
            print("refused")
        """,
    )
    assert out.split() == ["0x123456789", "2", "-1", "refused"]


def test_pointer_handle_attributes_come_back_as_handles(libcuda):
    """CONTEXT and MEMPOOL_HANDLE are handles, returned as CUcontext / CUmemoryPool
    objects (were their addresses as ints), equal to the runtime's of that kind."""
    out = _run(
        libcuda,
        """
        context = driver.cuPointerGetAttribute(driver.CU_POINTER_ATTRIBUTE_CONTEXT, 0)
        pool = driver.cuPointerGetAttribute(driver.CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, 0)
        print(type(context) is driver.CUcontext, context == driver.CUcontext(0xC000))
        print(type(pool) is driver.CUmemoryPool, pool == cudart.sys.cudaMemPool_t(0xD000))
        """,
    )
    assert out.split() == ["True"] * 4


def test_several_pointer_attributes_come_back_typed(libcuda):
    """cuPointerGetAttributes(numAttributes, attributes, ptr) -> each attribute's value,
    typed as cuPointerGetAttribute types it (was a `data` array of pointers to the
    caller's own storage)."""
    out = _run(
        libcuda,
        """
        import ctypes
        d = driver
        asked = [d.CU_POINTER_ATTRIBUTE_CONTEXT, d.CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                 d.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, d.CU_POINTER_ATTRIBUTE_RANGE_SIZE,
                 d.CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE]
        values = d.cuPointerGetAttributes(len(asked), asked, 0x10)
        print(values[0] == d.CUcontext(0xC000), type(values[0]).__name__)
        print(values[1] == d.CU_MEMORYTYPE_DEVICE, values[2], values[3])
        print(values[4] == d.CUmemoryPool(0xD000), type(values[4]).__name__)
        print(values == [d.cuPointerGetAttribute(a, 0x10) for a in asked[:3]] + values[3:])
        # A ctypes array of attributes, as the C function takes them.
        array = (ctypes.c_uint * 2)(2, 9)
        print(d.cuPointerGetAttributes(2, array, 0))
        print(d.cuPointerGetAttributes(0, None, 0))  # NULL: no attributes, as in C
        # Refused before C: P2P_TOKENS (a record, as cuPointerGetAttribute refuses it), a
        # count the list does not have, an attribute of no value.
        for args in ((1, [d.CU_POINTER_ATTRIBUTE_P2P_TOKENS], 0), (3, [1, 2], 0),
                     (1, [987654], 0), (1, [1], d.CUstream(5))):
            try:
                d.cuPointerGetAttributes(*args)
            except (ValueError, TypeError) as e:
                print(type(e).__name__)
        try:
            d.cuPointerGetAttributes(2, [2, d.CU_POINTER_ATTRIBUTE_BUFFER_ID], 0)
        except cudart.CudaDriverError as e:
            print(type(e).__name__, e.code)
        """,
    )
    assert out.splitlines() == [
        "True CUcontext",
        "True -1 4112",
        "True CUmemoryPool",
        "True",
        "[2, -1]",
        "[]",
        "ValueError",
        "ValueError",
        "ValueError",
        "TypeError",
        "CudaDriverErrorStubLibrary 34",
    ]


def test_pointer_attributes_against_the_generated_stub(driver_stub):
    """NVIDIA's stub (every function returns 34): the arguments are checked before C,
    and C's status raises its own CudaDriverError subclass."""
    served = cudart.driver.bindings_version  # the loaded runtime's: the stub's headers
    library = driver_stub(f"{served // 1000}.{served % 1000 // 10}")
    out = _run(
        str(library),
        """
        d = driver
        for call in (
            lambda: d.cuPointerGetAttributes(2, [d.CU_POINTER_ATTRIBUTE_CONTEXT, 2], 0),
            lambda: d.cuPointerGetAttributes(1, [d.CU_POINTER_ATTRIBUTE_P2P_TOKENS], 0),
            lambda: d.cuPointerGetAttribute(d.CU_POINTER_ATTRIBUTE_P2P_TOKENS, 0),
            lambda: d.cuPointerGetAttribute(d.CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, 0),
        ):
            try:
                call()
            except cudart.CudaDriverError as e:
                print(type(e).__name__, isinstance(e, d.CudaDriverErrorStubLibrary))
            except ValueError as e:
                print("ValueError", "no value type decided" in str(e))
        """,
    )
    assert out.splitlines() == [
        "CudaDriverErrorStubLibrary True",
        "ValueError True",
        "ValueError True",
        "CudaDriverErrorStubLibrary True",
    ]


def test_a_one_record_input_is_not_counted_by_the_size(libcuda):
    """cuMemCreate's size is the allocation's bytes: one CUmemAllocationProp is enough
    (the docs' "Size of the allocation" once counted props by it)."""
    out = _run(
        libcuda,
        """
        prop = driver.sys.CUmemAllocationProp()
        handle = driver.cuMemCreate(2 << 20, prop, 0)
        print(type(handle).__name__, int(handle))
        """,
    )
    assert out.split() == ["CUmemGenericAllocationHandle", "66"]


def test_released_and_destroyed_handles_are_refused(libcuda):
    out = _run(
        libcuda,
        """
        handle = driver.cuMemCreate(2 << 20, driver.sys.CUmemAllocationProp(), 0)
        driver.cuMemRelease(handle)
        stream = driver.cuStreamCreate(0)
        driver.cuStreamDestroy(stream)
        for call in (lambda: driver.cuMemRelease(handle),
                     lambda: driver.cuStreamDestroy(stream)):
            try:
                call()
            except cudart.HandleDestroyedError:
                print("destroyed")
        """,
    )
    assert out.split() == ["destroyed", "destroyed"]


def test_host_memory_is_a_buffer_of_its_size_until_freed(libcuda):
    out = _run(
        libcuda,
        """
        p = driver.cuMemAllocHost(64)
        print(type(p).__name__, len(memoryview(p)))
        driver.cuMemFreeHost(p)
        print(p.released)
        try:
            driver.cuMemFreeHost(p)  # a second free never reaches C
        except cudart.CudaDriverError:
            print("reached C")
        except Exception as e:
            print(type(e).__name__)
        """,
    )
    assert out.split() == ["HostMemory", "64", "True", "ValueError"]


def test_linker_and_launch_shapes(libcuda):
    """cuLinkCreate returns its CUlinkState (and what C wrote through typed options:
    tests/runtime/test_jit_options.py); cuLaunchKernel takes kernelParams and
    extra (the docs' wording once made them outputs)."""
    out = _run(
        libcuda,
        """
        state, written = driver.cuLinkCreate(0, None, None)  # no typed options: none written
        print(type(state).__name__, hex(state.value), len(written))
        try:
            driver.cuLaunchKernel(None, 1, 1, 1, 1, 1, 1, 0, None, None, None)
        except cudart.CudaDriverError as e:
            print("reached", e.code)
        """,
    )
    assert out.split() == ["CUlinkState", "0x77", "0", "reached", "34"]
