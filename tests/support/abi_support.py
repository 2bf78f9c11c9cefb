"""gcc as the judge of the generated bindings' ABI: the machinery behind test_abi.py.

For one version of the manifest:

1. The generator's own parser lists the C entities of the headers (the model). From it
   a *plan* is made: which records, fields, enums, enumerators, typedefs, macros and
   function names to measure, each under a fact key such as
   ``field.offset|cudaExternalMemoryHandleDesc|handle.win32.name``. The plan is plain
   JSON, so another Python interpreter can read it without the generator installed.
2. A C program built from the plan with the system gcc, against the very same headers,
   prints C's value of every fact: sizeof, _Alignof, offsetof, each record's offset
   and size inside a user's `struct { char c; T t; }` and `T t[3]`, enumerator and
   macro values, and the preprocessor's expansion of every function name.
3. The generated module (``cudart.sys_XXXXX``) gives the Python value of every fact,
   measured with ctypes on the classes users get (``python_side``); nothing on this
   side comes from the model.
4. The real libcudart of the version says which symbols it exports.

The model's own numbers are carried along only to show, next to a mismatch, whether
the parser or the renderer went wrong.

Run as a script (with the project's venv python) for a per-version summary table:

    .venv/bin/python tests/support/abi_support.py [--surface driver|nvrtc] [--pythons]

(--surface: another header family than the runtime's; --pythons: the same table under
each other supported Python, 3.11 to 3.13.)

This module imports only the standard library at the top: ``python_side`` must run in
interpreters that have nothing but this checkout on their path.
"""

from __future__ import annotations

import ctypes
import enum
import functools
import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from _ctypes import CFuncPtr  # the base of every CFUNCTYPE class (ctypes._CFuncPtr)
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]

CATEGORIES = (
    "records",
    "embedded",
    "fields",
    "enums",
    "enumerators",
    "typedefs",
    "macros",
    "symbols",
    "exports",
)

# Fact key prefix -> category. Python-only keys that C answers under another key are
# translated by _C_KEY_OF below.
_CATEGORY_OF_PREFIX = {
    "record.size": "records",
    "record.align": "records",
    "field.offset": "fields",
    "field.size": "fields",
    "field.offset_flat": "fields",
    # A record inside a user's struct: `struct { char c; T t; }` (offset of t, sizeof)
    # and `struct { char c; T t[3]; }` (sizeof). Only C's alignment of T makes these
    # right, in any struct ctypes lays out, not just the generated ones.
    "embedded.offset": "embedded",
    "embedded.size": "embedded",
    "embedded.array_size": "embedded",
    "enum.size": "enums",
    "enum.align": "enums",
    "enum.signed": "enums",
    "enumerator": "enumerators",
    "enum.member": "enumerators",
    "typedef.size": "typedefs",
    "typedef.align": "typedefs",
    "macro": "macros",
    "symbol": "symbols",
    "symbol_pt": "symbols",  # the symbol under -DCUDA_API_PER_THREAD_DEFAULT_STREAM
}
# The define of C's per-thread default stream, under which the second gcc run expands names.
PER_THREAD_DEFINE = "CUDA_API_PER_THREAD_DEFAULT_STREAM"
# Python measures some facts twice (the IntEnum member and the module-level int; a field
# reached through an anonymous member and through the parent's flattened attribute);
# C has one value for both.
_C_KEY_OF = {"enum.member": "enumerator", "field.offset_flat": "field.offset"}

# Members the generator adds beside C's: explicit padding, and the zero-length member
# that gives a record C's alignment (("_align16", c_longdouble * 0)).
_PAD = re.compile(r"_(?:pad|align)\d+")


def fact_key(kind: str, *parts: str) -> str:
    return "|".join((kind,) + parts)


def category_of(key: str) -> str:
    return _CATEGORY_OF_PREFIX[key.split("|", 1)[0]]


def c_key_of(key: str) -> str:
    kind, _, rest = key.partition("|")
    return f"{_C_KEY_OF.get(kind, kind)}|{rest}"


# ============================================================================ the plan
# (needs the generator: only ever called in the interpreter that runs the tests)


