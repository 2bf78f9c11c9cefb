"""cudart.HostMemory without a GPU: the object the checked cudaHostAlloc, cudaMallocHost
and cudaMallocManaged return, made here over memory ctypes owns, so its int and buffer
sides, its release, and its passage through the checked and raw layers' pointer
parameters (into real C: libc's memset, the real libcudart) are exercised as on a GPU.
"""

from __future__ import annotations

import ctypes
import importlib
import operator
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import abi_support
import needs
import pytest
from suite import run_python

import cudart
from cudart import _convert
from cudart._hostmem import HostMemory, host_memory, like, release

# The calls go through the backend in force: make test-ctypes runs them on ctypes too.
pytestmark = pytest.mark.backend

VERSIONS = cudart.available_versions()
SIZE = 64
LIBC = ctypes.CDLL(None)


@pytest.fixture
def backing():
    return ctypes.create_string_buffer(SIZE)


@pytest.fixture
def memory(backing):
    return host_memory(ctypes.addressof(backing), SIZE)


def test_is_an_int_address_wherever_one_is_expected(memory, backing):
    address = ctypes.addressof(backing)
    assert isinstance(memory, HostMemory) and isinstance(memory, cudart.HostMemory)
    assert int(memory) == operator.index(memory) == memory.address == address
    assert hex(memory) == hex(address)
    assert memory == address and address == memory and memory != address + 1
    assert hash(memory) == hash(address)
    assert {address: "found"}[memory] == "found"
    assert memory == host_memory(address, 8)  # by address, as ints compare
    assert memory != "x" and memory is not None
    assert bool(memory) and not bool(host_memory(0, SIZE))
    assert repr(memory) == f"<HostMemory {address:#x}, {SIZE} bytes>"
    # c_void_p() itself takes an int only: int(memory) there (documented).
    assert ctypes.c_void_p(int(memory)).value == address


def test_exports_its_bytes_as_a_buffer(memory, backing):
    assert len(memory) == memory.nbytes == SIZE
    view = memoryview(memory)
    assert view.nbytes == SIZE and not view.readonly and view.shape == (SIZE,)
    floats = memory.view("f")
    assert floats.format == "f" and len(floats) == SIZE // 4
    floats[1] = 2.5
    assert ctypes.c_float.from_buffer_copy(backing.raw[4:8]).value == 2.5
    memory[0] = 7  # a byte, as a ctypes array of c_ubyte
    assert backing.raw[0] == 7 and memory.view()[0] == 7
    assert bytes(memoryview(memory).cast("B")[:1]) == b"\x07"


def test_numpy_frombuffer_sees_the_memory(memory, backing):
    numpy = needs.numpy()
    array = numpy.frombuffer(memory, dtype=numpy.float32)
    assert array.size == SIZE // 4
    array[2] = 1.25
    assert ctypes.c_float.from_buffer_copy(backing.raw[8:12]).value == 1.25


def test_passes_as_a_pointer_to_the_checked_conversion_and_to_c(memory, backing):
    # The checked layer keeps the object (its argtype c_void_p takes the array).
    assert _convert.pointer(memory, "ptr", True) is memory
    assert _convert.device_address(memory) == int(memory)
    memset = LIBC.memset
    memset.argtypes = (ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t)
    memset(memory, 0x5A, 3)
    assert backing.raw[:4] == b"ZZZ\x00"


def test_a_kernel_argument_is_its_address_not_its_bytes(memory):
    from cudart.kernels._launch import Signature

    for sizes in ((8,), None):
        signature = Signature((memory,), sizes)
        signature.pack(memory)
        slot = ctypes.c_void_p.from_address(signature.argv.value).value
        assert ctypes.c_uint64.from_address(slot).value == int(memory)
    release(memory)
    with pytest.raises(ValueError, match="was freed"):
        signature.pack(memory)


def test_release_refuses_address_and_view_and_a_second_free(memory):
    release(memory)
    assert memory.released
    for use in (int, operator.index, lambda m: m.view(), lambda m: m.view("f")):
        with pytest.raises(ValueError, match="was freed"):
            use(memory)
    with pytest.raises(ValueError, match="was freed"):
        _convert.pointer(memory, "ptr", False)
    with pytest.raises(ValueError, match="was freed"):
        _convert.device_address(memory)
    # Still comparable and hashable by address, and says what it is.
    assert memory == memory.address and "released" in repr(memory)
    if sys.version_info >= (3, 12):
        with pytest.raises(ValueError, match="was freed"):
            memoryview(memory)
    else:
        # 3.11 has no __buffer__: ctypes' own export cannot refuse (documented).
        assert memoryview(memory).nbytes == SIZE


def test_made_only_over_given_memory():
    with pytest.raises(TypeError, match="made by the checked layer"):
        HostMemory()
    with pytest.raises(ValueError, match=">= 0"):
        host_memory(0x1000, -1)
    empty = host_memory(None, 16)
    assert int(empty) == 0 and len(empty) == 0 and memoryview(empty).nbytes == 0


