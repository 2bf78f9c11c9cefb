"""The C compiler is the judge of ABI.

For every version of the manifest, the generator's parser lists what the headers
declare; a C program compiled by the system gcc against the same headers prints
sizeof/_Alignof/offsetof, enumerator and macro values and the preprocessor's
expansion of every function name; the generated module must give the same numbers
through ctypes, and the version's real libcudart must export every symbol the module
calls. The same for the driver API's cuda.h (cudart.driver_<ver>: its _v2/_v3 renames,
its _ptds/_ptsz names, CUtensorMap's _Alignas(64)/(128)), whose libcuda comes with the
NVIDIA driver: tests/gpu/test_driver_exports.py checks its exports on the GPU machine.
The machinery is in abi_support.py; `python tests/support/abi_support.py [--surface
driver] [--pythons]` prints a per-version summary (abi_support.count_table).

Each test collects every mismatch of its category before failing, so one run shows
all of them: `fact key: gcc=... python=... model=...`, where `model` is the parser's
own number (a mismatch with model == gcc is a renderer bug, model == python a parser
bug).
"""

from __future__ import annotations

import ctypes
import enum
import importlib
import sys

import abi_support
import pytest
from abi_support import VersionReport, compare
from suite import version_keys

from generator.views import view_source

VERSIONS = version_keys()
SHOWN = 30
# The header families judged here (NVRTC's: tests/runtime/test_nvrtc.py). A driver
# test's id is driver-<version>; a runtime test's the version alone.
SURFACES = ("runtime", "driver")
REPORTS = [
    pytest.param((surface, key), id=key if surface == "runtime" else f"{surface}-{key}")
    for surface in SURFACES
    for key in VERSIONS
]

# Floors for the number of entities checked per version: the real headers declare far
# more; these only make sure no test can pass by checking nothing.
FLOORS = {
    "runtime": {
        "functions": 200,
        "per_thread": 50,
        "records": 100,
        "embedded": 100,
        "fields": 400,
        "enums": 40,
        "enumerators": 400,
        "macros": 50,
        "typedefs": 20,
    },
    "driver": {
        "functions": 300,
        "aliases": 50,
        "per_thread": 50,
        "records": 60,
        "embedded": 60,
        "fields": 400,
        "enums": 60,
        "enumerators": 500,
        "macros": 40,
        "typedefs": 150,
    },
}

# Per surface, names the header maps for the per-thread default stream:
# {public name: (legacy symbol, per-thread symbol)}, in every version. cuda.h renames
# some names twice (cuMemcpyHtoD -> cuMemcpyHtoD_v2 -> cuMemcpyHtoD_v2_ptds).
PER_THREAD_EXAMPLES = {
    "runtime": {
        "cudaMemcpy": ("cudaMemcpy", "cudaMemcpy_ptds"),
        "cudaMemcpyAsync": ("cudaMemcpyAsync", "cudaMemcpyAsync_ptsz"),
        "cudaLaunchKernel": ("cudaLaunchKernel", "cudaLaunchKernel_ptsz"),
        "cudaStreamSynchronize": ("cudaStreamSynchronize", "cudaStreamSynchronize_ptsz"),
    },
    "driver": {
        "cuMemcpy": ("cuMemcpy", "cuMemcpy_ptds"),
        "cuMemcpyAsync": ("cuMemcpyAsync", "cuMemcpyAsync_ptsz"),
        "cuLaunchKernel": ("cuLaunchKernel", "cuLaunchKernel_ptsz"),
        "cuStreamSynchronize": ("cuStreamSynchronize", "cuStreamSynchronize_ptsz"),
        "cuMemcpyHtoD": ("cuMemcpyHtoD_v2", "cuMemcpyHtoD_v2_ptds"),
    },
}


def surface_of(report: VersionReport) -> str:
    prefix = report.module_name.removeprefix("cudart.").split("_", 1)[0] + "_"
    return next(s for s, p in abi_support.PREFIXES.items() if p == prefix)


@pytest.fixture(params=REPORTS)
def report(request, manifest, header_sets) -> VersionReport:
    """Parse, compile and measure one surface of one version (cached per process in
    abi_support)."""
    surface, key = request.param
    if surface == "runtime":
        return abi_support.report_for(header_sets[key])
    return abi_support.surface_report(manifest, key, surface)


def _fail_on(problems: list[str], what: str) -> None:
    if problems:
        shown = "\n".join(problems[:SHOWN])
        more = f"\n... and {len(problems) - SHOWN} more" if len(problems) > SHOWN else ""
        pytest.fail(f"{len(problems)} {what}:\n{shown}{more}", pytrace=False)