def build_plan(model, module_name: str, module_symbols) -> dict:
    """What to measure, from the parsed headers, as JSON-able data.

    `module_symbols` (the module's SYMBOLS keys) joins the model's function and alias
    names, so that a name missing on either side still gets measured and reported.
    """
    from generator.ctypes_map import BUILTINS, TypeMapper
    from generator.model import RecordRef

    types = TypeMapper(model)
    records = model.by_name("records")

    plan_records = []
    for r in model.records:
        plan_records.append(
            {
                "name": r.name,
                "kind": r.kind,
                "c": r.c_spelling,
                "opaque": r.opaque,
                "fields": [f.name for f in r.fields],
                "anonymous": [f.name for f in r.fields if f.anonymous],
            }
        )

    # Fields, measured from every enclosing record C can name: descend through records
    # defined inside the one being walked (nested_in), never through separately
    # declared ones, which are roots of their own. An anonymous member adds nothing to
    # the C path (C reads its fields as the parent's) but its _anonN name to Python's.
    plan_fields = []

    def walk(root, rec, c_prefix: str, py_path: list[str], flat_path: list[str]) -> None:
        for f in rec.fields:
            py = py_path + [f.name]
            if f.anonymous:
                c_path, flat = c_prefix, flat_path
            else:
                c_path = f"{c_prefix}.{f.name}" if c_prefix else f.name
                flat = flat_path + [f.name]
                plan_fields.append(
                    {
                        "root": root.name,
                        "c_root": root.c_spelling,
                        "c_path": c_path,
                        "py_path": py,
                        # The same field as users reach it, anonymous members skipped.
                        "flat_path": flat if len(flat) != len(py) else None,
                    }
                )
            inner = records.get(f.type.name) if isinstance(f.type, RecordRef) else None
            if inner is not None and inner.nested_in == rec.name and not inner.opaque:
                walk(root, inner, c_path, py, flat)

    for r in model.records:
        if r.c_spelling and not r.opaque:
            walk(r, r, "", [], [])

    plan_enums = []
    for i, e in enumerate(model.enums):
        plan_enums.append(
            {
                "name": e.name,
                "label": e.name or f"<anonymous enum #{i} in {e.header}>",
                "c": e.c_spelling,
                "ctype": BUILTINS[e.underlying.name][0],
                "enumerators": [k.name for k in e.enumerators],
            }
        )

    plan_typedefs = []
    for t in model.typedefs:
        if t.system:
            continue
        kind = (
            "handle"
            if types.is_handle_typedef(t)
            else "callback" if types.is_callback_typedef(t) else "alias"
        )
        plan_typedefs.append({"name": t.name, "kind": kind})

    model_functions = [f.name for f in model.functions]
    alias_publics = [a.public for a in model.aliases]
    # An inline wrapper's versioned symbol (__nvJitLinkCreate_12_5) is no public name:
    # C code calls the wrapper (inline_callees says what that calls).
    forwarded = {a.symbol for a in model.aliases if a.inline}
    symbols = sorted((set(module_symbols) | set(model_functions) | set(alias_publics)) - forwarded)

    return {
        "module": module_name,
        "cuda_version": model.cuda_version,
        "records": plan_records,
        "fields": plan_fields,
        "enums": plan_enums,
        "enum_ctypes": {e.name: BUILTINS[e.underlying.name][0] for e in model.enums if e.name},
        "typedefs": plan_typedefs,
        "macros": [{"name": m.name, "kind": m.kind} for m in model.macros],
        "symbols": symbols,
        "model_functions": model_functions,
        "model_aliases": alias_publics,
        "inline_aliases": sorted(a.public for a in model.aliases if a.inline),
    }


def model_facts(model, plan: dict) -> dict:
    """The model's own numbers under the plan's keys: shown beside mismatches only."""
    from generator.ctypes_map import BUILTINS, RenderError, TypeMapper
    from generator.model import RecordRef, TypedefRef

    types = TypeMapper(model)
    records = model.by_name("records")
    facts: dict[str, object] = {}
    for r in model.records:
        if r.c_spelling and not r.opaque:
            facts[fact_key("record.size", r.name)] = r.size
            facts[fact_key("record.align", r.name)] = r.align
            offset = _round_up(1, r.align)
            facts[fact_key("embedded.offset", r.name)] = offset
            facts[fact_key("embedded.size", r.name)] = _round_up(offset + r.size, r.align)
            facts[fact_key("embedded.array_size", r.name)] = _round_up(offset + 3 * r.size, r.align)
    for fp in plan["fields"]:
        rec = records[fp["root"]]
        offset, size = 0, None
        for name in fp["py_path"]:
            f = next(f for f in rec.fields if f.name == name)
            offset += f.offset
            try:
                size = types.size_align(f.type)[0]
            except (RenderError, KeyError):
                size = None
            if isinstance(f.type, RecordRef):
                rec = records[f.type.name]
        facts[fact_key("field.offset", fp["root"], fp["c_path"])] = offset
        facts[fact_key("field.size", fp["root"], fp["c_path"])] = size
    for e, pe in zip(model.enums, plan["enums"], strict=True):
        _, size, align = BUILTINS[e.underlying.name]
        if e.c_spelling:
            facts[fact_key("enum.size", pe["label"])] = size
            facts[fact_key("enum.align", pe["label"])] = align
            facts[fact_key("enum.signed", pe["label"])] = int(_signed_builtin(e.underlying.name))
        for k in e.enumerators:
            facts[fact_key("enumerator", pe["label"], k.name)] = k.value
    for pt in plan["typedefs"]:
        layout: tuple[int | None, int | None]
        try:
            layout = types.size_align(TypedefRef(pt["name"]))
        except (RenderError, KeyError):
            layout = (None, None)
        facts[fact_key("typedef.size", pt["name"])] = layout[0]
        facts[fact_key("typedef.align", pt["name"])] = layout[1]
    for m in model.macros:
        facts[fact_key("macro", m.name)] = m.value
    alias_of = {a.public: a.symbol for a in model.aliases}
    per_thread_of = {a.public: a.symbol for a in model.per_thread_symbols}
    functions = set(plan["model_functions"])
    for name in plan["symbols"]:
        legacy = alias_of.get(name, name if name in functions else None)
        facts[fact_key("symbol", name)] = legacy
        facts[fact_key("symbol_pt", name)] = per_thread_of.get(name, legacy)
    return facts


def _round_up(value: int, align: int) -> int:
    return (value + align - 1) // align * align


def _signed_builtin(name: str) -> bool:
    return not (name.startswith("unsigned") or name == "_Bool")


# ============================================================================ the C side


