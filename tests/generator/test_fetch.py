"""Tests for the manifest and the header fetcher.

These talk to the real PyPI: the point of the fetcher is pip, pins and
checksums behaving as they do against the real index, which a mock would
only restate.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import time
from pathlib import Path

import pytest

from generator.fetch import (
    ChecksumMismatchError,
    FetchError,
    HeaderSet,
    NetworkError,
    cache_root,
    fetch_version,
    resolve_newest,
)
from generator.manifest import (
    DEFAULT_MANIFEST_PATH,
    HEADER,
    Major,
    Manifest,
    ManifestError,
    UnknownVersionError,
    VersionPin,
    WheelKind,
)

network = pytest.mark.network


@pytest.fixture(scope="session")
def manifest() -> Manifest:
    return Manifest.load(DEFAULT_MANIFEST_PATH)


@pytest.fixture(scope="session")
def shared_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("cudart-bindgen-cache")


def _extracted_dirs(root: Path) -> list[str]:
    if not root.exists():
        return []
    return sorted(p.name for p in root.iterdir() if p.name != "wheels")


# ------------------------------------------------------------------- manifest


def test_manifest_round_trip_is_canonical(manifest):
    text = DEFAULT_MANIFEST_PATH.read_text(encoding="utf-8")
    assert manifest.dumps() == text


def test_manifest_pins(manifest):
    """Every pin is well formed and consistent with its family and key, whatever the
    version set is (it grows with `cudart-bindgen add`)."""
    keys = manifest.keys()
    assert keys, "the manifest pins no version"
    assert len(keys) == len(set(keys))
    for key in keys:
        pin = manifest.get(key)
        major, minor = (int(x) for x in key.split("."))
        assert pin.number == major * 1000 + minor * 10
        assert pin.module_name == f"sys_{pin.number}"
        family = manifest.majors[pin.major]
        assert pin.major == str(major)
        assert tuple(pin.wheels) == family.roles
        for kind in family.wheels:
            w = pin.wheel(kind.role)
            assert w.package == kind.package
            # A patch release of this minor, not of another one (each wheel has its own).
            assert w.version.startswith(f"{key}."), (key, kind.role, w.version)
            assert re.fullmatch(r"[0-9a-f]{64}", w.sha256)
            assert w.wheel.startswith(w.package.replace("-", "_") + "-" + w.version + "-")
    assert set(manifest.majors) == {p.major for p in manifest.versions.values()}


def test_a_manifest_pin_the_tests_rely_on(manifest):
    # The runtime `make setup` installs (requirements/dev.txt) must have its own bindings.
    requirements = (DEFAULT_MANIFEST_PATH.parent / "requirements" / "dev.txt").read_text()
    found = re.search(r"^nvidia-cuda-runtime-cu12==([\d.]+)$", requirements, re.M)
    assert found, "requirements/dev.txt pins no nvidia-cuda-runtime-cu12"
    dev_runtime = found.group(1)
    key = ".".join(dev_runtime.split(".")[:2])
    assert manifest.get(key).wheel("runtime").version == dev_runtime


def test_manifest_numeric_sort_and_save(manifest, tmp_path):
    base = manifest.get("12.5")
    m = type(manifest)(
        manifest.majors, {k: v for k, v in manifest.versions.items() if k.startswith("12.")}
    )
    for key in ("12.10", "12.9"):
        m = m.with_version(dataclasses.replace(base, key=key))
    assert m.keys()[-2:] == ["12.9", "12.10"]
    assert m.keys() == sorted(m.keys(), key=lambda k: tuple(map(int, k.split("."))))
    assert m.get("12.10").number == 12100
    # with_version returns a new manifest and leaves the original alone
    assert "12.10" not in manifest.versions

    path = tmp_path / "m.toml"
    m.save(path)
    text = path.read_text()
    assert text.index('[versions."12.9"]') < text.index('[versions."12.10"]')
    assert Manifest.load(path).dumps() == text
    assert [p.name for p in tmp_path.iterdir()] == ["m.toml"]


def _a_missing_minor(manifest) -> str:
    """A minor of a pinned major that the manifest does not pin (one past the newest)."""
    major, minor = (int(x) for x in manifest.keys()[-1].split("."))
    return f"{major}.{minor + 1}"


def test_unknown_version(manifest):
    missing = _a_missing_minor(manifest)
    with pytest.raises(UnknownVersionError) as ei:
        manifest.get(missing)
    msg = str(ei.value)
    assert "\n" not in msg
    for key in manifest.keys():
        assert key in msg
    assert f"cudart-bindgen add {missing}" in msg
    assert isinstance(ei.value, ManifestError)


@pytest.mark.parametrize("bad", ["12", "12.5.1", "v12.5", "12.x", ""])
def test_malformed_version_key(manifest, bad):
    with pytest.raises(ManifestError) as ei:
        manifest.get(bad)
    assert "\n" not in str(ei.value)


def test_malformed_key_in_file(tmp_path, manifest):
    text = manifest.dumps().replace('[versions."12.5"]', '[versions."twelve"]', 1)
    p = tmp_path / "bad.toml"
    p.write_text(text)
    with pytest.raises(ManifestError, match="malformed CUDA version"):
        Manifest.load(p)


def test_cache_root_env(monkeypatch, tmp_path):
    monkeypatch.setenv("CUDART_BINDGEN_CACHE", str(tmp_path / "explicit"))
    assert cache_root() == tmp_path / "explicit"
    monkeypatch.delenv("CUDART_BINDGEN_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "cudart-bindgen"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_root() == tmp_path / "home" / ".cache" / "cudart-bindgen"


# ---------------------------------------------------------------------- fetch


@network
def test_fetch_and_cache(manifest, shared_cache, monkeypatch):
    monkeypatch.setenv("CUDART_BINDGEN_CACHE", str(shared_cache))
    messages: list[str] = []
    hs = fetch_version(manifest, "12.5", progress=messages.append)

    assert isinstance(hs, HeaderSet)
    assert hs.key == "12.5"
    # The runtime surface's wheels (NVRTC's is a surface of its own: fetched apart).
    runtime_wheels = manifest.majors["12"].surface_wheels("runtime")
    assert len(hs.include_dirs) == len(runtime_wheels) == 3
    assert all(d.is_dir() for d in hs.include_dirs)
    assert [h.name for h in hs.headers] == [
        name for kind in runtime_wheels for name in kind.headers
    ]
    assert hs.headers[0].name == "cuda_runtime_api.h"
    assert hs.headers[0].parent == hs.include_dirs[0]
    assert all(h.is_file() for h in hs.headers)
    # The profiler wheel's header, from its own wheel and release (12.5.39, not 12.5.82).
    assert hs.headers[-1].name == "cuda_profiler_api.h"
    assert hs.headers[-1].parent == hs.include_dirs[2]
    assert "12.5.39" in str(hs.include_dirs[2])
    assert any((d / "crt" / "host_defines.h").is_file() for d in hs.include_dirs)
    assert hs.library.name == "libcudart.so.12"
    assert hs.library.is_file()
    assert any(m.startswith("downloading nvidia-cuda-runtime-cu12==12.5.82") for m in messages)
    assert any("verified sha256" in m for m in messages)
    assert any(m.startswith("extracting") for m in messages)
    # Only the needed subset is unpacked, not the whole 20 MB nvcc wheel.
    crt_files = [p for p in hs.include_dirs[1].rglob("*") if p.is_file()]
    assert all("crt" in p.relative_to(hs.include_dirs[1]).parts for p in crt_files)
    for kind in runtime_wheels:
        assert (shared_cache / "wheels" / manifest.get("12.5").wheel(kind.role).wheel).is_file()

    messages.clear()
    start = time.monotonic()
    again = fetch_version(manifest, "12.5", progress=messages.append)
    assert time.monotonic() - start < 1.0
    assert again == hs
    assert not any(m.startswith(("downloading", "extracting")) for m in messages)


@network
def test_extracted_dir_removed_uses_cached_wheel(manifest, shared_cache, monkeypatch):
    """A lost extraction is redone from the kept wheel, without pip."""
    monkeypatch.setenv("CUDART_BINDGEN_CACHE", str(shared_cache))
    hs = fetch_version(manifest, "12.5", progress=lambda m: None)
    runtime_dir = hs.headers[0].parents[len(Path(manifest.majors["12"].runtime.include).parts)]

    shutil.rmtree(runtime_dir)
    messages: list[str] = []
    again = fetch_version(manifest, "12.5", progress=messages.append)
    assert again == hs and again.headers[0].is_file()
    assert not any(m.startswith("downloading") for m in messages)
    assert any("verified sha256 of cached" in m for m in messages)


@network
def test_checksum_mismatch(manifest, tmp_path, monkeypatch):
    monkeypatch.setenv("CUDART_BINDGEN_CACHE", str(tmp_path))
    pin = manifest.get("12.5")
    bad_sha = "0" * 64
    runtime = pin.wheel("runtime")
    bad = manifest.with_version(
        dataclasses.replace(
            pin, wheels=dict(pin.wheels) | {"runtime": dataclasses.replace(runtime, sha256=bad_sha)}
        )
    )
    with pytest.raises(ChecksumMismatchError) as ei:
        fetch_version(bad, "12.5", progress=lambda m: None)
    msg = str(ei.value)
    assert "\n" not in msg
    assert bad_sha in msg and runtime.sha256 in msg
    assert _extracted_dirs(tmp_path) == []
    # An unverified wheel must not be kept for later runs either.
    assert list((tmp_path / "wheels").iterdir()) == []


@network
def test_network_failure(manifest, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("CUDART_BINDGEN_CACHE", str(cache))
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")
    monkeypatch.delenv("PIP_NO_INDEX", raising=False)
    monkeypatch.setenv("PIP_RETRIES", "0")
    monkeypatch.setenv("PIP_TIMEOUT", "2")
    with pytest.raises(NetworkError) as ei:
        fetch_version(manifest, "12.5", progress=lambda m: None)
    msg = str(ei.value)
    assert "\n" not in msg
    assert "nvidia-cuda-runtime-cu12==12.5.82" in msg
    assert "127.0.0.1:9" in msg
    assert _extracted_dirs(cache) == []
    assert list((cache / "wheels").iterdir()) == []


@network
def test_resolve_newest(manifest, tmp_path, monkeypatch):
    monkeypatch.setenv("CUDART_BINDGEN_CACHE", str(tmp_path))
    pin = resolve_newest(manifest, "12.6", progress=lambda m: None)
    assert isinstance(pin, VersionPin)
    assert pin.key == "12.6" and pin.major == "12"
    assert list(pin.wheels) == ["runtime", "crt", "profiler", "nvrtc", "nvjitlink", "driver"]
    assert pin.wheel("driver") == pin.wheel("runtime")  # cuda.h comes with libcudart
    assert pin.wheel("runtime").package == "nvidia-cuda-runtime-cu12"
    assert pin.wheel("nvrtc").package == "nvidia-cuda-nvrtc-cu12"
    assert pin.wheel("nvrtc").version.startswith("12.6.")
    assert pin.wheel("nvjitlink").package == "nvidia-nvjitlink-cu12"
    assert pin.wheel("nvjitlink").version.startswith("12.6.")
    assert pin.wheel("runtime").version == "12.6.77"
    assert pin.wheel("crt").package == "nvidia-cuda-nvcc-cu12"
    assert pin.wheel("crt").version.startswith("12.6.")
    # Each wheel's own newest patch of the minor: the manifest's, which were newest.
    assert pin.wheel("profiler") == manifest.get("12.6").wheel("profiler")
    for w in pin.wheels.values():
        assert re.fullmatch(r"[0-9a-f]{64}", w.sha256)
        assert w.wheel.startswith(w.package.replace("-", "_") + "-" + w.version + "-")
    # The resolved pin is usable as is: the fetch reuses the resolved wheels.
    m = manifest.with_version(pin)
    messages: list[str] = []
    hs = fetch_version(m, "12.6", progress=messages.append)
    assert all(h.is_file() for h in hs.headers)
    assert not any(m.startswith("downloading") for m in messages)


@network
def test_resolve_no_such_minor(manifest, tmp_path, monkeypatch):
    monkeypatch.setenv("CUDART_BINDGEN_CACHE", str(tmp_path))
    with pytest.raises(FetchError) as ei:
        resolve_newest(manifest, "12.99", progress=lambda m: None)
    assert not isinstance(ei.value, NetworkError)
    assert str(ei.value) == "no release of nvidia-cuda-runtime-cu12 matches 12.99.*"


def test_resolve_unknown_major(manifest, tmp_path, monkeypatch):
    monkeypatch.setenv("CUDART_BINDGEN_CACHE", str(tmp_path))
    with pytest.raises(ManifestError) as ei:
        resolve_newest(manifest, "11.8", progress=lambda m: None)
    msg = str(ei.value)
    assert "12" in msg and "13" in msg and "\n" not in msg


def test_manifest_refuses_a_major_without_one_library_or_a_pin_missing_a_wheel(manifest):
    text = manifest.dumps()
    no_library = text.replace('library = "nvidia/cu13/lib/libcudart.so.13"\n', "")
    with pytest.raises(ManifestError, match="exactly one wheel must name the library"):
        Manifest.loads(no_library)
    pin_header = '[versions."13.5".profiler]'
    start = text.index(pin_header)
    end = text.index("\n\n", start) if "\n\n" in text[start:] else len(text)
    with pytest.raises(
        ManifestError,
        match=r'versions."13.5" pins the wheels runtime, crt, nvrtc, nvjitlink, driver;',
    ):
        Manifest.loads(text[:start] + text[end:])
    with pytest.raises(ManifestError, match="unknown keys: include_dir"):
        Manifest.loads(text.replace('include = "nvidia/cu13/include"', 'include_dir = "x"', 1))


def test_adding_a_surface_header_is_a_data_change(manifest):
    """The parse starts from what the family lists: a header added there is fetched
    (required in the wheel) and parsed, with no code change."""
    from generator.fetch import _wanted

    kind = dataclasses.replace(
        manifest.majors["12"].wheel("runtime"),
        headers=(*manifest.majors["12"].wheel("runtime").headers, "cuda_occupancy.h"),
    )
    wanted, required = _wanted([kind])
    assert f"{kind.include}/cuda_occupancy.h" in required
    assert wanted(f"{kind.include}/cuda_occupancy.h") and wanted(kind.library or "")
    crt_wanted, crt_required = _wanted([manifest.majors["12"].wheel("crt")])
    assert crt_required == ("nvidia/cuda_nvcc/include/crt",)
    assert crt_wanted("nvidia/cuda_nvcc/include/crt/host_defines.h")
    assert not crt_wanted("nvidia/cuda_nvcc/include/fatbinary_section.h")


# ------------------------------------------------------------ system libraries

# The driver's wheel table as dumps() writes it (majors.13): cuda.h from the runtime's
# wheel, libcuda.so.1 from the system.
DRIVER_TABLE = """\
[majors.13.driver]
package = "nvidia-cuda-runtime"
include = "nvidia/cu13/include"
headers = [
    "cuda.h",
]
system_library = "libcuda.so.1"
"""


def _driver_table(manifest: Manifest, new: str) -> str:
    text = manifest.dumps()
    assert DRIVER_TABLE in text
    return text.replace(DRIVER_TABLE, new, 1)


def test_the_driver_surface_names_a_system_library(manifest):
    for family in ("12", "13"):
        driver = manifest.majors[family].library_wheel("driver")
        assert (driver.role, driver.library, driver.system_library) == (
            "driver",
            None,
            "libcuda.so.1",
        )
        assert driver.library_name == "libcuda.so.1"
        runtime = manifest.majors[family].runtime
        assert runtime.library_name == f"libcudart.so.{family}"
        assert manifest.majors[family].wheel("crt").library_name is None


def test_a_system_library_round_trips(manifest):
    driver = manifest.majors["13"].wheel("driver")
    data = driver.to_toml()
    assert data["system_library"] == "libcuda.so.1" and "library" not in data
    assert WheelKind.from_toml("driver", data, "majors.13.driver") == driver
    plain = manifest.majors["13"].wheel("crt").to_toml()
    assert "system_library" not in plain and "library" not in plain


def test_a_system_library_beside_a_library_is_refused(manifest):
    both = _driver_table(manifest, DRIVER_TABLE + 'library = "nvidia/cu13/lib/libcudart.so.13"\n')
    with pytest.raises(
        ManifestError, match="names both a library in the wheel and a system_library"
    ):
        Manifest.loads(both)


@pytest.mark.parametrize(
    "value",
    [
        '"/usr/lib/x86_64-linux-gnu/libcuda.so.1"',
        '"libcuda"',
        '"../libcuda.so.1"',
        '"libcuda.so.1 -x"',
        '"cuda.so.1"',
        '"libcuda.so.1\\n"',
    ],
)
def test_a_system_library_is_a_soname(manifest, value):
    text = _driver_table(
        manifest,
        DRIVER_TABLE.replace('system_library = "libcuda.so.1"', f"system_library = {value}"),
    )
    with pytest.raises(ManifestError, match="system_library is a soname such as") as ei:
        Manifest.loads(text)
    assert len(str(ei.value).splitlines()) == 1  # the value shown escaped, on one line


def test_a_system_library_that_is_no_string_is_refused(manifest):
    text = _driver_table(
        manifest, DRIVER_TABLE.replace('system_library = "libcuda.so.1"', "system_library = 1")
    )
    with pytest.raises(ManifestError, match="majors.13.driver.system_library must be a string"):
        Manifest.loads(text)


def test_a_system_library_counts_as_the_surfaces_one_library(manifest):
    """ "Exactly one wheel of a surface names the library": a system_library is that one."""
    none = _driver_table(manifest, DRIVER_TABLE.replace('system_library = "libcuda.so.1"\n', ""))
    with pytest.raises(
        ManifestError,
        match=r"majors.13: exactly one wheel of the driver surface must name the library, "
        r"not 0 \(none\)",
    ):
        Manifest.loads(none)
    family = manifest.majors["13"]
    second = dataclasses.replace(family.wheel("driver"), role="driver2")
    with pytest.raises(ManifestError, match=r"driver surface must name the library, not 2"):
        Major("13", (*family.wheels, second))


def test_the_manifest_header_explains_every_wheel_key():
    """dumps() rewrites the file with HEADER as its only comment: each key a wheel table
    may hold (system_library included) is explained there."""
    keys = [f.name for f in dataclasses.fields(WheelKind) if f.name != "role"]
    assert "system_library" in keys
    unexplained = [k for k in keys if not re.search(rf"(?:^#\s+|; ){k}: ", HEADER, re.M)]
    assert not unexplained
