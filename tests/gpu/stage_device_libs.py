"""The pinned wheels' libraries the GPU machine's runs need and cannot fetch, staged for
tests/gpu/prepare_device_libs.sh (which adds the compiled backend and generated/ and
packs the lot); run_on_device.sh reads the same layout:

    libs/<version>/libcudart.so.*     each pinned runtime (or those named)
    nvrtc/unpacked/nvidia/*/lib/      the 12.x runtimes' NVRTC: its wheel's lib/ folder
                                      (libnvrtc needs its builtins library beside it)
    nvjitlink/libnvJitLink.so.12      the 12.x runtimes' nvJitLink

The 12.x runs get NVRTC and nvJitLink of their own major, one pinned version of it
(COMPANION_FOR_12): LTO-IR links only within the major version that wrote it, and PTX
only in a linker at least as new as its compiler. The 13.x runs use the machine's own
(CUDA 13), so nothing of 13.x is carried. Every library comes from the generator's
verified cache (generator.fetch).

    python -m tests.gpu.stage_device_libs STAGE [VERSION ...]     (from the repository root)
"""

from __future__ import annotations

import shutil
import sys
import zipfile
from pathlib import Path

from generator.fetch import cache_root, fetch_version
from generator.manifest import Manifest

COMPANION_FOR_12 = "12.5"


def _quiet(*args, **kwargs) -> None:
    pass


def stage(dest: Path, keys: list[str] | None = None) -> None:
    manifest = Manifest.load()
    for key in keys or manifest.keys():
        lib = fetch_version(manifest, key, _quiet).library
        assert lib is not None
        _copy(lib, dest / "libs" / key)
    _stage_nvrtc(manifest, dest / "nvrtc" / "unpacked")
    nvjitlink = fetch_version(manifest, COMPANION_FOR_12, _quiet, "nvjitlink").library
    assert nvjitlink is not None
    _copy(nvjitlink, dest / "nvjitlink")


def _copy(lib: Path, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy2(lib, folder / lib.name)
    print(folder / lib.name)


def _stage_nvrtc(manifest: Manifest, dest: Path) -> None:
    fetch_version(manifest, COMPANION_FOR_12, _quiet, "nvrtc")  # downloads and verifies it
    wheel = manifest.get(COMPANION_FOR_12).wheel("nvrtc").wheel
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    with zipfile.ZipFile(cache_root() / "wheels" / wheel) as zf:
        for name in zf.namelist():
            if "/lib/" in name:
                zf.extract(name, dest)
    print(dest, "from", wheel)


if __name__ == "__main__":
    stage(Path(sys.argv[1]), sys.argv[2:] or None)