_C_PRELUDE = """\
#include <stddef.h>
@SURFACE@
#include <stdint.h>
#include <stdio.h>

#define ABI_STR(x) #x
#define ABI_XSTR(x) ABI_STR(x)
/* Whether an integer constant has an unsigned type after the usual promotions. */
#define ABI_UNSIGNED(x) _Generic((x) + 0, unsigned int: 1, unsigned long: 1, \\
                                 unsigned long long: 1, default: 0)

static void abi_num(const char *key, int is_unsigned, unsigned long long v) {
    if (is_unsigned)
        printf("%s\\t%llu\\n", key, v);
    else
        printf("%s\\t%lld\\n", key, (long long)v);
}

static void abi_str(const char *key, const char *s) { printf("%s\\t%s\\n", key, s); }

int main(void) {
"""


def c_statements(plan: dict, per_thread: bool = False) -> list[tuple[str, str]]:
    """(fact key, one C statement printing it), in plan order. `per_thread`: only the
    symbol expansions, for the run under PER_THREAD_DEFINE (nothing else depends on it)."""
    if per_thread:
        return _symbol_statements(plan, "symbol_pt")
    out: list[tuple[str, str]] = []

    def num(key: str, expr: str, unsigned: str = "1") -> None:
        out.append((key, f'abi_num("{_c_safe(key)}", {unsigned}, (unsigned long long)({expr}));'))

    for r in plan["records"]:
        if r["c"] and not r["opaque"]:
            num(fact_key("record.size", r["name"]), f"sizeof({r['c']})")
            num(fact_key("record.align", r["name"]), f"_Alignof({r['c']})")
            # GNU C takes a struct type defined inline in offsetof and sizeof.
            one, three = f"struct {{ char c; {r['c']} t; }}", f"struct {{ char c; {r['c']} t[3]; }}"
            num(fact_key("embedded.offset", r["name"]), f"offsetof({one}, t)")
            num(fact_key("embedded.size", r["name"]), f"sizeof({one})")
            num(fact_key("embedded.array_size", r["name"]), f"sizeof({three})")
    for fp in plan["fields"]:
        num(
            fact_key("field.offset", fp["root"], fp["c_path"]),
            f"offsetof({fp['c_root']}, {fp['c_path']})",
        )
        num(
            fact_key("field.size", fp["root"], fp["c_path"]),
            f"sizeof((({fp['c_root']} *)0)->{fp['c_path']})",
        )
    for e in plan["enums"]:
        if e["c"]:
            num(fact_key("enum.size", e["label"]), f"sizeof({e['c']})")
            num(fact_key("enum.align", e["label"]), f"_Alignof({e['c']})")
            num(fact_key("enum.signed", e["label"]), f"(({e['c']})-1 < 0)")
        for k in e["enumerators"]:
            num(fact_key("enumerator", e["label"], k), k, f"ABI_UNSIGNED({k})")
    for t in plan["typedefs"]:
        num(fact_key("typedef.size", t["name"]), f"sizeof({t['name']})")
        num(fact_key("typedef.align", t["name"]), f"_Alignof({t['name']})")
    for m in plan["macros"]:
        if m["kind"] == "pointer":
            num(fact_key("macro", m["name"]), f"(uintptr_t)({m['name']})")
        else:
            num(fact_key("macro", m["name"]), m["name"], f"ABI_UNSIGNED({m['name']})")
    return out + _symbol_statements(plan, "symbol")


def _symbol_statements(plan: dict, kind: str) -> list[tuple[str, str]]:
    """What the preprocessor turns each public name into (an inline wrapper's name it
    leaves as it is: inline_callees reads what the wrapper calls instead)."""
    out = []
    inline = set(plan.get("inline_aliases", ()))
    for name in plan["symbols"]:
        if name in inline:
            continue
        key = fact_key(kind, name)
        out.append((key, f'abi_str("{_c_safe(key)}", ABI_XSTR({name}));'))
    return out


def _c_safe(text: str) -> str:
    if any(ch in text for ch in '"\\\t\n'):
        raise ValueError(f"fact key unfit for a C string: {text!r}")
    return text


@dataclass
class CResult:
    facts: dict[str, object]
    errors: dict[str, str]  # fact key -> gcc's complaint, for facts gcc would not compile
    source: str


def c_prelude(headers) -> str:
    """The program's opening: every surface header, in the order the parse reads them."""
    return _C_PRELUDE.replace("@SURFACE@", "".join(f'#include "{h}"\n' for h in headers))


def shim_args() -> list[str]:
    """gcc reads the GL/EGL/VDPAU types from the generator's shims, as the parse does,
    whatever the machine has installed."""
    from generator.parse import SHIMS

    return ["-isystem", str(SHIMS)]