def _check(report: VersionReport, category: str) -> None:
    _fail_on(
        report.mismatches(category), f"{category} mismatches between gcc and {report.module_name}"
    )


# ---------------------------------------------------------------------------- the program


def test_gcc_compiles_every_fact(report):
    """gcc accepts every sizeof/offsetof/value the model asks for: a fact gcc rejects
    names an entity spelled wrongly by the parser (c_spelling, field path, typedef)."""
    _fail_on([f"{k}: {msg}" for k, msg in report.c.errors.items()], "facts gcc rejected")
    planned = abi_support.c_statements(report.plan) + abi_support.c_statements(
        report.plan, per_thread=True
    )
    assert len(report.c.facts) == len(planned)


def test_module_matches_headers_version(report, manifest):
    assert report.py["cuda_version"] == report.model.cuda_version
    assert report.model.cuda_version == manifest.get(report.key).number
    prefix = abi_support.PREFIXES[surface_of(report)]
    assert report.module_name == f"cudart.{prefix}{report.model.cuda_version}"


# ---------------------------------------------------------------------------- per category


def test_records(report):
    """sizeof and _Alignof of every record C can name, nested ones included; every
    record of the model is a class with C's fields (or none, when opaque). The
    alignment is ctypes.alignment(cls) itself, on every Python."""
    _check(report, "records")


def test_records_embedded(report):
    """Each record C can name inside a user's own struct, laid out by ctypes:
    offsetof and sizeof of `struct { char c; T t; }`, sizeof of `struct { char c;
    T t[3]; }`. Right only when ctypes aligns the class as C aligns the type
    (float4's 16, double4_32a's 32)."""
    _check(report, "embedded")
    # Not vacuous: the over-aligned vector types are among the records checked, and
    # the driver's tensor map (_Alignas(64) in 12.x, _Alignas(128) in 13.x).
    c = report.c.facts
    if surface_of(report) == "driver":
        align = 128 if report.model.cuda_version >= 13000 else 64
        assert (
            c["record.size|CUtensorMap_st"],
            c["record.align|CUtensorMap_st"],
            c["embedded.offset|CUtensorMap_st"],
            c["embedded.array_size|CUtensorMap_st"],
        ) == (128, align, align, align + 3 * 128)
        return
    assert (
        c["record.align|float4"],
        c["embedded.offset|float4"],
        c["embedded.array_size|float4"],
    ) == (16, 16, 64)
    if report.model.cuda_version >= 13000:
        assert (c["record.align|double4_32a"], c["embedded.offset|double4_32a"]) == (32, 32)


def test_fields(report):
    """offsetof and sizeof of every field, from every enclosing record C can name,
    through nested and anonymous members (and through the flattened attribute ctypes
    makes for fields of anonymous members)."""
    _check(report, "fields")


def test_enums(report):
    """Size, alignment and signedness of each enum's ctypes type; each named enum is an
    IntEnum with exactly the header's enumerators."""
    _check(report, "enums")


def test_enumerators(report):
    """Each enumerator's value, as a module-level int and as an IntEnum member."""
    _check(report, "enumerators")


def test_typedefs(report):
    """sizeof and _Alignof of every typedef (and type-naming macro) of the headers."""
    _check(report, "typedefs")


def test_macros(report):
    """Every integer and pointer macro, valued as gcc computes it."""
    _check(report, "macros")


def test_symbols_match_c_expansion(report):
    """SYMBOLS_LEGACY[name] is what the preprocessor turns the name into
    (cudaGetDeviceProperties -> cudaGetDeviceProperties_v2), and SYMBOLS_PER_THREAD[name]
    what it turns it into under -DCUDA_API_PER_THREAD_DEFAULT_STREAM
    (cudaMemcpyAsync -> cudaMemcpyAsync_ptsz); SYMBOLS is the map in force."""
    _check(report, "symbols")


def test_symbols_exported_by_library(report):
    """The version's own libcudart exports every symbol the module would call, in
    either mode."""
    if report.missing_exports is None:
        pytest.skip(
            f"{report.module_name}'s library comes with the NVIDIA driver, not with a wheel, "
            "and this machine has none: tests/gpu/test_driver_exports.py checks the real one"
        )
    _check(report, "exports")


