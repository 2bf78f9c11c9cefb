"""The generator trusts nothing it reads: the manifest's strings, the cache's wheels and
trees, and its own earlier, killed runs (issue 11, "Generator trust").

The wheels are the real pinned ones: each test copies them from the shared cache into a
cache of its own, so that what it damages is its own copy.
"""

from __future__ import annotations

import base64
import csv
import dataclasses
import hashlib
import io
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import tomli_w
from suite import REPO

from generator import model_cache
from generator.fetch import (
    ChecksumMismatchError,
    FetchError,
    _extracted_name,
    _run_pip_download,
    cache_root,
    fetch_version,
)
from generator.files import write_atomically
from generator.manifest import DEFAULT_MANIFEST_PATH, Manifest, ManifestError
from generator.tree import staging_root, write_tree
from generator.views import view_source

KEY = "12.5"


@pytest.fixture(scope="module")
def manifest() -> Manifest:
    return Manifest.load(DEFAULT_MANIFEST_PATH)


@pytest.fixture(scope="module")
def pinned_wheels(manifest) -> dict[str, Path]:
    """role -> the verified wheel of KEY in the shared cache (fetched once if missing)."""
    fetch_version(manifest, KEY, lambda m: None)
    return {role: cache_root() / "wheels" / w.wheel for role, w in manifest.get(KEY).wheels.items()}


@pytest.fixture
def own_cache(tmp_path, monkeypatch, pinned_wheels) -> Path:
    """A cache holding copies of KEY's wheels and nothing unpacked."""
    cache = tmp_path / "cache"
    (cache / "wheels").mkdir(parents=True)
    for wheel in pinned_wheels.values():
        shutil.copyfile(wheel, cache / "wheels" / wheel.name)
    # black's results are keyed by content and not under test: shared, for speed.
    shared_black = next(iter(pinned_wheels.values())).parent.parent / "black"
    if shared_black.is_dir():
        (cache / "black").symlink_to(shared_black)
    monkeypatch.setenv("CUDART_BINDGEN_CACHE", str(cache))
    return cache


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _b64(hex_digest: str) -> str:
    """A sha256 as a wheel's RECORD writes it (PEP 376: urlsafe base64, no padding)."""
    return base64.urlsafe_b64encode(bytes.fromhex(hex_digest)).rstrip(b"=").decode()


def _with_runtime(manifest: Manifest, **changes: str) -> Manifest:
    pin = manifest.get(KEY)
    runtime = dataclasses.replace(pin.wheel("runtime"), **changes)
    return manifest.with_version(
        dataclasses.replace(pin, wheels=dict(pin.wheels) | {"runtime": runtime})
    )


# -------------------------------------------------------------- manifest strings

RUNTIME = f"versions.{json.dumps(KEY)}.runtime"


def _edit(text: str, table: str, key: str, value: str) -> str:
    """The manifest text with [table]'s `key` set to `value` (a TOML value)."""
    import tomllib

    import tomli_w

    data = tomllib.loads(text)
    node = data
    for part in re.findall(r'"[^"]*"|[^.]+', table):
        node = node[part.strip('"')]
    node[key] = tomllib.loads(f"v = {value}")["v"]
    return tomli_w.dumps(data)


BAD_PINS = [
    # (key, TOML value, field it must name)
    ("wheel", '"../../victim.txt"', "wheel"),
    ("wheel", '"sub/nvidia_cuda_runtime_cu12-12.5.82-py3-none-manylinux1_x86_64.whl"', "wheel"),
    ("wheel", '"sub\\\\nvidia_cuda_runtime_cu12-12.5.82-py3-none-any.whl"', "wheel"),
    ("wheel", '".nvidia_cuda_runtime_cu12-12.5.82-py3-none-any.whl"', "wheel"),
    ("wheel", '"nvidia_cuda_runtime_cu12-12.5.82-py3-none-any.zip"', "wheel"),
    ("wheel", '"nvidia_cuda_nvcc_cu12-12.5.82-py3-none-manylinux1_x86_64.whl"', "wheel"),
    ("wheel", '"nvidia_cuda_runtime_cu12-12.5.39-py3-none-manylinux1_x86_64.whl"', "wheel"),
    ("wheel", '"nvidia_cuda_runtime_cu12-12.5.82.whl"', "wheel"),
    ("package", '"--log=x.txt"', "package"),
    ("package", '"-nvidia-cuda-runtime-cu12"', "package"),
    ("package", '"nvidia cuda"', "package"),
    ("package", '"nvidia-cuda-nvcc-cu12"', "wheel"),  # the wheel is not of that package
    ("version", '"12.5.82 --pre"', "version"),
    ("version", '"12.5-82"', "version"),
    ("version", '"../12.5.82"', "version"),
    ("sha256", '"3E79A060"', "sha256"),
]