def run_c(
    plan: dict,
    include_dirs,
    compiler: str = "gcc",
    per_thread: bool = False,
    headers=("cuda_runtime_api.h",),
) -> CResult:
    """Compile and run the fact-printing program; facts gcc rejects are set aside with
    its message (and the program rebuilt without them), so one bad fact cannot hide
    the others. `per_thread`: the symbol facts only, compiled with PER_THREAD_DEFINE."""
    statements = c_statements(plan, per_thread)
    prelude = c_prelude(headers)
    errors: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="cudart-abi-") as tmp:
        src = Path(tmp) / "abi.c"
        exe = Path(tmp) / "abi"
        for _attempt in range(6):
            kept = [(k, s) for k, s in statements if k not in errors]
            first_line = prelude.count("\n") + 1
            source = prelude + "".join(f"    {s}\n" for _, s in kept) + "    return 0;\n}\n"
            src.write_text(source)
            cmd = [compiler, "-std=gnu11", "-w", "-fmax-errors=0", "-o", str(exe), str(src)]
            if per_thread:
                cmd.insert(1, f"-D{PER_THREAD_DEFINE}")
            for d in include_dirs:
                cmd[1:1] = ["-I", str(d)]
            cmd[1:1] = shim_args()
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode == 0:
                break
            # Any mention of a fact line in gcc's messages (error or the note "in
            # expansion of macro") marks that fact as the culprit.
            bad: dict[str, str] = {}
            for m in re.finditer(
                rf"^{re.escape(str(src))}:(\d+):(?:\d+:)? (.*)$", proc.stderr, re.M
            ):
                index = int(m.group(1)) - first_line
                if 0 <= index < len(kept):
                    bad.setdefault(kept[index][0], m.group(2).strip())
            if not bad:
                raise AssertionError(f"gcc failed outside the fact lines:\n{proc.stderr[-4000:]}")
            errors.update(bad)
        else:
            raise AssertionError(f"gcc still fails after setting aside {len(errors)} facts")
        run = subprocess.run([str(exe)], capture_output=True, text=True, check=True)
    facts: dict[str, object] = {}
    for line in run.stdout.splitlines():
        key, _, value = line.partition("\t")
        facts[key] = value if key.startswith(("symbol|", "symbol_pt|")) else int(value)
    facts.update(inline_callees(plan, include_dirs, compiler, per_thread, headers))
    return CResult(facts, errors, source)


_RELOCATIONS_OF = re.compile(r"^Relocation section '\.rela\.text\.(\w+)'", re.M)


def inline_callees(
    plan: dict, include_dirs, compiler: str = "gcc", per_thread: bool = False, headers=()
) -> dict[str, object]:
    """The symbol fact of each inline wrapper (`static inline nvJitLinkCreate`, calling
    __nvJitLinkCreate_12_5): the one function its code, as gcc compiles it, calls. Each
    wrapper is emitted in a section of its own (-ffunction-sections, its address taken),
    whose relocations name what it calls."""
    names = plan.get("inline_aliases", ())
    if not names:
        return {}
    kind = "symbol_pt" if per_thread else "symbol"
    source = "".join(f'#include "{h}"\n' for h in headers) + "".join(
        f"void *volatile abi_keep_{i} = (void *)&{name};\n" for i, name in enumerate(names)
    )
    with tempfile.TemporaryDirectory(prefix="cudart-abi-") as tmp:
        src, obj = Path(tmp) / "inline.c", Path(tmp) / "inline.o"
        src.write_text(source)
        cmd = [compiler, "-std=gnu11", "-w", "-O1", "-ffunction-sections", "-c"]
        cmd += ["-o", str(obj), str(src), *shim_args()]
        if per_thread:
            cmd.append(f"-D{PER_THREAD_DEFINE}")
        for d in include_dirs:
            cmd += ["-I", str(d)]
        subprocess.run(cmd, capture_output=True, text=True, check=True)
        listing = subprocess.run(
            ["readelf", "-rW", str(obj)], capture_output=True, text=True, check=True
        ).stdout
    found: dict[str, object] = {}
    sections = _RELOCATIONS_OF.split(listing)
    for name, body in zip(sections[1::2], sections[2::2], strict=True):
        called = re.findall(r"R_X86_64_PLT32\s+\S+\s+(\w+)", body)
        if name in names:
            # More than one callee is no plain forwarder: shown as such, never matched.
            found[fact_key(kind, name)] = called[0] if len(called) == 1 else " ".join(called)
    return found


# ============================================================================ the Python side


