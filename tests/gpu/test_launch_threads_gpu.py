"""Concurrent launches of ONE Function from many host threads (issue 25), checked on the
device: each launch writes its own tag into its own region of its thread's buffer, with
its own grid, on one of its thread's streams. A launch that ran with another thread's
arguments, grid or stream, or that was lost, leaves a region that is not its tag (or
tags beyond its count). The owner thread launches through the C launcher; the others
pack into slots of their own (cudart.kernels._function). Under a free-threaded Python
(3.13t) the threads launch truly at once; the C launcher's state is per-launcher under
a critical section (cudart/kernels/_fastlaunch.c).

A PTX kernel the driver JIT-compiles: no nvcc.
"""

from __future__ import annotations

import ctypes
import sys
import threading

import numpy as np

import cudart
from cudart.kernels import load_module

from .support import check

FILL_PTX = r"""
.version 7.8
.target sm_90
.address_size 64

.visible .entry fill(.param .u64 out, .param .u32 tag, .param .u32 n)
{
    .reg .pred %p;
    .reg .b32 %r<7>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r1, [tag];
    ld.param.u32 %r2, [n];
    mov.u32 %r3, %ctaid.x;
    mov.u32 %r4, %ntid.x;
    mov.u32 %r5, %tid.x;
    mad.lo.s32 %r6, %r3, %r4, %r5;
    setp.ge.u32 %p, %r6, %r2;
    @%p bra $L_done;
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r6, 4;
    add.s64 %rd2, %rd2, %rd3;
    st.global.u32 [%rd2], %r1;
$L_done:
    ret;
}
"""

THREADS, LAUNCHES, MAX_N, BLOCK = 12, 300, 1024, 128


def _lengths(k: int) -> list[int]:
    """Each launch's element count: a new grid almost every launch."""
    return [1 + (k * 131 + r * 97) % MAX_N for r in range(LAUNCHES)]


def test_one_function_launched_from_many_threads_at_once(rt, dev):
    module = load_module(FILL_PTX.encode())
    fill = module.get_function("fill")
    buffers = [dev.alloc(LAUNCHES * MAX_N * 4) for _ in range(THREADS)]
    streams = [(cudart.cudaStreamCreate(), cudart.cudaStreamCreate()) for _ in range(THREADS)]
    start = threading.Barrier(THREADS)
    failures = []

    def worker(k):
        try:
            start.wait()
            for r, n in enumerate(_lengths(k)):
                region = buffers[k] + r * MAX_N * 4
                grid = (n + BLOCK - 1) // BLOCK
                tag = np.uint32(k * 100_000 + r + 1)
                fill.launch(grid, BLOCK, region, tag, np.uint32(n), stream=streams[k][r % 2])
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(repr(exc))
            start.abort()

    try:
        interval = sys.getswitchinterval()
        sys.setswitchinterval(1e-6)  # with a GIL: switch threads as often as it can
        try:
            workers = [threading.Thread(target=worker, args=(k,)) for k in range(THREADS)]
            for w in workers:
                w.start()
            for w in workers:
                w.join()
        finally:
            sys.setswitchinterval(interval)
        assert not failures, failures
        check(rt, rt.cudaDeviceSynchronize())
        wrong = []
        for k in range(THREADS):
            got = np.array(dev.read(buffers[k], ctypes.c_uint32, LAUNCHES * MAX_N), np.uint32)
            got = got.reshape(LAUNCHES, MAX_N)
            for r, n in enumerate(_lengths(k)):
                tag = k * 100_000 + r + 1
                if not (got[r, :n] == tag).all() or got[r, n:].any():
                    wrong.append((k, r, n, sorted(set(got[r].tolist()))[:4]))
        assert not wrong, f"{len(wrong)} of {THREADS * LAUNCHES} launches wrong: {wrong[:5]}"
        assert fill._fast is None or fill._fast.launches > 0  # the owner's went through C
    finally:
        for pair in streams:
            for stream in pair:
                cudart.cudaStreamDestroy(stream)
        module.close()