def test_like_is_the_given_object_only_at_its_own_address(memory):
    assert like(memory.address, memory) is memory
    assert like(memory.address + 64, memory) == memory.address + 64
    assert like(memory.address, memory.address) == memory.address
    assert like(None, memory) == 0
    release(memory)
    assert type(like(memory.address, memory)) is int


def test_one_class_per_size_and_a_bounded_number(backing):
    from cudart import _hostmem

    address = ctypes.addressof(backing)
    assert type(host_memory(address, 8)) is type(host_memory(address, 8))
    assert type(host_memory(address, 8)) is not type(host_memory(address, 16))
    for size in range(_hostmem._MAX_CLASSES + 10):
        _hostmem._class(size)
    assert len(_hostmem._classes) <= _hostmem._MAX_CLASSES


# ---------------------------------------------------------------- the generated layer


@pytest.fixture(params=VERSIONS, ids=[f"checked_{v}" for v in VERSIONS])
def checked(request):
    return importlib.import_module(f"cudart.checked_{request.param}")


def test_checked_allocations_are_annotated_as_host_memory(checked):
    hints = {
        name: getattr(checked, name).__annotations__["return"]
        for name in ("cudaHostAlloc", "cudaMallocHost", "cudaMallocManaged")
    }
    assert set(hints.values()) == {"_HostMemory"}
    assert checked.cudaHostGetDevicePointer.__annotations__["return"] == "_HostMemory | int"
    assert checked.cudaMalloc.__annotations__["return"] == "int"  # device memory
    assert "cudart.HostMemory" in checked.cudaHostAlloc.__doc__
    assert "marked released" in checked.cudaFreeHost.__doc__


def test_checked_free_refuses_freed_memory_before_calling_c(checked, memory):
    release(memory)
    for free in (checked.cudaFreeHost, checked.cudaFree, checked.cudaHostGetDevicePointer):
        with pytest.raises(ValueError, match="was freed"):
            free(memory) if free is not checked.cudaHostGetDevicePointer else free(memory, 0)


PROBE = """
import ctypes, cudart
backing = ctypes.create_string_buffer(64)
from cudart._hostmem import host_memory
m = host_memory(ctypes.addressof(backing), 64)
try:
    cudart.cudaFreeHost(m)   # no driver here: the runtime refuses
except cudart.CudaError as exc:
    print(type(exc).__name__, m.released, int(m) == ctypes.addressof(backing))
"""


@pytest.mark.parametrize("python", [None, *abi_support.other_pythons()])
def test_a_failed_free_leaves_the_memory_usable(python):
    # Through the real libcudart, which fails without a driver: not released then. Under
    # each Python: from 3.12 on, a buffer request honours HostMemory's __buffer__, which
    # refuses once the free has claimed it, so C must be given the address instead.
    interpreter = sys.executable
    if python is not None:
        interpreter, why = abi_support.find_interpreter(python)
        if interpreter is None:
            pytest.skip(f"{python} unusable: {why}")
    out = run_python(PROBE, python=interpreter).stdout.split()
    assert out[1:] == ["False", "True"] and out[0].startswith("CudaError")


SEMANTICS = """
import ctypes, operator, sys
from cudart._hostmem import host_memory, release
b = ctypes.create_string_buffer(32)
m = host_memory(ctypes.addressof(b), 32)
v = memoryview(m)
assert v.nbytes == 32 and int(m) == operator.index(m) == ctypes.addressof(b)
m.view("i")[0] = 5
assert b.raw[:4] == (5).to_bytes(4, sys.byteorder)
fmt = v.format
v.release()
release(m)
try:
    memoryview(m)
    refused = False
except ValueError:
    refused = True
print(sys.version_info[1], fmt, refused)
"""


def _interpreter(name: str) -> str | None:
    """A working `name` (python3.12, ...): on PATH, or one pyenv installed."""
    candidates = [shutil.which(name)] + sorted(
        str(p) for p in Path.home().glob(f".pyenv/versions/{name[6:]}*/bin/{name}")
    )
    for candidate in filter(None, candidates):
        if subprocess.run([candidate, "-c", "pass"], capture_output=True).returncode == 0:
            return candidate
    return None


@pytest.mark.parametrize("python", ["python3.12", "python3.13"])
def test_buffer_export_on_newer_pythons(python):
    """PEP 688's __buffer__: plain bytes ("B"), refused once released. Where the
    interpreter is absent this cannot be shown here."""
    found = _interpreter(python)
    if found is None:
        pytest.skip(f"no working {python} here")
    proc = run_python(textwrap.dedent(SEMANTICS), python=found, check=False)
    assert proc.returncode == 0, proc.stderr
    minor, fmt, refused = proc.stdout.split()
    assert (minor, fmt, refused) == (python[-2:], "B", "True")