def test_per_thread_symbols_are_their_own(report):
    """gcc's per-thread expansion differs from the legacy one for the names the header
    maps (so the comparison above is not legacy against legacy), and the module's
    SYMBOLS_PER_THREAD has exactly the legacy map's names."""
    c = report.c.facts
    differing = {n for n in report.plan["symbols"] if c[f"symbol_pt|{n}"] != c[f"symbol|{n}"]}
    examples = PER_THREAD_EXAMPLES[surface_of(report)]
    assert set(examples) <= differing
    assert {n: (c[f"symbol|{n}"], c[f"symbol_pt|{n}"]) for n in examples} == examples
    per_thread = vars(importlib.import_module(report.module_name))["SYMBOLS_PER_THREAD"]
    assert set(per_thread) == set(report.module_symbols)


# ---------------------------------------------------------------------------- completeness


def test_completeness(report):
    """The module holds exactly the model's functions, records, enums, typedefs and
    macros: no fewer (checked above entity by entity) and no more."""
    model = report.model
    module = importlib.import_module(report.module_name)
    ns = vars(module)
    problems = []

    expected_symbols = {f.name: f.name for f in model.functions}
    expected_symbols |= {a.public: a.symbol for a in model.aliases}
    symbols = report.module_symbols
    for name in sorted(set(expected_symbols) - set(symbols)):
        problems.append(f"SYMBOLS lacks {name}")
    for name in sorted(set(symbols) - set(expected_symbols)):
        problems.append(f"SYMBOLS has {name}, which the headers do not declare")
    if len(symbols) != len(model.functions) + len(model.aliases):
        problems.append(
            f"{len(symbols)} SYMBOLS != {len(model.functions)} functions "
            f"+ {len(model.aliases)} aliases"
        )

    # A class is listed once even where a typedef binds a second name to it.
    records = list(
        {
            id(v): v
            for v in ns.values()
            if isinstance(v, type)
            and issubclass(v, (ctypes.Structure, ctypes.Union))
            and v.__module__ == module.__name__
        }.values()
    )
    if len(records) != len(model.records):
        problems.append(
            f"{len(records)} record classes != {len(model.records)} records in the headers"
        )
    classes, declared = {r.__name__ for r in records}, {r.name for r in model.records}
    if classes != declared:
        problems.append(
            f"record classes differ: extra {sorted(classes - declared)}, "
            f"missing {sorted(declared - classes)}"
        )
    with_fields = [r for r in records if "_fields_" in r.__dict__]
    defined = [r for r in model.records if not r.opaque]
    if len(with_fields) != len(defined):
        problems.append(
            f"{len(with_fields)} classes with _fields_ != {len(defined)} defined records"
        )

    intenums = {
        v.__name__
        for v in ns.values()
        if isinstance(v, type) and issubclass(v, enum.IntEnum) and v.__module__ == module.__name__
    }
    expected_enums = {e.name for e in model.enums if e.name and e.enumerators}
    if intenums != expected_enums:
        problems.append(
            f"IntEnums differ: extra {sorted(intenums - expected_enums)}, "
            f"missing {sorted(expected_enums - intenums)}"
        )

    n_enumerators = sum(len(e.enumerators) for e in model.enums)
    checked = {k for k in report.py["facts"] if k.startswith("enumerator|")}
    if len(checked) != n_enumerators:
        problems.append(f"{len(checked)} enumerators checked != {n_enumerators} in the headers")
    n_fields = sum(1 for k in report.c.facts if k.startswith("field.offset|"))
    if n_fields != len(report.plan["fields"]):
        problems.append(
            f"{n_fields} field offsets from gcc != {len(report.plan['fields'])} planned"
        )
    _fail_on(problems, f"completeness problems in {report.module_name}")


def test_counts_are_not_trivial(report):
    """Enough of everything was checked that no test above passed vacuously."""
    counts = abi_support.counts(report)
    print(f"{report.module_name} (matched, checked): {counts}")
    low = [
        f"{column}: {counts[column][0]} checked, expected more than {floor}"
        for column, floor in FLOORS[surface_of(report)].items()
        if counts[column][0] <= floor
    ]
    _fail_on(low, f"categories with too few checks for CUDA {report.key} ({counts})")
    # Both sides measured the same facts: each gcc fact has its Python value(s).
    assert len(report.c.facts) > 2000
    python_keys = {abi_support.c_key_of(k) for k in report.py["facts"]}
    assert python_keys == set(report.c.facts) | set(report.c.errors)


# ---------------------------------------------------------------------------- other Pythons


