"""cudart's own imports on first use (cudart.kernels, cudart.callbacks), one at a time.

`import cudart` leaves out what a first launch or host function needs (typing,
dataclasses, logging: milliseconds), so the first call imports it. Threads making their
first calls at once would then import it at once, and CPython's import locks do not
cover everything an import reads: dataclasses reads `sys.modules["typing"]` without
waiting for the thread still executing typing, and raised "partially initialized
module 'typing'" in 20 of 30 fresh processes whose 16 threads made their first
cudaLaunchKernel and cudaLaunchHostFunc together (issue 33, item 27). One lock around
these imports lets a single thread import while the others wait for it to finish; once
a module is imported, a look-up is one dict read and no lock.

The lock is re-entrant: an import it covers may start another (cudart.callbacks'
import reaching cudart.kernels). No import it covers waits for a lock of the program's
own, so it cannot close a cycle with one. Standard library only.
"""

from __future__ import annotations

import importlib
import threading

# Fully imported modules, by name: a module is stored only once its import returned,
# so a reader never sees one still executing (sys.modules holds it from its start).
_imported: dict = {}
_importing = threading.RLock()
_PACKAGE = __name__.rpartition(".")[0]


def module(name: str):
    """The module `name` (relative to cudart: ".callbacks"), imported under cudart's
    import lock on first use."""
    found = _imported.get(name)
    if found is None:
        with _importing:
            found = importlib.import_module(name, _PACKAGE)
        _imported[name] = found
    return found