@pytest.mark.parametrize("key,value,field", BAD_PINS)
def test_a_bad_pin_string_is_a_one_line_error_naming_the_field(manifest, key, value, field):
    text = _edit(manifest.dumps(), f'versions."{KEY}".runtime', key, value)
    with pytest.raises(ManifestError) as ei:
        Manifest.loads(text)
    message = str(ei.value)
    assert "\n" not in message
    assert message.startswith(f"{RUNTIME}.{field} "), message


BAD_FAMILY = [
    ("package", '"--index-url=http://x"', "package"),
    ("include", '"../nvidia/cuda_runtime/include"', "include"),
    ("include", '"/usr/include"', "include"),
    ("include", '"nvidia/./cuda_runtime/include"', "include"),
    ("include", '"nvidia\\\\cuda_runtime"', "include"),
    ("library", '"nvidia/cuda_runtime/lib/../../../etc/passwd"', "library"),
    ("headers", '["cuda_runtime_api.h", "../../x.h"]', "headers[1]"),
    ("headers", '[".hidden.h"]', "headers[0]"),
]


@pytest.mark.parametrize("key,value,field", BAD_FAMILY)
def test_a_bad_major_table_string_is_a_one_line_error_naming_the_field(manifest, key, value, field):
    text = _edit(manifest.dumps(), "majors.12.runtime", key, value)
    with pytest.raises(ManifestError) as ei:
        Manifest.loads(text)
    message = str(ei.value)
    assert "\n" not in message
    assert message.startswith(f"majors.12.runtime.{field} "), message


def test_a_pin_of_another_package_than_its_majors_is_refused(manifest):
    text = _edit(manifest.dumps(), f'versions."{KEY}".runtime', "package", '"nvidia-cuda-nvcc"')
    wheel = manifest.get(KEY).wheel("runtime").wheel.replace("runtime_cu12", "nvcc", 1)
    text = _edit(text, f'versions."{KEY}".runtime', "wheel", json.dumps(wheel))
    with pytest.raises(ManifestError) as ei:
        Manifest.loads(text)
    assert str(ei.value) == (
        f"{RUNTIME}.package is 'nvidia-cuda-nvcc', "
        "but majors.12.runtime.package is 'nvidia-cuda-runtime-cu12'"
    )


def test_unpack_paths_and_keys_are_checked(manifest):
    text = manifest.dumps()
    with pytest.raises(ManifestError, match=r"^majors\.12\.crt\.unpack\[0\] "):
        Manifest.loads(_edit(text, "majors.12.crt", "unpack", '["../crt"]'))
    for bad in ("12", "12.5.1", "x.5", "12.5\\n"):
        with pytest.raises(ManifestError) as ei:
            Manifest.loads(text.replace('"12.5"', json.dumps(bad)))
        assert str(ei.value).startswith(f"versions.{json.dumps(bad)}: malformed CUDA version")
        assert "\n" not in str(ei.value)
    with pytest.raises(ManifestError, match=r'^majors\."twelve": a major is'):
        Manifest.loads(
            text.replace("[majors.12.", "[majors.twelve.").replace(
                'major = "12"', 'major = "twelve"'
            )
        )


# Keys that int() reads as 12.5 (or that `$` let through): each once pinned a second copy
# of a version and rendered its module twice (issue 20).
ALIASES = ["12.05", "012.5", "12.5\n", "\uff11\uff12.\uff15", "12.\u0665", "12.5 ", "+12.5"]


