"""Worker processes that end with the process that started them.

A pool's workers wait on pipes that they themselves hold open: when the parent is killed
(kill -9, the OOM killer) they never see the end of their work queue and wait forever,
each holding a parsed CUDA version in memory. Each worker asks the kernel to kill it
when its parent dies, and checks once that its parent is still the one that started it.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time

_PR_SET_PDEATHSIG = 1  # linux/prctl.h
# Where the kernel cannot signal the death of the parent, how often a worker looks.
_POLL_SECONDS = 1.0


def die_with_parent(parent: int) -> None:
    """Pool initializer (run in each worker): end this process when `parent` ends."""
    if not _kill_me_when_my_parent_dies():
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    # The parent may have died before the request took effect; its orphans are adopted
    # by another process, so the parent pid tells.
    if os.getppid() != parent:
        os._exit(1)


def _kill_me_when_my_parent_dies() -> bool:
    """Linux's prctl(PR_SET_PDEATHSIG, SIGKILL); False where the system has no such call."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return False
    prctl.argtypes = (ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong)
    prctl.restype = ctypes.c_int
    return prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(_POLL_SECONDS)
    os._exit(1)
