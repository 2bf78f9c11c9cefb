"""The model cache (generator/model_cache.py), which the generator and the suite's
tests/support/models.py share: a cached model equals a parse made now, every input of
the parse is in its key, and the generator renders from it unless told to parse."""

from __future__ import annotations

import dataclasses
import os

import models
import pytest

from generator import generate, model_cache
from generator.parse import parse_version


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
    """The parser's every file (its modules, followed import by import, and the shims),
    the standard headers (their folders, the compiler's and the C library's versions),
    libclang, Python; and not the code that reads the model."""
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
        # What reads the model (the plan, the renderers) is not part of the key ...
        for reader in ("render/checked.py", "plan.py", "resolve.py"):
            (copy / reader).write_text((copy / reader).read_text() + "\n# changed\n")
        model_cache.environment.cache_clear()
        assert model_cache.environment() == parts
        # ... what the parse runs is, down to a module it imports through another.
        for parsed in ("doxygen.py", "model.py", "parse.py"):
            before = model_cache.environment()[0]
            (copy / parsed).write_text((copy / parsed).read_text() + "\n# changed\n")
            model_cache.environment.cache_clear()
            assert model_cache.environment()[0] != before, parsed
        before = model_cache.environment()[0]
        shim = next(p for p in sorted((copy / "shims").rglob("*")) if p.is_file())
        shim.write_bytes(shim.read_bytes() + b"\n/* changed */\n")
        model_cache.environment.cache_clear()
        assert model_cache.environment()[0] != before
    finally:
        model_cache.environment.cache_clear()


def test_an_older_model_of_the_same_headers_is_dropped_after_a_day(tmp_path):
    # A day: another checkout sharing the cache may still be using its model. The older,
    # pickled format's files go the same way, and are never read.
    old = tmp_path / "12.5-aaaa-1111.json"
    pickled = tmp_path / "12.5-aaaa-4444.pickle"
    recent = tmp_path / "12.5-aaaa-3333.json"
    other = tmp_path / "12.6-aaaa-1111.json"
    new = tmp_path / "12.5-aaaa-2222.json"
    for path in (old, pickled, recent, other, new):
        path.write_bytes(b"x")
    for path in (old, pickled, other):
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


# ------------------------------------------------------ an entry is never trusted (issue 33)


class _RunsCode:
    """What a planted pickle can do when it is loaded: here, make a folder."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (os.mkdir, (self.marker,))


def _doctored(model):
    """`model` with cudaMemcpyDeviceToHost = 5 (it is 2), as the issue's edited entry."""
    return models.with_enumerator(model, "cudaMemcpyKind", "cudaMemcpyDeviceToHost", 5)


def _other_key_mac(path, payload: bytes) -> bytes:
    import hashlib
    import hmac

    text = model_cache.FORMAT + path.name.encode() + b"\n" + payload
    return hmac.new(b"not this user's key" * 2, text, hashlib.sha256).hexdigest().encode()


def _tamper(how, path, model, doctored, marker):
    """Put at the entry's `path` what someone without this user's key can put there."""
    import pickle

    if how == "pickle":  # the format this cache kept before
        path.write_bytes(pickle.dumps(doctored))
    elif how == "pickle that runs code":
        path.write_bytes(pickle.dumps(_RunsCode(marker)))
    elif how == "edited":
        model_cache.store(path, model)
        data = path.read_bytes()
        genuine = b'{"Enumerator":["cudaMemcpyDeviceToHost",2,'
        assert data.count(genuine) == 1
        path.write_bytes(data.replace(genuine, genuine.replace(b",2,", b",5,")))
    elif how in ("another key's MAC", "a plain sha256"):
        model_cache.store(path, doctored)
        head, mac, payload = path.read_bytes().split(b"\n", 2)
        import hashlib

        forged = (
            _other_key_mac(path, payload)
            if how == "another key's MAC"
            else hashlib.sha256(payload).hexdigest().encode()
        )
        path.write_bytes(head + b"\n" + forged + b"\n" + payload)
    elif how == "another entry's":  # a genuine entry, copied under this one's name
        elsewhere = path.with_name("12.4-" + path.name.split("-", 1)[1])
        model_cache.store(elsewhere, doctored)
        path.write_bytes(elsewhere.read_bytes())
    elif how == "torn":
        model_cache.store(path, model)
        path.write_bytes(path.read_bytes()[:-100])
    else:
        raise AssertionError(how)


TAMPERED = [
    "pickle",
    "pickle that runs code",
    "edited",
    "another key's MAC",
    "a plain sha256",
    "another entry's",
    "torn",
]