@pytest.mark.parametrize("bad", ALIASES)
def test_a_version_key_has_one_spelling(manifest, bad):
    data = tomllib.loads(manifest.dumps())
    data["versions"][bad] = data["versions"][KEY]
    with pytest.raises(ManifestError) as ei:
        Manifest.loads(tomli_w.dumps(data))
    assert str(ei.value).startswith(f"versions.{json.dumps(bad)}: malformed CUDA version")
    assert "\n" not in str(ei.value)
    # Asked for by a command (generate, outputs, add) or built by `add`.
    with pytest.raises(ManifestError, match="^malformed CUDA version"):
        manifest.get(bad)
    with pytest.raises(ManifestError, match="^malformed CUDA version"):
        dataclasses.replace(manifest.get(KEY), key=bad)


@pytest.mark.parametrize("bad", ["012", "\uff11\uff12", "12\n"])
def test_a_major_has_one_spelling(manifest, bad):
    data = tomllib.loads(manifest.dumps())
    data["majors"][bad] = data["majors"].pop("12")
    for pin in data["versions"].values():
        if pin["major"] == "12":
            pin["major"] = bad
    with pytest.raises(ManifestError) as ei:
        Manifest.loads(tomli_w.dumps(data))
    assert str(ei.value).startswith(f"majors.{json.dumps(bad)}: a major is"), ei.value
    assert "\n" not in str(ei.value)


NEWLINE_AT_THE_END = [
    (f'versions."{KEY}".runtime', name) for name in ("package", "version", "wheel", "sha256")
] + [
    (f'versions."{KEY}".runtime', "record_sha256"),
    ("majors.12.runtime", "package"),
    ("majors.12.runtime", "include"),
    ("majors.12.runtime", "library"),
    ("majors.12.nvrtc", "surface"),
    ("majors.12.nvrtc", "companions"),
    ("majors.12.crt", "unpack"),
    ("majors.12.runtime", "headers"),
]


@pytest.mark.parametrize("table,name", NEWLINE_AT_THE_END)
def test_no_validator_lets_a_final_newline_through(manifest, table, name):
    """`$` matches before a final newline: "12.5\\n" passed the key pattern, and every
    other string pattern alike. Each is refused, naming its own field."""
    data = tomllib.loads(manifest.dumps())
    node = data
    for part in re.findall(r'"[^"]*"|[^.]+', table):
        node = node[part.strip('"')]
    field = name
    if isinstance(node[name], list):
        node[name] = [node[name][0] + "\n", *node[name][1:]]
        field = f"{name}[0]"
    else:
        node[name] += "\n"
    with pytest.raises(ManifestError) as ei:
        Manifest.loads(tomli_w.dumps(data))
    where = table.replace(f'"{KEY}"', json.dumps(KEY))
    assert str(ei.value).startswith(f"{where}.{field} "), ei.value
    assert "\n" not in str(ei.value)


def test_a_wheel_role_with_a_final_newline_is_refused(manifest):
    data = tomllib.loads(manifest.dumps())
    data["majors"]["12"]["crt\n"] = data["majors"]["12"].pop("crt")
    with pytest.raises(ManifestError) as ei:
        Manifest.loads(tomli_w.dumps(data))
    assert str(ei.value).startswith('majors.12."crt\\n": a wheel role is'), ei.value


def test_no_requirement_with_a_final_newline_reaches_pip(tmp_path):
    with pytest.raises(FetchError, match="refusing to pass"):
        _run_pip_download("nvidia-cuda-runtime-cu12==12.5.82\n", tmp_path / "d")
    assert list(tmp_path.iterdir()) == []


def test_every_pin_of_the_manifest_passes(manifest):
    """The rules fit the real data (and, being per role, any role a family adds)."""
    assert Manifest.loads(manifest.dumps()) == manifest


def test_a_programmatic_pin_is_checked_too(manifest):
    """with_version (the path `add` takes) validates what pip's answer became."""
    with pytest.raises(ManifestError, match=rf"^{RUNTIME}\.wheel "):
        _with_runtime(manifest, wheel="../../victim.txt")


def test_no_option_reaches_pip(tmp_path):
    """Even past the manifest, a requirement that is not 'name==version' never reaches pip."""
    for requirement in ("--log=x.txt==1", "-r/etc/passwd", "x==1 --pre", "x"):
        with pytest.raises(FetchError, match="refusing to pass"):
            _run_pip_download(requirement, tmp_path / "d")
    assert list(tmp_path.iterdir()) == []


