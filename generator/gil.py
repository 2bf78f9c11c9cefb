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
stale. Each compiled family's rows are in its descriptor (families/<name>.toml [gil]).
"""

from __future__ import annotations

from .families import family


def holds_gil(surface: str) -> dict[str, str]:
    """Function -> why the compiled backend may call it with the GIL held, for one
    family (its descriptor's [gil] rows)."""
    return dict(family(surface).gil)
