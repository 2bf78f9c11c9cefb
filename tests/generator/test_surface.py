"""The whole runtime surface, per pinned version: every name libcudart exports is
reachable from the bindings (less a reasoned, proven set of exclusions), the interop
and profiler headers are bound, and the inline record builders build what gcc's do.

No GPU is needed: the exports are read with `nm -D`, the profiler calls return an
error code without a device, and gcc compiles the real inline helpers.
"""

from __future__ import annotations

import importlib
import inspect
import re
import shutil
import subprocess
import tempfile
from ctypes import c_int32, c_uint, c_uint32
from pathlib import Path

import pytest
from suite import probe_each_version

from cudart._handles import Handle
from generator.parse import SHIMS

# Exported names that need not be bound, each with why; exported_names() sorts every
# export into "bound" or one of these, and the tests prove each reason per name.
REGISTRATION = "a private __cuda* entry point nvcc's generated code registers kernels with"
PER_THREAD_UNMAPPED = "a per-thread-stream variant no public name maps to (a separate issue)"
VERSION_NODE = "the library's version node, an absolute symbol, not a function"
UNDECLARED = "declared in no header of the version's pinned wheels"
SUPERSEDED = (
    "the old symbol of a public name the header maps to a newer one (cudaGetDeviceProperties "
    "-> _v2), kept for binaries built against older headers; the name is bound to the new one"
)


def exported(library: Path) -> dict[str, str]:
    """Defined dynamic symbols of the library: name -> nm's type letter."""
    proc = subprocess.run(
        ["nm", "-D", "--defined-only", str(library)], capture_output=True, text=True, check=True
    )
    out = {}
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2:
            out[parts[-1].split("@")[0]] = parts[-2]
    return out


def header_words(include_dirs) -> set[str]:
    """Every identifier in every header of the pinned wheels' include folders."""
    words: set[str] = set()
    for folder in include_dirs:
        for path in Path(folder).rglob("*"):
            if path.is_file() and path.suffix in (".h", ".hpp"):
                words.update(re.findall(r"[A-Za-z_]\w*", path.read_text(errors="replace")))
    return words


def classify_exports(headers) -> tuple[dict[str, str], set[str]]:
    """(name -> exclusion reason, names bound) for one version's exports."""
    module = importlib.import_module(f"cudart.sys_{headers_number(headers)}")
    bound = set(module.SYMBOLS_LEGACY.values()) | set(module.SYMBOLS_PER_THREAD.values())
    declared = header_words(headers.include_dirs)
    excluded: dict[str, str] = {}
    found = set()
    for name, kind in exported(headers.library).items():
        if name in bound:
            found.add(name)
        elif module.SYMBOLS_LEGACY.get(name, name) != name:
            excluded[name] = SUPERSEDED
        elif name.startswith("__cuda"):
            excluded[name] = REGISTRATION
        elif name.endswith(("_ptsz", "_ptds")):
            excluded[name] = PER_THREAD_UNMAPPED
        elif kind == "A" and name == headers.library.name:
            excluded[name] = VERSION_NODE
        elif name not in declared:
            excluded[name] = UNDECLARED
        else:
            excluded[name] = "MISSING: declared in a header, exported, and not bound"
    return excluded, found


def headers_number(headers) -> int:
    major, minor = (int(x) for x in headers.key.split("."))
    return major * 1000 + minor * 10


needs_nm = pytest.mark.skipif(shutil.which("nm") is None, reason="binutils' nm is not installed")


@needs_nm
def test_every_export_is_bound_or_excluded_with_a_reason(header_sets):
    missing = {}
    report = []
    for key, headers in header_sets.items():
        excluded, found = classify_exports(headers)
        bad = sorted(n for n, why in excluded.items() if why.startswith("MISSING"))
        if bad:
            missing[key] = bad
        by_reason: dict[str, int] = {}
        for why in excluded.values():
            by_reason[why] = by_reason.get(why, 0) + 1
        report.append(f"{key}: {len(found)} bound, excluded {by_reason}")
        # The exclusions hold what they claim: every per-thread one is a variant no public
        # name maps to, and the version node is the library's own soname.
        assert sum(why == VERSION_NODE for why in excluded.values()) == 1, key
        assert found, key
    assert not missing, "\n".join(report) + f"\nexported, declared and not bound: {missing}"