@pytest.mark.parametrize("python", abi_support.other_pythons())
def test_layout_under_other_python(report, python):
    """The same comparison with the module imported by each other supported Python
    (3.11, 3.12, 3.13 but the one running the tests): every category but the library's
    exports, so alignment and embedding are C's whichever way the class gets them
    (a member before 3.13 and after, _align_ or require_alignment beyond 16)."""
    interpreter, why = abi_support.find_interpreter(python)
    if interpreter is None:
        pytest.skip(f"{python} unusable: {why}")
    py = abi_support.python_side_cached(interpreter, report.plan)
    problems = []
    for category in abi_support.CATEGORIES:
        if category != "exports":
            problems += compare(report, category, py)
    _fail_on(
        problems, f"mismatches between gcc and {report.module_name} under {python} ({py['python']})"
    )


SUPPORTED = [f"python{major}.{minor}" for major, minor in abi_support.SUPPORTED_PYTHONS]


@pytest.mark.parametrize("python", SUPPORTED)
def test_over_aligned_records_under_every_python(report, python):
    """Every record C aligns to 16 or more (float4; CUtensorMap_st, _Alignas(64) in
    12.x and 128 in 13.x, beyond anything ctypes aligns by itself) and every record
    holding one: size, alignment, offsets and sizes of all fields, and the layout of a
    user's struct and array embedding it, as gcc computes them, under each supported
    Python (_align_ from 3.13, require_alignment before)."""
    interpreter, why = abi_support.find_interpreter(python)
    if interpreter is None:
        pytest.skip(f"{python} unusable: {why}")
    current = sys.version_info[:2] == tuple(map(int, python.removeprefix("python").split(".")))
    py = report.py if current else abi_support.python_side_cached(interpreter, report.plan)
    records = abi_support.over_aligned_records(report)
    if surface_of(report) == "driver":
        assert records["CUtensorMap_st"] == (128 if report.model.cuda_version >= 13000 else 64)
    else:
        assert records["float4"] == 16
    keys = [k for k in py["facts"] if abi_support.record_of_fact(k) in records]
    # Each such record's size, alignment and three embedding facts, and its fields.
    assert len(keys) >= 5 * len(records) + 2
    problems = [
        f"{k}: gcc={report.c.facts.get(abi_support.c_key_of(k))!r} python={py['facts'][k]!r}"
        for k in keys
        if py["facts"][k] != report.c.facts.get(abi_support.c_key_of(k))
    ]
    _fail_on(problems, f"over-aligned layout mismatches under {python} ({py['python']})")


# ---------------------------------------------------------------------------- the judge itself


JUDGE_HEADER = """\
#include <stddef.h>
#define BIG 0xFFFFFFFFFFFFFFFFull
#define NEG (-5)
#define PTR ((struct opaque *)0x10)
#define renamed renamed_v2
enum e { A = -1, B = 3 };
typedef enum { C = 0x80000000u } unsigned_anon;
struct inner { char c; double d; };
struct outer { int i; union { short s; struct inner in; }; struct { char x[3]; int y; } named; };
typedef struct outer outer_t;
struct __attribute__((aligned(32))) wide { double d; };
int renamed_v2(void);
"""


