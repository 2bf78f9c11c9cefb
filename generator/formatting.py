"""black, with its results remembered by content.

black takes three quarters of the time to make a version (about 5 of 7 s), and its
output is a pure function of (its version, the mode, the input text). So the formatted
text is kept in the cache, keyed by the sha256 of all three: an unchanged template and
model give the same unformatted text, and black need not run again. Any change to the
headers, the parser, the templates or black itself changes the key, so a stale entry
can never be served. `CUDART_BINDGEN_FORMAT_CACHE=0` turns the cache off.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

import black

from .fetch import cache_root

BLACK_MODE = black.Mode(target_versions={black.TargetVersion.PY311}, line_length=100)
CACHE_ENV = "CUDART_BINDGEN_FORMAT_CACHE"


def format_python(source: str) -> str:
    """black.format_str(source) in our mode, from the cache when it was done before."""
    if os.environ.get(CACHE_ENV, "1") == "0":
        return black.format_str(source, mode=BLACK_MODE)
    key = hashlib.sha256(
        f"black {black.__version__}\0{BLACK_MODE!r}\0".encode() + source.encode()
    ).hexdigest()
    path = cache_root() / "black" / key[:2] / f"{key}.py"
    try:
        return path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        pass
    formatted = black.format_str(source, mode=BLACK_MODE)
    _store(path, formatted)
    return formatted


def _store(path: Path, text: str) -> None:
    # Written whole under a temporary name, then renamed: a reader, or a second
    # process formatting the same text, sees the old state or the complete entry.
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".py")
    except OSError:
        return  # an unwritable cache only costs time
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except OSError:
        Path(tmp).unlink(missing_ok=True)