def _bindgen(cwd: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "generator", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(REPO), **env},
    )


def test_the_issues_two_attacks_do_nothing(manifest, tmp_path):
    """wheel = "../../victim.txt" once made `generate` unlink that file, and package =
    "--log=x.txt" was passed to pip as an option (pip wrote x.txt)."""
    cache = tmp_path / "cache"
    (cache / "wheels").mkdir(parents=True)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    text = manifest.dumps()
    for key, value, field in (
        ("wheel", '"../../victim.txt"', "wheel"),
        ("package", '"--log=x.txt"', "package"),
    ):
        path = tmp_path / f"{field}.toml"
        path.write_text(_edit(text, f'versions."{KEY}".runtime', key, value))
        proc = _bindgen(
            tmp_path,
            "--manifest",
            str(path),
            "--output",
            str(tmp_path / "generated"),
            "generate",
            KEY,
            env={"CUDART_BINDGEN_CACHE": str(cache)},
        )
        assert proc.returncode == 2
        errors = proc.stderr.strip().splitlines()
        assert len(errors) == 1 and errors[0].startswith(
            f"cudart-bindgen: error: {RUNTIME}.{field} "
        ), proc.stderr
    assert victim.read_text() == "keep me\n"
    assert not (tmp_path / "x.txt").exists() and not (REPO / "x.txt").exists()
    assert not (tmp_path / "generated").exists()
    assert list((cache / "wheels").iterdir()) == []


# ------------------------------------------------------------------- the cache


def test_the_tree_is_keyed_by_the_full_sha256(manifest, own_cache):
    headers = fetch_version(manifest, KEY, lambda m: None)
    pin = manifest.get(KEY).wheel("runtime")
    folder = own_cache / _extracted_name(pin)
    assert folder.name.endswith("-" + pin.sha256) and len(pin.sha256) == 64
    assert headers.headers[0].is_relative_to(folder)
    marker = (folder / ".complete").read_bytes()
    head, record = marker.split(b"\n", 3)[:3], marker.split(b"\n", 3)[3]
    assert head[1:3] == [f"wheel {pin.wheel}".encode(), f"sha256 {pin.sha256}".encode()]
    # A copy of the wheel's RECORD, the one the manifest pins, listing every unpacked file
    # with the sha256 of its bytes.
    assert hashlib.sha256(record).hexdigest() == pin.record_sha256
    recorded = {row[0]: row[1] for row in csv.reader(io.StringIO(record.decode()))}
    api = f"{manifest.majors['12'].runtime.include}/cuda_runtime_api.h"
    assert recorded[api] == "sha256=" + _b64(_sha(folder / api))
    unpacked = [p for p in folder.rglob("*") if p.is_file() and p.name != ".complete"]
    assert len(unpacked) > 50
    for path in unpacked:
        assert recorded[path.relative_to(folder).as_posix()] == "sha256=" + _b64(_sha(path))


def test_an_old_prefix_keyed_tree_is_not_used(manifest, own_cache):
    """The cache of earlier versions kept trees under the first 12 hex digits, with a
    marker nothing checked: such a folder, even one that was tampered with, is ignored."""
    pin = manifest.get(KEY).wheel("runtime")
    old = own_cache / f"{pin.package}-{pin.version}-{pin.sha256[:12]}"
    include = old / manifest.majors["12"].runtime.include
    include.mkdir(parents=True)
    (include / "cuda_runtime_api.h").write_text("#error tampered\n")
    (old / ".complete").write_text(f"{pin.wheel}\n{pin.sha256}\n")
    headers = fetch_version(manifest, KEY, lambda m: None)
    assert "tampered" not in headers.headers[0].read_text()
    assert old not in headers.headers[0].parents


def test_a_same_prefix_different_sha_uses_nothing_cached(manifest, own_cache):
    """A pin sharing the first 12 digits of the real digest is another wheel: neither the
    cached wheel nor its tree serve it."""
    fetch_version(manifest, KEY, lambda m: None)
    real = manifest.get(KEY).wheel("runtime").sha256
    forged = real[:12] + ("0" if real[12] != "0" else "1") + real[13:]
    with pytest.raises(ChecksumMismatchError) as ei:
        fetch_version(_with_runtime(manifest, sha256=forged), KEY, lambda m: None)
    assert forged in str(ei.value) and real in str(ei.value)


