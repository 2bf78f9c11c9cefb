"""Overlap work in several streams, time it with events, chain streams through an
event, and hear back from each stream through a Python host callback.

    python examples/streams_events.py
"""

import ctypes
import sys
import threading

import cudart
from cudart import callbacks

STREAMS = 4
SIZE = 32 << 20  # bytes per stream


def check(rt, status):
    if status != rt.cudaSuccess:
        name = rt.cudaGetErrorName(status).decode()
        sys.exit(f"CUDA error {name} ({status}): {rt.cudaGetErrorString(status).decode()}")


def main():
    rt = cudart.sys
    streams, starts, stops, device, pinned = [], [], [], [], []
    for _ in range(STREAMS):
        s, start, stop = rt.cudaStream_t(), rt.cudaEvent_t(), rt.cudaEvent_t()
        d, h = ctypes.c_void_p(), ctypes.c_void_p()
        check(rt, rt.cudaStreamCreateWithFlags(ctypes.byref(s), rt.cudaStreamNonBlocking))
        check(rt, rt.cudaEventCreate(ctypes.byref(start)))
        check(rt, rt.cudaEventCreate(ctypes.byref(stop)))
        check(rt, rt.cudaMalloc(ctypes.byref(d), SIZE))
        # Pinned memory: copies from pageable memory would not run asynchronously.
        check(rt, rt.cudaMallocHost(ctypes.byref(h), SIZE))
        streams.append(s), starts.append(start), stops.append(stop), device.append(
            d
        ), pinned.append(h)

    finished = []
    lock = threading.Lock()

    def done(index):
        # Runs on a CUDA thread once the stream's work before it is complete. It must
        # not call CUDA itself; it only notes the fact.
        with lock:
            finished.append(index)

    total_start, total_stop = rt.cudaEvent_t(), rt.cudaEvent_t()
    check(rt, rt.cudaEventCreate(ctypes.byref(total_start)))
    check(rt, rt.cudaEventCreate(ctypes.byref(total_stop)))
    check(rt, rt.cudaEventRecord(total_start, None))
    for i, s in enumerate(streams):
        ctypes.memset(pinned[i].value, i, SIZE)
        check(rt, rt.cudaStreamWaitEvent(s, total_start, 0))
        check(rt, rt.cudaEventRecord(starts[i], s))
        check(rt, rt.cudaMemcpyAsync(device[i], pinned[i], SIZE, rt.cudaMemcpyHostToDevice, s))
        check(rt, rt.cudaMemsetAsync(device[i], 0x40 + i, SIZE // 2, s))
        check(rt, rt.cudaMemcpyAsync(pinned[i], device[i], SIZE, rt.cudaMemcpyDeviceToHost, s))
        check(rt, rt.cudaEventRecord(stops[i], s))
        check(rt, callbacks.launch_host_func(s, done, i))
    # The legacy default stream waits for every stream's last event.
    for stop in stops:
        check(rt, rt.cudaStreamWaitEvent(None, stop, 0))
    check(rt, rt.cudaEventRecord(total_stop, None))
    check(rt, rt.cudaEventSynchronize(total_stop))
    check(rt, rt.cudaDeviceSynchronize())

    ok = True
    for i in range(STREAMS):
        ms = ctypes.c_float()
        check(rt, rt.cudaEventElapsedTime(ctypes.byref(ms), starts[i], stops[i]))
        data = ctypes.string_at(pinned[i].value, SIZE)
        good = data == bytes([0x40 + i]) * (SIZE // 2) + bytes([i]) * (SIZE // 2)
        ok &= good
        gb_s = 2 * SIZE / (ms.value / 1000) / 1e9 if ms.value > 0 else float("inf")
        print(
            f"stream {i}: {ms.value:7.3f} ms for 2 x {SIZE >> 20} MiB copied "
            f"({gb_s:.1f} GB/s), data {'ok' if good else 'WRONG'}"
        )
    total = ctypes.c_float()
    check(rt, rt.cudaEventElapsedTime(ctypes.byref(total), total_start, total_stop))
    print(f"all streams: {total.value:.3f} ms")
    print(f"host callbacks ran for streams {sorted(finished)}")
    if sorted(finished) != list(range(STREAMS)):
        ok = False

    for i in range(STREAMS):
        check(rt, rt.cudaFreeHost(pinned[i]))
        check(rt, rt.cudaFree(device[i]))
        check(rt, rt.cudaEventDestroy(starts[i]))
        check(rt, rt.cudaEventDestroy(stops[i]))
        check(rt, rt.cudaStreamDestroy(streams[i]))
    check(rt, rt.cudaEventDestroy(total_start))
    check(rt, rt.cudaEventDestroy(total_stop))
    if not ok:
        sys.exit("FAILED: wrong data or missing callbacks")
    print(f"OK: {STREAMS} streams verified")


if __name__ == "__main__":
    main()
