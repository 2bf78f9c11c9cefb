"""nvJitLink's bindings: every pinned version held against gcc and its real libnvJitLink,
as tests/runtime/test_nvrtc.py holds NVRTC's (cudart.link is tests/runtime/test_linking.py).

nvJitLink.h declares each function twice: `extern __nvJitLinkCreate_12_5(...)`, the
symbol the library exports for that release, and `static inline nvJitLinkCreate(...)`,
which only forwards to it. The bindings name the function as C code does and call the
versioned symbol; gcc says which symbol each wrapper calls (abi_support.inline_callees).
"""

from __future__ import annotations

import ctypes
import importlib
import json
import os
import subprocess
import sys

import abi_support
import pytest
import snapshot_files
from suite import REPO, run_python, version_keys

import cudart
from generator.fetch import fetch_version

VERSIONS = version_keys()


def _quiet(_message: str) -> None:
    pass


@pytest.fixture(scope="module")
def nvjitlink_sets(manifest):
    return {key: fetch_version(manifest, key, _quiet, "nvjitlink") for key in VERSIONS}


@pytest.fixture(params=VERSIONS)
def report(request, manifest, nvjitlink_sets):
    key = request.param
    return abi_support.report_for(nvjitlink_sets[key], "nvjitlink_", manifest.get(key).number)


def test_nvjitlink_module_matches_gcc_and_its_library(report):
    """Every fact of nvJitLink.h (records, enums, enumerators, typedefs, macros) as gcc
    computes it, every public name's symbol as C calls it (through the inline wrapper),
    and each exported by that version's own libnvJitLink."""
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
    assert module.LIBRARY == "nvjitlink"
    # Not vacuous: the calls cudart.link makes are among those checked, each bound to
    # the release's versioned symbol, which gcc found the wrapper calling.
    suffix = "_{}_{}".format(*report.key.split("."))
    for name in ("nvJitLinkCreate", "nvJitLinkAddData", "nvJitLinkComplete"):
        assert module.SYMBOLS[name] == f"__{name}{suffix}"
        assert report.c.facts[abi_support.fact_key("symbol", name)] == f"__{name}{suffix}"
    # The versioned names are no API of their own: C code never spells them.
    assert not any(name.startswith("__") for name in module._FUNCTIONS)


def test_the_judge_reads_what_an_inline_wrapper_calls(tmp_path):
    """inline_callees reads the callee from gcc's object, not from the name: a wrapper
    that calls another function than its twin is reported as calling that one."""
    (tmp_path / "w.h").write_text(
        "int __f_1_0(int a);\nint __g_1_0(int a);\n"
        "static inline int f(int a) { return __g_1_0(a); }\n"
        "static inline int h(int a) { return __f_1_0(a) + __g_1_0(a); }\n"
    )
    plan = {"inline_aliases": ["f", "h"]}
    facts = abi_support.inline_callees(plan, [tmp_path], headers=["w.h"])
    assert facts == {"symbol|f": "__g_1_0", "symbol|h": "__f_1_0 __g_1_0"}


def test_each_pinned_libnvjitlink_reports_its_version(manifest, nvjitlink_sets):
    """The loader's version of each pinned library is its version key: nvJitLinkVersion
    where the library has it (12.3+), else the newest versioned symbol. One child
    process: the libraries are large."""
    code = (
        "import ctypes, sys\n"
        "from cudart._loader import facts, format_version, library_version\n"
        "for path in sys.argv[1:]:\n"
        "    lib = ctypes.CDLL(path)\n"
        "    version = format_version(library_version(facts('nvjitlink'), lib, path))\n"
        "    print(hasattr(lib, 'nvJitLinkVersion'), version)\n"
    )
    paths = [str(nvjitlink_sets[k].library) for k in VERSIONS]
    out = subprocess.run(
        [sys.executable, "-c", code, *paths],
        capture_output=True,
        text=True,
        check=True,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
    )
    lines = [line.split() for line in out.stdout.splitlines()]
    assert [v for _, v in lines] == VERSIONS
    # Both ways are exercised: 12.0 to 12.2 lack nvJitLinkVersion.
    assert {has for has, _ in lines} == {"True", "False"}