def test_an_edited_header_is_detected_and_replaced(manifest, own_cache):
    headers = fetch_version(manifest, KEY, lambda m: None)
    api = headers.headers[0]
    original = api.read_bytes()
    api.write_bytes(original.replace(b"cudaMalloc(", b"cudaMallocEdited(", 1))
    messages: list[str] = []
    again = fetch_version(manifest, KEY, messages.append)
    assert again == headers and api.read_bytes() == original
    assert any(
        "differs from its wheel" in m and "cuda_runtime_api.h is changed" in m for m in messages
    ), messages
    # Unpacked from the cached wheel, which was verified; nothing was downloaded.
    assert not any(m.startswith("downloading") for m in messages)

    for damage, word in (
        (lambda: (api.parent / "extra.h").write_text("int x;\n"), "unexpected"),
        (lambda: api.unlink(), "missing"),
        (lambda: (api.parent.parent.parent.parent / ".complete").write_text("x\n"), "marker"),
    ):
        damage()
        messages.clear()
        assert fetch_version(manifest, KEY, messages.append) == headers
        assert api.read_bytes() == original and not (api.parent / "extra.h").exists()
        assert any("extracting again" in m and word in m for m in messages), (word, messages)


def test_an_edited_header_with_a_forged_marker_is_replaced(manifest, own_cache):
    """The issue's case: a header edited and its digest replaced in the folder's marker was
    used. The marker can vouch for nothing the manifest does not pin: it is written here
    in every form a digest could take in it (hex, the RECORD's base64)."""
    headers = fetch_version(manifest, KEY, lambda m: None)
    api = headers.headers[0]
    original = api.read_bytes()
    api.write_bytes(original.replace(b"cudaMalloc(", b"cudaMallocEdited(", 1))
    marker = next(p for p in api.parents if (p / ".complete").is_file()) / ".complete"
    text = marker.read_bytes()
    old, new = hashlib.sha256(original).hexdigest(), _sha(api)
    for before, after in ((old, new), (_b64(old), _b64(new))):
        text = text.replace(before.encode(), after.encode())
    assert text != marker.read_bytes()
    marker.write_bytes(text)
    messages: list[str] = []
    again = fetch_version(manifest, KEY, messages.append)
    assert again == headers and api.read_bytes() == original
    assert any("extracting again" in m for m in messages), messages
    assert not any(m.startswith("downloading") for m in messages)


