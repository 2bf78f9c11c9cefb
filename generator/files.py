"""Writing a file so that nobody sees it half-written (standard library only).

The generated modules, the snapshots, the manifest and the format cache are all
written this way: whole, under a temporary name beside the target, then renamed over
it, so a reader (or a second process writing the same file) sees the old state or the
complete new one. The result has the mode a plain `open(path, "w")` would give it
(0666 less the umask), not the private 0600 of a temporary file.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def current_umask() -> int:
    """The process's umask, read without changing it where the system tells it
    (Linux's /proc), else set and restored at once."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def file_mode() -> int:
    """The mode of a new file as open() makes it: 0666 less the umask."""
    return 0o666 & ~current_umask()


def folder_mode() -> int:
    """The mode of a new folder as mkdir() makes it: 0777 less the umask."""
    return 0o777 & ~current_umask()


def process_alive(pid: int) -> bool:
    """Whether the process `pid` (the owner named in a scratch folder's name) still
    runs; our own pid is an earlier process's that had it, so not alive."""
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except (OverflowError, OSError):
        return False
    return True


def write_atomically(path: Path, text: str | bytes, *, durable: bool = False) -> None:
    """Replace `path` with `text` (UTF-8, newlines as given; bytes as they are). `durable`
    also flushes the data to disk before the rename, for files whose loss would cost more
    than time."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, file_mode())
        data = text if isinstance(text, bytes) else text.encode("utf-8")
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