def test_judge_reads_c_faithfully(tmp_path):
    """The C side of the judge, on a small header: big unsigned and negative values,
    pointer macros, anonymous and nested members, and macro-renamed functions."""
    (tmp_path / "cuda_runtime_api.h").write_text(JUDGE_HEADER)
    plan = {
        "records": [
            {"name": "outer", "kind": "struct", "c": "struct outer", "opaque": False},
            {
                "name": "outer_named",
                "kind": "struct",
                "c": "__typeof__(((struct outer *)0)->named)",
                "opaque": False,
            },
            {"name": "wide", "kind": "struct", "c": "struct wide", "opaque": False},
        ],
        "fields": [
            {"root": "outer", "c_root": "struct outer", "c_path": "in.d"},
            {"root": "outer", "c_root": "struct outer", "c_path": "named.y"},
            {
                "root": "outer_named",
                "c_root": "__typeof__(((struct outer *)0)->named)",
                "c_path": "y",
            },
        ],
        "enums": [
            {"label": "e", "c": "enum e", "enumerators": ["A", "B"]},
            {"label": "unsigned_anon", "c": "unsigned_anon", "enumerators": ["C"]},
        ],
        "typedefs": [{"name": "outer_t"}],
        "macros": [
            {"name": "BIG", "kind": "int"},
            {"name": "NEG", "kind": "int"},
            {"name": "PTR", "kind": "pointer"},
        ],
        "symbols": ["renamed", "renamed_v2"],
    }
    c = abi_support.run_c(plan, [tmp_path])
    assert c.errors == {}
    assert c.facts == {
        "record.size|outer": 32,
        "record.align|outer": 8,
        "embedded.offset|outer": 8,
        "embedded.size|outer": 40,
        "embedded.array_size|outer": 104,
        "record.size|outer_named": 8,
        "record.align|outer_named": 4,
        "embedded.offset|outer_named": 4,
        "embedded.size|outer_named": 12,
        "embedded.array_size|outer_named": 28,
        "record.size|wide": 32,
        "record.align|wide": 32,
        "embedded.offset|wide": 32,
        "embedded.size|wide": 64,
        "embedded.array_size|wide": 128,
        "field.offset|outer|in.d": 16,
        "field.size|outer|in.d": 8,
        "field.offset|outer|named.y": 28,
        "field.size|outer|named.y": 4,
        "field.offset|outer_named|y": 4,
        "field.size|outer_named|y": 4,
        "enum.size|e": 4,
        "enum.align|e": 4,
        "enum.signed|e": 1,
        "enumerator|e|A": -1,
        "enumerator|e|B": 3,
        "enum.size|unsigned_anon": 4,
        "enum.align|unsigned_anon": 4,
        "enum.signed|unsigned_anon": 0,
        "enumerator|unsigned_anon|C": 0x80000000,
        "typedef.size|outer_t": 32,
        "typedef.align|outer_t": 8,
        "macro|BIG": 2**64 - 1,
        "macro|NEG": -5,
        "macro|PTR": 16,
        "symbol|renamed": "renamed_v2",
        "symbol|renamed_v2": "renamed_v2",
    }


def test_judge_rejects_bad_facts(tmp_path):
    """A fact gcc cannot compile is set aside with gcc's message; the rest still run."""
    (tmp_path / "cuda_runtime_api.h").write_text(JUDGE_HEADER)
    plan = {
        "records": [
            {"name": "nope", "kind": "struct", "c": "struct nope", "opaque": False},
            {"name": "outer", "kind": "struct", "c": "struct outer", "opaque": False},
        ],
        "fields": [{"root": "outer", "c_root": "struct outer", "c_path": "no_such_field"}],
        "enums": [],
        "typedefs": [],
        "macros": [{"name": "NO_SUCH_MACRO", "kind": "int"}],
        "symbols": [],
    }
    c = abi_support.run_c(plan, [tmp_path])
    assert set(c.errors) == {
        "record.size|nope",
        "record.align|nope",
        "field.offset|outer|no_such_field",
        "embedded.offset|nope",
        "embedded.size|nope",
        "embedded.array_size|nope",
        "field.size|outer|no_such_field",
        "macro|NO_SUCH_MACRO",
    }
    assert c.facts == {
        "record.size|outer": 32,
        "record.align|outer": 8,
        "embedded.offset|outer": 8,
        "embedded.size|outer": 40,
        "embedded.array_size|outer": 104,
    }


def test_judge_reads_per_thread_expansion(tmp_path):
    """The per-thread run compiles with -DCUDA_API_PER_THREAD_DEFAULT_STREAM and prints
    the symbols only; the plain run does not see the define."""
    (tmp_path / "cuda_runtime_api.h").write_text(
        "#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)\n#define copy copy_ptds\n#endif\n"
        "#define caps caps_v2\nint copy(void);\nint caps_v2(void);\nstruct s { int i; };\n"
    )
    plan = {
        "records": [{"name": "s", "kind": "struct", "c": "struct s", "opaque": False}],
        "fields": [],
        "enums": [],
        "typedefs": [],
        "macros": [],
        "symbols": ["caps", "copy"],
    }
    per_thread = abi_support.run_c(plan, [tmp_path], per_thread=True)
    assert per_thread.errors == {}
    assert per_thread.facts == {"symbol_pt|caps": "caps_v2", "symbol_pt|copy": "copy_ptds"}
    legacy = abi_support.run_c(plan, [tmp_path])
    assert legacy.facts == {
        "record.size|s": 4,
        "record.align|s": 4,
        "embedded.offset|s": 4,
        "embedded.size|s": 8,
        "embedded.array_size|s": 16,
        "symbol|caps": "caps_v2",
        "symbol|copy": "copy",
    }


