"""Writing a file so that nobody sees it half-written (standard library only).

The generated modules, the snapshots, the manifest and the format cache are all
written this way: whole, under a temporary name beside the target, then renamed over
it, so a reader (or a second process writing the same file) sees the old state or the
complete new one. The result has the mode a plain `open(path, "w")` would give it
(0666 less the umask), not the private 0600 of a temporary file.

The temporary name, `.<name>.<pid>.<8 random characters>.tmp`, names its writer: a run
killed between the write and the rename (kill -9, a power cut) leaves it behind, and a
later run removes it (`remove_stale_temporaries`) once its writer is gone, never the
file of a run still writing.
"""

from __future__ import annotations

import os
import re
import stat
import tempfile
import time
from collections.abc import Callable
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


TEMPORARY_SUFFIX = ".tmp"
# write_atomically's temporary names (mkstemp adds 8 of [a-z0-9_]), and the names of the
# writers before they carried their pid, which no current run makes.
_TEMPORARY = re.compile(r"\.(?P<name>.+)\.(?P<pid>[0-9]+)\.[a-z0-9_]{8}\.tmp", re.ASCII)
_TEMPORARY_WITHOUT_PID = re.compile(r"\.(?P<name>.+)\.[a-z0-9_]{8}\.tmp", re.ASCII)
# A write takes milliseconds: a temporary of the pid-less naming this old is no write in
# progress (an older generator's, running at the same moment), but a killed one's leftover.
STALE_WITHOUT_PID_S = 600


def remove_stale_temporaries(folder: Path, names: Callable[[str], bool]) -> list[str]:
    """Remove from `folder` the temporaries that write_atomically left for files whose
    name passes `names`, whose writer no longer runs; only regular files of that naming
    (not links, not folders, nothing else). Returns the names removed, sorted."""
    removed: list[str] = []
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:  # no folder yet, or unreadable: nothing of ours to remove
        return removed
    now = time.time()
    for entry in entries:
        if not entry.name.endswith(TEMPORARY_SUFFIX) or not _is_stale(entry, names, now):
            continue
        try:
            os.unlink(entry.path)
        except FileNotFoundError:  # removed by a concurrent run
            continue
        removed.append(entry.name)
    return removed


def _is_stale(entry: os.DirEntry, names: Callable[[str], bool], now: float) -> bool:
    try:
        info = entry.stat(follow_symlinks=False)
    except OSError:
        return False
    if not stat.S_ISREG(info.st_mode):
        return False
    m = _TEMPORARY.fullmatch(entry.name)
    if m and names(m["name"]):
        return not process_alive(int(m["pid"]))
    m = _TEMPORARY_WITHOUT_PID.fullmatch(entry.name)
    return bool(m and names(m["name"]) and now - info.st_mtime > STALE_WITHOUT_PID_S)


def write_atomically(path: Path, text: str | bytes, *, durable: bool = False) -> None:
    """Replace `path` with `text` (UTF-8, newlines as given; bytes as they are). `durable`
    also flushes the data to disk before the rename, for files whose loss would cost more
    than time."""
    fd, tmp = tempfile.mkstemp(
        dir=path.parent, prefix=f".{path.name}.{os.getpid()}.", suffix=TEMPORARY_SUFFIX
    )
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
