"""The suite's model cache (tests/support/models.py) serves what the generator parses:
a cached model equals a parse made now, and every input of the parse is in its key."""

from __future__ import annotations

import models
import pytest

from generator.generate import parse_version


@pytest.mark.parametrize("key", ["12.0", "13.5"])
def test_a_cached_model_is_the_parse(header_sets, key):
    cached = models.model_for(header_sets[key])
    assert cached == parse_version(header_sets[key])
    assert cached.functions and cached.records  # compared something


def test_the_key_follows_headers_and_generator(header_sets, monkeypatch):
    a, b = header_sets["12.5"], header_sets["13.5"]
    assert models._cache_file(a) != models._cache_file(b)
    before = models._cache_file(a)
    monkeypatch.setattr(models, "_environment", lambda: ("another generator",))
    after = models._cache_file(a)
    assert after != before
    # The same header set under another generator: the older model is dropped.
    assert after.name.split("-")[:2] == before.name.split("-")[:2]


def test_an_older_model_of_the_same_headers_is_dropped_after_a_day(tmp_path):
    # A day: another checkout sharing the cache may still be using its model.
    import os

    old = tmp_path / "12.5-aaaa-1111.pickle"
    recent = tmp_path / "12.5-aaaa-3333.pickle"
    other = tmp_path / "12.6-aaaa-1111.pickle"
    new = tmp_path / "12.5-aaaa-2222.pickle"
    for path in (old, recent, other, new):
        path.write_bytes(b"x")
    for path in (old, other):
        os.utime(path, (0, 0))
    models._drop_older(new)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([new.name, recent.name, other.name])


def test_a_model_pruned_meanwhile_is_parsed_again(header_sets, tmp_path, monkeypatch):
    monkeypatch.setenv("CUDART_BINDGEN_CACHE", str(tmp_path))
    headers = header_sets["12.0"]
    path = models._cache_file(headers)
    assert not path.exists()
    assert models._load(headers, path).functions  # parsed, though the file was gone
    assert path.is_file()
