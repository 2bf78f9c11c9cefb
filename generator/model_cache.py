"""Each header set's parsed model, kept on disk, keyed by everything the parse reads.

Parsing is most of the time `generate --all` and `check` take (libclang reads some
hundred thousand lines of headers per version and family), and the model of a header
set never changes while its inputs do not: so a model is parsed once and kept in
<cache>/models/, and any later run (`generate`, `check`, the test suite's
tests/support/models.py) loads it.

The key is everything the model is a function of:
- the header set: its folders are named by the sha256 of the verified wheels they were
  unpacked from, and fetch_version checks each tree against its wheel (and extracts an
  edited one again) before any model is looked up (generator/fetch.py), so their paths
  name their bytes; and which headers the parse starts from;
- the parser: every file of the generator package (its code and its shims), whatever
  it is; a change to any of them is a miss;
- the C compiler's standard headers: their folders, the compiler's version and the C
  library's, which say what those folders hold;
- libclang's version, and Python's (the pickle holds the generator's classes).
A cached model is therefore the parse of the same inputs by the same code: `check`
answering from the cache is the same proof as `check` parsing, and a changed input can
only miss, never be served a stale model. So CI's regeneration check keeps the cache
(a fresh machine starts without one anyway), and `--no-model-cache` (or
CUDART_BINDGEN_MODEL_CACHE=0) parses regardless, for whoever wants to watch the parser
run; tests/generator/test_cli.py's `generate 12.2` does, and matches the committed
bytes.

A process that has run an NVRTC compile parses differently (libnvrtc brings its own
LLVM; see tests/conftest.py): the generator never loads NVRTC, and the test suite parses
its misses in fresh interpreters (tests/support/models.py) before storing them here.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path

from .fetch import HeaderSet, cache_root
from .files import write_atomically
from .model import ApiModel

CACHE_ENV = "CUDART_BINDGEN_MODEL_CACHE"
_PACKAGE = Path(__file__).resolve().parent
# Models of other generator states are kept this long after they were written: another
# checkout sharing the cache (a second worktree) may be using them right now.
KEEP_OTHERS_S = 24 * 3600


def enabled() -> bool:
    return os.environ.get(CACHE_ENV, "1") != "0"


def model_for(
    headers: HeaderSet,
    parse: Callable[[HeaderSet], ApiModel],
    announce: Callable[[bool], None] = lambda _cached: None,
) -> ApiModel:
    """The kept model of `headers`, else parse(headers), kept. `announce(cached)` is
    called once, before a parse starts or when the kept model is taken."""
    if not enabled():
        announce(False)
        return parse(headers)
    path = cache_file(headers)
    model = load(path)
    if model is None:
        with parsing(path):
            model = load(path)  # parsed by another process while this one waited
            if model is None:
                announce(False)
                model = parse(headers)
                store(path, model)
                return model
    announce(True)
    return model


@contextmanager
def parsing(path: Path) -> Iterator[None]:
    """Held while the header set of the model file `path` is parsed: processes of one
    run (the test suite's workers, `check`'s) that miss the same model wait for the
    first one's parse instead of parsing it too. The lock is the header set's, whatever
    the generator's state, so its files stay one per header set."""
    try:
        import fcntl
    except ImportError:  # no flock (Windows): each process parses its misses
        yield
        return
    key, which, _ = path.stem.split("-")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        lock = open(path.parent / f"{key}-{which}.lock", "a+b")
    except OSError:  # an unwritable cache only costs time
        yield
        return
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, or the process ends
        yield


def load(path: Path) -> ApiModel | None:
    """The model kept at `path`; None when there is none (or it cannot be read: a torn or
    foreign file is a miss, never an error)."""
    try:
        with open(path, "rb") as f:
            model = pickle.load(f)
    except Exception:  # absent, torn, or of other classes: parsed again and replaced
        return None
    return model if isinstance(model, ApiModel) else None


def store(path: Path, model: ApiModel) -> None:
    """Kept whole or not at all (a concurrent reader sees the old state or the new file);
    an unwritable cache only costs time."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL))
    except OSError:
        return
    drop_older(path)


def cache_file(headers: HeaderSet) -> Path:
    """<key>-<the header set's digest>-<the environment's digest>.pickle"""
    which = _digest(headers.key, *map(str, headers.include_dirs), *map(str, headers.headers))
    return cache_root() / "models" / f"{headers.key}-{which}-{_digest(*environment())}.pickle"


def _digest(*parts: str) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode() + b"\0")
    return h.hexdigest()[:24]


def drop_older(path: Path) -> None:
    """The same header set's models of other generator states, once they are a day old."""
    key, which, _ = path.stem.split("-")
    now = time.time()
    for other in path.parent.glob(f"{key}-{which}-*.pickle"):
        try:
            if other != path and now - other.stat().st_mtime > KEEP_OTHERS_S:
                other.unlink()
        except FileNotFoundError:
            pass


@cache
def environment() -> tuple[str, ...]:
    """What a model depends on beyond its headers (see the module's docstring)."""
    from importlib.metadata import version

    from .parse import system_include_dirs

    h = hashlib.sha256()
    for path in sorted(_PACKAGE.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            h.update(str(path.relative_to(_PACKAGE.parent)).encode() + b"\0" + path.read_bytes())
    return (
        h.hexdigest(),
        *map(str, system_include_dirs()),
        _compiler_version(),
        _libc_version(),
        version("libclang"),
        sys.version,
    )


def _compiler_version() -> str:
    """What `cc --version` says: an upgraded compiler may keep its headers' folders."""
    try:
        proc = subprocess.run(["cc", "--version"], capture_output=True, text=True, check=False)
    except FileNotFoundError:
        return ""
    return proc.stdout


def _libc_version() -> str:
    """The C library's version ("glibc 2.36"): an update may keep its headers' folders."""
    try:
        return os.confstr("CS_GNU_LIBC_VERSION") or ""
    except (AttributeError, ValueError, OSError):  # no confstr, or not glibc
        return ""
