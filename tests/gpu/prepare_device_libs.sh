#!/usr/bin/env bash
# What the GPU machine needs that it cannot fetch, in one xz archive (the carry limit,
# 64 MiB, counts the tracked tree too): the pinned wheels' libraries as
# tests/gpu/stage_device_libs.py lays them out (each pinned version's libcudart as
# libs/<version>/; for the 12.x runtimes, the pinned 12.5 NVRTC as nvrtc/unpacked/ and
# nvJitLink 12.5 as nvjitlink/: the 13.x ones use the machine's own), generated/
# (below), and the compiled backend's extensions as built here (`make build`; limited
# API 3.11, so the machine's newer Python loads them), stripped, as fast/<their path>.
# Written to .device/payload.tar.xz, which run_on_device.sh unpacks into .device/ there;
# and the commit of this tree (with a flag for uncommitted changes) as .device/COMMIT,
# which run_on_device.sh records with the results, and as .device/bench-stamp, which a
# bench run there records (bench/stamp.py: it checks the tree it runs is the one stamped).
set -eu
cd "$(dirname "$0")/../.."
.venv/bin/python tests/gpu/summarize.py stamp .device/COMMIT
.venv/bin/python -m bench stamp .device/bench-stamp
rm -rf .device/stage
.venv/bin/python -m tests.gpu.stage_device_libs .device/stage
rm -rf .device/stage/fast
mkdir -p .device/stage/fast
# Every extension the build made, by its path in the checkout (the launcher is
# cudart/kernels/'s, cudart/_fields the records' members): one left out would leave its
# Python twin to be tested there. The limited-API builds only: the machine's Python is
# a GIL build.
built=$(find cudart -name '*.abi3.so' | sort)
[ -n "$built" ] || { echo "no compiled backend here: run make build" >&2; exit 1; }
for so in $built; do
    mkdir -p ".device/stage/fast/$(dirname "$so")"
    strip -o ".device/stage/fast/$so" "$so"
done
# generated/ too: with every header family's modules it is larger than what a device
# call carries (64 MiB), so the lead moves generated/ aside for the call (the cudart/
# links travel as links) and run_on_device.sh puts this copy back there.
mkdir -p .device/stage/generated
# Its files only: a local import leaves generated/__pycache__, which is not the tree's.
find generated -maxdepth 1 -type f -exec cp -p -t .device/stage/generated/ {} +
tar -C .device/stage -cf - libs nvrtc nvjitlink fast generated | xz -T0 -9 > .device/payload.tar.xz
rm -rf .device/stage .device/libs .device/nvrtc .device/nvjitlink .device/fast .device/generated
du -sh .device
