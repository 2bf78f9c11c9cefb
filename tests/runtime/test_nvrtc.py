"""NVRTC: the bindings of every pinned version held against gcc and the real libnvrtc,
and cudart.compile on the CPU (NVRTC compiles without a GPU).

The compile tests use the NVRTC wheel requirements/dev.txt installs (the loader finds
it as a user's would); the ABI tests use each version's pinned libnvrtc from the
generator's cache, as test_abi.py does for libcudart.
"""

from __future__ import annotations

import ctypes
import decimal
import importlib
import json
import os
import pickle
import subprocess
import sys

import abi_support
import numpy
import pytest
import snapshot_files
from suite import REPO, run_python, version_keys

import cudart
from cudart import nvrtc as nv
from cudart.kernels import Module
from generator.fetch import fetch_version

VERSIONS = version_keys()
SM = "sm_90"

AXPY = r"""
template <typename T>
__global__ void axpy(T a, const T* x, T* y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += a * x[i];
}
"""


class _Str(str):
    """A str subclass: the checks take it as the str it is."""


def _quiet(_message: str) -> None:
    pass


@pytest.fixture(scope="module")
def nvrtc_sets(manifest):
    return {key: fetch_version(manifest, key, _quiet, "nvrtc") for key in VERSIONS}


@pytest.fixture(params=VERSIONS)
def report(request, manifest, nvrtc_sets):
    key = request.param
    return abi_support.report_for(nvrtc_sets[key], "nvrtc_", manifest.get(key).number)


# ---------------------------------------------------------------- the bindings


def test_nvrtc_module_matches_gcc_and_its_library(report):
    """Every fact of nvrtc.h (records, enums, enumerators, typedefs, macros) as gcc
    computes it, every symbol as C expands it, and each exported by that version's
    own libnvrtc."""
    problems = [f"{k}: {msg}" for k, msg in report.c.errors.items()]
    for category in (
        "records",
        "fields",
        "enums",
        "enumerators",
        "typedefs",
        "macros",
        "symbols",
        "exports",
    ):
        problems += report.mismatches(category)
    assert not problems, "\n".join(problems[:30])
    module = importlib.import_module(report.module_name)
    # Not vacuous: the calls cudart.compile makes are among those checked.
    assert {"nvrtcCreateProgram", "nvrtcCompileProgram", "nvrtcGetLoweredName"} <= set(
        module.SYMBOLS
    )
    assert module.LIBRARY == "nvrtc"
    assert len(report.model.functions) >= 20