def _fake_wheel(folder: Path, pin, members: dict[str, bytes]):
    """A wheel of `pin`'s package holding `members` and a RECORD of them, and the pin that
    names it (another release number, so nothing is ever downloaded for it)."""
    import zipfile

    version = pin.version + "9"
    wheel = folder / pin.wheel.replace(f"-{pin.version}-", f"-{version}-")
    dist = f"{pin.package.replace('-', '_')}-{version}.dist-info"
    rows = [
        f"{name},sha256={_b64(hashlib.sha256(data).hexdigest())},{len(data)}"
        for name, data in members.items()
    ]
    record = ("\n".join([*rows, f"{dist}/RECORD,,"]) + "\n").encode()
    with zipfile.ZipFile(wheel, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        zf.writestr(f"{dist}/RECORD", record)
    return dataclasses.replace(
        pin,
        version=version,
        wheel=wheel.name,
        sha256=_sha(wheel),
        record_sha256=hashlib.sha256(record).hexdigest(),
    )


def test_a_member_name_too_long_for_the_file_system_is_one_line(manifest, own_cache, tmp_path):
    """A wheel member of 300 characters (more than a file name may hold) ended `generate`
    in a traceback. Now: one line, status 2, no tree, no scratch folder, no output."""
    pin = manifest.get(KEY)
    include = manifest.majors["12"].runtime.include
    library = manifest.majors["12"].runtime.library
    long_name = f"{include}/{'x' * 300}.h"
    fake = _fake_wheel(
        own_cache / "wheels",
        pin.wheel("runtime"),
        {f"{include}/cuda_runtime_api.h": b"", long_name: b"", str(library): b""},
    )
    path = tmp_path / "manifest.toml"
    path.write_text(
        manifest.with_version(
            dataclasses.replace(pin, wheels=dict(pin.wheels) | {"runtime": fake})
        ).dumps()
    )
    before = sorted(p.name for p in own_cache.iterdir())
    out = tmp_path / "generated"
    proc = _bindgen(
        tmp_path,
        "--manifest",
        str(path),
        "--output",
        str(out),
        "generate",
        KEY,
        env={"CUDART_BINDGEN_CACHE": str(own_cache), "PIP_INDEX_URL": "http://127.0.0.1:9/simple"},
    )
    assert proc.returncode == 2, proc.stderr
    # Progress lines come first; then the one error, and no traceback.
    errors = [line for line in proc.stderr.splitlines() if line.startswith("cudart-bindgen")]
    assert len(errors) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert errors[0].startswith("cudart-bindgen: error: cannot unpack "), proc.stderr
    assert proc.stderr.endswith(errors[0] + "\n")
    assert "File name too long" in errors[0] and fake.wheel in errors[0]
    assert sorted(p.name for p in own_cache.iterdir()) == before
    assert not out.exists()


def _alone(manifest: Manifest, tmp_path: Path) -> list[str]:
    """Options for a run on a manifest of KEY alone, into a tree of its own: the run
    parses KEY only (a manifest of the whole major would parse its other minors too, for
    the merged C, in this test's empty cache), and its merged modules hold KEY alone."""
    alone = tmp_path / "manifest.toml"
    alone.write_text(type(manifest)(manifest.majors, {KEY: manifest.get(KEY)}).dumps())
    return ["--manifest", str(alone), "--output", str(tmp_path / "generated")]


def _assert_committed_views(manifest: Manifest, out: Path, *views: str) -> None:
    """Each of KEY's `views` (sys, checked, ...) in `out` is the committed one, read back
    from the merged module as the package serves it."""
    number = manifest.get(KEY).number
    for view in views:
        assert view_source(f"{view}_{number}", out) == view_source(f"{view}_{number}"), view


def test_check_does_not_agree_with_an_edited_header(manifest, own_cache, tmp_path):
    """The issue's case: `check` used an edited header and agreed with it. Now the edit
    is replaced before the parse, so the output is the committed one, byte for byte."""
    headers = fetch_version(manifest, KEY, lambda m: None)
    api = headers.headers[0]
    api.write_text(api.read_text() + "\nextern __host__ cudaError_t cudaEditedIn(int x);\n")
    options = _alone(manifest, tmp_path)
    env = {"CUDART_BINDGEN_CACHE": str(own_cache), "CUDART_BINDGEN_JOBS": "1"}
    proc = _bindgen(REPO, *options, "generate", KEY, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "cuda_runtime_api.h is changed); extracting again" in proc.stderr
    out = tmp_path / "generated"
    _assert_committed_views(manifest, out, "sys", "checked")
    number = manifest.get(KEY).number
    for name in (f"_sys_{number // 1000}.py", f"_checked_{number // 1000}.py"):
        assert b"cudaEditedIn" not in (out / name).read_bytes()


def test_an_edited_model_in_the_cache_is_not_rendered(manifest, own_cache, tmp_path):
    """The issue's case: a model cache entry edited to say cudaMemcpyDeviceToHost = 5 (a
    pickle, the format the cache kept) put that into sys_12050.py. Now the entry is
    refused in one line and the headers parsed again: the output is the committed one."""
    import pickle

    from models import model_for, with_enumerator

    headers = fetch_version(manifest, KEY, lambda m: None)
    entry = model_cache.cache_file(headers)
    model = model_for(headers)  # parsed into this test's cache
    doctored = with_enumerator(model, "cudaMemcpyKind", "cudaMemcpyDeviceToHost", 5)
    entry.write_bytes(pickle.dumps(doctored))
    options = _alone(manifest, tmp_path)
    env = {"CUDART_BINDGEN_CACHE": str(own_cache), "CUDART_BINDGEN_JOBS": "1"}
    proc = _bindgen(REPO, *options, "generate", KEY, env=env)
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "generated"
    _assert_committed_views(manifest, out, "sys", "checked")
    number = manifest.get(KEY).number
    assert "    cudaMemcpyDeviceToHost = 2\n" in view_source(f"sys_{number}", out)
    refused = f"the model cache's {entry.name} is not used (it is not an entry of this format)"
    assert f"[{KEY}] {refused}: parsing again\n" in proc.stderr, proc.stderr


def test_a_wrong_manifest_sha_keeps_the_good_cached_wheel(manifest, own_cache, pinned_wheels):
    """A wrong sha256 in the manifest once deleted the good cached wheel as "damaged".
    Now a mismatch never deletes: the download is compared, and the error names both."""
    cached = own_cache / "wheels" / pinned_wheels["runtime"].name
    good = _sha(cached)
    wrong = "0" * 64
    with pytest.raises(ChecksumMismatchError) as ei:
        fetch_version(_with_runtime(manifest, sha256=wrong), KEY, lambda m: None)
    message = str(ei.value)
    assert "\n" not in message and wrong in message and good in message
    assert "like the cached file" in message
    assert cached.is_file() and _sha(cached) == good
    assert not any(p.name.startswith(".download-") for p in own_cache.iterdir())


def test_a_damaged_cached_wheel_is_replaced_only_by_a_verified_one(manifest, own_cache):
    """A cached wheel that differs from a right manifest (an interrupted copy) is
    downloaded again, verified, and only then replaces the cached file."""
    pin = manifest.get(KEY).wheel("profiler")
    cached = own_cache / "wheels" / pin.wheel
    cached.write_bytes(cached.read_bytes()[:100])
    messages: list[str] = []
    fetch_version(manifest, KEY, messages.append)
    assert _sha(cached) == pin.sha256
    assert any(m.startswith(f"cached {pin.wheel} has sha256") for m in messages), messages


def test_verifying_every_cached_tree_is_cheap(manifest):
    """`make check` verifies every file of every version's trees before use: measured
    here so that the cost stays visible (about 0.1 s for 15 versions, 1,900 files)."""
    import time

    keys = manifest.keys()
    for key in keys:
        fetch_version(manifest, key, lambda m: None)
    started = time.perf_counter()
    for key in keys:
        fetch_version(manifest, key, lambda m: None)
    assert time.perf_counter() - started < 2.0


# ------------------------------------------------------------------- file modes


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_written_files_and_folders_have_the_umasks_modes(tmp_path, manifest, umask):
    old = os.umask(umask)
    try:
        write_atomically(tmp_path / "f.txt", "x\n")
        manifest.save(tmp_path / "m.toml")
        target = tmp_path / "generated"
        write_tree({"a.py": "A = 1\n", "b.pyi": "B: int\n"}, target, replace_all=True)
        write_tree({"a.py": "A = 2\n"}, target, replace_all=True)  # the exchange path
        write_tree({"c.py": "C = 1\n"}, target)  # the one-file path
    finally:
        os.umask(old)

    def mode(p: Path) -> int:
        return stat.S_IMODE(p.stat().st_mode)

    assert mode(tmp_path / "f.txt") == mode(tmp_path / "m.toml") == 0o666 & ~umask
    assert mode(target) == 0o777 & ~umask
    assert sorted(p.name for p in target.iterdir()) == ["a.py", "c.py"]
    assert all(mode(p) == 0o666 & ~umask for p in target.iterdir())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt", "generated", "m.toml"]


def test_leftovers_of_killed_runs_are_removed(tmp_path):
    target = tmp_path / "generated"
    target.mkdir()
    (target / "a.py").write_text("A = 1\n")
    # The old layout's folders beside the target, and a staging tree of a dead process.
    for name in (".generated-ab_c1234", ".generated-ab_c1234-old"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "sys_12050.py").write_text("")
    dead = subprocess.Popen([sys.executable, "-c", ""])
    dead.wait()
    root = staging_root(target)
    (root / f"generated.{dead.pid}.xyz").mkdir(parents=True)
    # A live process's staging tree (a concurrent run) is left alone.
    live = root / f"generated.{os.getppid()}.abc"
    live.mkdir()
    write_tree({"a.py": "A = 2\n"}, target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["build", "generated"]
    assert [p.name for p in root.iterdir()] == [live.name]
    live.rmdir()
    write_tree({"a.py": "A = 3\n"}, target, replace_all=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["generated"]


def test_a_killed_writers_temporaries_of_the_older_naming_are_removed(tmp_path):
    """Before its temporaries named their writer, write_atomically's were
    `.<name>.<random>.tmp` (what the issue's killed `generate 12.5` left): those of
    generated files are removed once they are older than any write takes; a fresh one may
    be an older generator's write in progress, and stays."""
    from generator.files import STALE_WITHOUT_PID_S

    target = tmp_path / "generated"
    target.mkdir()
    old = [".checked_12050.py.lxftrl34.tmp", ".sys_12050.pyi.a_b1c2d3.tmp"]
    fresh = [".sys_12050.py.k9k9k9k9.tmp"]
    other = [".notes.txt.lxftrl34.tmp", ".sys_12050.py.short.tmp"]
    for name in old + fresh + other:
        (target / name).write_text("half\n")
    for name in old + other:
        stamp = (target / name).stat().st_mtime - STALE_WITHOUT_PID_S - 1
        os.utime(target / name, (stamp, stamp))
    write_tree({"a.py": "A = 1\n"}, target)
    assert sorted(p.name for p in target.iterdir()) == sorted(["a.py", *fresh, *other])


def test_a_killed_runs_scratch_folders_are_removed(manifest, own_cache):
    """A download or an extraction killed midway leaves its scratch folder in the cache;
    the next fetch removes those of dead processes and keeps a running one's."""
    dead = subprocess.Popen([sys.executable, "-c", ""])
    dead.wait()
    stale = [own_cache / f".{kind}-{dead.pid}-abc" for kind in ("download", "extract", "stale")]
    live = own_cache / f".extract-{os.getppid()}-abc"
    for folder in (*stale, live):
        folder.mkdir()
        (folder / "half.h").write_text("")
    fetch_version(manifest, KEY, lambda m: None)
    assert not any(folder.exists() for folder in stale)
    assert live.is_dir()


def test_without_an_atomic_exchange_each_file_is_replaced(tmp_path, monkeypatch):
    """Where the system cannot exchange two folders (not Linux, build/ on another file
    system), --all still ends with exactly the new files, each written whole."""
    import generator.tree as tree

    target = tmp_path / "generated"
    old = {"a.py": "A = 1\n", "old.py": "gone\n", "_fast_99990.c": "gone\n", "notes.txt": "kept\n"}
    write_tree(old, target)
    monkeypatch.setattr(tree, "_exchange", lambda a, b: False)
    write_tree({"a.py": "A = 2\n", "b.pyi": "B: int\n"}, target, replace_all=True)
    assert {p.name: p.read_text() for p in target.iterdir()} == {
        "a.py": "A = 2\n",
        "b.pyi": "B: int\n",
        "notes.txt": "kept\n",
    }
    assert sorted(p.name for p in tmp_path.iterdir()) == ["generated"]


@pytest.mark.parametrize("first, then", [("driver", "runtime"), ("runtime", "driver")])
def test_the_runtime_wheel_is_one_tree_for_both_its_surfaces(manifest, own_cache, first, then):
    """The runtime wheel holds libcudart, the runtime's headers and the driver's cuda.h:
    its one cached tree holds what both surfaces want, unpacked once and used as it is
    by the second surface fetched, whichever comes first."""
    wheel = manifest.get(KEY).wheel("runtime")
    assert manifest.get(KEY).wheel("driver") == wheel  # the driver's pin: the same wheel
    messages: list[str] = []
    sets = {first: fetch_version(manifest, KEY, messages.append, first)}
    assert f"extracting {wheel.wheel}" in messages
    messages.clear()
    sets[then] = fetch_version(manifest, KEY, messages.append, then)
    assert f"using cached {_extracted_name(wheel)}" in messages
    assert not any(wheel.wheel in m for m in messages if m.startswith("extracting")), messages
    runtime, driver = sets["runtime"], sets["driver"]
    tree = own_cache / _extracted_name(wheel)
    assert [p for p in own_cache.iterdir() if p.name.startswith(f"{wheel.package}-")] == [tree]
    assert driver.include_dirs == (runtime.include_dirs[0],)
    assert [h.name for h in driver.headers] == ["cuda.h"] and driver.headers[0].is_file()
    assert driver.headers[0].is_relative_to(tree) and runtime.library.is_relative_to(tree)
    assert runtime.library.is_file() and driver.library is None
