"""Size relations on a GPU (generator/sizes.py): a host buffer that ends at a guard page
(mmap two pages, the second PROT_NONE), so a copy that ran one byte past its end would
be a SIGSEGV. Each over-long request must be refused (ValueError) before C, and the
exact-size request must succeed on the same buffer.

Each case runs in its own interpreter: a refused check that regressed kills that
interpreter with a signal, which the test reports, instead of the test session.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent.parent

# Sets up `guarded(n)`: n bytes that end where the PROT_NONE page starts, as a ctypes
# array (`kind="ctypes"`) or a memoryview (`kind="view"`) over the mmap.
PRELUDE = r"""
import ctypes, json, mmap
import cudart

PAGE = mmap.PAGESIZE
libc = ctypes.CDLL(None, use_errno=True)
libc.mprotect.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
_maps = []


def guarded(n, kind="ctypes"):
    m = mmap.mmap(-1, 2 * PAGE, prot=mmap.PROT_READ | mmap.PROT_WRITE)
    base = ctypes.addressof(ctypes.c_char.from_buffer(m))
    assert libc.mprotect(base + PAGE, PAGE, 0) == 0, ctypes.get_errno()  # PROT_NONE
    _maps.append(m)
    if kind == "view":
        return memoryview(m)[PAGE - n : PAGE]
    return (ctypes.c_char * n).from_buffer(m, PAGE - n)


def refused(call):
    try:
        call()
    except ValueError as exc:
        return str(exc)
    raise AssertionError("the over-long request was not refused")


H2D, D2H = cudart.cudaMemcpyHostToDevice, cudart.cudaMemcpyDeviceToHost
N = 1000
d = cudart.cudaMalloc(2 * PAGE)
result = {}
"""

CASES = {
    "memcpy_h2d": r"""
for kind in ("ctypes", "view"):
    buf = guarded(N, kind)
    result[kind] = refused(lambda: cudart.cudaMemcpy(d, buf, N + 1, H2D))
    cudart.cudaMemcpy(d, buf, N, H2D)
""",
    "memcpy_d2h": r"""
for kind in ("ctypes", "view"):
    buf = guarded(N, kind)
    cudart.cudaMemset(d, 7, N)
    result[kind] = refused(lambda: cudart.cudaMemcpy(buf, d, N + 1, D2H))
    cudart.cudaMemcpy(buf, d, N, D2H)
    assert bytes(buf) == b"\x07" * N
""",
    "memcpy_async": r"""
stream = cudart.cudaStreamCreate()
buf = guarded(N)
result["h2d"] = refused(lambda: cudart.cudaMemcpyAsync(d, buf, N + 1, H2D, stream))
result["d2h"] = refused(lambda: cudart.cudaMemcpyAsync(buf, d, N + 1, D2H, stream))
cudart.cudaMemcpyAsync(d, buf, N, H2D, stream)
cudart.cudaMemcpyAsync(buf, d, N, D2H, stream)
cudart.cudaStreamSynchronize(stream)
cudart.cudaStreamDestroy(stream)
""",
    "memcpy_2d": r"""
pitch, width, height = 64, 40, 10
buf = guarded((height - 1) * pitch + width)  # the last row ends at the guard page
result["h2d"] = refused(lambda: cudart.cudaMemcpy2D(d, 64, buf, pitch, width + 1, height, H2D))
result["d2h"] = refused(lambda: cudart.cudaMemcpy2D(buf, pitch, d, 64, width, height + 1, D2H))
cudart.cudaMemcpy2D(d, 64, buf, pitch, width, height, H2D)
cudart.cudaMemcpy2D(buf, pitch, d, 64, width, height, D2H)
stream = cudart.cudaStreamCreate()
result["async"] = refused(
    lambda: cudart.cudaMemcpy2DAsync(buf, pitch, d, 64, width, height + 1, D2H, stream)
)
cudart.cudaMemcpy2DAsync(buf, pitch, d, 64, width, height, D2H, stream)
cudart.cudaStreamSynchronize(stream)
cudart.cudaStreamDestroy(stream)
""",
    # cudaMemcpy3DParms holds its host address as an int (a ctypes field takes no
    # buffer), so the over-long 3D copy is the caller's promise, as in C: the table
    # leaves it out. What is checked: the record itself (one cudaMemcpy3DParms), and the
    # exact-size copy next to the guard page succeeds.
    "memcpy_3d": r"""
