"""Writing a file so that nobody sees it half-written (standard library only).

The generated modules, the snapshots, the manifest and the format cache are all
written this way: whole, under a temporary name beside the target, then renamed over
it, so a reader (or a second process writing the same file) sees the old state or the
complete new one.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomically(path: Path, text: str, *, durable: bool = False) -> None:
    """Replace `path` with `text` (UTF-8, newlines as given). `durable` also flushes the
    data to disk before the rename, for files whose loss would cost more than time."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
