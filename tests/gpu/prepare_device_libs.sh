#!/usr/bin/env bash
# Copy each pinned version's libcudart (fetched and verified by the generator's cache)
# into .device/libs/<version>/, an ignored folder to carry to the GPU machine, and the
# pinned CUDA 12.5 NVRTC wheel (compressed: its library is 60+ MB unpacked, the carry
# limit 64 MiB) into .device/nvrtc/, which run_on_device.sh unpacks there for the
# 12.x runtimes (the 13.x ones use the machine's NVRTC), and the compiled backend's
# extensions as built here (`make build`; limited API 3.11, so the machine's newer
# Python loads them), stripped, into .device/fast/, which run_on_device.sh puts in
# cudart/ there.
set -eu
cd "$(dirname "$0")/../.."
.venv/bin/python - <<'PY'
import shutil
from pathlib import Path
from generator.fetch import cache_root, fetch_version
from generator.manifest import Manifest

NVRTC_FOR_12 = "12.5"

m = Manifest.load()
for key in m.keys():
    lib = fetch_version(m, key, lambda s: None).library
    dest = Path(".device/libs") / key
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(lib, dest / lib.name)
    print(dest / lib.name)
fetch_version(m, NVRTC_FOR_12, lambda s: None, "nvrtc")  # downloads and verifies the wheel
wheel = m.get(NVRTC_FOR_12).wheel("nvrtc").wheel
dest = Path(".device/nvrtc")
shutil.rmtree(dest, ignore_errors=True)
dest.mkdir(parents=True)
shutil.copy2(cache_root() / "wheels" / wheel, dest / wheel)
print(dest / wheel, f"{(dest / wheel).stat().st_size / 2**20:.1f} MiB")
PY
rm -rf .device/fast
mkdir -p .device/fast
for so in cudart/_fast*.so; do
    [ -e "$so" ] || { echo "no compiled backend here: run make build" >&2; exit 1; }
    strip -o ".device/fast/$(basename "$so")" "$so"
done
du -sh .device
