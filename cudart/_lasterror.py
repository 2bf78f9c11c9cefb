"""cudart's own runtime calls, and the thread's last error (cudaGetLastError).

The runtime keeps one last error per host thread: every failing call records its
error there, over whatever was there, cudaPeekAtLastError reads it and
cudaGetLastError reads and resets it to cudaSuccess. A sticky error (the context is
lost: cudaErrorIllegalAddress and its kind) is returned by every later call and
survives the reset. A program that checks cudaGetLastError after its own calls, as
NVIDIA's samples do (getLastCudaError), must find there what its own calls left, so the
calls cudart makes for its own purposes leave nothing behind (issue 33, item 12): a
look-up that misses, a probe past the last kernel parameter, the device compile asks
for its arch, a fallback between routes.

What the runtime lets cudart keep:
- Nothing was pending (peek: cudaSuccess): whatever cudart's calls recorded is
  consumed by one cudaGetLastError afterwards. A sticky error they met stays, as it
  must: it is the device's state, not a leftover of a call.
- An error of the program's was pending: no call can set it again, and any failing
  call would replace it. So cudart's calls there are those that cannot fail on a live
  context (the library route's kernel listing instead of a look-up that may miss); one
  that may fail anyway (the parameter probe, a global's look-up between
  cudaLibraryGetGlobal and cudaLibraryGetManaged, tried in turn) keeps the pending
  error only where it succeeded: the one case the runtime leaves no way to keep.

Calls that are the operation the program asked for (Function.launch's
cudaLaunchKernelExC, Global.read/write's cudaMemcpy, load_module's cudaLibraryLoadData
or registration, Module.close's unload, the callbacks' cudaLaunchHostFunc) leave the
last error as C's call would: set where they failed, as the CudaError raised says.
Standard library only.
"""

from __future__ import annotations


class internal_calls:  # noqa: N801 - used as a statement, like a function
    """`with internal_calls(rt) as pending:` around calls cudart makes for itself;
    `pending` is the program's error pending before them (0: none)."""

    __slots__ = ("rt", "pending")

    def __init__(self, rt):
        self.rt = rt
        self.pending = 0

    def __enter__(self) -> int:
        self.pending = int(self.rt.cudaPeekAtLastError())
        return self.pending

    def __exit__(self, *exc) -> None:
        if not self.pending:
            self.rt.cudaGetLastError()  # what cudart's calls recorded; a sticky one stays
