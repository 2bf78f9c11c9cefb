#!/usr/bin/env bash
# What the GPU machine needs that it cannot fetch, in one xz archive (the carry limit,
# 64 MiB, counts the tracked tree too): each pinned version's libcudart (fetched and
# verified by the generator's cache) as libs/<version>/, the pinned CUDA 12.5 NVRTC's
# libraries as nvrtc/unpacked/ (for the 12.x runtimes; the 13.x ones use the machine's
# NVRTC), generated/ (below), and the compiled backend's extensions as built here (`make build`; limited
# API 3.11, so the machine's newer Python loads them), stripped, as fast/<their path>. Written to
# .device/payload.tar.xz, which run_on_device.sh unpacks into .device/ there; and the
# commit of this tree (with a flag for uncommitted changes) as .device/COMMIT, which
# run_on_device.sh records with the results.
set -eu
cd "$(dirname "$0")/../.."
.venv/bin/python tests/gpu/summarize.py stamp .device/COMMIT
.venv/bin/python - <<'PY'
import shutil
import zipfile
from pathlib import Path
from generator.fetch import cache_root, fetch_version
from generator.manifest import Manifest

NVRTC_FOR_12 = "12.5"

m = Manifest.load()
for key in m.keys():
    lib = fetch_version(m, key, lambda s: None).library
    dest = Path(".device/stage/libs") / key
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(lib, dest / lib.name)
    print(dest / lib.name)
fetch_version(m, NVRTC_FOR_12, lambda s: None, "nvrtc")  # downloads and verifies the wheel
wheel = m.get(NVRTC_FOR_12).wheel("nvrtc").wheel
dest = Path(".device/stage/nvrtc/unpacked")
shutil.rmtree(dest.parent, ignore_errors=True)
dest.mkdir(parents=True)
with zipfile.ZipFile(cache_root() / "wheels" / wheel) as zf:
    for name in zf.namelist():
        if "/lib/" in name:
            zf.extract(name, dest)
print(dest, "from", wheel)
PY
rm -rf .device/stage/fast
mkdir -p .device/stage/fast
# By their paths in the checkout: the launcher is cudart/kernels/'s.
for so in cudart/_fast_*.so cudart/kernels/_fastlaunch*.so; do
    [ -e "$so" ] || { echo "no compiled backend here: run make build" >&2; exit 1; }
    mkdir -p ".device/stage/fast/$(dirname "$so")"
    strip -o ".device/stage/fast/$so" "$so"
done
# generated/ too: with every header family's modules it is larger than what a device
# call carries (64 MiB), so the lead moves generated/ aside for the call (the cudart/
# links travel as links) and run_on_device.sh puts this copy back there.
mkdir -p .device/stage/generated
cp -p generated/* .device/stage/generated/
tar -C .device/stage -cf - libs nvrtc fast generated | xz -T0 -9 > .device/payload.tar.xz
rm -rf .device/stage .device/libs .device/nvrtc .device/fast .device/generated
du -sh .device
