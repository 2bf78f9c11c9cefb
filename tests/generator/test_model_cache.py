"""The model cache (generator/model_cache.py), which the generator and the suite's
tests/support/models.py share: a cached model equals a parse made now, every input of
the parse is in its key, and the generator renders from it unless told to parse."""

from __future__ import annotations

import dataclasses
import os

import models
import pytest

from generator import generate, model_cache
from generator.generate import parse_version


@pytest.mark.parametrize("key", ["12.0", "13.5"])
def test_a_cached_model_is_the_parse(header_sets, key):
    cached = models.model_for(header_sets[key])
    assert cached == parse_version(header_sets[key])
    assert cached.functions and cached.records  # compared something


def test_the_key_follows_headers_and_generator(header_sets, monkeypatch):
    a, b = header_sets["12.5"], header_sets["13.5"]
    assert model_cache.cache_file(a) != model_cache.cache_file(b)
    before = model_cache.cache_file(a)
    monkeypatch.setattr(model_cache, "environment", lambda: ("another generator",))
    after = model_cache.cache_file(a)
    assert after != before
    # The same header set under another generator: the older model is dropped.
    assert after.name.split("-")[:2] == before.name.split("-")[:2]


def test_the_key_holds_every_input_beyond_the_headers(tmp_path, monkeypatch):
    """The generator's every file (code and shims), the standard headers (their folders,
    the compiler's and the C library's versions), libclang, Python."""
    import shutil
    import subprocess
    import sys
    from importlib.metadata import version

    from generator.parse import system_include_dirs

    parts = model_cache.environment()
    assert {str(d) for d in system_include_dirs()} <= set(parts)
    assert version("libclang") in parts and sys.version in parts
    compiler = subprocess.run(["cc", "--version"], capture_output=True, text=True).stdout
    assert compiler and compiler in parts
    assert os.confstr("CS_GNU_LIBC_VERSION") in parts
    # A copy of the generator digests the same; a change to a shim (no Python) does not.
    copy = tmp_path / "generator"
    shutil.copytree(model_cache._PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(model_cache, "_PACKAGE", copy)
    model_cache.environment.cache_clear()
    try:
        assert model_cache.environment() == parts
        shim = next(p for p in sorted((copy / "shims").rglob("*")) if p.is_file())
        shim.write_bytes(shim.read_bytes() + b"\n/* changed */\n")
        model_cache.environment.cache_clear()
        assert model_cache.environment()[0] != parts[0]
    finally:
        model_cache.environment.cache_clear()


def test_an_older_model_of_the_same_headers_is_dropped_after_a_day(tmp_path):
    # A day: another checkout sharing the cache may still be using its model.
    old = tmp_path / "12.5-aaaa-1111.pickle"
    recent = tmp_path / "12.5-aaaa-3333.pickle"
    other = tmp_path / "12.6-aaaa-1111.pickle"
    new = tmp_path / "12.5-aaaa-2222.pickle"
    for path in (old, recent, other, new):
        path.write_bytes(b"x")
    for path in (old, other):
        os.utime(path, (0, 0))
    model_cache.drop_older(new)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([new.name, recent.name, other.name])


def test_a_model_pruned_meanwhile_is_parsed_again(header_sets, tmp_path, monkeypatch):
    monkeypatch.setenv("CUDART_BINDGEN_CACHE", str(tmp_path))
    headers = header_sets["12.0"]
    path = model_cache.cache_file(headers)
    assert not path.exists()
    assert models._load(headers, path).functions  # parsed, though the file was gone
    assert path.is_file()


def test_a_torn_model_is_a_miss(tmp_path):
    path = tmp_path / "12.5-aaaa-1111.pickle"
    path.write_bytes(b"\x80\x05 torn")
    assert model_cache.load(path) is None
    assert model_cache.load(tmp_path / "absent.pickle") is None


@pytest.fixture
def kept(models, header_sets, tmp_path, monkeypatch):
    """The generator's model cache in tmp_path, holding a doctored 12.5 runtime model
    (one function fewer), and a parse that fails the test when it is called."""
    kept_at = tmp_path / "12.5-aaaa-1111.pickle"
    monkeypatch.setattr(model_cache, "cache_file", lambda headers: kept_at)
    monkeypatch.delenv(model_cache.CACHE_ENV, raising=False)
    model = models["12.5"]
    doctored = dataclasses.replace(model, functions=model.functions[1:])
    model_cache.store(kept_at, doctored)
    parsed = []

    def parse(headers):
        parsed.append(headers.key)
        return model

    monkeypatch.setattr(generate, "parse_version", parse)
    return {
        "headers": header_sets["12.5"],
        "doctored": doctored,
        "model": model,
        "parsed": parsed,
        "path": kept_at,
    }


def test_the_generator_renders_from_the_kept_model(kept):
    said = []
    assert generate._model(kept["headers"], "12.5", said.append) == kept["doctored"]
    assert kept["parsed"] == []
    assert len(said) == 1 and said[0].startswith("[12.5] parsing cuda_runtime_api.h, ")
    assert said[0].endswith(": the model cache has it")


def test_a_miss_is_parsed_once_and_kept(kept):
    kept["path"].unlink()
    said = []
    assert generate._model(kept["headers"], "12.5", said.append) == kept["model"]
    assert generate._model(kept["headers"], "12.5", said.append) == kept["model"]
    assert kept["parsed"] == ["12.5"]
    names = ", ".join(h.name for h in kept["headers"].headers)
    assert said == [f"[12.5] parsing {names}", f"[12.5] parsing {names}: the model cache has it"]


def test_with_the_cache_off_the_generator_parses(kept, monkeypatch):
    """What `--no-model-cache` sets: the kept model is neither read nor replaced."""
    monkeypatch.setenv(model_cache.CACHE_ENV, "0")
    before = kept["path"].read_bytes()
    assert generate._model(kept["headers"], "12.5", lambda _: None) == kept["model"]
    assert kept["parsed"] == ["12.5"]
    assert kept["path"].read_bytes() == before


def test_a_miss_waits_for_the_parse_another_process_is_making(kept):
    """Two processes of one run missing the same model (the suite's workers, `check`'s)
    parse it once: the second waits for the first's lock, then takes its model."""
    import threading
    import time

    kept["path"].unlink()
    holding, release = threading.Event(), threading.Event()

    def other_parse():
        with model_cache.parsing(kept["path"]):
            holding.set()
            release.wait(10)
            model_cache.store(kept["path"], kept["doctored"])

    other = threading.Thread(target=other_parse)
    other.start()
    assert holding.wait(10)
    got = []
    waiter = threading.Thread(
        target=lambda: got.append(generate._model(kept["headers"], "12.5", lambda _: None))
    )
    waiter.start()
    time.sleep(0.5)
    assert got == []  # waiting for the lock, not parsing
    release.set()
    other.join(10)
    waiter.join(10)
    assert got == [kept["doctored"]]
    assert kept["parsed"] == []
