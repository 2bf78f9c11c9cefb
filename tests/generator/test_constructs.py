"""One small synthetic header per C construct, through the whole generator.

In the manner of rust-bindgen's test suite: `tests/headers/<construct>.h` is a tiny C
header. For each one the tests

* parse it with the real libclang and check the model (parser tests);
* render it and compare the module, byte for byte, with the reviewed expected output
  in `tests/expectations/<construct>.py` (expectation tests);
* execute the rendered module (as `cudart._test_<construct>`, so its
  `from cudart._binding import bind_lazily` works) and check what it defines;
* compile a tiny C program with gcc against the same header, printing sizeof,
  _Alignof and offsetof, and hold both the model's layout and the ctypes layout of
  the executed module against it (layout tests).

Refreshing the expectations
---------------------------
After a deliberate change to the generator's output, rewrite the expected modules with

    CUDART_UPDATE_EXPECTATIONS=1 .venv/bin/python -m pytest tests/generator/test_constructs.py

then read the diff (`git diff tests/expectations`) as the review: the expectation files
are what a human agreed the output should be. Without that variable the tests only
compare, never write.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import subprocess
import sys
import tempfile
import types
from enum import IntEnum
from functools import cache
from pathlib import Path

import pytest
import snapshot_files

from cudart._handles import Handle, StreamHandle
from generator.context import generation_context
from generator.ctypes_map import RenderError, TypeMapper
from generator.model import (
    ApiModel,
    Array,
    Builtin,
    EnumRef,
    Field,
    FunctionProto,
    Pointer,
    Record,
    RecordRef,
    SymbolAlias,
    Typedef,
    TypedefRef,
)
from generator.parse import ParseError, ParseInput, parse, system_include_dirs
from generator.render.base import RenderContext
from generator.render.checked import render_checked
from generator.render.raw import render_module

# tests/support is on pytest's path (pyproject.toml); a subprocess that imports this
# module as tests.generator.test_constructs reaches it as a namespace package.
try:
    from abi_support import find_interpreter, other_pythons
except ModuleNotFoundError:
    from tests.support.abi_support import find_interpreter, other_pythons

HERE = Path(__file__).resolve().parents[1]
REPO = HERE.parent
HEADERS = HERE / "headers"
EXPECTATIONS = HERE / "expectations"


def _markers(name: str, key: str) -> list[str]:
    """The texts of a header's `// <key>: <text>` lines."""
    prefix = f"// {key}:"
    lines = (HEADERS / f"{name}.h").read_text().splitlines()
    return [line[len(prefix) :].strip() for line in lines if line.startswith(prefix)]


# Every header of tests/headers/ is found, not listed. One the generator must refuse
# says so itself, with `// expect-error: <text>` lines (put last, so that they move no
# line a diagnostic names): each text must appear in the error.
HEADER_NAMES = sorted(path.stem for path in HEADERS.glob("*.h"))
REFUSED = {name: texts for name in HEADER_NAMES if (texts := _markers(name, "expect-error"))}
# Headers that parse cleanly: each has an expectation file, unless it says with
# `// no-expectation: <why>` which test holds it instead (the regressions below).
CONSTRUCTS = [name for name in HEADER_NAMES if name not in REFUSED]
WITH_EXPECTATION = [name for name in CONSTRUCTS if not _markers(name, "no-expectation")]

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")


# ---------------------------------------------------------------- pipeline helpers


@cache
def _system_dirs() -> tuple[Path, ...]:
    return system_include_dirs()


def parse_header(name: str) -> ApiModel:
    return parse(
        ParseInput(
            headers=(HEADERS / f"{name}.h",),
            include_dirs=(HEADERS,),
            system_include_dirs=_system_dirs(),
        )
    )


def context(name: str) -> RenderContext:
    return RenderContext(version_key="12.5", sources=(f"tests/headers/{name}.h",))


@cache
def model(name: str) -> ApiModel:
    """The parsed model, shared between tests: treat it as read-only."""
    return parse_header(name)


@cache
def rendered(name: str) -> str:
    return render_module(generation_context(model(name), context(name)))


@cache
def module(name: str) -> types.ModuleType:
    """The rendered module, executed as cudart._test_<name>."""
    mod = types.ModuleType(f"cudart._test_{name}")
    mod.__file__ = str(EXPECTATIONS / f"{name}.py")
    exec(compile(rendered(name), mod.__file__, "exec"), mod.__dict__)
    return mod


def spelling(item) -> str | None:
    """The C type expression for a record or enum of the model."""
    return item.c_spelling


# ---------------------------------------------------------------- gcc


