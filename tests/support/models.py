"""Each version's parsed model, made once for every test process of a run, and kept.

The models are the generator's own model cache (generator/model_cache.py: keyed by
everything the parse reads, shared with `cudart-bindgen generate` and `check`). Here a
model is looked up in this process first, then in that cache, and only then parsed: in
a fresh interpreter, never in the test process, because a process that has run an NVRTC
compile parses differently (libnvrtc brings its own LLVM; see tests/conftest.py). The
fresh interpreter stores what it parsed in the cache. Misses are parsed two at a time.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from suite import REPO

from generator import model_cache
from generator.fetch import HeaderSet
from generator.model import ApiModel

_memory: dict[Path, ApiModel] = {}
# The child parses through the cache's own model_for (its lock and its file), with the
# cache on whatever the suite's $CUDART_BINDGEN_MODEL_CACHE says: the suite reads the
# model back from the file.
_PARSE_IN_CHILD = """
import json, sys
from pathlib import Path
from generator import model_cache
from generator.fetch import HeaderSet
from generator.parse import parse_version
job = json.loads(sys.argv[1])
headers = HeaderSet(
    job["key"],
    tuple(map(Path, job["include_dirs"])),
    tuple(map(Path, job["headers"])),
    Path(job["library"]) if job["library"] is not None else None,
    tuple(map(Path, job["own_dirs"])),
)
model_cache.model_for(headers, parse_version)
"""


def model_for(headers: HeaderSet) -> ApiModel:
    return models_for({headers.key: headers})[headers.key]


def models_for(header_sets: dict[str, HeaderSet]) -> dict[str, ApiModel]:
    """{key: model} for each header set, in the given order; misses parsed in parallel."""
    paths = {key: model_cache.cache_file(headers) for key, headers in header_sets.items()}
    missing = [key for key, path in paths.items() if path not in _memory and not path.is_file()]
    if missing:
        with ThreadPoolExecutor(max_workers=2) as pool:
            list(pool.map(lambda key: _parse_into(header_sets[key], paths[key]), missing))
    return {key: _load(header_sets[key], path) for key, path in paths.items()}


def _load(headers: HeaderSet, path: Path) -> ApiModel:
    if path not in _memory:
        model = model_cache.load(path)
        if model is None:  # pruned by another checkout's run meanwhile, or torn
            _parse_into(headers, path)
            return _load(headers, path)
        _memory[path] = model
    return _memory[path]


def _parse_into(headers: HeaderSet, path: Path) -> None:
    job = {
        "key": headers.key,
        "include_dirs": [str(d) for d in headers.include_dirs],
        "headers": [str(h) for h in headers.headers],
        # None for a surface whose library no wheel holds (the driver's libcuda.so.1)
        "library": None if headers.library is None else str(headers.library),
        # An own-axis release's bound folders (the CUDA headers it includes are not).
        "own_dirs": [str(d) for d in headers.own_dirs],
    }
    proc = subprocess.run(
        [sys.executable, "-c", _PARSE_IN_CHILD, json.dumps(job)],
        capture_output=True,
        text=True,
        env=_child_environment(),
        cwd=REPO,
    )
    if proc.returncode != 0 or not path.is_file():
        raise AssertionError(f"parsing {headers.key} failed:\n{proc.stderr[-4000:]}")


def _child_environment() -> dict[str, str]:
    import os

    return dict(os.environ, PYTHONPATH=str(REPO), **{model_cache.CACHE_ENV: "1"})


def with_enumerator(model: ApiModel, enum: str, name: str, value: int) -> ApiModel:
    """`model` with enumerator `name` of `enum` set to `value`: what an edited entry of
    the model cache says (the model cache's tests)."""

    def edit(e):
        if e.name != enum:
            return e
        values = tuple(
            dataclasses.replace(v, value=value) if v.name == name else v for v in e.enumerators
        )
        return dataclasses.replace(e, enumerators=values)

    return dataclasses.replace(model, enums=[edit(e) for e in model.enums])
