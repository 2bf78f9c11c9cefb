#!/usr/bin/env bash
# The free-threaded interpreter for the GPU machine (issue 25), which has no registry
# access and no 3.13t of its own: the one tests/freethreaded/interpreter.py built here,
# stripped and without what a test run never imports (CPython's own tests, IDLE, Tk,
# ensurepip, the static library), with pytest and its pure-Python dependencies from the
# free-threaded venv, and the compiled backend as built for it (`make test-freethreaded`
# builds it in place: cudart/*.cpython-313t-*.so), stripped, as fast/<their path>.
# Written to .device/freethreaded.tar.xz beside prepare_device_libs.sh's payload (run that
# first: it stamps .device/COMMIT); run_on_device.sh unpacks it into .device/ft/ and, with
# FREETHREADED=1, runs the suite under .device/ft/bin/python3.13t.
# CPython finds its standard library relative to its executable, so the tree runs from
# wherever it lands.
set -eu
cd "$(dirname "$0")/../.."
python="$(python3 tests/freethreaded/interpreter.py)"
prefix="$(dirname "$(dirname "$python")")"
venv="${FT_VENV:-.venv-ft}"
site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')"
stage=.device/ft-stage
rm -rf "$stage"
mkdir -p "$stage/bin" "$stage/lib" "$stage/site"
strip -o "$stage/bin/python3.13t" "$python"
ln -s python3.13t "$stage/bin/python3"
tar -C "$prefix/lib" -cf - \
    --exclude='python3.13t/test' --exclude='python3.13t/idlelib' \
    --exclude='python3.13t/tkinter' --exclude='python3.13t/turtledemo' \
    --exclude='python3.13t/ensurepip' --exclude='python3.13t/config-*' \
    --exclude='python3.13t/site-packages' --exclude='__pycache__' python3.13t |
    tar -C "$stage/lib" -xf -
mkdir -p "$stage/lib/python3.13t/site-packages"
strip "$stage"/lib/python3.13t/lib-dynload/*.so
# pytest and what it imports (pygments included) and numpy (its 3.13t wheel), which the
# launch stress test fills its arguments with; CuPy and cuda-bindings stay behind:
# the GPU tests that need them skip under this interpreter.
for package in _pytest pytest pluggy iniconfig packaging pygments py.py numpy numpy.libs; do
    [ -e "$site/$package" ] && cp -r "$site/$package" "$stage/site/"
done
find "$stage/site" \( -name __pycache__ -o -path "*/numpy/*/tests" \) -prune -exec rm -rf {} +
found=0
for so in cudart/*.cpython-313t-*.so cudart/kernels/*.cpython-313t-*.so; do
    [ -e "$so" ] || continue
    found=1
    mkdir -p "$stage/fast/$(dirname "$so")"
    strip -o "$stage/fast/$so" "$so"
done
[ "$found" = 1 ] || { echo "no free-threaded build here: run make test-freethreaded" >&2; exit 1; }
tar -C "$stage" -cf - bin lib site fast | xz -T0 -9 > .device/freethreaded.tar.xz
rm -rf "$stage"
du -sh .device/freethreaded.tar.xz