MUTATIONS = [
    # (what, old text, new text, category that must notice)
    (
        "enumerator value",
        "    cudaErrorInvalidValue = 1\n",
        "    cudaErrorInvalidValue = 99\n",
        "enumerators",
    ),
    ("macro value", "\ncudaHostAllocDefault = 0\n", "\ncudaHostAllocDefault = 7\n", "macros"),
    (
        "typedef type",
        "\ncudaSurfaceObject_t = c_ulonglong\n",
        "\ncudaSurfaceObject_t = c_uint\n",
        "typedefs",
    ),
    ("symbol", '"cudaMalloc": ("cudaMalloc",', '"cudaMalloc": ("cudaMalloc_v9",', "symbols"),
    (
        "per-thread symbol",
        '"cudaMemcpyAsync": "cudaMemcpyAsync_ptsz",',
        '"cudaMemcpyAsync": "cudaMemcpyAsync_ptds",',
        "symbols",
    ),
    ("field type", '    ("name", c_char * 256),', '    ("name", c_char * 255),', "fields"),
    # float4 and the like get C's alignment from a trailing zero-length member; one
    # aligned to 8 instead of 16 must show in the record's alignment and in embedding.
    (
        "over-alignment",
        '    ("_align16", c_longdouble * 0),',
        '    ("_align16", c_double * 0),',
        "records",
    ),
    (
        "embedded alignment",
        '    ("_align16", c_longdouble * 0),',
        '    ("_align16", c_double * 0),',
        "embedded",
    ),
]


# The driver's module (cuda.h), the same way: its renames, per-thread names and the
# tensor map's alignment (both ways a class gets it: _align_ from 3.13, before that
# require_alignment; the mutant changes both so it is wrong under any Python).
DRIVER_MUTATIONS = [
    (
        "driver rename",
        [('"cuMemAlloc": ("cuMemAlloc_v2",', '"cuMemAlloc": ("cuMemAlloc",')],
        "symbols",
    ),
    (
        "driver per-thread symbol",
        [('"cuMemcpyHtoD": "cuMemcpyHtoD_v2_ptds",', '"cuMemcpyHtoD": "cuMemcpyHtoD_v2",')],
        "symbols",
    ),
    (
        "tensor map alignment",
        [
            ("    _align_ = 64  #", "    _align_ = 32  #"),
            ("require_alignment(CUtensorMap_st, 64)", "require_alignment(CUtensorMap_st, 32)"),
        ],
        "records",
    ),
    (
        "tensor map embedded",
        [
            ("    _align_ = 64  #", "    _align_ = 32  #"),
            ("require_alignment(CUtensorMap_st, 64)", "require_alignment(CUtensorMap_st, 32)"),
        ],
        "embedded",
    ),
    (
        "driver enumerator value",
        [("    CUDA_ERROR_INVALID_VALUE = 1\n", "    CUDA_ERROR_INVALID_VALUE = 2\n")],
        "enumerators",
    ),
]


def _mutant_noticed(report, replacements, category, tmp_path, monkeypatch) -> list[str]:
    """compare() in `category` for a copy of the report's module with `replacements`
    (old, new: the first occurrence of each) made."""
    source = view_source(report.module_name.rpartition(".")[2])
    for old, new in replacements:
        assert old in source, f"{old!r} is not in {report.module_name}: nothing to change"
        source = source.replace(old, new, 1)
    mutant = f"abi_mutant_{report.module_name.rpartition('.')[2]}_{category}"
    (tmp_path / f"{mutant}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        py = abi_support.python_side(dict(report.plan, module=mutant))
    finally:
        sys.modules.pop(mutant, None)
    return compare(report, category, py)


@pytest.mark.parametrize("what, old, new, category", MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_judge_notices_a_wrong_module(header_sets, tmp_path, monkeypatch, what, old, new, category):
    """A module with one thing wrong fails the comparison in that thing's category,
    so a green run means the judge looked."""
    report = abi_support.report_for(header_sets[VERSIONS[0]])
    noticed = _mutant_noticed(report, [(old, new)], category, tmp_path, monkeypatch)
    assert noticed, f"a wrong {what} went unnoticed"


@pytest.mark.parametrize(
    "what, replacements, category", DRIVER_MUTATIONS, ids=[m[0] for m in DRIVER_MUTATIONS]
)
def test_judge_notices_a_wrong_driver_module(
    manifest, tmp_path, monkeypatch, what, replacements, category
):
    report = abi_support.surface_report(manifest, VERSIONS[0], "driver")
    noticed = _mutant_noticed(report, replacements, category, tmp_path, monkeypatch)
    assert noticed, f"a wrong {what} went unnoticed"
