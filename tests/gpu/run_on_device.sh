#!/usr/bin/env bash
# The GPU suite, once per CUDA runtime, on a machine with a GPU and no registry access.
#
# Runtimes: each .device/libs/<version>/libcudart.so.* (the pinned wheels' libraries,
# copied there by tests/gpu/prepare_device_libs.sh and carried along), then the
# machine's own (no $CUDART_LIBRARY: cudart's normal search). Writes one JUnit file
# per runtime and a Markdown summary into $OUT (or ./gpu-results).
# RUNTIMES="12.0 12.1 machine" runs only those (a device call has a time limit).
# Each runtime runs twice: with the compiled backend ($CUDART_BACKEND=compiled, the
# extensions prepare_device_libs.sh carried in .device/fast/) and with ctypes (label
# "<runtime> ctypes"); BACKENDS="compiled" or "ctypes" runs one.
#
# NVRTC (cudart.compile) and nvJitLink (cudart.link): the 12.x runtimes get the pinned
# 12.5 ones, which prepare_device_libs.sh packed (tests/gpu/stage_device_libs.py: LTO-IR
# links only within the major version that wrote it); the 13.x runtimes and the
# machine's get the machine's own (cudart's normal search). Each run's log starts with
# the runtime, NVRTC and nvJitLink it found.
#
# $CUDART_REQUIRE_GPU=1: a GPU test that finds no usable GPU (or no loadable runtime)
# fails instead of skipping, so a run on a broken machine exits non-zero.
# The commit tested: .device/COMMIT, written on the development machine by
# prepare_device_libs.sh (this copy of the tree may carry no git metadata); it is in
# RESULTS.md and in the digest summarize.py writes, which is committed as
# tests/gpu/results/<date>-<commit>.md. Without it the run fails.
# DEVICE_DIR replaces .device (the CPU tests of this script use it).
# FREETHREADED=1 runs under the free-threaded CPython 3.13 that
# tests/gpu/prepare_device_freethreaded.sh packed (.device/freethreaded.tar.xz, unpacked
# into .device/ft/ with its own pytest and its compiled backend), labelling each run
# "<runtime>-ft": the GIL must stay off (tests/conftest.py fails a session that turns it on).
# JOBS=N runs up to N runtime/backend runs at once (each its own process on the one
# GPU; default 1): a device call has a time limit, and the machine has cores to spare.
set -u
cd "$(dirname "$0")/../.."
out="${OUT:-gpu-results}"
mkdir -p "$out"
python="${PYTHON:-python3}"
device="${DEVICE_DIR:-.device}"
[[ "$device" == /* ]] || device="$PWD/$device"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export CUDART_REQUIRE_GPU=1
# Runs at once share the GPU: tests that read device-wide state run alone (conftest.py).
if [ "${JOBS:-1}" -gt 1 ]; then
    export CUDART_GPU_LOCK="$out/gpu.lock"
fi
status=0
if [ ! -f "$device/COMMIT" ]; then
    echo "no $device/COMMIT: run tests/gpu/prepare_device_libs.sh on the development machine" >&2
    status=1
fi
run() {  # label, then env assignments; once per backend
    local runtime=$1; shift
    for backend in ${BACKENDS:-compiled ctypes}; do
        local label="$runtime${FREETHREADED:+-ft}"
        [ "$backend" = compiled ] || label="$label-$backend"
        run_one "$label" "$@" CUDART_BACKEND="$backend"
    done
}
run_one() {  # label, then env assignments; in the background, at most $JOBS at once
    local label=$1; shift
    while [ "$(jobs -rp | wc -l)" -ge "${JOBS:-1}" ]; do sleep 1; done
    echo "=== runtime $label"
    (
        env "$@" "$python" -c "$LIBRARIES" > "$out/log-$label.txt" 2>&1
        env "$@" "$python" -m pytest tests/gpu -q -p no:cacheprovider -rs \
            --junitxml="$out/junit-$label.xml" "${PYTEST_ARGS[@]}" >> "$out/log-$label.txt" 2>&1
        echo $? > "$out/rc-$label"
        echo "=== $label: $(tail -n 1 "$out/log-$label.txt")"
    ) &
}
PYTEST_ARGS=("$@")
# What a run found: "<library>: <version> <path>", or why it found none.
LIBRARIES='
import cudart
from cudart import _loader
for name, load in (("runtime", _loader.load_runtime), ("nvrtc", _loader.load_nvrtc),
                   ("nvjitlink", _loader.load_nvjitlink)):
    try:
        lib = load()
        print(f"{name}:", lib.version_text, lib.path)
    except cudart.LibraryNotFoundError as exc:
        print(f"{name}: none ({exc})")
'
# What prepare_device_libs.sh packed: libs/, nvrtc/unpacked/, nvjitlink/, fast/, generated/.
if [ -e "$device/payload.tar.xz" ]; then
    tar -C "$device" -xJf "$device/payload.tar.xz"
fi
# The generated modules, where the call left generated/ behind (prepare_device_libs.sh).
if [ ! -e generated/__init__.py ] && [ -d "$device/generated" ]; then
    mkdir -p generated
    cp -p "$device"/generated/* generated/
fi
# The compiled backend as built on the development machine (no compiler needed here).
for so in "$device"/fast/cudart/*.so "$device"/fast/cudart/kernels/*.so; do
    [ -e "$so" ] && cp "$so" "${so#"$device"/fast/}"
done
# The free-threaded interpreter and its build of the compiled backend.
if [ -n "${FREETHREADED:-}" ]; then
    mkdir -p "$device/ft"
    tar -C "$device/ft" -xJf "$device/freethreaded.tar.xz" || status=1
    for so in "$device"/ft/fast/cudart/*.so "$device"/ft/fast/cudart/kernels/*.so; do
        [ -e "$so" ] && cp "$so" "${so#"$device"/ft/fast/}"
    done
    python="$device/ft/bin/python3.13t"
    export PYTHONPATH="$PYTHONPATH:$device/ft/site"
fi
# The machine's NVRTC where the loader's path lacks it: its toolkit, by cudart's
# $CUDA_HOME step.
if [ -z "${CUDA_HOME:-}" ] && [ -d /usr/local/cuda ]; then
    export CUDA_HOME=/usr/local/cuda
fi
nvrtc12=
for lib in "$device"/nvrtc/unpacked/nvidia/*/lib/libnvrtc.so.12; do
    [ -e "$lib" ] && nvrtc12="$lib"
done
nvjitlink12=
[ -e "$device/nvjitlink/libnvJitLink.so.12" ] && nvjitlink12="$device/nvjitlink/libnvJitLink.so.12"
wanted() { [ -z "${RUNTIMES:-}" ] || [[ " $RUNTIMES " == *" $1 "* ]]; }
for lib in "$device"/libs/*/libcudart.so.*; do
    [ -e "$lib" ] || continue
    label="$(basename "$(dirname "$lib")")"
    # How NVRTC is paired with the runtime, for tests/gpu/peer/test_cupy_runtime.py.
    case "$label" in
        12.*) nvrtc="$nvrtc12" nvjitlink="$nvjitlink12" pairing=pinned ;;
        *) nvrtc= nvjitlink= pairing=machine ;;
    esac
    wanted "$label" && run "$label" CUDART_LIBRARY="$lib" CUDART_NVRTC_LIBRARY="$nvrtc" \
        CUDART_NVJITLINK_LIBRARY="$nvjitlink" CUDART_NVRTC_PAIRING="$pairing"
done
wanted machine && run machine CUDART_LIBRARY= CUDART_NVRTC_LIBRARY= CUDART_NVJITLINK_LIBRARY= \
    CUDART_NVRTC_PAIRING=same
wait
for rc in "$out"/rc-*; do
    [ -e "$rc" ] || continue
    [ "$(cat "$rc")" = 0 ] || { status=1; echo "failed: ${rc#"$out"/rc-}"; }
done
rm -f "$out"/rc-* "$out/gpu.lock"
"$python" tests/gpu/summarize.py "$out" "$device/COMMIT" > "$out/RESULTS.md" || status=1
cat "$out/RESULTS.md"
exit $status