@pytest.mark.parametrize("key", VERSIONS)
def test_nvjitlink_output_classification_snapshot(nvjitlink_sets, key):
    """Every nvJitLink function's checked form, reviewed once and then held, as NVRTC's
    are. After a deliberate change: CUDART_UPDATE_EXPECTATIONS=1, review the diff."""
    from models import model_for

    from generator.generate import SNAPSHOTS, snapshot_name
    from generator.resolve import describe, resolve

    text = "".join(describe(p) + "\n" for p in resolve(model_for(nvjitlink_sets[key])))
    # The public names, their string list and sized image: what the tables decided.
    assert "nvJitLinkCreate(numOptions:scalar, " in text
    assert "options[numOptions]:strings) -> (handle:handle)" in text
    assert "__nvJitLink" not in text
    snapshot_files.hold(SNAPSHOTS / snapshot_name(key, "nvjitlink"), text)


def test_the_image_given_to_add_data_is_sized_by_size():
    """nvJitLinkAddData reads `size` bytes at `data` (generator/sizes.py): a buffer
    smaller than that is refused before C reads past it."""
    raw, checked = cudart.linking._bindings()
    handle = checked.nvJitLinkCreate(1, ["-arch=sm_90"])
    try:
        with pytest.raises(ValueError, match="size"):
            checked.nvJitLinkAddData(handle, raw.NVJITLINK_INPUT_PTX, b"x" * 8, 64, b"p")
    finally:
        raw.nvJitLinkDestroy(ctypes.byref(handle))


# The log and output getters, each sized by its "...Size" partner (generator/sizes.py,
# Measure.QUERIED), on the real libnvJitLink in a fresh process: C writing past a buffer
# (issue 33, item 16) fails the test instead of the run.
BUFFER_GETTERS_PROBE = r"""
import ctypes
import json

import cudart
from cudart import linking

raw, checked = linking._bindings()
ltoir = cudart.compile(
    'extern "C" __global__ void k(float *p) { p[0] = 1; }', arch=90, output="ltoir", cache=False
)


def linked(options, data=ltoir):
    handle = checked.nvJitLinkCreate(len(options), options)
    kind = raw.NVJITLINK_INPUT_LTOIR if data is ltoir else raw.NVJITLINK_INPUT_PTX
    try:
        checked.nvJitLinkAddData(handle, kind, data, len(data), b"k")
        checked.nvJitLinkComplete(handle)
    except cudart.NvjitlinkError:
        pass  # the error log is what is read
    return handle


GETTERS = {
    "nvJitLinkGetLinkedCubin": (["-arch=sm_90", "-lto"], ltoir),
    "nvJitLinkGetLinkedPtx": (["-arch=sm_90", "-lto", "-ptx"], ltoir),
    "nvJitLinkGetInfoLog": (["-arch=sm_90", "-lto", "-verbose"], ltoir),
    "nvJitLinkGetErrorLog": (["-arch=sm_90"], b"not ptx at all"),
}
found = {}
for name, (options, data) in GETTERS.items():
    handle = linked(options, data)
    try:
        getter = getattr(checked, name)
        size = getattr(checked, name + "Size")(handle)
        row = {"size": size}
        smalls = (("bytearray", bytearray(1)), ("ctypes", ctypes.create_string_buffer(1)))
        for label, small in smalls:
            try:
                getter(handle, small)
                row[label] = "reached C"
            except ValueError as exc:
                row[label] = str(exc)
        whole = getter(handle)
        buffer = bytearray(size)
        row["given"] = repr(getter(handle, buffer))
        row["returned"] = [type(whole).__name__, len(whole), bytes(buffer) == whole]
        found[name] = row
    finally:
        raw.nvJitLinkDestroy(ctypes.byref(handle))
print(json.dumps(found))
"""