@needs_nm
def test_the_undeclared_exports_are_the_known_ones(header_sets):
    """Names exported but declared nowhere are few and named here, so that a header
    which starts declaring one makes test_every_export... demand its binding; and the
    interop and profiler names, declared since before 12.0, are bound everywhere."""
    undeclared = {}
    for key, headers in header_sets.items():
        excluded, found = classify_exports(headers)
        undeclared[key] = sorted(n for n, why in excluded.items() if why == UNDECLARED)
        for name in (
            "cudaProfilerStart",
            "cudaProfilerStop",
            "cudaGraphicsGLRegisterImage",
            "cudaGraphicsEGLRegisterImage",
            "cudaEGLStreamConsumerConnect",
            "cudaGraphicsVDPAURegisterVideoSurface",
            "cudaVDPAUGetDevice",
        ):
            assert name in found, (key, name)
    subgrid = ["cudaSubgridCreate", "cudaSubgridWorkerGridCreate", "cudaSubgridWorksetCreate"]
    assert undeclared["13.5"] == subgrid
    assert all(names in ([], subgrid) for names in undeclared.values()), undeclared


def test_interop_names_and_types_exist_in_every_version(manifest):
    for key in manifest.keys():
        pin = manifest.get(key)
        raw = importlib.import_module(f"cudart.{pin.module_name}")
        checked = importlib.import_module(f"cudart.checked_{pin.number}")
        for name in (
            "cudaGraphicsGLRegisterBuffer",
            "cudaGLGetDevices",
            "cudaEGLStreamProducerPresentFrame",
            "cudaGraphicsResourceGetMappedEglFrame",
            "cudaEventCreateFromEGLSync",
            "cudaVDPAUSetVDPAUDevice",
            "cudaGraphicsVDPAURegisterOutputSurface",
            "cudaProfilerStart",
        ):
            assert name in raw.SYMBOLS and callable(getattr(checked, name)), (key, name)
        for name in ("cudaEglFrame", "cudaEglPlaneDesc", "cudaEglColorFormat", "cudaGLDeviceList"):
            assert isinstance(getattr(raw, name), type), (key, name)
        assert raw.cudaGLDeviceList.cudaGLDeviceListAll == 1
        # The GL/EGL/VDPAU types, as their specifications define them (generator/shims):
        # opaque pointers are handles, integer types are their ctypes integers.
        for name in ("EGLImageKHR", "EGLStreamKHR", "EGLSyncKHR"):
            handle = getattr(raw, name)
            assert issubclass(handle, Handle) and int(handle(0x40)) == 0x40, (key, name)
        assert (raw.GLuint, raw.GLenum, raw.EGLint) == (c_uint, c_uint, c_int32)
        assert (raw.VdpDevice, raw.VdpVideoSurface, raw.VdpOutputSurface) == (c_uint32,) * 3
        assert raw.CUDA_EGL_MAX_PLANES == 3
        assert len(raw.cudaEglFrame().planeDesc) == 3
        for name in ("make_cudaPitchedPtr", "make_cudaPos", "make_cudaExtent"):
            # Checked ones (issue 11: their integers against size_t), built by the raw.
            assert getattr(checked, name) is not getattr(raw, name), (key, name)
            assert f"_lib.{name}(" in inspect.getsource(getattr(checked, name))
        assert checked.make_double2 is raw.make_double2  # nothing to check: the raw one


PROFILER = r"""
import json, cudart
m = cudart.sys
out = {"raw": [m.cudaProfilerStart(), m.cudaProfilerStop()]}
for name in ("cudaProfilerStart", "cudaProfilerStop"):
    try:
        getattr(cudart, name)()
        out[name] = None
    except cudart.CudaError as exc:
        out[name] = [type(exc).__name__, exc.code]
# An interop registration: its output is the cudaGraphicsResource_t handle, and without
# a GPU (or a GL context) it raises.
try:
    cudart.cudaGraphicsGLRegisterBuffer(1, 0)
    out["gl"] = None
except cudart.CudaError as exc:
    out["gl"] = exc.code
print(json.dumps(out))
"""