def python_side(plan: dict) -> dict:
    """Every fact of the plan as the generated module gives it, plus problems found
    on the way (a class missing, an IntEnum with other members, ...).

    Only the module's namespace is read (vars(), never getattr on the module), so no
    function gets bound and no library gets loaded.
    """
    from cudart._handles import Handle  # the base of every generated handle class

    module = importlib.import_module(plan["module"])
    ns = vars(module)
    facts: dict[str, object] = {}
    problems: dict[str, list[str]] = {c: [] for c in CATEGORIES}

    def is_ctypes_type(obj) -> bool:
        try:
            ctypes.sizeof(obj)
            return isinstance(obj, type)
        except TypeError:
            return False

    # Alignment is ctypes.alignment(cls) alone, on every Python: it is what ctypes
    # uses to place the class in any Structure and array, a user's included.

    def embedded(cls) -> tuple[int, int, int]:
        """(offset of t, sizeof) of `struct { char c; T t; }` and sizeof of
        `struct { char c; T t[3]; }`, laid out by ctypes as a user's struct would be."""
        # Classes made at run time: mypy cannot see the field `t` their _fields_ add.
        one: Any = type(
            "embedded_one", (ctypes.Structure,), {"_fields_": [("c", ctypes.c_char), ("t", cls)]}
        )
        three = type(
            "embedded_three",
            (ctypes.Structure,),
            {"_fields_": [("c", ctypes.c_char), ("t", cls * 3)]},
        )
        return one.t.offset, ctypes.sizeof(one), ctypes.sizeof(three)

    # -- records
    for r in plan["records"]:
        name = r["name"]
        cls: Any = ns.get(name)  # whatever the module holds: `ok` says if it fits
        base = ctypes.Union if r["kind"] == "union" else ctypes.Structure
        measured = r["c"] and not r["opaque"]
        ok = isinstance(cls, type) and issubclass(cls, base)
        if not ok:
            problems["records"].append(
                f"{name}: module has {cls!r}, not a {base.__name__} subclass"
            )
        elif r["opaque"]:
            if "_fields_" in cls.__dict__:
                problems["records"].append(f"{name}: opaque in C, but the class has _fields_")
        elif "_fields_" not in cls.__dict__:
            problems["records"].append(f"{name}: defined in C, but the class has no _fields_")
            ok = False
        else:
            names = [f[0] for f in cls._fields_ if not _PAD.fullmatch(f[0])]
            if names != r["fields"]:
                problems["records"].append(f"{name}: _fields_ {names} != C's {r['fields']}")
            anonymous = list(cls.__dict__.get("_anonymous_", ()))
            if anonymous != r["anonymous"]:
                problems["records"].append(f"{name}: _anonymous_ {anonymous} != {r['anonymous']}")
        if measured:
            facts[fact_key("record.size", name)] = ctypes.sizeof(cls) if ok else None
            facts[fact_key("record.align", name)] = ctypes.alignment(cls) if ok else None
            keys = tuple(
                fact_key(kind, name)
                for kind in ("embedded.offset", "embedded.size", "embedded.array_size")
            )
            values: tuple[int | None, ...] = (None,) * 3
            if ok:
                try:
                    values = embedded(cls)
                except Exception as exc:  # noqa: BLE001 - reported as a mismatch
                    problems["embedded"].append(f"{name}: {type(exc).__name__}: {exc}")
            facts.update(zip(keys, values, strict=True))

    # -- fields
    def member_type(cls, name: str):
        fields = {f[0]: f[1] for f in cls.__dict__.get("_fields_", ())}
        if name in fields:
            return fields[name]
        for anon in cls.__dict__.get("_anonymous_", ()):
            found = member_type(fields[anon], name)
            if found is not None:
                return found
        return None

    def walk(root: str, path: list[str]) -> tuple[int, int | None]:
        cls, offset, size = ns[root], 0, None
        for name in path:
            descriptor = cls.__dict__.get(name) or getattr(cls, name)
            offset += descriptor.offset
            size = descriptor.size
            cls = member_type(cls, name)
        return offset, size

    for fp in plan["fields"]:
        keys = (
            fact_key("field.offset", fp["root"], fp["c_path"]),
            fact_key("field.size", fp["root"], fp["c_path"]),
        )
        try:
            facts[keys[0]], facts[keys[1]] = walk(fp["root"], fp["py_path"])
        except Exception as exc:  # noqa: BLE001 - reported as a mismatch
            facts[keys[0]] = facts[keys[1]] = None
            problems["fields"].append(
                f"{fp['root']}.{'.'.join(fp['py_path'])}: {type(exc).__name__}: {exc}"
            )
        if fp["flat_path"]:
            key = fact_key("field.offset_flat", fp["root"], fp["c_path"])
            try:
                facts[key] = walk(fp["root"], fp["flat_path"])[0]
            except Exception as exc:  # noqa: BLE001
                facts[key] = None
                problems["fields"].append(
                    f"{fp['root']}.{'.'.join(fp['flat_path'])}: {type(exc).__name__}: {exc}"
                )

    # -- enums and enumerators
    for e in plan["enums"]:
        label = e["label"]
        ct = getattr(ctypes, e["ctype"])
        if e["c"]:
            facts[fact_key("enum.size", label)] = ctypes.sizeof(ct)
            facts[fact_key("enum.align", label)] = ctypes.alignment(ct)
            facts[fact_key("enum.signed", label)] = int(ct(-1).value < 0)
        members = None
        if e["name"] and e["enumerators"]:
            cls = ns.get(e["name"])
            if not (isinstance(cls, type) and issubclass(cls, enum.IntEnum)):
                problems["enums"].append(f"{label}: module has {cls!r}, not an IntEnum")
            else:
                members = dict(cls.__members__)  # aliases (equal values) included
                if list(members) != e["enumerators"]:
                    problems["enums"].append(
                        f"{label}: IntEnum members {list(members)} != C's {e['enumerators']}"
                    )
        for k in e["enumerators"]:
            value = ns.get(k)
            if not isinstance(value, int) or isinstance(value, bool):
                problems["enumerators"].append(f"{k}: module-level value {value!r} is not an int")
                value = None
            facts[fact_key("enumerator", label, k)] = None if value is None else int(value)
            if members is not None:
                facts[fact_key("enum.member", label, k)] = int(members[k]) if k in members else None

    # -- typedefs
    enum_ctypes = plan["enum_ctypes"]
    for t in plan["typedefs"]:
        name = t["name"]
        obj = ns.get(name)
        ct = None
        if isinstance(obj, type) and issubclass(obj, enum.IntEnum):
            ct = getattr(ctypes, enum_ctypes[obj.__name__]) if obj.__name__ in enum_ctypes else None
            if ct is None:
                problems["typedefs"].append(
                    f"{name}: IntEnum {obj.__name__} is no enum of the headers"
                )
        elif is_ctypes_type(obj):
            ct = obj
        else:
            problems["typedefs"].append(f"{name}: module has {obj!r}, no ctypes type or IntEnum")
        if (
            ct is not None
            and t["kind"] == "handle"
            and not (issubclass(ct, ctypes.c_void_p) and ct is not ctypes.c_void_p)
        ):
            problems["typedefs"].append(
                f"{name}: a handle, but {ct!r} is no distinct c_void_p subclass"
            )
        if ct is not None and t["kind"] == "handle" and not issubclass(ct, Handle):
            problems["typedefs"].append(f"{name}: a handle, but {ct!r} is no cudart Handle")
        if ct is not None and t["kind"] == "callback" and not issubclass(ct, CFuncPtr):
            problems["typedefs"].append(f"{name}: a callback, but {ct!r} is no CFUNCTYPE")
        facts[fact_key("typedef.size", name)] = ctypes.sizeof(ct) if ct is not None else None
        facts[fact_key("typedef.align", name)] = ctypes.alignment(ct) if ct is not None else None

    # -- macros
    for m in plan["macros"]:
        value = ns.get(m["name"])
        if not isinstance(value, int) or isinstance(value, bool):
            problems["macros"].append(f"{m['name']}: module has {value!r}, not an int")
            value = None
        facts[fact_key("macro", m["name"])] = value

    # -- symbols: each map against C's build with or without the per-thread define
    tables = {}
    for kind, table_name in (("symbol", "SYMBOLS_LEGACY"), ("symbol_pt", "SYMBOLS_PER_THREAD")):
        table = ns.get(table_name)
        if not isinstance(table, dict):
            problems["symbols"].append(f"{table_name} is {table!r}, not a dict")
            table = {}
        tables[table_name] = table
        for name in plan["symbols"]:
            facts[fact_key(kind, name)] = table.get(name)
    # SYMBOLS is what functions bind through: it must be the map the switch selects.
    from cudart._binding import per_thread_default_stream

    in_force = "SYMBOLS_PER_THREAD" if per_thread_default_stream() else "SYMBOLS_LEGACY"
    symbols = ns.get("SYMBOLS")
    if symbols is not tables[in_force]:
        problems["symbols"].append(f"SYMBOLS is not {in_force}, the map in force")

    return {
        "python": sys.version.split()[0],
        "version_info": list(sys.version_info[:3]),
        "executable": sys.executable,
        "cuda_version": ns.get("CUDA_VERSION"),
        "symbols_table": dict(tables["SYMBOLS_LEGACY"]),
        "facts": facts,
        "problems": problems,
    }


