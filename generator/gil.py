"""Which raw functions the compiled backend calls with the GIL held: a reviewed table.

Every other function is called with the GIL released, as ctypes calls it, and it must
be: a call that waits on the device (a synchronize, a copy, an enqueue on a full
queue, a free that synchronizes) may be waiting for a host function queued before it
(cudaLaunchHostFunc), which needs the GIL to run its Python callable. Holding the GIL
there is a deadlock.

Releasing and taking back the GIL costs 19-45 ns on the development machine and 92 ns
on the H200 machine (bench/checked_rows.py's call.gil row, one thread), as much as the
cheapest calls themselves. The functions here read state
of the calling thread or constants of the library, wait on nothing, and take no lock
another thread could hold while it waits on the device, so they keep the GIL, as
CuPy's runtime calls do (its getDevice holds it). A name of this table that a version
lacks is an error (generator/render/fast.py refuses to render), so the table cannot go
stale. One table per header family the compiled backend serves.
"""

from __future__ import annotations

HOLDS_GIL: dict[str, dict[str, str]] = {
    "runtime": {
        "cudaGetDevice": "the calling thread's current device",
        "cudaGetLastError": "the calling thread's last error, reset",
        "cudaPeekAtLastError": "the calling thread's last error",
        "cudaGetErrorName": "a static table of the library",
        "cudaGetErrorString": "a static table of the library",
        "cudaRuntimeGetVersion": "a constant of the library",
        # The runtime loads libcuda under its own lock at its first call, a lock no
        # thread holds while it waits on the device.
        "cudaDriverGetVersion": "libcuda's version, a constant of that library",
    },
    # cuda.h: the same kinds of call. cuDeviceGetAttribute is left out, as the runtime's
    # cudaDeviceGetAttribute is: it may initialize the device's state under a lock.
    "driver": {
        "cuCtxGetCurrent": "the calling thread's current context",
        "cuCtxGetDevice": "the device of the calling thread's current context",
        "cuGetErrorName": "a static table of the library",
        "cuGetErrorString": "a static table of the library",
        "cuDriverGetVersion": "a constant of the library",
    },
}