@pytest.mark.backend
def test_profiler_calls_return_an_error_without_a_gpu(header_sets):
    """On this machine (no driver, no GPU) both calls fail with the code the raw call
    returns, and the checked layer raises that code's CudaError subclass."""
    for key, out in probe_each_version(PROFILER, header_sets).items():
        start, stop = out["raw"]
        assert start != 0 and stop != 0, key
        assert out["cudaProfilerStart"][1] == start, key
        assert out["cudaProfilerStop"][1] == stop, key
        assert out["cudaProfilerStart"][0].startswith("CudaError"), key
        assert out["gl"], key


# ------------------------------------------------------------ inline record builders


def _sample(annotation: str, i: int) -> object:
    if annotation == "float":
        return i + 0.5
    if annotation == "int | None":  # a pointer field
        return 0x1000 + 0x10 * i
    if annotation == "int":
        return 3 * i + 1  # fits every integer field, signed char included
    raise AssertionError(f"no sample for a parameter typed {annotation}")


def _c_literal(value: object) -> str:
    if isinstance(value, float):
        return repr(value)
    return f"{value}" if int(value) < 0x1000 else f"(void *){value:#x}"  # type: ignore


def builders(module) -> dict:
    """The module's record builders: its own Python functions."""
    return {
        name: fn
        for name, fn in vars(module).items()
        if inspect.isfunction(fn) and fn.__module__ == module.__name__ and name.startswith("make_")
    }


@pytest.mark.backend
def test_builders_build_the_bytes_gccs_inline_helpers_build(header_sets):
    """Each inline helper, called by a C program with sample values, against the
    Python builder with the same values: byte for byte."""
    for key, headers in header_sets.items():
        module = importlib.import_module(f"cudart.sys_{headers_number(headers)}")
        found = builders(module)
        assert {"make_cudaPitchedPtr", "make_cudaPos", "make_cudaExtent"} <= set(found), key
        calls, expected = [], {}
        for name, fn in sorted(found.items()):
            params = inspect.signature(fn).parameters.values()
            values = [_sample(str(p.annotation), i) for i, p in enumerate(params)]
            record = fn(*values)
            expected[name] = bytes(record).hex()
            args = ", ".join(_c_literal(v) for v in values)
            calls.append(
                f"    {{ __typeof__({name}({args})) r = {name}({args}); "
                f'dump("{name}", &r, sizeof r); }}\n'
            )
        # The records built here have no padding (every field is assigned), so all
        # their bytes are defined in C too.
        assert _run_builders(headers, "".join(calls)) == expected, key


def _run_builders(headers, body: str) -> dict[str, str]:
    includes = "".join(f'#include "{h.name}"\n' for h in headers.headers)
    source = (
        f"#include <stdio.h>\n#include <string.h>\n{includes}"
        "static void dump(const char *name, const void *p, size_t n) {\n"
        '    printf("%s\\t", name);\n'
        '    for (size_t i = 0; i < n; i++) printf("%02x", ((const unsigned char *)p)[i]);\n'
        '    printf("\\n");\n}\nint main(void) {\n' + body + "    return 0;\n}\n"
    )
    with tempfile.TemporaryDirectory(prefix="cudart-builders-") as tmp:
        src, exe = Path(tmp) / "b.c", Path(tmp) / "b"
        src.write_text(source)
        cmd = ["gcc", "-std=gnu11", "-w", "-isystem", str(SHIMS)]
        for d in headers.include_dirs:
            cmd += ["-I", str(d)]
        subprocess.run(cmd + ["-o", str(exe), str(src)], check=True, capture_output=True)
        run = subprocess.run([str(exe)], capture_output=True, text=True, check=True)
    return dict(line.split("\t") for line in run.stdout.splitlines())


def test_only_bodies_the_builder_construct_expresses_are_bound():
    """tests/headers/inline_builders.h: two builders (one through a typedef, fields out
    of order), and four inline bodies the construct refuses, each with its reason."""
    from test_constructs import parse_header

    model = parse_header("inline_builders")
    assert [(b.name, b.record, b.assignments) for b in model.builders] == [
        ("make_point", "point", (("p", "p"), ("x", "x"), ("y", "y"))),
        ("make_point_t", "point", (("y", "b"), ("p", "p"), ("x", "a"))),
    ]
    assert model.unbound_inline == [
        ("scaled", "r.x is not set from a parameter"),
        ("partial", "fields left unset: p"),
        ("converted", "x is set from a parameter of another type"),
        ("twice", "the body does not open with a local record"),
    ]
    assert not any(f.name in ("scaled", "twice") for f in model.functions)