def python_side_in(interpreter: str, plan: dict) -> dict:
    """python_side(plan) run by another interpreter, with this checkout on its path."""
    with tempfile.TemporaryDirectory(prefix="cudart-abi-") as tmp:
        plan_path = Path(tmp) / "plan.json"
        plan_path.write_text(json.dumps(plan))
        code = (
            "import json, sys\n"
            f"sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})\n"
            "import abi_support\n"
            f"plan = json.load(open({str(plan_path)!r}))\n"
            "print(json.dumps(abi_support.python_side(plan)))\n"
        )
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("CUDART_", "CUDA_HOME", "CUDA_PATH"))
        }
        env["PYTHONPATH"] = str(REPO)
        proc = subprocess.run(
            [interpreter, "-c", code], capture_output=True, text=True, env=env, cwd=REPO
        )
    if proc.returncode != 0:
        raise AssertionError(
            f"{interpreter} failed ({proc.returncode}):\n"
            f"{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
        )
    return json.loads(proc.stdout)


_PYTHON_SIDES: dict[tuple[str, str], dict] = {}


def python_side_cached(interpreter: str, plan: dict) -> dict:
    """python_side_in, once per interpreter and module in this process: several tests
    read the same measurements."""
    key = (interpreter, plan["module"])
    if key not in _PYTHON_SIDES:
        _PYTHON_SIDES[key] = python_side_in(interpreter, plan)
    return _PYTHON_SIDES[key]


# The Pythons the package supports; each must lay the records out as C does.
SUPPORTED_PYTHONS = ((3, 11), (3, 12), (3, 13))


def other_pythons() -> list[str]:
    """Interpreter names (python3.12) of the supported Pythons other than this one."""
    return [
        f"python{major}.{minor}"
        for major, minor in SUPPORTED_PYTHONS
        if (major, minor) != sys.version_info[:2]
    ]