@pytest.mark.parametrize("how", TAMPERED)
def test_a_tampered_entry_is_parsed_again_not_used(models, header_sets, tmp_path, monkeypatch, how):
    """The issue's attacks on the cache of parsed models: an entry edited to say
    `cudaMemcpyDeviceToHost = 5` was rendered into sys_12050.py, and a planted pickle ran
    its code when it was loaded. Whatever was put at the entry's path without this user's
    key is refused in one line, parsed again, and replaced, and nothing in it runs."""
    monkeypatch.setenv("CUDART_BINDGEN_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv(model_cache.CACHE_ENV, raising=False)
    headers, model = header_sets["12.5"], models["12.5"]
    path = model_cache.cache_file(headers)
    path.parent.mkdir(parents=True)
    marker = tmp_path / "the planted code ran"
    _tamper(how, path, model, _doctored(model), marker)
    parsed = []

    def parse(headers):
        parsed.append(headers.key)
        return model

    monkeypatch.setattr(generate, "parse_version", parse)
    said = []
    assert generate._model(headers, "12.5", said.append) == model
    assert not marker.exists()
    assert parsed == ["12.5"]
    names = ", ".join(h.name for h in headers.headers)
    assert said[1:] == [f"[12.5] parsing {names}"], said
    assert said[0].startswith(f"[12.5] the model cache's {path.name} is not used ("), said
    assert said[0].endswith("): parsing again"), said
    assert model_cache.read(path) == (model, None)  # replaced by this user's entry


def test_the_key_is_this_users_alone(models, tmp_path):
    """The MAC's key is made private (0600) whatever the umask, and one that others can
    read is replaced: every entry it signed is then parsed again."""
    path = tmp_path / "12.5-aaaa-1111.json"
    old_umask = os.umask(0o000)
    try:
        model_cache.store(path, models["12.5"])
    finally:
        os.umask(old_umask)
    secret = tmp_path / model_cache.SECRET_NAME
    assert oct(secret.stat().st_mode & 0o777) == oct(0o600)
    assert model_cache.read(path) == (models["12.5"], None)
    key = secret.read_bytes()
    secret.chmod(0o644)
    model, why = model_cache.read(path)
    assert model is None and why == f"the cache's key {secret} is readable by others"
    model_cache.store(path, models["12.5"])
    assert secret.read_bytes() != key and oct(secret.stat().st_mode & 0o777) == oct(0o600)
    assert model_cache.read(path) == (models["12.5"], None)
    # No key at all: nothing there can be checked.
    secret.unlink()
    assert model_cache.read(path) == (None, "the cache has no key to check it with")


@pytest.mark.parametrize("what", ["a link", "a FIFO", "a folder"])
def test_an_entry_that_is_no_file_is_refused_at_once(models, tmp_path, what):
    """Not followed, not waited on: a link to a genuine entry is refused too."""
    path = tmp_path / "12.5-aaaa-1111.json"
    genuine = tmp_path / "12.5-aaaa-2222.json"
    model_cache.store(genuine, models["12.5"])
    if what == "a link":
        path.symlink_to(genuine.name)
    elif what == "a FIFO":
        os.mkfifo(path)
    else:
        path.mkdir()
    expected = {
        "a link": "it cannot be opened: Too many levels of symbolic links",
        "a FIFO": "it is not a regular file",
        "a folder": "it is not a regular file",
    }
    assert model_cache.read(path) == (None, expected[what])


def test_every_model_is_kept_exactly(models, tmp_path):
    """Each version's model comes back from its entry equal to the parse, with the types
    it had (tuples as tuples, ApiModel's lists as lists): the renderers see no other."""
    for key, model in models.items():
        path = tmp_path / f"{key}-aaaa-1111.json"
        model_cache.store(path, model)
        back, why = model_cache.read(path)
        assert why is None and back == model, key
        assert type(back.functions) is list and type(back.functions[0].params) is tuple, key


def test_a_model_of_other_types_is_refused_when_stored(models, tmp_path):
    """The encoder keeps only what the decoder gives back equal: a list where a field
    declares a tuple would come back a tuple, so it is an error, not a different model."""
    model = models["12.5"]
    function = dataclasses.replace(model.functions[0], params=list(model.functions[0].params))
    with pytest.raises(TypeError, match="Function.params holds a list"):
        model_cache.store(
            tmp_path / "12.5-a-b.json", dataclasses.replace(model, functions=[function])
        )
    assert not (tmp_path / "12.5-a-b.json").exists()


def test_a_store_removes_what_killed_stores_left(models, tmp_path):
    """A process killed between an entry's (or the key's) write and its rename leaves
    its temporary in the models folder; the next store removes those of dead writers."""
    import subprocess
    import sys

    dead = subprocess.Popen([sys.executable, "-c", ""])
    dead.wait()
    left = [f".12.4-aaaa-1111.json.{dead.pid}.abcd1234.tmp", f".hmac-key.{dead.pid}.abcd1234.tmp"]
    kept = [f".12.4-aaaa-1111.json.{os.getppid()}.abcd1234.tmp", f".notes.{dead.pid}.abcd1234.tmp"]
    for name in left + kept:
        (tmp_path / name).write_bytes(b"half")
    model_cache.store(tmp_path / "12.5-aaaa-1111.json", models["12.5"])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["12.5-aaaa-1111.json", model_cache.SECRET_NAME, *kept]
    )