pitch, width, height, depth = 64, 40, 4, 3
size = (depth * height - 1) * pitch + width
buf = guarded(size)
p = cudart.cudaMemcpy3DParms()
p.srcPtr = cudart.make_cudaPitchedPtr(ctypes.addressof(buf), pitch, width, height)
p.dstPtr = cudart.make_cudaPitchedPtr(d, pitch, width, height)
p.extent = cudart.make_cudaExtent(width, height, depth)
p.kind = H2D
cudart.cudaMemcpy3D(p)
result["record"] = refused(lambda: cudart.cudaMemcpy3D(bytearray(8)))
""",
    "memset_managed": r"""
managed = cudart.cudaMallocManaged(N, cudart.cudaMemAttachGlobal)
result["sync"] = refused(lambda: cudart.cudaMemset(managed, 1, N + 1))
result["async"] = refused(lambda: cudart.cudaMemsetAsync(managed, 1, N + 1, None))
result["2d"] = refused(lambda: cudart.cudaMemset2D(managed, 100, 1, 100, 11))
cudart.cudaMemset(managed, 3, N)
cudart.cudaDeviceSynchronize()
assert bytes(memoryview(managed)) == b"\x03" * N
cudart.cudaFree(managed)
""",
    "host_register": r"""
buf = guarded(PAGE)  # the whole first page: page-aligned, as registration prefers
result["over"] = refused(lambda: cudart.cudaHostRegister(buf, 2 * PAGE, 0))
cudart.cudaHostRegister(buf, PAGE, 0)
cudart.cudaHostUnregister(buf)
""",
}

MESSAGES = {
    "memcpy_h2d": {
        "ctypes": "cudaMemcpy: count = 1001 bytes, but 'src' is a buffer of 1000 bytes",
        "view": "cudaMemcpy: count = 1001 bytes, but 'src' is a buffer of 1000 bytes",
    },
    "memcpy_d2h": {
        "ctypes": "cudaMemcpy: count = 1001 bytes, but 'dst' is a buffer of 1000 bytes",
        "view": "cudaMemcpy: count = 1001 bytes, but 'dst' is a buffer of 1000 bytes",
    },
    "memcpy_async": {
        "h2d": "cudaMemcpyAsync: count = 1001 bytes, but 'src'",
        "d2h": "cudaMemcpyAsync: count = 1001 bytes, but 'dst'",
    },
    "memcpy_2d": {
        "h2d": "cudaMemcpy2D: (height - 1) * spitch + width = 617 bytes, but 'src' is a buffer of",
        "d2h": "cudaMemcpy2D: (height - 1) * dpitch + width = 680 bytes, but 'dst' is a buffer of",
        "async": "cudaMemcpy2DAsync: (height - 1) * dpitch + width = 680 bytes",
    },
    "memcpy_3d": {"record": "cudaMemcpy3D: the record (1 x cudaMemcpy3DParms)"},
    "memset_managed": {
        "sync": "cudaMemset: count = 1001 bytes, but 'devPtr' is a buffer of 1000",
        "async": "cudaMemsetAsync: count = 1001 bytes, but 'devPtr' is a buffer of 1000",
        "2d": "cudaMemset2D: (height - 1) * pitch + width = 1100 bytes, but 'devPtr'",
    },
    "host_register": {"over": "cudaHostRegister: size = "},
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_over_long_request_refused_before_c_exact_size_succeeds(case):
    code = PRELUDE + CASES[case] + "\ncudart.cudaFree(d)\nprint(json.dumps(result))\n"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO
    )
    if proc.returncode < 0:
        pytest.fail(f"{case}: killed by {signal.Signals(-proc.returncode).name}\n{proc.stderr}")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.splitlines()[-1])
    assert set(result) == set(MESSAGES[case])
    for key, message in MESSAGES[case].items():
        assert result[key].startswith(message), (key, result[key])
