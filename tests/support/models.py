"""Each version's parsed model, made once for every test process of a run, and kept.

Parsing 15 versions costs seconds, and the suite used to parse each version in five
test modules and the fuzz grid's process. Here a model is looked up in this process
first, then on disk, and only then parsed: in a fresh interpreter, never in the test
process, because a process that has run an NVRTC compile parses differently (libnvrtc
brings its own LLVM; see tests/conftest.py). Misses are parsed two at a time.

The disk cache (<generator cache>/models/) is keyed by everything the model is a
function of: the header set (its folders are named by the verified wheels' sha256), the
generator's own source and shims, the C compiler's standard headers, libclang's and
Python's versions. A change to any of them is a miss, never a stale model.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path

from suite import REPO

from generator.fetch import HeaderSet, cache_root
from generator.model import ApiModel

_memory: dict[Path, ApiModel] = {}
_PARSE_IN_CHILD = """
import json, pickle, sys
from pathlib import Path
from generator.fetch import HeaderSet
from generator.generate import parse_version
job = json.loads(sys.argv[1])
headers = HeaderSet(
    job["key"],
    tuple(map(Path, job["include_dirs"])),
    tuple(map(Path, job["headers"])),
    Path(job["library"]) if job["library"] is not None else None,
)
with open(job["out"], "wb") as f:
    pickle.dump(parse_version(headers), f, protocol=pickle.HIGHEST_PROTOCOL)
"""


def model_for(headers: HeaderSet) -> ApiModel:
    return models_for({headers.key: headers})[headers.key]


def models_for(header_sets: dict[str, HeaderSet]) -> dict[str, ApiModel]:
    """{key: model} for each header set, in the given order; misses parsed in parallel."""
    paths = {key: _cache_file(headers) for key, headers in header_sets.items()}
    missing = [key for key, path in paths.items() if path not in _memory and not path.is_file()]
    if missing:
        with ThreadPoolExecutor(max_workers=2) as pool:
            list(pool.map(lambda key: _parse_into(header_sets[key], paths[key]), missing))
    return {key: _load(header_sets[key], path) for key, path in paths.items()}


def _load(headers: HeaderSet, path: Path) -> ApiModel:
    if path not in _memory:
        try:
            with open(path, "rb") as f:
                _memory[path] = pickle.load(f)
        except FileNotFoundError:  # pruned by another checkout's run meanwhile
            _parse_into(headers, path)
            return _load(headers, path)
    return _memory[path]


def _parse_into(headers: HeaderSet, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", dir=path.parent)
    os.close(fd)
    try:
        job = {
            "key": headers.key,
            "include_dirs": [str(d) for d in headers.include_dirs],
            "headers": [str(h) for h in headers.headers],
            # None for a surface whose library no wheel holds (the driver's libcuda.so.1)
            "library": None if headers.library is None else str(headers.library),
            "out": tmp,
        }
        env = dict(os.environ, PYTHONPATH=str(REPO))
        proc = subprocess.run(
            [sys.executable, "-c", _PARSE_IN_CHILD, json.dumps(job)],
            capture_output=True,
            text=True,
            env=env,
            cwd=REPO,
        )
        if proc.returncode != 0:
            raise AssertionError(f"parsing {headers.key} failed:\n{proc.stderr[-4000:]}")
        os.replace(tmp, path)  # whole or absent, for workers reading concurrently
        _drop_older(path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _cache_file(headers: HeaderSet) -> Path:
    """<key>-<the header set's digest>-<the environment's digest>.pickle"""
    which = _digest(headers.key, *map(str, headers.include_dirs), *map(str, headers.headers))
    return cache_root() / "models" / f"{headers.key}-{which}-{_digest(*_environment())}.pickle"


def _digest(*parts: str) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode() + b"\0")
    return h.hexdigest()[:24]


# Models of other generator states are kept this long after they were written: another
# checkout sharing the cache (a second worktree) may be using them right now.
_KEEP_OTHERS_S = 24 * 3600


def _drop_older(path: Path) -> None:
    """The same header set's models of other generator states, once they are a day old."""
    key, which, _ = path.stem.split("-")
    now = time.time()
    for other in path.parent.glob(f"{key}-{which}-*.pickle"):
        try:
            if other != path and now - other.stat().st_mtime > _KEEP_OTHERS_S:
                other.unlink()
        except FileNotFoundError:
            pass


@cache
def _environment() -> tuple[str, ...]:
    """What a model depends on beyond its headers: the generator's code and shims, the
    standard headers' folders, libclang, Python (pickle's classes are the generator's)."""
    from importlib.metadata import version

    from generator.parse import system_include_dirs

    h = hashlib.sha256()
    for path in sorted((REPO / "generator").rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            h.update(str(path.relative_to(REPO)).encode() + b"\0" + path.read_bytes())
    return (
        h.hexdigest(),
        *map(str, system_include_dirs()),
        version("libclang"),
        sys.version,
    )