def gcc_values(header: str, exprs: dict[str, str]) -> dict[str, int]:
    """Each C integer expression's value as gcc computes it, with `header` included."""
    lines = [
        "#include <stdio.h>",
        "#include <stddef.h>",
        f'#include "{header}"',
        '#define SHOW(key, expr) do { if ((expr) < 0) printf("%s %lld\\n", key, '
        "(long long)(expr)); "
        'else printf("%s %llu\\n", key, (unsigned long long)(expr)); } while (0)',
        "int main(void) {",
    ]
    lines += [f'    SHOW("{key}", ({expr}));' for key, expr in exprs.items()]
    lines += ["    return 0;", "}", ""]
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = Path(tmp) / "probe.c", Path(tmp) / "probe"
        src.write_text("\n".join(lines))
        proc = subprocess.run(
            ["gcc", "-std=gnu11", "-I", str(HEADERS), str(src), "-o", str(exe)],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            raise AssertionError(
                f"gcc failed:\n{proc.stderr}\n--- probe.c ---\n" + "\n".join(lines)
            )
        out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    values = {}
    for line in out.splitlines():
        key, value = line.rsplit(" ", 1)
        values[key] = int(value)
    return values


def layout_probes(m: ApiModel) -> dict[str, str]:
    """sizeof/_Alignof/offsetof expressions for every record C can name, keyed
    "R:sizeof", "R:alignof", "R.field"; an anonymous member's fields as the parent's.
    "R:embedded" keys place R in a user's struct: offsetof and sizeof of
    `struct { char c; R t; }`, sizeof of `struct { char c; R t[3]; }`."""
    records = m.by_name("records")
    exprs: dict[str, str] = {}
    for rec in m.records:
        c = spelling(rec)
        if rec.opaque or c is None:
            continue
        exprs[f"{rec.name}:sizeof"] = f"sizeof({c})"
        exprs[f"{rec.name}:alignof"] = f"_Alignof({c})"
        exprs[f"{rec.name}:embedded_offset"] = f"offsetof(struct {{ char c; {c} t; }}, t)"
        exprs[f"{rec.name}:embedded_size"] = f"sizeof(struct {{ char c; {c} t; }})"
        exprs[f"{rec.name}:array3_size"] = f"sizeof(struct {{ char c; {c} t[3]; }})"
        for member, _ in _members(rec, records):
            exprs[f"{rec.name}.{member}"] = f"offsetof({c}, {member})"
    return exprs


def _members(rec: Record, records: dict[str, Record], base: int = 0):
    """(name, offset) of the members C reaches directly on `rec`, anonymous ones flattened."""
    for f in rec.fields:
        if f.anonymous:
            yield from _members(records[f.type.name], records, base + f.offset)
        else:
            yield f.name, base + f.offset


@cache
def gcc_layout(name: str) -> dict[str, int]:
    return gcc_values(f"{name}.h", layout_probes(model(name)))


def embedded_layout(cls) -> dict[str, int]:
    """What layout_probes' embedded keys measure, with ctypes laying out a user's struct."""
    one = type("one", (ctypes.Structure,), {"_fields_": [("c", ctypes.c_char), ("t", cls)]})
    three = type("three", (ctypes.Structure,), {"_fields_": [("c", ctypes.c_char), ("t", cls * 3)]})
    return {
        "embedded_offset": one.t.offset,
        "embedded_size": ctypes.sizeof(one),
        "array3_size": ctypes.sizeof(three),
    }


# ---------------------------------------------------------------- every construct


@pytest.mark.parametrize("name", WITH_EXPECTATION)
def test_expectation(name):
    """The rendered module is byte for byte the reviewed expectation."""
    snapshot_files.hold(EXPECTATIONS / f"{name}.py", rendered(name))


@pytest.mark.parametrize("name", CONSTRUCTS)
def test_module_executes(name):
    mod = module(name)
    assert mod.__name__ == f"cudart._test_{name}"
    assert mod.CUDA_VERSION == 12050
    assert mod.CUDART_VERSION == 12050
    assert set(mod.SYMBOLS) == set(mod._FUNCTIONS)
    with pytest.raises(AttributeError):
        mod.no_such_function  # noqa: B018  (looked up through the lazy __getattr__)


@pytest.mark.parametrize("name", CONSTRUCTS)
def test_model_is_version_tagged(name):
    assert model(name).cuda_version == 12050
    assert [n for n, _ in model(name).header_hashes] == [f"{name}.h"]
    assert all(len(sha) == 64 for _, sha in model(name).header_hashes)


@needs_gcc
@pytest.mark.parametrize("name", CONSTRUCTS)
def test_model_layout_matches_gcc(name):
    """The sizes, alignments and offsets libclang reports are gcc's."""
    m = model(name)
    records = m.by_name("records")
    gcc = gcc_layout(name)
    for rec in m.records:
        if rec.opaque or spelling(rec) is None:
            continue
        assert (rec.size, rec.align) == (
            gcc[f"{rec.name}:sizeof"],
            gcc[f"{rec.name}:alignof"],
        ), rec.name
        for member, offset in _members(rec, records):
            assert offset == gcc[f"{rec.name}.{member}"], f"{rec.name}.{member}"


@needs_gcc
@pytest.mark.parametrize("name", CONSTRUCTS)
def test_ctypes_layout_matches_gcc(name):
    """The executed module's ctypes classes have gcc's sizes, offsets and alignment
    (ctypes.alignment itself), and sit in a user's own struct, alone and as an array,
    where gcc puts them."""
    m = model(name)
    records = m.by_name("records")
    mod = module(name)
    gcc = gcc_layout(name)
    checked = 0
    for rec in m.records:
        if rec.opaque or spelling(rec) is None:
            continue
        cls = getattr(mod, rec.name)
        size = ctypes.sizeof(cls)
        align = ctypes.alignment(cls)
        assert (size, align) == (gcc[f"{rec.name}:sizeof"], gcc[f"{rec.name}:alignof"]), rec.name
        for key, value in embedded_layout(cls).items():
            assert value == gcc[f"{rec.name}:{key}"], f"{rec.name}:{key}"
        for member, _ in _members(rec, records):
            assert (
                getattr(cls, member).offset == gcc[f"{rec.name}.{member}"]
            ), f"{rec.name}.{member}"
            checked += 1
    if any(not r.opaque for r in m.records):
        assert checked


# Run by another interpreter, which has only the standard library and this checkout:
# executes a rendered module and prints, under layout_probes' keys, what its ctypes
# classes give.
_OTHER_PYTHON_PROBE = """
import ctypes, json, sys, types
source, plan = open(sys.argv[1]).read(), json.loads(sys.argv[2])
mod = types.ModuleType(plan["module"])
exec(compile(source, sys.argv[1], "exec"), mod.__dict__)
out = {}
for name, members in plan["records"].items():
    cls = getattr(mod, name)
    one = type("one", (ctypes.Structure,), {"_fields_": [("c", ctypes.c_char), ("t", cls)]})
    three = type("three", (ctypes.Structure,), {"_fields_": [("c", ctypes.c_char), ("t", cls * 3)]})
    out[name + ":sizeof"] = ctypes.sizeof(cls)
    out[name + ":alignof"] = ctypes.alignment(cls)
    out[name + ":embedded_offset"] = one.t.offset
    out[name + ":embedded_size"] = ctypes.sizeof(one)
    out[name + ":array3_size"] = ctypes.sizeof(three)
    for member in members:
        out[name + "." + member] = getattr(cls, member).offset
print(json.dumps({"python": sys.version.split()[0], "layout": out}))
"""


@needs_gcc
@pytest.mark.parametrize("python", other_pythons())
@pytest.mark.parametrize("name", CONSTRUCTS)
def test_ctypes_layout_under_other_python(name, python, tmp_path):
    """The same layout, embedding included, under each other supported Python: before
    3.13 the 32-aligned records get there through require_alignment, on 3.13+ through
    _align_; the zero-length alignment members work on all of them."""
    interpreter, why = find_interpreter(python)
    if interpreter is None:
        pytest.skip(f"{python} unusable: {why}")
    m = model(name)
    records = m.by_name("records")
    plan = {
        "module": f"cudart._test_{name}",
        "records": {
            rec.name: [member for member, _ in _members(rec, records)]
            for rec in m.records
            if not rec.opaque and spelling(rec) is not None
        },
    }
    source = tmp_path / f"construct_{name}.py"  # not enum.py: the probe imports the stdlib's
    source.write_text(rendered(name))
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUDART_")}
    env["PYTHONPATH"] = str(REPO)
    proc = subprocess.run(
        [interpreter, "-c", _OTHER_PYTHON_PROBE, str(source), json.dumps(plan)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    result = json.loads(proc.stdout)
    gcc = gcc_layout(name)
    assert result["python"].startswith(python.removeprefix("python") + ".")
    assert result["layout"] == {key: gcc[key] for key in result["layout"]}
    assert set(result["layout"]) == set(gcc)


@pytest.mark.parametrize("name", CONSTRUCTS)
def test_records_without_c_name_match_model(name):
    """Records C cannot name (anonymous members' types) still have the model's size."""
    m = model(name)
    mod = module(name)
    for rec in m.records:
        if rec.opaque:
            continue
        cls = getattr(mod, rec.name)
        assert ctypes.sizeof(cls) == rec.size, rec.name
        assert ctypes.alignment(cls) == rec.align, rec.name


# ---------------------------------------------------------------- enum.h


def test_enum_model():
    enums = {e.name: e for e in model("enum").enums}
    assert list(enums) == ["color", "mode_t_", "signedness", "wide", "aliased", ""]
    assert {n: e.underlying for n, e in enums.items()} == {
        "color": Builtin("unsigned int"),
        "mode_t_": Builtin("unsigned int"),
        "signedness": Builtin("int"),
        "wide": Builtin("unsigned int"),
        "aliased": Builtin("unsigned int"),
        "": Builtin("unsigned int"),
    }
    assert [(k.name, k.value) for k in enums["signedness"].enumerators] == [
        ("signedMinusOne", -1),
        ("signedZero", 0),
        ("signedMin", -(2**31)),
    ]
    assert [(k.name, k.value) for k in enums["wide"].enumerators] == [
        ("wideLow", 1),
        ("wideHigh", 0x80000000),
    ]
    assert [(k.name, k.value) for k in enums["aliased"].enumerators] == [
        ("aliasedFirst", 3),
        ("aliasedSecond", 7),
        ("aliasedOld", 3),
        ("aliasedMax", 7),
    ]
    assert enums["color"].c_spelling == "enum color"
    rec = model("enum").by_name("records")["uses_enums"]
    assert [f.type for f in rec.fields] == [
        EnumRef("color"),
        EnumRef("mode_t_"),
        EnumRef("signedness"),
        EnumRef("wide"),
    ]


def test_enum_module():
    mod = module("enum")
    for cls in (mod.color, mod.mode_t_, mod.signedness, mod.wide, mod.aliased):
        assert issubclass(cls, IntEnum)
    assert mod.colorGreen == 1 and mod.colorGreen is mod.color.colorGreen
    assert mod.modeSafe == 8 and isinstance(mod.modeSafe, mod.mode_t_)
    assert mod.signedMinusOne == -1
    assert mod.signedMin == -(2**31)
    assert mod.wideHigh == 0x80000000
    # Aliases: equal values are one member under two names, as IntEnum makes them.
    assert mod.aliased.aliasedOld is mod.aliased.aliasedFirst
    assert mod.aliasedMax is mod.aliased.aliasedSecond
    assert [m.name for m in mod.aliased] == ["aliasedFirst", "aliasedSecond"]
    # A tagless, untypedef'd enum gives plain module-level ints and no class.
    assert type(mod.looseFirst) is int and mod.looseSecond == 6
    fields = dict(mod.uses_enums._fields_)
    assert fields == {
        "c": ctypes.c_uint,
        "m": ctypes.c_uint,
        "s": ctypes.c_int,
        "w": ctypes.c_uint,
    }
    s = mod.uses_enums(s=mod.signedMinusOne, w=mod.wideHigh)
    assert (s.s, s.w) == (-1, 0x80000000)


@needs_gcc
def test_enum_underlying_matches_gcc():
    m = model("enum")
    exprs = {}
    for e in m.enums:
        for k in e.enumerators:
            exprs[k.name] = k.name
        if e.name:
            exprs[f"{e.name}:sizeof"] = f"sizeof({spelling(e)})"
            exprs[f"{e.name}:signed"] = f"(({spelling(e)})-1 < 0)"
    gcc = gcc_values("enum.h", exprs)
    sizes = {"int": (4, 1), "unsigned int": (4, 0), "long": (8, 1), "unsigned long": (8, 0)}
    for e in m.enums:
        for k in e.enumerators:
            assert k.value == gcc[k.name], k.name
        if e.name:
            assert sizes[e.underlying.name] == (
                gcc[f"{e.name}:sizeof"],
                gcc[f"{e.name}:signed"],
            ), e.name


# ---------------------------------------------------------------- int_macros.h

EXPECTED_MACROS = {
    "CUDART_VERSION": (12050, "int"),
    "HEX_VALUE": (0x1F, "int"),
    "NEGATIVE_ONE": (-1, "int"),
    "SHIFTED": ((1 << 4) | 2, "int"),
    "REFERS_TO_OTHER": (0x20, "int"),
    "ALL_ONES": (2**64 - 1, "int"),
    "UNSIGNED_SUFFIX": (4000000000, "int"),
    "CHAR_CONSTANT": (ord("A"), "int"),
    "POINTER_MACRO": (2, "pointer"),
}


def test_int_macros_model():
    m = model("int_macros")
    assert {mac.name: (mac.value, mac.kind) for mac in m.macros} == EXPECTED_MACROS
    assert [mac.name for mac in m.macros] == list(EXPECTED_MACROS)  # header order
    assert all(mac.header == "int_macros.h" for mac in m.macros)
    # None of the non-constants turned into anything else either.
    assert m.typedefs == [] and m.aliases == [] and m.functions == []


def test_int_macros_module():
    mod = module("int_macros")
    for name, (value, _) in EXPECTED_MACROS.items():
        assert getattr(mod, name) == value, name
        assert type(getattr(mod, name)) is int
    for name in (
        "FUNCTION_LIKE",
        "EMPTY_MACRO",
        "STRING_MACRO",
        "_PRIVATE_MACRO",
        "TYPE_KEYWORD",
        "FLOAT_MACRO",
    ):
        assert name not in vars(mod), name
    assert "# a pointer value in C (int_macros.h)" in rendered("int_macros")


@needs_gcc
def test_int_macros_match_gcc():
    exprs = {
        name: f"(unsigned long long)({name})" if kind == "pointer" else name
        for name, (_, kind) in EXPECTED_MACROS.items()
    }
    gcc = gcc_values("int_macros.h", exprs)
    assert {name: value for name, (value, _) in EXPECTED_MACROS.items()} == gcc


# ---------------------------------------------------------------- struct_basic.h


def test_struct_basic_model():
    records = model("struct_basic").by_name("records")
    padded = records["padded"]
    assert [(f.name, f.offset) for f in padded.fields] == [
        ("a", 0),
        ("b", 4),
        ("c", 8),
        ("d", 16),
        ("e", 24),
    ]
    assert (padded.size, padded.align, padded.kind) == (32, 8, "struct")
    assert (records["tail"].size, records["tail"].align) == (16, 8)
    assert [f.type for f in records["scalars"].fields] == [
        Builtin(n)
        for n in (
            "char",
            "signed char",
            "unsigned char",
            "short",
            "unsigned short",
            "int",
            "unsigned int",
            "long",
            "unsigned long",
            "long long",
            "unsigned long long",
            "float",
            "double",
            "_Bool",
        )
    ]


def test_struct_basic_module():
    mod = module("struct_basic")
    # Natural C padding needs no explicit _pad members: ctypes pads the same way.
    for cls in (mod.scalars, mod.padded, mod.tail):
        assert not [n for n, *_ in cls._fields_ if n.startswith("_pad")]
    p = mod.padded(a=b"x", b=-7, c=b"y", d=2.5, e=3)
    assert (p.a, p.b, p.c, p.d, p.e) == (b"x", -7, b"y", 2.5, 3)
    s = mod.scalars(ull=2**64 - 1, b=True, sc=-1, uc=255)
    assert (s.ull, s.b, s.sc, s.uc) == (2**64 - 1, True, -1, 255)


# ---------------------------------------------------------------- struct_array.h


def test_struct_array_model():
    fields = {f.name: f for f in model("struct_array").by_name("records")["arrays"].fields}
    assert fields["one"].type == Array(Builtin("int"), 3)
    assert fields["two"].type == Array(Array(Builtin("float"), 3), 2)
    assert fields["name"].type == Array(Builtin("char"), 17)
    assert fields["bytes"].type == Array(Builtin("unsigned char"), 16)
    assert (fields["bytes"].offset, fields["after"].offset) == (53, 72)


def test_struct_array_module():
    mod = module("struct_array")
    a = mod.arrays()
    a.two[1][2] = 5.0
    assert a.two[1][2] == 5.0 and len(a.two) == 2 and len(a.two[0]) == 3
    assert ctypes.sizeof(type(a.two[0])) == 12
    a.name = b"device"
    assert a.name == b"device"  # a char array reads as bytes, as c_char * N does
    a.one[:] = [1, 2, 3]
    assert list(a.one) == [1, 2, 3]
    assert bytes(a.bytes) == bytes(16)


# ---------------------------------------------------------------- struct_nested.h


def test_struct_nested_model():
    m = model("struct_nested")
    records = m.by_name("records")
    assert records["node"].fields[0].type == Pointer(RecordRef("node"))
    assert records["node"].fields[1].type == RecordRef("point")
    # Unnamed types of named fields are named parent_field and precede their parent.
    names = [r.name for r in m.records]
    assert names == [
        "point",
        "node",
        "handle_desc_handle_win32",
        "handle_desc_handle",
        "handle_desc_range",
        "handle_desc",
    ]
    handle = records["handle_desc_handle"]
    assert (handle.kind, handle.nested_in, handle.size) == ("union", "handle_desc", 16)
    assert handle.c_spelling == "__typeof__(((struct handle_desc *)0)->handle)"
    win32 = records["handle_desc_handle_win32"]
    assert win32.nested_in == "handle_desc_handle"
    assert [f.type for f in win32.fields] == [
        Pointer(Builtin("void")),
        Pointer(Builtin("void"), True),
    ]
    desc = records["handle_desc"]
    assert [(f.name, f.type, f.anonymous) for f in desc.fields] == [
        ("type", Builtin("int"), False),
        ("handle", RecordRef("handle_desc_handle"), False),
        ("size", Builtin("unsigned long long"), False),
        ("range", RecordRef("handle_desc_range"), False),
    ]


def test_struct_nested_module():
    mod = module("struct_nested")
    first, second = mod.node(), mod.node()
    second.tag = b"2"
    first.next = ctypes.pointer(second)
    first.where = mod.point(3, 4)
    assert first.next.contents.tag == b"2"
    assert not second.next  # NULL
    assert (first.where.x, first.where.y) == (3, 4)
    d = mod.handle_desc()
    d.handle.win32.handle = 0x1234
    assert d.handle.win32.handle == 0x1234
    assert d.handle.object == 0x1234  # one union: the first pointer overlaps
    d.range.hi = -2
    assert d.range.hi == -2
    assert issubclass(mod.handle_desc_handle, ctypes.Union)


# ---------------------------------------------------------------- struct_anonymous.h


def test_struct_anonymous_model():
    records = model("struct_anonymous").by_name("records")
    parent = records["with_anonymous_union"]
    anon = parent.fields[1]
    assert anon == Field("_anon0", RecordRef("with_anonymous_union__anon0"), 8, anonymous=True)
    member = records["with_anonymous_union__anon0"]
    assert (member.kind, member.c_spelling, member.nested_in) == (
        "union",
        None,
        "with_anonymous_union",
    )
    assert [f.name for f in member.fields] == ["pad", "k"]
    s = records["with_anonymous_struct"]
    assert [(f.name, f.offset, f.anonymous) for f in s.fields] == [
        ("head", 0, False),
        ("_anon0", 8, True),
        ("tail", 24, False),
    ]


def test_struct_anonymous_module():
    mod = module("struct_anonymous")
    assert mod.with_anonymous_union._anonymous_ == ("_anon0",)
    assert mod.with_anonymous_struct._anonymous_ == ("_anon0",)
    obj = mod.with_anonymous_union()
    obj.k.a = 5  # reachable directly on the parent, as in C
    obj.k.b = 1.5
    assert obj.pad[0] & 0xFFFFFFFF == 5  # the union's other member sees it
    assert obj._anon0.k.a == 5
    assert mod.with_anonymous_union.k.offset == 8
    assert mod.with_anonymous_union.trailer.offset == 40
    s = mod.with_anonymous_struct(head=b"h", tail=b"t")
    s.second = 2.0
    assert (s.first, s.second, s.head, s.tail) == (0, 2.0, b"h", b"t")
    assert mod.with_anonymous_struct.second.offset == 16


# ---------------------------------------------------------------- overaligned.h

# gcc's answers, written out so this key test reads on its own.
OVERALIGNED = {
    "float4": (16, 16, {"x": 0, "y": 4, "z": 8, "w": 12}),
    "double2": (16, 16, {"x": 0, "y": 8}),
    "holds_float4": (32, 16, {"a": 0, "v": 16}),
    "holds_array": (80, 16, {"c": 0, "arr": 16, "after": 64}),
    "holds_double2": (48, 16, {"n": 0, "d": 16, "tail": 32}),
    "int2": (8, 8, {"x": 0, "y": 4}),
    "double4_32a": (32, 32, {"x": 0, "y": 8, "z": 16, "w": 24}),
    "double3_32a": (32, 32, {"x": 0, "y": 8, "z": 16}),
    "holds_32a": (160, 32, {"c": 0, "v": 32, "arr": 64, "i2": 128}),
    "aligned_member": (32, 16, {"c": 0, "i": 16, "tail": 20}),
}
# How each class reaches C's alignment: a trailing zero-length member of a ctypes
# scalar so aligned (every Python), or _align_ plus require_alignment beyond 16.
ALIGNED_BY_MEMBER = {"float4": 16, "double2": 16, "int2": 8, "aligned_member": 16}
ALIGNED_BEYOND_SCALARS = {"double4_32a", "double3_32a"}
# Padding C's alignment rules alone would not make: double3_32a's tail up to 32, and
# the bytes before aligned_member.i, declared aligned(16).
PADDED = {"double3_32a", "aligned_member"}


def test_overaligned_model():
    records = model("overaligned").by_name("records")
    for name, (size, align, offsets) in OVERALIGNED.items():
        rec = records[name]
        assert (rec.size, rec.align) == (size, align), name
        assert {f.name: f.offset for f in rec.fields} == offsets, name


def test_overaligned_module():
    """Every class has C's alignment itself, so ctypes puts `v` after `int a` at 16 as
    C does, with no padding member; explicit padding only where C's rules would not
    pad."""
    mod = module("overaligned")
    for name, (size, align, offsets) in OVERALIGNED.items():
        cls = getattr(mod, name)
        assert ctypes.sizeof(cls) == size, name
        assert ctypes.alignment(cls) == align, name
        for field, offset in offsets.items():
            assert getattr(cls, field).offset == offset, f"{name}.{field}"
        names = [f[0] for f in cls._fields_]
        assert any(n.startswith("_pad") for n in names) == (name in PADDED), name
        if name in ALIGNED_BY_MEMBER:
            assert cls._fields_[-1][0] == f"_align{align}", name
            assert ctypes.sizeof(cls._fields_[-1][1]) == 0, name
            assert ctypes.alignment(cls._fields_[-1][1]) == align, name
        else:
            assert not [n for n in names if n.startswith("_align")], name
        assert ("_align_" in cls.__dict__) == (name in ALIGNED_BEYOND_SCALARS), name
    # The alignment member comes last: positional construction fills C's members.
    v = mod.float4(1.0, 2.0, 3.0, 4.0)
    assert (v.x, v.y, v.z, v.w) == (1.0, 2.0, 3.0, 4.0)
    assert bytes(mod.double4_32a(1.0, 2.0, 3.0, 4.0)) == bytes(
        (ctypes.c_double * 4)(1.0, 2.0, 3.0, 4.0)
    )
    h = mod.holds_array()
    h.arr[2].w = 9.0
    h.after = 7
    raw = bytes(h)
    assert raw[64:68] == (7).to_bytes(4, sys.byteorder)
    assert raw[16 + 2 * 16 + 12 : 16 + 3 * 16] == ctypes.string_at(
        ctypes.byref(ctypes.c_float(9.0)), 4
    )


@needs_gcc
def test_overaligned_table_is_gcc():
    gcc = gcc_layout("overaligned")
    for name, (size, align, offsets) in OVERALIGNED.items():
        assert (gcc[f"{name}:sizeof"], gcc[f"{name}:alignof"]) == (size, align)
        assert {f: gcc[f"{name}.{f}"] for f in offsets} == offsets


# ---------------------------------------------------------------- union.h


def test_union_model():
    records = model("union").by_name("records")
    assert (records["mixed"].kind, records["mixed"].size, records["mixed"].align) == (
        "union",
        16,
        8,
    )
    assert all(f.offset == 0 for f in records["mixed"].fields)
    assert (records["with_vec"].size, records["with_vec"].align) == (16, 16)
    assert records["holds_union"].fields[1].offset == 16


def test_union_module():
    mod = module("union")
    assert issubclass(mod.mixed, ctypes.Union) and issubclass(mod.with_vec, ctypes.Union)
    u = mod.mixed()
    u.i = 0x41424344
    assert u.bytes[:4] == (0x41424344).to_bytes(4, sys.byteorder)
    assert ctypes.alignment(mod.with_vec) == 16 and ctypes.alignment(mod.holds_union) == 16
    assert mod.holds_union.u.offset == 16
    assert [f[0] for f in mod.holds_union._fields_] == ["c", "u"]


# ---------------------------------------------------------------- typedefs.h


def test_typedefs_model():
    m = model("typedefs")
    typedefs = m.by_name("typedefs")
    assert typedefs["my_int"].target == Builtin("int")
    assert typedefs["my_int2"].target == TypedefRef("my_int")
    assert typedefs["other_name"].target == RecordRef("A")
    assert typedefs["cudaStream_t"].target == Pointer(RecordRef("CUstream_st"))
    assert typedefs["size_t"] == Typedef(
        "size_t", Builtin("unsigned long"), system=True, header="stddef.h"
    )
    assert typedefs["A_alias"] == Typedef(
        "A_alias", TypedefRef("other_name"), header="typedefs.h", from_macro=True
    )
    # `typedef struct A A;` adds no name, and an anonymous struct takes its typedef's.
    assert "A" not in typedefs and "anon_t" not in typedefs
    records = m.by_name("records")
    assert records["CUstream_st"].opaque
    assert [f.type for f in records["anon_t"].fields] == [Builtin("int"), TypedefRef("my_u64")]
    assert [f.type for f in records["uses_typedefs"].fields] == [
        RecordRef("A"),
        TypedefRef("other_name"),
        RecordRef("anon_t"),
        TypedefRef("cudaStream_t"),
        TypedefRef("cudaArray_const_t"),
        TypedefRef("size_t"),
    ]
    assert typedefs["cudaArray_const_t"].target == Pointer(
        RecordRef("cudaArray"), pointee_const=True
    )
    # The const handle's twins come from the model: a plain pointer to the same record.
    mapper = TypeMapper(m)
    assert mapper.const_twins(typedefs["cudaArray_const_t"]) == ["cudaArray_t"]
    assert mapper.const_twins(typedefs["cudaArray_t"]) == []
    assert mapper.const_twins(typedefs["cudaStream_t"]) == []


def test_typedefs_module():
    mod = module("typedefs")
    assert mod.my_int is ctypes.c_int and mod.my_int2 is ctypes.c_int
    assert mod.my_u64 is ctypes.c_ulonglong
    assert mod.other_name is mod.A and mod.A_alias is mod.A
    assert issubclass(mod.cudaStream_t, ctypes.c_void_p) and mod.cudaStream_t is not ctypes.c_void_p
    assert "size_t" not in vars(mod)  # system typedefs are mapped, not defined
    assert dict(mod.A._fields_)["length"] is ctypes.c_size_t
    assert dict(mod.uses_typedefs._fields_)["stream"] is mod.cudaStream_t
    assert issubclass(mod.cudaStream_t, StreamHandle) and issubclass(mod.cudaArray_t, Handle)
    # Kinds are what C points at: a const handle accepts its twin's; the driver's name
    # of a struct is the same kind as the runtime's, and a stream either way.
    assert mod.cudaArray_t._kind_ == "CUarray_st"  # the runtime's struct for a CUarray
    assert mod.cudaArray_const_t._kind_ == "const CUarray_st"
    assert mod.cudaArray_const_t._accepts_ == ("CUarray_st",) and mod.cudaArray_t._accepts_ == ()
    assert mod.CUstream._kind_ == mod.cudaStream_t._kind_ == "CUstream_st"
    assert issubclass(mod.CUstream, StreamHandle) and mod.CUstream(5) == mod.cudaStream_t(5)
    assert hash(mod.CUstream(5)) == hash(mod.cudaStream_t(5)) and mod.CUstream(
        5
    ) != mod.cudaArray_t(5)
    u = mod.uses_typedefs()
    u.stream = mod.cudaStream_t(0x10)
    assert u.stream.value == 0x10
    u.c.y = 2**64 - 1
    assert u.c.y == 2**64 - 1


def test_typedef_anonymous_c_spelling():
    """`typedef struct { ... } anon_t;` is spelled `anon_t` in C; `struct anon_t` is an
    incomplete, unrelated type that sizeof rejects. Same for `typedef enum { } mode_t_;`."""
    assert model("typedefs").by_name("records")["anon_t"].c_spelling == "anon_t"
    assert model("enum").by_name("enums")["mode_t_"].c_spelling == "mode_t_"


# ---------------------------------------------------------------- function_pointers.h


def test_function_pointers_model():
    m = model("function_pointers")
    typedefs = m.by_name("typedefs")
    assert typedefs["hostfn_t"].target == Pointer(
        FunctionProto(Builtin("void"), (Pointer(Builtin("void")),))
    )
    assert typedefs["cb_t"].target == Pointer(
        FunctionProto(
            Builtin("void"),
            (TypedefRef("cudaStream_t"), EnumRef("e"), Pointer(Builtin("void"))),
        )
    )
    raw = m.by_name("records")["callbacks"].fields[2]
    assert raw.type == Pointer(FunctionProto(Builtin("int"), (Builtin("int"),)))


def test_function_pointers_module():
    mod = module("function_pointers")
    cfunc = type(ctypes.CFUNCTYPE(None))
    for name in ("hostfn_t", "cb_t", "compute_t"):
        assert isinstance(getattr(mod, name), cfunc), name
    assert mod.hostfn_t._restype_ is None and mod.hostfn_t._argtypes_ == (ctypes.c_void_p,)
    assert mod.cb_t._argtypes_ == (ctypes.c_void_p, ctypes.c_uint, ctypes.c_void_p)
    assert mod.compute_t._restype_ is ctypes.c_int
    assert mod.compute_t._argtypes_ == (ctypes.c_int, ctypes.c_void_p)
    seen = []
    fn = mod.hostfn_t(lambda user: seen.append(user))
    s = mod.callbacks()
    s.fn = fn
    s.fn(0x99)  # called back through the struct field, as the runtime would
    assert seen == [0x99]
    assert dict(mod.callbacks._fields_)["raw"] is ctypes.c_void_p


# ---------------------------------------------------------------- functions.h


def test_functions_model():
    m = model("functions")
    functions = m.by_name("functions")
    assert list(functions) == [
        "scalars",
        "pointers",
        "describe",
        "launch",
        "no_params",
        "add_callback",
        "log_message",
        "deprecated_fn",
        "getProps_v2",
    ]
    assert "inline_helper" not in functions
    assert m.aliases == [SymbolAlias(public="getProps", symbol="getProps_v2")]
    # Under -DCUDA_API_PER_THREAD_DEFAULT_STREAM: getProps_v2 itself is no macro, so C
    # calls it unchanged; the macro-renamed getProps follows the define.
    assert m.per_thread_symbols == [
        SymbolAlias(public="getProps", symbol="getProps_v2_ptsz"),
        SymbolAlias(public="scalars", symbol="scalars_ptsz"),
    ]
    assert [f.name for f in m.functions if f.deprecated] == ["deprecated_fn"]
    assert [f.name for f in m.functions if f.variadic] == ["log_message"]
    assert [(p.name, p.type) for p in functions["pointers"].params] == [
        ("dst", Pointer(Builtin("void"))),
        ("src", Pointer(Builtin("void"), pointee_const=True)),
        ("count", Pointer(Builtin("int"))),
    ]
    assert functions["describe"].result == Pointer(Builtin("char"), pointee_const=True)
    assert [p.type for p in functions["launch"].params] == [
        RecordRef("dim"),
        TypedefRef("cudaStream_t"),
    ]
    assert functions["launch"].result == EnumRef("status")
    assert functions["no_params"].params == ()
    assert "getProps" not in {mac.name for mac in m.macros}


def test_functions_module():
    mod = module("functions")
    f = mod._FUNCTIONS
    c = ctypes
    assert f == {
        "add_callback": ("add_callback", c.c_int, (c.c_void_p, c.c_void_p), 0),
        "deprecated_fn": ("deprecated_fn", c.c_int, (c.c_int,), 1),
        "describe": ("describe", c.c_char_p, (c.c_uint,), 0),
        "getProps": ("getProps_v2", c.c_int, (c.c_void_p,), 0),
        "getProps_v2": ("getProps_v2", c.c_int, (c.c_void_p,), 0),
        "launch": ("launch", c.c_uint, (mod.dim, c.c_void_p), 0),
        "log_message": ("log_message", c.c_int, (c.c_int, c.c_void_p), 0),
        "no_params": ("no_params", None, (), 0),
        "pointers": ("pointers", c.c_int, (c.c_void_p, c.c_void_p, c.c_void_p), 0),
        "scalars": ("scalars", c.c_int, (c.c_int, c.c_ulonglong, c.c_double), 0),
    }
    assert list(f) == sorted(f)
    assert (
        mod.SYMBOLS_LEGACY["getProps"] == "getProps_v2"
        and mod.SYMBOLS_LEGACY["getProps_v2"] == "getProps_v2"
    )
    assert mod.SYMBOLS_PER_THREAD == dict(
        mod.SYMBOLS_LEGACY, getProps="getProps_v2_ptsz", scalars="scalars_ptsz"
    )
    from cudart._binding import per_thread_default_stream

    assert mod.SYMBOLS is (
        mod.SYMBOLS_PER_THREAD if per_thread_default_stream() else mod.SYMBOLS_LEGACY
    )
    assert "getProps" in dir(mod) and "inline_helper" not in dir(mod)


# ---------------------------------------------------------------- inline_forwarders.h


def test_inline_forwarders_model():
    """A wrapper whose body only passes its parameters on is an alias of the function it
    calls, carrying the wrapper's docs; every other body is left out, with a reason."""
    m = model("inline_forwarders")
    assert m.aliases == [SymbolAlias("widget_open", "__widget_open_1_2", inline=True)]
    # The wrapper's name stringifies to itself: no per-thread symbol of its own.
    assert m.per_thread_symbols == []
    opened = m.by_name("functions")["__widget_open_1_2"]
    assert opened.doc is not None and "Opens a widget" in opened.doc.brief
    assert sorted(name for name, _ in m.unbound_inline) == [
        "widget_size_after",
        "widget_size_kept",
        "widget_size_swapped",
    ]


def test_inline_forwarders_module_and_plan():
    """Bound under the wrapper's name only (C code never calls the versioned symbol),
    planned from the wrapper's docs."""
    from generator.resolve import describe, resolve

    f = module("inline_forwarders")._FUNCTIONS
    assert f["widget_open"] == (
        "__widget_open_1_2",
        ctypes.c_uint,
        (ctypes.c_void_p, ctypes.c_uint),
        0,
    )
    assert "__widget_open_1_2" not in f and "__widget_size_1_2" in f
    described = [describe(p) for p in resolve(model("inline_forwarders"))]
    assert "widget_open(flags:scalar) -> (w:handle)" in described
    assert not any(line.startswith("__widget_open") for line in described)


# ---------------------------------------------------------------- diagnostics


def test_headers_are_found():
    """Discovery sees the positive, negative and regression headers (a glob that
    matched nothing would pass every parametrized test vacuously)."""
    assert {"enum", "functions", "overaligned"} <= set(WITH_EXPECTATION)
    assert set(REFUSED) >= {"diagnostics", "warning"}
    assert set(CONSTRUCTS) - set(WITH_EXPECTATION) >= {"tag_in_member", "const_pointers"}
    assert sorted(WITH_EXPECTATION) == sorted(
        p.stem for p in EXPECTATIONS.glob("*.py") if (HEADERS / f"{p.stem}.h").exists()
    )


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused(name):
    """A header the generator must refuse (diagnostics.h: an error; warning.h: any
    warning stops it too) raises, naming each of its `// expect-error:` texts."""
    with pytest.raises((ParseError, RenderError)) as info:
        m = parse_header(name)
        generation = generation_context(m, context(name))
        render_module(generation)
        render_checked(generation)
    message = str(info.value)
    for text in REFUSED[name]:
        assert text in message, f"{name}.h: {text!r} not in {message!r}"


# ---------------------------------------------------------------- determinism


@pytest.mark.parametrize("name", CONSTRUCTS)
def test_deterministic(name):
    first, second = parse_header(name), parse_header(name)
    assert first == second
    assert (
        render_module(generation_context(first, context(name))).encode()
        == render_module(generation_context(second, context(name))).encode()
    )
    assert render_module(generation_context(first, context(name))) == render_module(
        generation_context(first, context(name))
    )


def test_deterministic_across_hash_seeds():
    """No output depends on set or dict hashing: other seeds, other processes, same bytes."""
    code = (
        "import sys, hashlib\n"
        "from tests.generator.test_constructs import CONSTRUCTS, parse_header, context\n"
        "from generator.context import generation_context\n"
        "from generator.render.raw import render_module\n"
        "for n in CONSTRUCTS:\n"
        "    text = render_module(generation_context(parse_header(n), context(n)))\n"
        "    print(n, hashlib.sha256(text.encode()).hexdigest())\n"
    )
    import hashlib

    here = "\n".join(f"{n} {hashlib.sha256(rendered(n).encode()).hexdigest()}" for n in CONSTRUCTS)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUDART_")}
    env["PYTHONPATH"] = os.pathsep.join((str(REPO), str(REPO / "tests" / "support")))
    for seed in ("1", "12345"):
        env["PYTHONHASHSEED"] = seed
        proc = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO
        )
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == here, f"PYTHONHASHSEED={seed}"


# ---------------------------------------------------------------- regressions
# Generator bugs these headers once exposed.


def test_tag_first_named_in_member():
    """`struct user { struct never_declared *p; };` declares the tag at file scope in C;
    the model should hold it as an opaque record and the field render as c_void_p."""
    m = parse_header("tag_in_member")
    assert m.by_name("records")["never_declared"].opaque
    text = render_module(generation_context(m, context("tag_in_member")))
    assert '("p", c_void_p),' in text


def test_nested_name_clash():
    """`struct outer { struct { double y; long long z; } inner; }` next to a real
    `struct outer_inner { char only; }`: outer.inner must keep its own type (or the
    generator must refuse), not silently become struct outer_inner padded to size."""
    m = parse_header("nested_name_clash")
    records = m.by_name("records")
    field = records["outer"].fields[0]
    assert [f.name for f in records[field.type.name].fields] == ["y", "z"]


def test_prototype_comments_spell_records_as_c_does():
    text = render_module(generation_context(parse_header("union_param"), context("union_param")))
    assert "# int takes_union(union U *u)" in text
    assert "# int takes_anon(anon_t *a)" in text


# ---------------------------------------------------------------- the checked layer


def test_checked_expectation():
    """functions.h through resolve and the checked template, byte for byte reviewed:
    scalars in, a pointer in, an int written through `int *count` (documented as
    returned) out, a handle in, a struct result, and no form for the variadic one."""
    text = render_checked(generation_context(model("functions"), context("functions")))
    snapshot_files.hold(EXPECTATIONS / "checked_functions.py", text)
    assert "def log_message(" not in text


def test_prototype_comments_put_const_where_c_does():
    """`void *const *dsts` is a pointer to const pointers, not `const void **`."""
    text = render_module(
        generation_context(parse_header("const_pointers"), context("const_pointers"))
    )
    assert (
        "# int copy_batch(void *const *dsts, const void *const *srcs, const char **names)" in text
    )


def test_cxx_twin_defaults_and_doc_positions():
    from generator.resolve import doc_name_mismatches, resolve

    m = model("cxx_defaults_and_doc_positions")
    functions = m.by_name("functions")
    assert [p.default for p in functions["allocate"].params] == [None, None, "FLAG_GLOBAL"]
    assert [p.default for p in functions["other_list"].params] == [None, None]
    assert doc_name_mismatches(m) == ["handle_out for parameter export_handle.shareable"]
    plans = {p.name: p for p in resolve(m)}
    allocate = {p.name: p for p in plans["allocate"].params}
    assert allocate["flags"].default == "FLAG_GLOBAL"
    shareable = next(p for p in plans["export_handle"].params if p.name == "shareable")
    assert shareable.doc == "Where the handle goes"
    # A record's C++-only constructor defaults its members (dim3(512) is (512, 1, 1)).
    records = {r.name: r for r in m.records}
    assert records["grid3"].cxx_defaults == (("x", 1), ("y", 1), ("z", 7))
    assert records["partial"].cxx_defaults == ()
    text = rendered("cxx_defaults_and_doc_positions")
    assert 'cxx_defaults(grid3, {"x": 1, "y": 1, "z": 7})' in text


def test_a_declaration_opening_with_a_macro_is_read_from_its_own_tokens(manifest):
    """libclang tokenizes the extent of a declaration that opens with a macro
    (cuda.h's `__CUDA_DEPRECATED`) from where that macro is defined: thousands of
    tokens, for each of 49 functions (the driver's parse took 10-25 s a version). Only
    the declaration's own are read."""
    import clang.cindex as ci

    from generator.fetch import fetch_version
    from generator.parse import (
        SHIMS,
        ParseInput,
        _declaration_groups,
        _tokens_from_name,
        clang_args,
        system_include_dirs,
    )

    headers = fetch_version(manifest, "12.5", lambda _: None, "driver")
    inp = ParseInput(
        headers=headers.headers,
        include_dirs=headers.include_dirs,
        system_include_dirs=(SHIMS, *system_include_dirs()),
        foreign_dirs=(SHIMS,),
    )
    name, text = inp.umbrella
    options = ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD
    tu = ci.Index.create().parse(
        name, args=clang_args(inp), unsaved_files=[(name, text)], options=options
    )
    cursor = next(c for c in tu.cursor.get_children() if c.spelling == "cuDeviceGetProperties")
    tokens = [t.spelling for t in _tokens_from_name(cursor)]
    assert tokens == (
        "__CUDA_DEPRECATED CUresult CUDAAPI cuDeviceGetProperties "
        "( CUdevprop * prop , CUdevice dev )".split()
    )
    assert _declaration_groups(cursor) == (
        "cuDeviceGetProperties",
        [["CUdevprop", "*", "prop"], ["CUdevice", "dev"]],
    )


# ---------------------------------------------------------------- anonymous_bytes.h


def test_anonymous_bytes_module():
    """A byte array in an anonymous member reads and writes all N bytes through the
    parent, where C reaches it; a name beside it stays text."""
    from cudart._layout import BinaryField

    mod = module("anonymous_bytes")
    cls = mod.node_params
    assert isinstance(cls.__dict__["asBytes"], BinaryField)
    assert (cls.asBytes.offset, cls.asBytes.size) == (8, 16)
    p = cls()
    p.asBytes = b"\x00ab\x00cd"
    assert p.asBytes == b"\x00ab\x00cd" + bytes(10)
    assert p.reserved1[0] == int.from_bytes(b"\x00ab\x00cd\x00\x00", "little")
    assert p.name == b""  # text: up to the first zero