def test_each_pinned_libnvrtc_reports_its_version(manifest, nvrtc_sets):
    """nvrtcVersion of each pinned library is its version key, so the loader's choice
    of module by version is the pin's. One child process: the libraries are large."""
    code = (
        "import ctypes, sys\n"
        "for path in sys.argv[1:]:\n"
        "    lib = ctypes.CDLL(path)\n"
        "    a, b = ctypes.c_int(), ctypes.c_int()\n"
        "    assert lib.nvrtcVersion(ctypes.byref(a), ctypes.byref(b)) == 0\n"
        "    print(f'{a.value}.{b.value}')\n"
    )
    paths = [str(nvrtc_sets[k].library) for k in VERSIONS]
    out = subprocess.run(
        [sys.executable, "-c", code, *paths], capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == VERSIONS


@pytest.mark.parametrize("key", VERSIONS)
def test_nvrtc_output_classification_snapshot(nvrtc_sets, key):
    """Every NVRTC function's checked form (inputs and outputs), reviewed once and then
    held, as the runtime's are (tests/generator/test_checked.py); `cudart-bindgen add`
    writes both. After a deliberate change: CUDART_UPDATE_EXPECTATIONS=1, review the diff."""
    from models import model_for

    from generator.generate import SNAPSHOTS, snapshot_name
    from generator.resolve import describe, resolve

    text = "".join(describe(p) + "\n" for p in resolve(model_for(nvrtc_sets[key])))
    assert "nvrtcCompileProgram(" in text
    snapshot_files.hold(SNAPSHOTS / snapshot_name(key, "nvrtc"), text)


def test_checked_module_raises_nvrtc_errors():
    """A failed call raises the NvrtcError subclass of its code, with
    nvrtcGetErrorString's message; one class per code across versions' modules."""
    raw, checked = nv._bindings()
    with pytest.raises(cudart.NvrtcError) as info:
        checked.nvrtcCompileProgram(None, 0, None)
    exc = info.value
    assert type(exc).__name__ == "NvrtcErrorInvalidProgram"
    assert exc.code == raw.NVRTC_ERROR_INVALID_PROGRAM
    assert exc.message == "NVRTC_ERROR_INVALID_PROGRAM"
    assert type(exc) is cudart.NvrtcErrorInvalidProgram
    assert not issubclass(type(exc), cudart.CudaError)


def test_a_function_libnvrtc_lacks_names_libnvrtc():
    """A function the headers declare and the loaded library does not export raises
    FunctionNotFoundError naming that library (it said libcudart for NVRTC's)."""
    from cudart._binding import bind_symbol

    version = nv.nvrtc_version()
    fn = bind_symbol(
        "nvrtcNotAFunction", "nvrtcNotAFunction", ctypes.c_int, [], "m", version, library="nvrtc"
    )
    with pytest.raises(cudart.FunctionNotFoundError) as info:
        fn()
    message = str(info.value)
    assert "loaded libnvrtc" in message and "newer NVRTC" in message, message
    assert "libcudart" not in message and nv.load_nvrtc().path in message


def test_checked_module_returns_documented_outputs():
    """nvrtc.h marks outputs `\\param [out]`: the checked functions return them (one value
    each), while a caller-sized `char *` (the PTX, sized by nvrtcGetPTXSize) and an
    array (the supported architectures) stay buffers the caller passes."""
    import inspect

    raw, checked = nv._bindings()
    major, minor = checked.nvrtcVersion()
    assert major * 1000 + minor * 10 == nv.nvrtc_version()
    count = checked.nvrtcGetNumSupportedArchs()
    archs = (ctypes.c_int * count)()
    checked.nvrtcGetSupportedArchs(archs)
    assert 90 in list(archs)
    prog = checked.nvrtcCreateProgram(b"__global__ void k() {}", b"k.cu", 0, None, None)
    try:
        checked.nvrtcCompileProgram(prog, 1, (ctypes.c_char_p * 1)(b"-arch=compute_90"))
        size = checked.nvrtcGetPTXSize(prog)
        ptx = ctypes.create_string_buffer(size)
        checked.nvrtcGetPTX(prog, ptx)
        assert b".entry" in ptx.value
        assert list(inspect.signature(checked.nvrtcGetPTX).parameters) == ["prog", "ptx"]
    finally:
        raw.nvrtcDestroyProgram(ctypes.byref(prog))


# Each getter that fills a caller's buffer with as much as its partner says
# (generator/sizes.py, Measure.QUERIED), on the real libnvrtc: in a fresh process, so
# that C writing past a buffer (issue 33, item 16: 425 bytes into 1) is a failure here.
BUFFER_GETTERS_PROBE = r"""
import ctypes
import json

from cudart import nvrtc as nv

raw, checked = nv._bindings()
SOURCE = b'extern "C" __global__ void k(float *p) { int unused; p[0] = 1; }'
# The options under which each getter has something to give.
GETTERS = {
    "nvrtcGetPTX": ["-arch=compute_90"],
    "nvrtcGetCUBIN": ["-arch=sm_90"],
    "nvrtcGetLTOIR": ["-arch=sm_90", "-dlto"],
    "nvrtcGetNVVM": ["-arch=sm_90", "-dlto"],
    "nvrtcGetOptiXIR": ["-arch=compute_90", "-optix-ir"],
    "nvrtcGetProgramLog": ["-arch=sm_90"],
}
found = {}
for name, options in GETTERS.items():
    getter = getattr(checked, name, None)
    if getter is None:
        continue
    prog = checked.nvrtcCreateProgram(SOURCE, b"k.cu", 0, None, None)
    try:
        try:
            checked.nvrtcCompileProgram(prog, len(options), options)
        except Exception as exc:
            found[name] = ["not compiled", str(exc)]
            continue
        size = getattr(checked, name + "Size")(prog)
        row = {"size": size}
        smalls = (("bytearray", bytearray(1)), ("ctypes", ctypes.create_string_buffer(1)))
        for label, small in smalls:
            try:
                getter(prog, small)
                row[label] = "reached C"
            except ValueError as exc:
                row[label] = str(exc)
        whole = getter(prog)
        buffer = bytearray(size)
        row["given"] = repr(getter(prog, buffer))
        row["returned"] = [type(whole).__name__, len(whole), bytes(buffer) == whole]
        found[name] = row
    finally:
        raw.nvrtcDestroyProgram(ctypes.byref(prog))
count = checked.nvrtcGetNumSupportedArchs()
row = {"size": count}
try:
    checked.nvrtcGetSupportedArchs((ctypes.c_int * 1)())
    row["ctypes"] = "reached C"
except ValueError as exc:
    row["ctypes"] = str(exc)
archs = checked.nvrtcGetSupportedArchs()
row["returned"] = [type(archs).__name__, len(archs), 90 in archs]
found["nvrtcGetSupportedArchs"] = row
print(json.dumps(found))
"""


def test_buffer_getters_hold_the_buffer_to_their_size_partner():
    """nvrtcGetPTX, nvrtcGetCUBIN, nvrtcGetLTOIR, nvrtcGetNVVM, nvrtcGetOptiXIR,
    nvrtcGetProgramLog and nvrtcGetSupportedArchs: a buffer smaller than the partner's
    size is refused before C writes it; omitted, what C wrote comes back, as the caller's
    own buffer of that size gets it."""
    proc = run_python(BUFFER_GETTERS_PROBE, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = json.loads(proc.stdout)
    expected = {"nvrtcGetPTX", "nvrtcGetCUBIN", "nvrtcGetLTOIR", "nvrtcGetOptiXIR"}
    expected |= {"nvrtcGetProgramLog", "nvrtcGetSupportedArchs"}
    assert expected <= set(found), found
    for name, row in found.items():
        assert row["size"] > 1, (name, row)  # a 1-byte buffer is too small for each
        for label in ("bytearray", "ctypes"):
            if label in row:
                assert "the call would run past its end" in row[label], (name, row)
                assert f"= {row['size']} " in row[label] or "x c_int" in row[label], row
        kind, length, same = row["returned"]
        assert length == row["size"] and same, (name, row)
        assert kind == ("list" if name == "nvrtcGetSupportedArchs" else "bytes")
        if name != "nvrtcGetSupportedArchs":
            assert row["given"] == "None"


def test_checked_functions_take_lists_where_c_takes_string_arrays():
    """`const char *const *` (options, headers, include names) takes a list or tuple of
    str or bytes; a ctypes array (an address) still works, as the test above passes."""
    raw, checked = nv._bindings()
    source = '#include "scale.h"\n__global__ void k(float* p) { p[0] = SCALE * FACTOR; }'
    prog = checked.nvrtcCreateProgram(source, "k.cu", 1, ["#define SCALE 2.5f\n"], ("scale.h",))
    try:
        checked.nvrtcCompileProgram(prog, 2, ["-arch=compute_90", b"-DFACTOR=3.0f"])
        ptx = ctypes.create_string_buffer(checked.nvrtcGetPTXSize(prog))
        checked.nvrtcGetPTX(prog, ptx)
        # 7.5f (0x40F00000), stored as a float or as its bits: both the header's SCALE
        # and the option's FACTOR reached NVRTC.
        assert b"0f40F00000" in ptx.value or b"1089470464" in ptx.value, ptx.value
        with pytest.raises(ValueError, match="holds 1 string.*C reads 2"):
            checked.nvrtcCompileProgram(prog, 2, ["-arch=compute_90"])
        with pytest.raises(ValueError, match=r"options\[1\].*NUL"):
            checked.nvrtcCompileProgram(prog, 2, ["-arch=compute_90", "-DX=1\0-G"])
        with pytest.raises(TypeError, match=r"options\[0\]"):
            checked.nvrtcCompileProgram(prog, 1, [90])
        with pytest.raises(TypeError, match=r"options\[0\]"):
            checked.nvrtcCompileProgram(prog, 1, [None])
    finally:
        raw.nvrtcDestroyProgram(ctypes.byref(prog))


# ---------------------------------------------------------------- cudart.compile


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    folder = tmp_path / "kernels"
    monkeypatch.setenv(nv.CACHE_ENV, str(folder))
    return folder


def test_compile_to_cubin_and_ptx_with_name_expressions(cache_dir):
    cubin = cudart.compile(AXPY, name_expressions=["axpy<float>"], arch=SM, load=False)
    assert cubin[:4] == b"\x7fELF"
    assert b"_Z4axpyIfEvT_PKS0_PS0_i" in cubin  # axpy<float>, lowered and instantiated
    ptx = cudart.compile(AXPY, name_expressions=["axpy<double>"], arch=SM, output="ptx", load=False)
    text = ptx.decode()
    assert ".target sm_90" in text
    assert ".entry _Z4axpyIdEvT_PKS0_PS0_i" in text
    assert not ptx.endswith(b"\0")


def test_a_compile_leaves_the_threads_locale_as_it_was(tmp_path):
    # libnvrtc switches the calling thread to the "C" locale and leaves it there: before
    # cudart put it back, Python's default text encoding turned ASCII after a compile,
    # and reading a UTF-8 file with open() raised UnicodeDecodeError. A fresh process:
    # this one's tests call nvrtcCompileProgram directly, which cudart does not guard.
    note = tmp_path / "note.txt"
    note.write_bytes("\u2019 \u00e9".encode())
    code = f"""
import locale, cudart
before = locale.getpreferredencoding(False)
assert before.lower().replace("-", "") == "utf8", before
cudart.compile({AXPY!r}, name_expressions=["axpy<float>"], arch={SM!r}, load=False, cache=False)
assert locale.getpreferredencoding(False) == before, locale.getpreferredencoding(False)
with open({str(note)!r}) as f:  # the default encoding, as a user's program reads
    assert f.read() == "\u2019 \u00e9"
"""
    run_python(code)


# Compiles a kernel through one of cudart's NVRTC layers, then reports the thread's
# preferred encoding: the raw layer calls C as is (and libnvrtc leaves the "C" locale).
LOCALE_AFTER = """
import ctypes, locale, sys
import cudart
raw, checked = cudart.nvrtc._bindings()
prog = checked.nvrtcCreateProgram(b"__global__ void k() {}", b"k.cu", 0, None, None)
options = (ctypes.c_char_p * 1)(b"-arch=sm_90")
before = locale.getpreferredencoding(False)
layer = {"raw": raw, "checked": checked}[sys.argv[1]]
status = layer.nvrtcCompileProgram(prog, 1, options)
print(before, locale.getpreferredencoding(False), status)
"""


def test_the_checked_compile_keeps_the_threads_locale():
    def after(layer):
        out = subprocess.run(
            [sys.executable, "-c", LOCALE_AFTER, layer],
            capture_output=True,
            text=True,
            cwd=REPO,
            env=dict(os.environ, LC_ALL="C.UTF-8"),
            check=True,
        )
        return out.stdout.split()

    # The raw layer shows the hazard (the test is not vacuous); the checked layer, as
    # cudart.compile, puts the locale back.
    assert after("raw") == ["UTF-8", "ANSI_X3.4-1968", "0"]
    assert after("checked") == ["UTF-8", "UTF-8", "None"]


# Parses one version's headers and prints the checked layer's description of every
# function, in a process that first compiled by one route (or not at all).
DESCRIBE_AFTER = """
import ctypes, sys
from generator.fetch import fetch_version
from generator.parse import parse_version
from generator.manifest import Manifest
from generator.resolve import describe, resolve
from generator.tree import REPO
how, key = sys.argv[1], sys.argv[2]
headers = fetch_version(Manifest.load(REPO / "cuda_headers_manifest.toml"), key, lambda m: None)
source = "template <typename T> __global__ void k(T* p) { p[0] = T(1); }"
if how == "compile":
    import cudart
    cudart.compile(source, name_expressions=["k<float>"], arch="sm_90", load=False, cache=False)
elif how == "raw":
    import cudart
    raw, checked = cudart.nvrtc._bindings()
    prog = checked.nvrtcCreateProgram(source.encode(), b"k.cu", 0, None, None)
    raw.nvrtcCompileProgram(prog, 1, (ctypes.c_char_p * 1)(b"-arch=sm_90"))
sys.stdout.write("".join(describe(p) + "\\n" for p in resolve(parse_version(headers))))
"""


@pytest.mark.parametrize("how", ["compile", "raw"])
def test_a_process_that_compiled_parses_as_one_that_did_not(how):
    """An NVRTC compile, by cudart.compile or by the raw bindings (which leave the
    thread on the "C" locale), does not change what the generator makes afterwards in
    that process. 13.0: its cudaMemGetDefaultMemPool doc comment is the one that moved
    (`location` read as an output)."""

    def described(how):
        out = subprocess.run(
            [sys.executable, "-c", DESCRIBE_AFTER, how, "13.0"],
            capture_output=True,
            text=True,
            cwd=REPO,
            env=dict(os.environ, LC_ALL="C.UTF-8", PYTHONPATH=str(REPO)),
        )
        assert out.returncode == 0, out.stderr[-2000:]
        return out.stdout

    never = described("none")
    assert "cudaMemGetDefaultMemPool(location:ref, type:scalar)" in never
    assert described(how) == never


def test_name_expressions_map_to_lowered_names(cache_dir):
    raw, checked = nv._bindings()
    image, lowered, _params = nv._compile(
        raw,
        checked,
        AXPY.encode(),
        "p.cu",
        {},
        ("-arch=sm_90",),
        ("axpy<float>", "axpy<int>"),
        "cubin",
    )
    assert lowered == {
        "axpy<float>": "_Z4axpyIfEvT_PKS0_PS0_i",
        "axpy<int>": "_Z4axpyIiEvT_PKS0_PS0_i",
    }


WARNS = 'extern "C" __global__ void warns(float a, double b, int *p) { int unused; *p = a + b; }\n'


@pytest.mark.parametrize("output", ["cubin", "ptx", "ltoir"])
def test_a_successful_compile_returns_nvrtcs_log(cache_dir, output):
    """Issue 33, item 14: warnings are part of a compile's result. The image (a bytes
    subclass) carries NVRTC's log and the program's name, from NVRTC, from the memory
    layer and from the disk cache alike; a clean compile's log says nothing."""
    nv.clear_cache()
    kw = {"arch": SM, "output": output, "load": False, "name": "warns.cu"}
    image = cudart.compile(WARNS, **kw)
    assert isinstance(image, bytes) and isinstance(image, nv.Image)
    assert 'warns.cu(1): warning #177-D: variable "unused"' in image.log
    assert image.name == "warns.cu"
    assert cudart.compile(WARNS, **kw).log == image.log  # the memory layer
    nv.clear_cache()
    again = cudart.compile(WARNS, **kw)  # the disk cache
    assert again == image and again.log == image.log and again.name == "warns.cu"
    assert pickle.loads(pickle.dumps(again)).log == image.log
    assert cudart.compile(ADD_ONE, arch=SM, output=output, load=False).log.strip() == ""


ADD_ONE = 'extern "C" __global__ void add_one(float a, double b, float *p) { *p += a + b; }\n'


class _StandInLoader:
    """Stands for a GPU's loader (no device here): every kernel name is found."""

    route = "library"

    def find(self, name):
        return 0x1000


def test_an_extern_c_kernel_of_a_compiled_cubin_is_typed_by_its_ptx(cache_dir):
    """Issue 33, item 13: a cubin declares no parameter types, so an extern "C" kernel
    compiled to one refused Python floats; NVRTC makes the PTX beside the cubin, whose
    .param types compile keeps (in the disk cache too) and gives the module."""
    raw, checked = nv._bindings()
    image, lowered, params = nv._compile(
        raw, checked, ADD_ONE.encode(), "a.cu", {}, ("-arch=sm_90",), (), "cubin"
    )
    assert image[:4] == b"\x7fELF"
    assert params == {"add_one": (("f32", 4), ("f64", 8), ("u64", 8))}
    module = nv._annotated(Module(cudart.sys, "cubin", image, _StandInLoader()), image, {}, params)
    kinds = [t.kind for t in module.get_function("add_one").param_types]
    assert kinds == ["float", "float", "word"]
    bare = Module(cudart.sys, "cubin", image, _StandInLoader())  # as before: unknown
    assert bare.get_function("add_one").param_types is None
    # Through compile and its disk cache: the entry holds the same types.
    cudart.compile(ADD_ONE, arch=SM, load=False)
    (entry,) = _entries(cache_dir)
    assert nv._cache_read(str(cache_dir), entry.stem)[2] == params


def test_headers_and_options_reach_the_compiler(cache_dir):
    source = '#include "scale.h"\n__global__ void k(float* p) { p[0] = SCALE * FACTOR; }\n'
    ptx = cudart.compile(
        source,
        headers={"scale.h": "#define SCALE 3.0f\n"},
        options=["-DFACTOR=7.0f"],
        arch=SM,
        output="ptx",
        load=False,
    )
    assert b"1101529088" in ptx  # 21.0f (0x41A80000): the header's macro times the option's


def test_compile_error_carries_log_options_and_line(cache_dir):
    source = "__global__ void k(int* p)\n{\n    p[0] = undefined_name;\n}\n"
    with pytest.raises(cudart.CompileError) as info:
        cudart.compile(source, options=["-std=c++17"], arch=SM, load=False)
    exc = info.value
    assert 'identifier "undefined_name" is undefined' in exc.log
    assert exc.options == ("-std=c++17", "-arch=sm_90")
    assert exc.line_number == 3
    assert exc.line == "    p[0] = undefined_name;"
    assert "line 3" in str(exc)
    assert not list(cache_dir.rglob("*.bin"))  # nothing cached for a failure


def test_unknown_architecture_is_a_clear_error(cache_dir):
    with pytest.raises(cudart.NvrtcError) as info:
        cudart.compile(AXPY, name_expressions=["axpy<float>"], arch="sm_999", load=False)
    assert type(info.value).__name__ == "NvrtcErrorInvalidOption"
    assert any("sm_90" in note and "newer NVRTC" in note for note in info.value.__notes__)


def test_arguments_are_checked():
    with pytest.raises(ValueError, match="output"):
        cudart.compile(AXPY, arch=SM, output="fatbin", load=False)
    with pytest.raises(ValueError, match="arch"):
        cudart.compile(AXPY, arch="ampere", load=False)
    with pytest.raises(ValueError, match="arch="):
        cudart.compile(AXPY, options=["-arch=sm_80"], arch=SM, load=False)
    with pytest.raises(TypeError):
        cudart.compile(AXPY, name_expressions="axpy<float>", arch=SM, load=False)


@pytest.mark.parametrize(
    "given, error, words",
    [
        ({"options": [5]}, TypeError, "options[0] must be str, not int"),
        ({"options": [None]}, TypeError, "options[0] must be str, not NoneType"),
        ({"options": ("-G", b"-lineinfo")}, TypeError, "options[1] must be str, not bytes"),
        ({"name_expressions": [5]}, TypeError, "name_expressions[0] must be str, not int"),
        ({"headers": {"a.h": 5}}, TypeError, "headers['a.h'] must be str or bytes, not int"),
        ({"headers": {5: "x"}}, TypeError, "a header name must be str, not int"),
        ({"headers": ["a.h"]}, TypeError, "headers must be a mapping"),
        ({"name": 5}, TypeError, "name must be str, not int"),
        ({"options": ["-DN=1\0-G"]}, ValueError, "options[0] contains a NUL byte"),
        ({"name_expressions": ["axpy<float>\0"]}, ValueError, "name_expressions[0] contains"),
        ({"headers": {"a.h\0b": ""}}, ValueError, "a header name contains a NUL byte"),
        ({"headers": {"a.h": b"#define A\0 1"}}, ValueError, "headers['a.h'] contains a NUL"),
        ({"name": "p.cu\0x"}, ValueError, "name contains a NUL byte"),
        ({"source": AXPY + "\0 garbage"}, ValueError, "source contains a NUL byte"),
    ],
)
def test_argument_types_and_nul_bytes_are_refused_before_nvrtc(cache_dir, given, error, words):
    # C takes each as a NUL-terminated string: a NUL would cut it short silently, and
    # an int header text became that many NUL bytes.
    arguments = {"source": AXPY, "arch": SM, "load": False, **given}
    with pytest.raises(error) as caught:
        cudart.compile(**arguments)
    assert words in str(caught.value)
    assert not _entries(cache_dir)


def test_without_a_gpu_the_arch_must_be_given(cache_dir):
    with pytest.raises(cudart.CudartError, match="arch="):
        cudart.compile(AXPY, load=False)


# ---------------------------------------------------------------- the cache


def _entries(folder):
    return sorted(folder.rglob("*.bin"))


def test_cache_hit_miss_and_key(cache_dir, monkeypatch):
    calls = []
    real = nv._compile

    def counting(*args):
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(nv, "_compile", counting)
    first = cudart.compile(AXPY, name_expressions=["axpy<float>"], arch=SM, load=False)
    assert len(calls) == 1 and len(_entries(cache_dir)) == 1
    again = cudart.compile(AXPY, name_expressions=["axpy<float>"], arch=SM, load=False)
    assert again == first and len(calls) == 1  # a hit
    # Each input that decides the image is part of the key: each is a miss.
    cudart.compile(AXPY, name_expressions=["axpy<double>"], arch=SM, load=False)
    cudart.compile(AXPY, name_expressions=["axpy<float>"], arch="sm_80", load=False)
    cudart.compile(AXPY, name_expressions=["axpy<float>"], options=["-G"], arch=SM, load=False)
    cudart.compile(AXPY + "\n", name_expressions=["axpy<float>"], arch=SM, load=False)
    cudart.compile(AXPY, name_expressions=["axpy<float>"], headers={"a.h": ""}, arch=SM, load=False)
    cudart.compile(AXPY, name_expressions=["axpy<float>"], arch=SM, output="ptx", load=False)
    assert len(calls) == 7 and len(_entries(cache_dir)) == 7
    # Off by the parameter and by the variable.
    cudart.compile(AXPY, name_expressions=["axpy<float>"], arch=SM, load=False, cache=False)
    monkeypatch.setenv(nv.CACHE_ENV, "off")
    assert nv.cache_folder() is None
    cudart.compile(AXPY, name_expressions=["axpy<float>"], arch=SM, load=False)
    assert len(calls) == 9 and len(_entries(cache_dir)) == 7


def test_the_very_same_call_again_is_one_look_up(cache_dir, monkeypatch):
    """A compile repeated with the arguments of one that succeeded returns its result
    before any checking; an iterator of names is read once, for both the key and the
    compile; arguments that cannot be a key take the checked path, which refuses them."""
    nv.clear_cache()
    checked = []
    real = nv._compile_checked
    monkeypatch.setattr(nv, "_compile_checked", lambda *a: checked.append(a) or real(*a))
    kw = {"name_expressions": ["axpy<float>"], "arch": SM, "load": False}
    first = cudart.compile(AXPY, **kw)
    assert cudart.compile(AXPY, **kw) is first and len(checked) == 1
    names = iter(["axpy<float>"])
    assert cudart.compile(AXPY, name_expressions=names, arch=SM, load=False) is first
    assert len(checked) == 1 and next(names, None) is None  # read once, the key matched
    for _ in range(2):  # no key (a bytearray is unhashable): checked, and refused
        with pytest.raises(TypeError, match="must be str or bytes"):
            cudart.compile(AXPY, headers={"a.h": bytearray(b"")}, arch=SM, load=False)
    assert len(checked) == 3
    # load=None (the default) on LTO-IR loads nothing: no device in the key, none asked.
    lto = cudart.compile(AXPY, name_expressions=["axpy<float>"], arch=SM, output="ltoir")
    assert cudart.compile(AXPY, name_expressions=["axpy<float>"], arch=SM, output="ltoir") is lto
    assert len(checked) == 4
    monkeypatch.setenv(nv.CACHE_ENV, "off")
    cudart.compile(AXPY, **kw)
    assert len(checked) == 5  # the cache switched off: nothing served from memory
    monkeypatch.setenv(nv.CACHE_ENV, str(cache_dir))
    nv.clear_cache()
    cudart.compile(AXPY, **kw)
    assert len(checked) == 6


@pytest.mark.parametrize(
    "given, error",
    [
        ({"arch": 90.0}, ValueError),
        ({"arch": numpy.int64(90)}, ValueError),
        ({"arch": decimal.Decimal(90)}, ValueError),
        ({"arch": (9.0, 0)}, ValueError),
        ({"arch": (9, 0.0)}, ValueError),
        ({"arch": True}, ValueError),
        ({"source": memoryview(AXPY.encode())}, TypeError),
        ({"options": (_Str("-G"),)}, None),
        ({"headers": {"a.h": memoryview(b"")}}, TypeError),
    ],
)
def test_the_memory_layer_answers_only_what_the_checks_take(cache_dir, given, error):
    """Issue 33, item 28: the in-memory layer's key matches by equality, and 90.0,
    numpy.int64(90), Decimal(90) and (9.0, 0) equal 90 or (9, 0): after a compile with
    the int, each returned its image, though a fresh process refuses it. Each is checked
    as in a fresh process, whatever was compiled before."""
    nv.clear_cache()
    first = {"source": AXPY.encode(), "arch": 90, "load": False, "options": ("-G",)}
    first["headers"] = {"a.h": b""}
    compiled = cudart.compile(first.pop("source"), **first)
    arguments = {"source": AXPY.encode(), **first, **given}
    if error is None:  # a str subclass is a str to the checks: compiled, not refused
        assert cudart.compile(arguments.pop("source"), **arguments) == compiled
        return
    with pytest.raises(error):
        cudart.compile(arguments.pop("source"), **arguments)
    nv.clear_cache()
    with pytest.raises(error):  # as in a fresh process: nothing remembered
        cudart.compile(AXPY.encode(), **{**first, **given})


def test_a_repeated_compile_is_served_from_memory(cache_dir, monkeypatch):
    """The in-memory layer: a second compile with the same inputs reads neither NVRTC
    nor the disk; each input that decides the image, the cache folder and the cache
    switches still separate entries, as the disk cache's key does."""
    nv.clear_cache()
    compiles, reads = [], []
    real_compile, real_read = nv._compile, nv._cache_read
    monkeypatch.setattr(nv, "_compile", lambda *a: compiles.append(a) or real_compile(*a))
    monkeypatch.setattr(nv, "_cache_read", lambda *a: reads.append(a) or real_read(*a))

    def compile_(source=AXPY, **kw):
        kw = {"name_expressions": ["axpy<float>"], "arch": SM, "load": False, **kw}
        return cudart.compile(source, **kw)

    first = compile_()
    assert (len(compiles), len(reads)) == (1, 1)
    assert compile_() is first and compile_(name_expressions=("axpy<float>",)) is first
    assert compile_(AXPY.encode(), arch=90) is first  # the same inputs, spelt otherwise
    assert (len(compiles), len(reads)) == (1, 1)
    for other in (
        {"name_expressions": ["axpy<double>"]},
        {"arch": "sm_80"},
        {"options": ["-G"]},
        {"headers": {"a.h": ""}},
        {"output": "ptx"},
        {"name": "other.cu"},
    ):
        count = len(compiles)
        compile_(**other)
        assert len(compiles) == count + 1, other
    compile_(AXPY + "\n")
    assert len(compiles) == 8
    # Another folder is another cache, compiled into anew.
    monkeypatch.setenv(nv.CACHE_ENV, str(cache_dir / "elsewhere"))
    compile_()
    assert len(compiles) == 9
    # Switched off: NVRTC every time, nothing remembered.
    compile_(cache=False)
    compile_(cache=False)
    monkeypatch.setenv(nv.CACHE_ENV, "off")
    compile_()
    assert len(compiles) == 12
    # Forgotten by clear_cache, then read from the disk again.
    monkeypatch.setenv(nv.CACHE_ENV, str(cache_dir))
    nv.clear_cache()
    count = len(reads)
    assert compile_() == first and len(reads) == count + 1 and len(compiles) == 12


def test_the_memory_layer_forgets_its_oldest_entries(cache_dir, monkeypatch):
    nv.clear_cache()
    monkeypatch.setattr(nv, "_REMEMBERED", 2)
    images = [
        cudart.compile(AXPY + f"// {i}\n", arch=SM, output="ptx", load=False) for i in range(3)
    ]
    assert len(nv._images) == 2
    assert [entry[0] for entry in nv._images.values()] == images[1:]


def test_corrupt_and_half_written_entries_are_ignored(cache_dir):
    image = cudart.compile(AXPY, name_expressions=["axpy<float>"], arch=SM, load=False)
    (entry,) = _entries(cache_dir)
    data = entry.read_bytes()
    key = entry.stem
    assert nv._cache_read(str(cache_dir), key)[:2] == (
        image,
        {"axpy<float>": "_Z4axpyIfEvT_PKS0_PS0_i"},
    )
    for damaged in (data[: len(data) // 2], data[:-1] + bytes([data[-1] ^ 1]), b"", b"junk"):
        entry.write_bytes(damaged)
        assert nv._cache_read(str(cache_dir), key) is None
    # A damaged entry is compiled again and rewritten whole (by a process that has not
    # compiled it: this one remembers the image).
    nv.clear_cache()
    assert cudart.compile(AXPY, name_expressions=["axpy<float>"], arch=SM, load=False) == image
    assert entry.read_bytes() == data
    # Writes go through a temporary file in the same folder, renamed into place.
    assert not [p for p in cache_dir.rglob("*") if p.name.startswith(".tmp-")]


# Reads a (bad) entry under a memory limit and a timeout, so the old code's whole read
# is a MemoryError and its blocking open a TimeoutExpired, not harm to the machine; then
# compiles, which must replace the bad entry with a good one.
BAD_ENTRY_PROBE = """
import os, resource, stat, sys
import cudart
from cudart import nvrtc as nv
folder, key = sys.argv[1], sys.argv[2]
soft, hard = resource.getrlimit(resource.RLIMIT_AS)
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, hard))
print(nv._cache_read(folder, key))
resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
image = cudart.compile(%r, name_expressions=["axpy<float>"], arch="sm_90", load=False)
path = nv._entry_path(folder, key)
print(stat.S_ISREG(os.lstat(path).st_mode), nv._cache_read(folder, key)[0] == image)
"""


def _fifo(entry, good):
    os.mkfifo(entry)


def _link_to_dev_zero(entry, good):
    os.symlink("/dev/zero", entry)


def _link_to_a_good_entry(entry, good):
    os.symlink(good, entry)  # a link is never followed, even to a valid entry


def _sparse_4_gib(entry, good):
    with open(entry, "wb") as f:
        f.write(good.read_bytes())
        f.truncate(4 << 30)


@pytest.mark.parametrize("make", [_fifo, _link_to_dev_zero, _link_to_a_good_entry, _sparse_4_gib])
def test_an_entry_that_is_not_a_small_regular_file_is_a_miss_and_replaced(cache_dir, make):
    cudart.compile(AXPY, name_expressions=["axpy<float>"], arch=SM, load=False)
    (entry,) = _entries(cache_dir)
    good = cache_dir / "good.bin"
    entry.rename(good)
    make(str(entry), good)
    env = dict(os.environ, **{nv.CACHE_ENV: str(cache_dir)})
    out = subprocess.run(
        [sys.executable, "-c", BAD_ENTRY_PROBE % AXPY, str(cache_dir), entry.stem],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=REPO,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["None", "True", "True"]
    assert entry.read_bytes() == good.read_bytes()


def test_an_entry_over_the_bound_is_not_read(cache_dir, monkeypatch):
    image = cudart.compile(AXPY, name_expressions=["axpy<float>"], arch=SM, load=False)
    (entry,) = _entries(cache_dir)
    assert nv._cache_read(str(cache_dir), entry.stem)[0] == image
    monkeypatch.setattr(nv, "_MAX_ENTRY", entry.stat().st_size - 1)
    assert nv._cache_read(str(cache_dir), entry.stem) is None


def test_default_cache_folder(monkeypatch, tmp_path):
    monkeypatch.delenv(nv.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert nv.cache_folder() == os.path.join(str(tmp_path), "cudart", "kernels")


# ---------------------------------------------------------------- loading


def test_import_cudart_does_not_load_nvrtc_and_missing_nvrtc_is_clear(tmp_path):
    """`import cudart` loads no libnvrtc; where none can be found, compile says how to
    install it (a child process: this one has loaded it)."""
    code = (
        "import sys, cudart, cudart._loader as L\n"
        "assert L.load_nvrtc.loaded is None\n"
        "try:\n"
        "    cudart.compile('__global__ void k() {}', arch='sm_90', load=False)\n"
        "except cudart.NvrtcNotFoundError as e:\n"
        "    print(e)\n"
    )
    env = dict(os.environ, CUDART_NVRTC_LIBRARY=str(tmp_path / "libnvrtc.so.12"))
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert "pip install 'cudart[cu12]'" in out.stdout
    assert "CUDART_NVRTC_LIBRARY" in out.stdout


def test_loader_finds_the_installed_wheel_and_picks_its_module():
    library = cudart._loader.load_nvrtc()
    assert library.found_by == "the nvidia nvrtc wheel"
    raw, checked = nv._bindings()
    assert raw.CUDA_VERSION == library.version
    assert checked.__name__ == f"cudart.nvrtc_checked_{library.version}"
    major, minor = ctypes.c_int(), ctypes.c_int()
    assert raw.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)) == 0
    assert major.value * 1000 + minor.value * 10 == library.version


# ---------------------------------------------------------------- generic parts


def test_status_enum_is_read_from_the_model(report):
    """The status enum is the one the functions return (nvrtcResult here, cudaError_t
    for the runtime): what the checked layer raises on, and how its classes are named."""
    from generator.status import status_enum

    status = status_enum(report.model)
    assert status is not None
    assert (status.result, status.enum, status.success) == (
        "nvrtcResult",
        "nvrtcResult",
        "NVRTC_SUCCESS",
    )
    assert status.base_class == "NvrtcError"
    assert status.class_name("NVRTC_ERROR_OUT_OF_MEMORY") == "NvrtcErrorOutOfMemory"
    checked = importlib.import_module(report.module_name.replace("nvrtc_", "nvrtc_checked_"))
    assert checked.NvrtcErrorInvalidOption.__mro__[1] is cudart.NvrtcError


def test_status_enum_of_the_runtime_naming():
    from generator.model import (
        ApiModel,
        Builtin,
        Enum,
        Enumerator,
        EnumRef,
        Function,
        Typedef,
        TypedefRef,
    )
    from generator.status import status_enum

    model = ApiModel(
        cuda_version=1,
        enums=[
            Enum(
                "cudaError",
                Builtin("int"),
                (Enumerator("cudaSuccess", 0), Enumerator("cudaErrorMemoryAllocation", 2)),
            ),
            Enum("cudaOther", Builtin("int"), (Enumerator("cudaOtherA", 0),)),
        ],
        typedefs=[Typedef("cudaError_t", EnumRef("cudaError"))],
        functions=[
            Function("cudaA", TypedefRef("cudaError_t"), ()),
            Function("cudaB", TypedefRef("cudaError_t"), ()),
            Function("cudaC", EnumRef("cudaOther"), ()),
        ],
    )
    status = status_enum(model)
    assert status is not None
    assert (status.result, status.enum, status.success) == (
        "cudaError_t",
        "cudaError",
        "cudaSuccess",
    )
    assert status.base_class == "CudaError"
    assert status.class_name("cudaErrorMemoryAllocation") == "CudaErrorMemoryAllocation"
    assert status_enum(ApiModel(cuda_version=1)) is None


_FAMILY = """
[majors.12.runtime]
package = "rt"
include = "inc"
headers = ["a.h"]
library = "lib/libcudart.so.12"
[majors.12.nvrtc]
package = "nv"
include = "inc2"
headers = ["nvrtc.h"]
surface = "nvrtc"
{library}
"""


def test_each_surface_has_exactly_one_library():
    from generator.manifest import Manifest, ManifestError

    manifest = Manifest.loads(_FAMILY.format(library='library = "lib/libnvrtc.so.12"'))
    family = manifest.majors["12"]
    assert family.surfaces == ("runtime", "nvrtc")
    assert family.runtime.role == "runtime"
    assert family.library_wheel("nvrtc").library == "lib/libnvrtc.so.12"
    assert Manifest.loads(manifest.dumps()).majors == manifest.majors
    with pytest.raises(ManifestError, match="exactly one wheel of the nvrtc surface"):
        Manifest.loads(_FAMILY.format(library=""))
    with pytest.raises(ManifestError, match="surface is a lowercase word"):
        Manifest.loads(_FAMILY.format(library='library = "x"').replace('"nvrtc"', '"NV RTC"'))


NAMESPACED_GLOBAL = r"""
namespace ns { __device__ int table[4]; }
__device__ float plain;
"""


class _RecordingLoader:
    """Stands for a GPU's loader: records the names Module asks it for."""

    route = "library"

    def __init__(self):
        self.asked = []

    def variable(self, name):
        self.asked.append(name)
        return None, 0x1000, 16


def test_get_global_takes_name_expressions():
    """`&ns::table` (as NVRTC's name expressions spell a global), `ns::table` for it, and
    `&plain` reach the loader as the names in the image."""
    from cudart.kernels import Module

    raw, checked = nv._bindings()
    expressions = ("&ns::table",)
    _image, lowered, _params = nv._compile(
        raw, checked, NAMESPACED_GLOBAL.encode(), "g.cu", {}, ("-arch=sm_90",), expressions, "cubin"
    )
    assert lowered == {"&ns::table": "_ZN2ns5tableE"}
    loader = _RecordingLoader()
    module = Module(None, "cubin", b"", loader)
    module.lowered_names.update(lowered)
    for name in ("&ns::table", "ns::table", "&plain", "plain", "_ZN2ns5tableE"):
        assert module.get_global(name).name == name
    assert loader.asked == ["_ZN2ns5tableE", "_ZN2ns5tableE", "plain", "plain", "_ZN2ns5tableE"]