@functools.cache
def find_interpreter(name: str) -> tuple[str | None, str]:
    """(path, '') of a working `name` (python3.13), or (None, why not).

    A pyenv shim on PATH answers only for the versions pyenv has selected; when it
    refuses, the interpreter pyenv installed under its root is used directly.
    """
    tried = []
    candidates = []
    on_path = shutil.which(name)
    if on_path:
        candidates.append(on_path)
    else:
        tried.append(f"{name} not on PATH")
    minor = name.removeprefix("python")
    roots = [os.environ.get("PYENV_ROOT"), str(Path.home() / ".pyenv")]
    for root in dict.fromkeys(r for r in roots if r):
        candidates += sorted(str(p) for p in Path(root, "versions").glob(f"{minor}.*/bin/{name}"))
    for candidate in candidates:
        try:
            proc = subprocess.run(
                [candidate, "-c", "import ctypes, sys; print(sys.version_info[:2])"],
                capture_output=True,
                text=True,
                timeout=60,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            tried.append(f"{candidate}: {exc}")
            continue
        if proc.returncode == 0:
            return candidate, ""
        first = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[0]
        tried.append(f"{candidate}: {first}")
    return None, "; ".join(tried) or f"no {name} found"


# ============================================================================ the library


_EXPORT_PROBE = """\
import ctypes, json, sys
lib = ctypes.CDLL(sys.argv[1])
names = json.loads(sys.argv[2])
print(json.dumps([n for n in names if not hasattr(lib, n)]))
"""


def library_missing(library: Path, names) -> list[str]:
    """Of `names`, those the library does not export (dlsym through ctypes, in a fresh
    process: one process holds one libcudart.so.12 at a time)."""
    proc = subprocess.run(
        [sys.executable, "-c", _EXPORT_PROBE, str(library), json.dumps(sorted(set(names)))],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise AssertionError(f"loading {library} failed:\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout)


# ============================================================================ comparison


@dataclass
class VersionReport:
    key: str
    module_name: str
    model: object
    plan: dict
    c: CResult
    py: dict  # python_side() of the test interpreter
    model_values: dict
    # The symbols the surface's library lacks; None where no library is at hand to ask
    # (the driver's libcuda.so.1 comes with the NVIDIA driver, not with a wheel).
    missing_exports: list[str] | None
    module_symbols: dict = field(default_factory=dict)

    def mismatches(self, category: str, py: dict | None = None) -> list[str]:
        return compare(self, category, py or self.py)


def compare(report: VersionReport, category: str, py: dict) -> list[str]:
    """Every disagreement between gcc and the Python side in one category, as lines."""
    out = list(py["problems"].get(category, ()))
    if category == "exports":
        return out + [
            f"{s}: not exported by {report.plan['module']}'s library"
            for s in report.missing_exports or ()
        ]
    for key, value in py["facts"].items():
        if category_of(key) != category:
            continue
        ckey = c_key_of(key)
        if ckey in report.c.errors:
            out.append(f"{key}: gcc rejects it: {report.c.errors[ckey]}")
        elif ckey not in report.c.facts:
            out.append(f"{key}: gcc printed no value")
        elif value != report.c.facts[ckey]:
            out.append(
                f"{key}: gcc={report.c.facts[ckey]!r} python={value!r} "
                f"model={report.model_values.get(ckey)!r}"
            )
    return out


# The alignment from which a record needs more than its members to be aligned as C
# aligns it: a trailing zero-length member (16), `_align_` (3.13+) or require_alignment
# (before 3.13) beyond 16, where no ctypes scalar reaches.
OVER_ALIGNED = 16


def over_aligned_records(report: VersionReport) -> dict[str, int]:
    """{record: gcc's alignment} of every record gcc aligns to OVER_ALIGNED or more
    (float4, CUtensorMap_st) and of every record that holds one, as a member, an array
    element, through a typedef or inside a nested or anonymous member, at any depth."""
    from generator.model import Array, RecordRef, TypedefRef

    model = report.model
    typedefs = model.by_name("typedefs")

    def record_of(t) -> str | None:
        while True:
            if isinstance(t, Array):
                t = t.element
            elif isinstance(t, TypedefRef) and t.name in typedefs:
                t = typedefs[t.name].target
            else:
                return t.name if isinstance(t, RecordRef) else None

    found = {
        r.name
        for r in model.records
        if report.c.facts.get(fact_key("record.align", r.name), 0) >= OVER_ALIGNED
    }
    while True:
        holders = {
            r.name
            for r in model.records
            if r.name not in found and any(record_of(f.type) in found for f in r.fields)
        }
        if not holders:
            break
        found |= holders
    return {name: report.c.facts.get(fact_key("record.align", name), 0) for name in sorted(found)}


def record_of_fact(key: str) -> str | None:
    """The record a record, embedding or field fact measures (its root record)."""
    rest = key.partition("|")[2]
    if category_of(key) in ("records", "embedded", "fields"):
        return rest.split("|", 1)[0]
    return None


_REPORTS: dict[str, VersionReport] = {}


# The module prefix of each surface's raw layer (generator.generate's module names).
PREFIXES = {"runtime": "sys_", "driver": "driver_", "nvrtc": "nvrtc_"}


def surface_report(manifest, key: str, surface: str = "runtime") -> VersionReport:
    """report_for one surface of one version of the manifest: the runtime (libcudart's
    cuda_runtime_api.h), the driver (cuda.h) or NVRTC (nvrtc.h). The other surfaces'
    headers define no version of their own that the module is named by: the pin's is."""
    from generator.fetch import fetch_version

    cached = _REPORTS.get(key if surface == "runtime" else f"{PREFIXES[surface]}{key}")
    if cached is not None:
        return cached
    header_set = fetch_version(manifest, key, lambda _m: None, surface)
    if surface == "runtime":
        return report_for(header_set)
    return report_for(header_set, PREFIXES[surface], manifest.get(key).number)


def report_for(header_set, prefix: str = "sys_", version: int | None = None) -> VersionReport:
    """Parse, compile, measure: once per version, surface and process. `prefix` names
    another surface's modules (nvrtc_), `version` its version where its headers define
    none (the pin's number)."""
    cache_key = header_set.key if prefix == "sys_" else f"{prefix}{header_set.key}"
    if cache_key in _REPORTS:
        return _REPORTS[cache_key]
    import dataclasses

    from models import model_for

    model = model_for(header_set)
    if version is not None:
        model = dataclasses.replace(model, cuda_version=version)
    module_name = f"cudart.{prefix}{model.cuda_version}"
    module = importlib.import_module(module_name)
    module_symbols = dict(vars(module).get("SYMBOLS_LEGACY", {}))
    per_thread_symbols = dict(vars(module).get("SYMBOLS_PER_THREAD", {}))
    plan = build_plan(model, module_name, set(module_symbols) | set(per_thread_symbols))
    headers = [h.name for h in header_set.headers]
    c = run_c(plan, header_set.include_dirs, headers=headers)
    # The per-thread expansions come from a second, symbols-only build; one CResult
    # holds every gcc fact, so each comparison looks in one place.
    c_pt = run_c(plan, header_set.include_dirs, per_thread=True, headers=headers)
    c.facts.update(c_pt.facts)
    c.errors.update(c_pt.errors)
    py = python_side(plan)
    wanted = (
        set(module_symbols.values())
        | set(per_thread_symbols.values())
        | set(plan["model_functions"])
    )
    report = VersionReport(
        key=header_set.key,
        module_name=module_name,
        model=model,
        plan=plan,
        c=c,
        py=py,
        model_values=model_facts(model, plan),
        missing_exports=(
            None if header_set.library is None else library_missing(header_set.library, wanted)
        ),
        module_symbols=module_symbols,
    )
    _REPORTS[cache_key] = report
    return report


# ============================================================================ summary


def _entity_of(key: str) -> str:
    """The entity a fact belongs to: 'record|R', 'field|R|path', 'enumerator|E|K', ..."""
    kind, _, rest = c_key_of(key).partition("|")
    return f"{kind.split('.')[0]}|{rest}"


def counts(report: VersionReport, py: dict | None = None) -> dict[str, tuple[int, int]]:
    """Per column: (entities checked, entities whose every fact matched gcc)."""
    py = py or report.py
    bad: set[str] = set()
    entities: dict[str, str] = {}
    for key, value in py["facts"].items():
        entity = _entity_of(key)
        entities[entity] = category_of(key)
        ckey = c_key_of(key)
        if ckey in report.c.errors or report.c.facts.get(ckey, object()) != value:
            bad.add(entity)
    aliases = set(report.plan["model_aliases"])
    missing = set(report.missing_exports or ())
    table: dict[str, list[int]] = {
        c: [0, 0]
        for c in (
            "functions",
            "aliases",
            "per_thread",
            "records",
            "embedded",
            "fields",
            "enums",
            "enumerators",
            "macros",
            "typedefs",
        )
    }
    for entity, category in entities.items():
        if category == "symbols":
            kind, name = entity.split("|", 1)
            if kind == "symbol_pt":
                # The per-thread column: the names whose per-thread symbol is their own,
                # by gcc or by the module. Each other name's per-thread fact is its
                # function's or alias's, and counted there.
                if not _per_thread_differs(report, py, name):
                    continue
                column = "per_thread"
            else:
                column = "aliases" if name in aliases else "functions"
            ok = (
                entity not in bad
                and py["facts"][fact_key(kind, name)] not in missing
                and (
                    kind == "symbol_pt"
                    or _per_thread_differs(report, py, name)
                    or fact_key("symbol_pt", name) not in bad
                )
            )
        else:
            column = category
            ok = entity not in bad
        table[column][0] += 1
        table[column][1] += ok
    return {k: (v[0], v[1]) for k, v in table.items()}


def _per_thread_differs(report: VersionReport, py: dict, name: str) -> bool:
    """Whether gcc or the module gives `name` a per-thread symbol of its own."""
    pt, legacy = fact_key("symbol_pt", name), fact_key("symbol", name)
    return report.c.facts.get(pt) != report.c.facts.get(legacy) or py["facts"].get(pt) != py[
        "facts"
    ].get(legacy)


def count_table(reports: list[VersionReport], python: str | None = None) -> str:
    """The per-version table of counts(): `matched/checked` per column, one row per
    report; `python`: measured by that interpreter instead of this one."""
    rows = []
    for r in reports:
        py = None if python is None else python_side_cached(python, r.plan)
        rows.append((r.key, counts(r, py)))
    columns = list(rows[0][1]) if rows else []
    header = ["version"] + columns
    body = [[name] + [f"{m}/{n}" for n, m in (row[c] for c in columns)] for name, row in rows]
    widths = [max(len(str(x)) for x in col) for col in zip(header, *body, strict=True)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(header, widths, strict=True))]
    lines += ["  ".join(x.rjust(w) for x, w in zip(line, widths, strict=True)) for line in body]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(REPO))
    from generator.manifest import Manifest

    surface = argv[argv.index("--surface") + 1] if "--surface" in argv else "runtime"
    manifest = Manifest.load(REPO / "cuda_headers_manifest.toml")
    reports = [surface_report(manifest, key, surface) for key in manifest.keys()]
    exports = (
        "C's expansion and the library's export"
        if all(r.missing_exports is not None for r in reports)
        else "C's expansion; no library here to ask for exports"
    )
    print(
        f"{surface}: matched/checked against gcc, Python {sys.version.split()[0]} "
        f"(functions, aliases and per_thread names: {exports})"
    )
    print(count_table(reports))
    for r in reports:
        bad = sum(len(r.mismatches(c)) for c in CATEGORIES)
        print(
            f"  {r.key}: {r.module_name}, {len(r.c.facts)} gcc facts, "
            f"{len(r.py['facts'])} Python facts, {len(r.c.errors)} facts gcc rejected, "
            f"{bad} mismatches"
        )
    if "--pythons" in argv:
        for name in other_pythons():
            interpreter, why = find_interpreter(name)
            if interpreter is None:
                print(f"\n{name}: skipped ({why})")
                continue
            print(f"\n{name} ({interpreter})")
            print(count_table(reports, interpreter))
            for r in reports:
                py = python_side_cached(interpreter, r.plan)
                bad = sum(len(compare(r, c, py)) for c in CATEGORIES if c != "exports")
                print(f"  {r.key}: {bad} mismatches under Python {py['python']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