def test_buffer_getters_hold_the_buffer_to_their_size_partner():
    """nvJitLinkGetLinkedCubin, nvJitLinkGetLinkedPtx, nvJitLinkGetInfoLog and
    nvJitLinkGetErrorLog: a buffer smaller than the partner's size is refused before C
    writes it; omitted, what C wrote comes back."""
    proc = run_python(BUFFER_GETTERS_PROBE, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = json.loads(proc.stdout)
    assert set(found) == {
        "nvJitLinkGetLinkedCubin",
        "nvJitLinkGetLinkedPtx",
        "nvJitLinkGetInfoLog",
        "nvJitLinkGetErrorLog",
    }
    for name, row in found.items():
        assert row["size"] > 1, (name, row)
        for label in ("bytearray", "ctypes"):
            assert "the call would run past its end" in row[label], (name, row)
            assert f"= {row['size']} bytes" in row[label], (name, row)
        assert row["returned"] == ["bytes", row["size"], True], (name, row)
        assert row["given"] == "None"


def test_checked_module_raises_nvjitlink_errors():
    """A failed call raises the NvjitlinkError subclass of its code (nvJitLink has no
    message function: the name says it); one class per code across modules."""
    raw, checked = cudart.linking._bindings()
    with pytest.raises(cudart.NvjitlinkError) as info:
        checked.nvJitLinkCreate(1, ["-no-such-option"])
    exc = info.value
    assert exc.code == raw.NVJITLINK_ERROR_UNRECOGNIZED_OPTION
    assert type(exc).__name__ == "NvjitlinkErrorUnrecognizedOption"
    assert type(exc) is cudart.NvjitlinkErrorUnrecognizedOption
    assert not issubclass(type(exc), (cudart.CudaError, cudart.NvrtcError))


def test_checked_create_takes_a_list_of_options():
    """`const char **options` before 13.5 is a list of strings C reads (READ_STRINGS):
    the list's length is held against numOptions."""
    raw, checked = cudart.linking._bindings()
    with pytest.raises(ValueError, match="holds 1 string.*C reads 2"):
        checked.nvJitLinkCreate(2, ["-arch=sm_90"])
    handle = checked.nvJitLinkCreate(2, ["-arch=sm_90", b"-O3"])
    assert handle
    raw.nvJitLinkDestroy(ctypes.byref(handle))
    assert not handle  # nvJitLinkDestroy sets the caller's handle to NULL


def test_a_function_libnvjitlink_lacks_names_libnvjitlink():
    from cudart._binding import bind_symbol

    version = cudart.linking.nvjitlink_version()
    fn = bind_symbol(
        "nvJitLinkNope", "nvJitLinkNope", ctypes.c_int, [], "m", version, library="nvjitlink"
    )
    with pytest.raises(cudart.FunctionNotFoundError) as info:
        fn()
    message = str(info.value)
    assert "loaded libnvJitLink" in message and "newer nvJitLink" in message, message


def test_import_cudart_loads_no_nvjitlink():
    """nvJitLink is loaded by the first link, never by `import cudart` or a compile."""
    out = run_python(
        "import cudart, cudart.linking\n"
        "from cudart import _loader\n"
        "cudart.compile('__global__ void k() {}', arch='sm_90', load=False, cache=False)\n"
        "maps = open('/proc/self/maps').read()\n"
        "print(_loader.load_nvjitlink.loaded is None, 'libnvJitLink' in maps)\n"
    )
    assert out.stdout.split() == ["True", "False"]


def test_missing_nvjitlink_says_how_to_install_it(tmp_path):
    missing = tmp_path / "libnvJitLink.so.12"
    code = (
        "import cudart\n"
        "try:\n"
        "    cudart.link([b'.version 8.0\\n.target sm_90\\n'], arch='sm_90', load=False)\n"
        "except cudart.NvjitlinkNotFoundError as e:\n"
        "    print(type(e).__mro__[1].__name__, e)\n"
    )
    out = run_python(code, env={"CUDART_NVJITLINK_LIBRARY": str(missing)})
    assert out.stdout.startswith("LibraryNotFoundError libnvJitLink not found")
    for needed in (
        "pip install",
        "nvidia-nvjitlink-cu12",
        "CUDART_NVJITLINK_LIBRARY",
        str(missing),
    ):
        assert needed in out.stdout, out.stdout


def test_read_strings_entries_as_reviewed_and_each_needed(manifest, nvjitlink_sets, monkeypatch):
    """READ_STRINGS (generator/resolve.py) decides a string array whose C type does not
    say it is read: each entry has a reason, and without it some version's parameter
    would be a bare pointer (the entry is no dead weight)."""
    from models import model_for

    from generator import resolve

    assert set(resolve.READ_STRINGS) == {("nvJitLinkCreate", "options")}
    assert all(len(why) > 20 for why in resolve.READ_STRINGS.values())
    models = [model_for(nvjitlink_sets[key]) for key in VERSIONS]
    with_table = [resolve.describe(p) for m in models for p in resolve.resolve(m)]
    monkeypatch.setattr(resolve, "READ_STRINGS", {})
    without = [resolve.describe(p) for m in models for p in resolve.resolve(m)]
    changed = {a for a, b in zip(with_table, without, strict=True) if a != b}
    assert changed and all(line.startswith("nvJitLinkCreate(") for line in changed)
