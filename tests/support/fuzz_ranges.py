"""Fuzz every checked (and raw) function of a version with nonsense arguments, and
classify what would reach C. Used by tests/runtime/test_fuzz_ranges.py; also a script:

    .venv/bin/python tests/support/fuzz_ranges.py 12.5 13.0     # the figures, per version

The parent side (`specs`) reads the generator's model: per function, per C parameter,
what C takes there (an integer range and an enum's values, a handle kind, a pointer
and the size of the record it points to, a string, a record by value). The child side
(`python tests/support/fuzz_ranges.py --child <module> <spec file> <progress file> <skip...>`)
imports the checked module, replaces each `_<name>` the checked functions call (the raw
module's ctypes functions, bound on first call) by a recorder that converts the
arguments as ctypes would (argtypes' from_param) and records them, then calls every
checked function once per (parameter, bad value), the other parameters legal. A
crash kills only the child: the parent counts it and reruns without that case.

"Nonsense reached C" means the recorder got, for some input (or in-out) parameter:
  * an integer outside its C type's range (what ctypes would mask or wrap), or, for an
    enum, a value that is none of its members (for a flags enum: not an OR of them);
    for an in-out value, storage holding anything but the value given;
  * for a handle: a negative int or one of 2**64 or more, or a handle object of
    another kind (not the parameter's, nor a kind C converts to it);
  * for a pointer (memory, `T *`): a negative int or one of 2**64 or more, or a handle
    object; where C reads a record, also an int from 1 to 65535, a buffer / ctypes
    object smaller than the record, or a record of another class;
  * for a function pointer (a callback C calls on its own thread) or a device
    function: memory (a buffer, a ctypes object other than a pointer) or a handle (for
    a device function, one that names no kernel);
  * for kernel arguments (`void **`): a handle, an array of non-pointers, or memory
    smaller than one pointer or not pointer-aligned;
  * for an in-memory kernel image: memory that is no image (C parses it with no length);
  * for an attribute's value: storage of another type than the attribute's;
  * for a record by value, another class.
Everything else that reaches the recorder is legitimate (None is NULL, which C checks).
The inline record builders (make_cudaExtent, ...: the "call" is the raw record's
construction) and cudart.occupancy's ports (the raw calls they make) are fuzzed alike.
For the raw layer, which converts with ctypes alone, the same rules classify what each
argtype's from_param accepts.

Every case, and each function's legal call, is made by keyword and positionally: a
compiled checked function takes its C path on a positional call only (a keyword goes to
its Python reference). Through ctypes the positional call must end as the keyword one.
Where a surface has a compiled backend (the runtime's and the driver's), the child runs
every case again both ways with the compiled functions' test build (its recorder in C's
place and its C checked functions as the public names, tests/support/fast_support.py)
and compares with the ctypes keyword call: C reached with the same arguments (an
integer as C's type holds it, a record's bytes, the caller's memory at its address,
memory the checked layer made for the call anywhere else), or the same exception class
and message (the conversions' own refusals included: cudart/_fastcall.h words them as
ctypes does). The test build records alike whichever served a call, so the grid tells
the C path by the reference's calls: a positional call that reached C without its
reference took the C path (`c_path`, per version).

A refusal is a TypeError, ValueError or OverflowError (REFUSALS; for the raw layer also
ctypes.ArgumentError); any other exception, before C or after it, is a failure, listed
by case (`other_errors`), on every way of calling and in every grid.
"""

from __future__ import annotations

import ctypes
import functools
import importlib
import inspect
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BAD = (
    "str",
    "float",
    "negative",
    "2**70",
    "None",
    "object",
    "list",
    "bytes1",
    "bytearray1",
    "handle",
)
# Also offered where a record is taken (by value or by pointer): one of another class.
RECORD_BAD = "record"
ADDRESS_END = 1 << 64
# Per library (a raw module's LIBRARY, cudart._contract): the handle given where a
# handle of another kind is wanted (the second where the first is the one wanted), and
# the record of another class (likewise). The runtime's two records have one size, so
# only the class tells them apart.
WRONG_HANDLES = {"runtime": ("cudaEvent_t", "cudaStream_t"), "driver": ("CUevent", "CUstream")}
OTHER_RECORDS = {
    "runtime": ("cudaPos", "cudaExtent"),
    "driver": ("CUDA_ARRAY_DESCRIPTOR", "CUDA_ARRAY3D_DESCRIPTOR"),
}
# The surfaces the grid fuzzes: the runtime's modules (sys_, checked_) and another
# header family's (driver_, driver_checked_).
RUNTIME = "runtime"
BACKEND_ENV = "CUDART_BACKEND"
LOWEST_RECORD = 1 << 16


# ---------------------------------------------------------------- parent: specs


def specs(model) -> dict:
    """Per checked function: its name, C parameters and what C takes for each; per
    inline record builder, the same for its parameters."""
    from generator.ctypes_map import TypeKind, TypeMapper
    from generator.resolve import IMAGES, resolve

    VOID_POINTER = TypeKind.VOID_POINTER
    types = TypeMapper(model)
    functions = []
    for plan in resolve(model):
        params = []
        c_params = {q.name: q for q in plan.function.params}
        for p in plan.params:
            t = c_params[p.name].type
            if p.role == "inout" and p.kind in ("scalar", "enum"):
                t = types.pointee(t)  # the value goes in as what the pointer points to
            check = _check(types, t)
            if p.kind == "kernel_args":
                check = {"t": "kernel_args"}
            elif p.kind == "device_function":
                check = {"t": "device_function"}
            elif (plan.function.name, p.name) in IMAGES and types.classify(t) is VOID_POINTER:
                check = {"t": "image"}  # in memory (a file's name is text)
            elif p.kind == "attribute" and p.role == "in":
                check = {"t": "attribute", "table": p.ctype, "attr": _py(plan, p.partner)}
            params.append(
                {
                    "name": p.name,
                    "py": p.py_name,
                    "role": str(p.role),
                    "kind": str(p.kind),
                    "partner": p.partner,
                    "ctype": p.ctype,
                    "check": check,
                }
            )
        functions.append({"name": plan.name, "symbol": plan.function.name, "params": params})
    builders = [
        {
            "name": b.name,
            "params": [
                {"name": q.name, "py": q.name, "role": "in", "kind": "scalar", "partner": None}
                | {"check": _check(types, q.type)}
                for q in b.params
            ],
        }
        for b in sorted(model.builders, key=lambda b: b.name)
    ]
    return {"functions": functions, "builders": builders}


def _py(plan, name: str | None) -> str | None:
    return next((p.py_name for p in plan.params if p.name == name), None)


def _check(types, t) -> dict:
    """What C takes for a value of C type `t`."""
    from generator.ctypes_map import POINTER_KINDS, TypeKind, integer_range

    kind = types.classify(t)
    if (r := integer_range(types, t)) is not None:
        return {
            "t": "int",
            "low": r.low,
            "high": r.high,
            "members": sorted(r.members) if r.members is not None else None,
            "flags": r.flags,
            "enum": r.enum,
            "bits": 8 * types.size_align(t)[0],
            "char": kind in (TypeKind.CHAR, TypeKind.BOOL),
        }
    if kind is TypeKind.HANDLE:
        name = types.handle_name(t)
        td = types.typedefs[name]
        return {"t": "handle", "cls": name, "accepts": types.const_twins(td)}
    if kind in (TypeKind.CALLBACK, TypeKind.FUNCTION_POINTER):
        return {"t": "function"}
    if kind in POINTER_KINDS or kind is TypeKind.ARRAY:
        record = cls = None
        if kind is TypeKind.POINTER and (types.classify(types.pointee(t)) is TypeKind.RECORD):
            record = types.size_align(types.pointee(t))[0]
            cls = types.record_class(types.pointee(t))
        return {"t": "pointer", "record": record, "cls": cls}
    if kind is TypeKind.RECORD:
        return {"t": "struct", "cls": types.record_class(t)}
    return {"t": "other"}


def run_version(
    module: str,
    spec: dict,
    workdir: Path,
    surface: str = RUNTIME,
    env: dict[str, str] | None = None,
) -> dict:
    """The child's figures for one version (its modules' number, "12050") of a surface,
    rerun past each case that crashed it; `env` adds to the child's environment (the
    driver's: $CUDART_DRIVER_LIBRARY, the stand-in libcuda)."""
    name = module if surface == RUNTIME else f"{surface}_{module}"
    spec_file = workdir / f"{name}.json"
    spec_file.write_text(json.dumps(spec))
    progress = workdir / f"{name}.progress"
    skip: list[int] = []
    # The backend asked for ($CUDART_BACKEND) decides whether the compiled pass runs.
    full_env = {
        k: v for k, v in os.environ.items() if k == BACKEND_ENV or not k.startswith("CUDART_")
    }
    full_env["PYTHONPATH"] = str(REPO)
    full_env.update(env or {})
    while True:
        proc = subprocess.run(
            [sys.executable, __file__, "--child", f"{surface}:{module}", str(spec_file)]
            + [str(progress)]
            + [str(i) for i in skip],
            capture_output=True,
            text=True,
            env=full_env,
            cwd=REPO,
        )
        if proc.returncode == 0:
            figures = json.loads(proc.stdout.splitlines()[-1])
            figures["checked"]["crashes"] = len(skip)
            figures["crashed_cases"] = skip
            return figures
        if proc.returncode > 0:  # a Python failure of the driver itself, not a crash
            raise AssertionError(f"{name}: fuzz driver failed:\n{proc.stdout}\n{proc.stderr}")
        crashed = progress.read_text().strip()
        if not crashed.lstrip("-").isdigit() or int(crashed) in skip:
            # Outside the grid's cases (the stub pass), or the same case again.
            raise AssertionError(f"{name}: fuzz driver crashed at {crashed!r}:\n{proc.stderr}")
        skip.append(int(crashed))


# ---------------------------------------------------------------- child


def _library(raw) -> str:
    from cudart._contract import library_of_namespace

    return library_of_namespace(vars(raw))


def _kinds_of(raw):
    """The raw module whose handles and records are `raw`'s wrong-kind values: its own
    (runtime, driver), or the runtime's of its version for a family with few or none of
    its own (NVRTC, nvJitLink)."""
    if _library(raw) in WRONG_HANDLES:
        return raw
    return importlib.import_module(f"cudart.sys_{raw.CUDA_VERSION}")


def _bad_values(raw, check: dict) -> dict:
    raw = _kinds_of(raw)
    library = _library(raw)
    first, second = WRONG_HANDLES[library]
    handle_cls = getattr(raw, first)
    if check["t"] == "handle" and (check["cls"] == first or first in check["accepts"]):
        handle_cls = getattr(raw, second)
    values = {
        "str": "x",
        "float": 1.5,
        "negative": -1,
        "2**70": 2**70,
        "None": None,
        "object": object(),
        "list": [1],
        "bytes1": b"x",
        "bytearray1": bytearray(b"x"),  # writable: where C writes, too
        "handle": handle_cls(0x1234),
    }
    taken = check.get("cls") if check["t"] in ("struct", "pointer") else None
    if taken:
        one, other = (getattr(raw, name) for name in OTHER_RECORDS[library])
        values[RECORD_BAD] = (other if taken == one.__name__ else one)()
    return values


def _filler(raw, p: dict):
    """A legal value for a parameter the case does not fuzz."""
    check = p["check"]
    if check["t"] == "int":
        if check["members"] is not None and check["flags"] is None:
            return check["members"][0]
        return 0
    if check["t"] == "struct":
        return getattr(raw, check["cls"])()
    if check["t"] == "other" and p["kind"] == "scalar":
        return 0.0
    if p["kind"] == "string":
        return b"x"
    return None


def _fillers(raw, p: dict) -> list:
    """Legal values to try for a parameter, the first the likeliest: an attribute's value
    and a byte count beside it depend on the attribute, so a few are tried."""
    first = _filler(raw, p)
    if p["kind"] == "attribute":
        return [0, 1, [0, 0], None]
    if p["check"]["t"] == "int" and first == 0:
        return [0, 1, 4, 8]
    return [first]


def _attribute_lists(checked, f: dict) -> dict:
    """Legal parallel lists for a getter of several attributes at once
    (cudaMemRangeGetAttributes: `attributes` and `dataSizes`, `numAttributes` of them):
    the first attribute of its table that has one value of a decided type."""
    out = next((p for p in f["params"] if p["kind"] == "attribute" and p["role"] == "out"), None)
    names = {p["name"]: p["py"] for p in f["params"]}
    if out is None or not {"attributes", "dataSizes", "numAttributes"} <= set(names):
        return {}
    table = vars(checked).get(out["ctype"])  # the attribute kind's ctype names its table
    if table is None:
        return {}
    attr, spec = next((a, v) for a, v in table.items() if v is not None and not v.array)
    return {
        names["attributes"]: [attr],
        names["dataSizes"]: [ctypes.sizeof(spec.ctype)],
        names["numAttributes"]: 1,
    }


def _baseline(fn, recorder: _Recorder, choices: list[tuple[str, list]]) -> dict | None:
    """The first combination of legal values that reaches the recorder (at most 256 tried)."""
    import itertools

    for n, combination in enumerate(itertools.product(*(c for _, c in choices))):
        if n == 256:
            break
        values = {name: value for (name, _), value in zip(choices, combination, strict=True)}
        recorder.calls.clear()
        try:
            fn(**values)
        except Exception:
            pass
        if recorder.calls:
            return values
    return None


# Handle kinds that name a kernel: what a device function parameter also takes.
_KERNEL_HANDLES = ("cudaKernel_t", "cudaFunction_t")


def nonsense(value, check: dict) -> str | None:
    """Why `value` reaching C for a parameter of this check is nonsense, or None."""
    from cudart._handles import Handle

    t = check["t"]
    if t == "int":
        if isinstance(value, ctypes._SimpleCData):
            value = value.value
        if not isinstance(value, int):
            return f"not an integer: {type(value).__name__}"
        if not check["low"] <= value <= check["high"]:
            return "out of range"
        if check["members"] is not None:
            if check["flags"] is not None:
                if value & ~check["flags"]:
                    return "not an OR of the flags"
            elif value not in check["members"]:
                return "not an enum value"
        return None
    if t == "handle":
        if isinstance(value, Handle):
            name = type(value).__name__
            if name != check["cls"] and name not in check["accepts"]:
                return "wrong-kind handle"
            return None
        if type(value) is int and not 0 <= value < ADDRESS_END:
            return "handle out of range"
        return None
    if t in ("function", "device_function", "kernel_args", "image"):
        if isinstance(value, int) and not isinstance(value, bool):
            return None if 0 <= value < ADDRESS_END else "pointer out of range"
        if isinstance(value, Handle):
            if t == "device_function" and type(value).__name__ in _KERNEL_HANDLES:
                return None
            return f"handle as {_WHAT[t]}"
        if value is None or isinstance(value, (ctypes.c_void_p, ctypes._Pointer)):
            return None  # an address held in ctypes: the caller's promise
        if isinstance(value, ctypes._CFuncPtr):
            return None if t == "function" else f"function pointer as {_WHAT[t]}"
        return _memory_nonsense(value, t)
    if t == "pointer":
        record = check["record"]
        if isinstance(value, Handle):
            return "handle as pointer"
        if isinstance(value, int) and not isinstance(value, bool):
            if not 0 <= value < ADDRESS_END:
                return "pointer out of range"
            if record and 0 < value < LOWEST_RECORD:
                return "small int as record pointer"
            return None
        if record:
            if isinstance(value, (bytes, bytearray)) and len(value) < record:
                return "buffer smaller than the record"
            obj = getattr(value, "_obj", value)  # byref(x)
            if isinstance(obj, (ctypes.Structure, ctypes.Union, ctypes.Array)):
                if ctypes.sizeof(obj) < record:
                    return "ctypes object smaller than the record"
            element = obj._type_ if isinstance(obj, ctypes.Array) else type(obj)
            if issubclass(element, (ctypes.Structure, ctypes.Union)):
                if element.__name__ != check["cls"]:
                    return "record of another class"
        return None
    if t == "struct":
        if type(value).__name__ != check["cls"]:
            return "another record"
        return None
    return None


_WHAT = {
    "function": "function pointer",
    "device_function": "device function",
    "kernel_args": "kernel arguments",
    "image": "kernel image",
}


def _memory_nonsense(value, t: str) -> str | None:
    """Memory (a buffer, a ctypes object or byref() of one) reaching C as what `t` is."""
    if t in ("function", "device_function"):
        return f"memory as {_WHAT[t]}"
    obj = getattr(value, "_obj", value)  # byref(x)
    try:
        view = memoryview(obj).cast("B")
    except TypeError:
        return f"{type(value).__name__} as {_WHAT[t]}"
    if t == "image":
        return None if _plausible_image(view.tobytes()) else "memory that is no kernel image"
    pointers = (ctypes.c_void_p, ctypes._Pointer, ctypes.c_char_p, ctypes._CFuncPtr)
    if isinstance(obj, ctypes.Array) and not issubclass(
        obj._type_, (*pointers, ctypes.c_char, ctypes.c_byte, ctypes.c_ubyte)
    ):
        return "array of non-pointers as kernel arguments"  # (an array of bytes: memory)
    if len(view) < ctypes.sizeof(ctypes.c_void_p):
        return "memory smaller than a pointer as kernel arguments"
    address = ctypes.cast(
        value if isinstance(value, (bytes, ctypes._CData)) else obj, ctypes.c_void_p
    )
    if (address.value or 0) % ctypes.sizeof(ctypes.c_void_p):
        return "unaligned kernel arguments"
    return None


def _plausible_image(data: bytes) -> bool:
    """A kernel image's header, as C starts parsing one (independent of cudart's check):
    a fatbin's magic and header, an ELF header, or NUL-terminated PTX text."""
    fatbin = len(data) >= 16 and int.from_bytes(data[:4], "little") == 0xBA55ED50
    elf = len(data) >= 64 and data[:4] == b"\x7fELF"
    ptx = b".version" in data and data.endswith(b"\0")
    return fatbin or elf or ptx


def _inout_nonsense(storage, given, check: dict) -> str | None:
    """What an in-out parameter's storage holds, against the value given for it."""
    obj = getattr(storage, "_obj", storage)
    if not isinstance(obj, ctypes._SimpleCData):
        return f"in-out storage is a {type(obj).__name__}"
    if check["t"] == "int" and type(given) is int and obj.value != given:
        return "in-out value masked"
    return nonsense(obj.value, check)


def _attribute_nonsense(storage, given_attr, table) -> str | None:
    """An attribute setter's value reaching C: storage of the attribute's type."""
    spec = table.get(given_attr) if table is not None else None
    if spec is None:
        return "attribute value without a decided type"
    obj = getattr(storage, "_obj", None)
    element = obj._type_ if isinstance(obj, ctypes.Array) and spec.array else type(obj)
    if element is not spec.ctype:
        return "attribute value of another type"
    return None


class _Recorder:
    """Stands for a ctypes function: converts like ctypes, records, returns success."""

    def __init__(self, restype, argtypes) -> None:
        self.restype = restype
        self.argtypes = argtypes
        self.calls: list[tuple] = []

    def __call__(self, *args):
        for i, (arg, argtype) in enumerate(zip(args, self.argtypes, strict=True)):
            try:
                argtype.from_param(arg)
            except Exception as exc:
                raise ctypes.ArgumentError(
                    f"argument {i + 1}: {type(exc).__name__}: {exc}"
                ) from None
        self.calls.append(args)
        restype = self.restype
        if restype is None:
            return None
        if restype is ctypes.c_char_p:
            return b""
        if isinstance(restype, type) and issubclass(restype, (ctypes.Structure, ctypes.Union)):
            return restype()
        return 0


def _new_figures() -> dict:
    return {
        "checked": {"cases": 0, "refused": 0, "reached": 0, "nonsense": 0, "other_errors": 0},
        "raw": {"cases": 0, "refused": 0, "reached": 0, "nonsense": 0, "other_errors": []},
        "builders": _new_part(),
        "occupancy": _new_part(),
        "baseline_refused": [],
        "nonsense_cases": [],
        "other_error_cases": [],
        "by_reason": {},
        "by_check": {},
        "range_mismatches": [],
        # The ctypes backend's cases again, positionally.
        "positional": _new_way(),
    }


def _new_part() -> dict:
    return {
        "cases": 0,
        "refused": 0,
        "reached": 0,
        "other_errors": [],
        "positional_differences": [],
    }


def _count_nonsense(figures: dict, case: str, why: str, check: str) -> None:
    figures["checked"]["nonsense"] += 1
    figures["by_reason"][why] = figures["by_reason"].get(why, 0) + 1
    figures["nonsense_cases"].append(f"{case}: {why}")
    # Which kinds of parameter the grid classified nonsense for (the test holds each
    # kind to having been classified at all).
    figures["by_check"][check] = figures["by_check"].get(check, 0) + 1


def _classify_call(figures, checked, f: dict, args: tuple, values: dict, case: str) -> None:
    """Count the first nonsense among the arguments one call handed C, if any."""
    for q, arg in zip(f["params"], args, strict=True):
        check = q["check"]
        if q["role"] == "inout":
            why = _inout_nonsense(arg, values.get(q["py"]), check)
        elif q["role"] != "in":
            continue
        elif check["t"] == "attribute":
            table = vars(checked).get(check["table"])
            why = _attribute_nonsense(arg, values.get(check["attr"]), table)
        else:
            why = nonsense(arg, check)
        if why:
            _count_nonsense(figures, f"{case} [{q['py']}]", why, check["t"])
            return


def child(which: str, spec_file: str, progress_file: str, skip: set[int]) -> dict:
    """`which`: "<surface>:<number>" ("runtime:12050", "driver:12050")."""
    warnings.simplefilter("ignore")
    surface, _, module = which.partition(":")
    if surface == RUNTIME:
        checked = importlib.import_module(f"cudart.checked_{module}")
        raw = importlib.import_module(f"cudart.sys_{module}")
    else:
        checked = importlib.import_module(f"cudart.{surface}_checked_{module}")
        raw = importlib.import_module(f"cudart.{surface}_{module}")
    from cudart._backend import compiled_for
    from cudart._contract import unpack

    spec = json.loads(Path(spec_file).read_text())
    _class_names(raw, spec)
    progress = os.open(progress_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    figures = _new_figures()
    # This pass calls through ctypes storage (the recorder converts as ctypes would),
    # whichever backend is built; the compiled one is _compiled_grid's.
    vars(checked)["_compiled"] = False
    grid, outcomes, legal_calls = _ctypes_grid(
        checked, raw, spec["functions"], figures, skip, progress
    )
    _builders(checked, raw, spec["builders"], figures)
    _occupancy(raw, spec["functions"], figures)
    _raw_layer(raw, spec["functions"], figures["raw"], unpack, figures["range_mismatches"])
    # The surfaces with a compiled backend (cudart._backend.compiled_for: libcudart's
    # and libcuda's), unless $CUDART_BACKEND=ctypes. Before the stub pass, which binds
    # the checked layer's functions (the grid reads their argtypes unbound).
    fast = compiled_for(_library(raw), raw.CUDA_VERSION)
    if fast is not None:
        # The same source built with the call recorder (the users' build has none).
        from fast_support import recording_module

        os.pwrite(progress, b"compiled".ljust(12), 0)
        fast = recording_module(raw.CUDA_VERSION, surface)
        figures["compiled"] = _compiled_grid(checked, raw, fast, grid, outcomes)
        figures["compiled_raw"] = _compiled_raw_layer(raw, fast, spec["functions"], unpack)
    if surface == "driver":  # the stand-in libcuda answers every legal call
        os.pwrite(progress, b"stub".ljust(12), 0)
        figures["stub"] = _through_stub(checked, raw, legal_calls)
    os.close(progress)
    return figures


def _ctypes_grid(checked, raw, functions: list[dict], figures: dict, skip=(), progress=None):
    """Every case of `functions` through ctypes storage (the recorder in C's place), by
    keyword (counted and classified in `figures`) and positionally (compared with it).
    Returns (the grid's cases, their outcomes by keyword, each function's legal call)."""
    case = -1
    outcomes: dict[int, tuple] = {}  # case -> _outcome(): what C got, or the refusal
    # (function, the values given, the same positionally, parameter, label, case): the
    # compiled pass gives the same objects, so an address the caller's value has is
    # comparable. The legal call of each function is a case of its own (parameter None,
    # label "legal").
    grid: list[tuple[dict, dict, tuple, str | None, str, int]] = []
    legal_calls: list[tuple[str, dict]] = []  # (function, the values that reached C)
    # Each raw function as the module declares it, taken before any call: a checked
    # function may call another's raw function (a buffer getter its size partner),
    # which binds that one in place before its own turn comes. And while the pass runs,
    # each of them records too, so such a partner never reaches C with the grid's
    # nonsense either (the size such a stand-in reports is 0).
    declared = dict(vars(checked))
    raw_functions = {
        k: v
        for k, v in declared.items()
        if k.startswith("_") and hasattr(v, "restype") and hasattr(v, "argtypes")
    }
    stand_ins = {k: _Recorder(v.restype, v.argtypes) for k, v in raw_functions.items()}
    vars(checked).update(stand_ins)
    for f in functions:
        # The Python checked function: under the compiled backend the public name is
        # the users' C build, whose positional calls would go to the real library.
        fn = python_function(checked, f["name"])
        unbound = declared["_" + f["name"]]
        recorder = _Recorder(unbound.restype, unbound.argtypes)
        vars(checked)["_" + f["name"]] = recorder
        inputs = [p for p in f["params"] if p["role"] in ("in", "inout")]
        legal = _attribute_lists(checked, f)
        choices = [
            (p["py"], [legal[p["py"]]] if p["py"] in legal else _fillers(raw, p)) for p in inputs
        ]
        fillers = _baseline(fn, recorder, choices)
        cases: list[tuple[str | None, str, object]] = []
        if fillers is None:
            figures["baseline_refused"].append(f["name"])
            fillers = {name: values[0] for name, values in choices}
        else:
            legal_calls.append((f["name"], fillers))
            cases.append((None, "legal", None))
        cases += [
            (p["py"], label, value)
            for p in inputs
            for label, value in _bad_values(raw, p["check"]).items()
        ]
        for name, label, value in cases:
            case += 1
            if case in skip:
                continue
            if progress is not None:
                os.pwrite(progress, str(case).encode().ljust(12), 0)
            values = fillers if name is None else {**fillers, name: value}
            by_position = positional(fn, values)
            grid.append((f, values, by_position, name, label, case))
            where = f"{f['name']}({name}={label})"
            figures["checked"]["cases"] += 1
            outcome, args, error = _ctypes_call(fn, recorder, values, None)
            outcomes[case] = outcome
            if args is not None:
                figures["checked"]["reached"] += 1
                _classify_call(figures, checked, f, args, values, where)
            elif isinstance(error, REFUSALS):
                figures["checked"]["refused"] += 1
            if error is not None and not isinstance(error, REFUSALS):
                # Before C or after it (making the outputs): a failure either way.
                figures["checked"]["other_errors"] += 1
                figures["other_error_cases"].append(f"{where}: {type(error).__name__}: {error}")
            # The same case positionally: the same arguments reach C, or the same
            # refusal (class and message) is raised.
            again, _, again_error = _ctypes_call(fn, recorder, values, by_position)
            _tally(figures["positional"], outcome, again, again_error, where, values, _equal)
        vars(checked)["_" + f["name"]] = stand_ins.get("_" + f["name"], unbound)
    vars(checked).update(raw_functions)
    return grid, outcomes, legal_calls


def _through_stub(checked, raw, calls: list[tuple[str, dict]]) -> dict:
    """Each function's legal call through the loaded library, bound as the checked
    layer binds it: the stand-in libcuda (tests/support/driver_stub.py) answers every
    call with CUDA_ERROR_STUB_LIBRARY, so that error back means the call reached C."""
    from cudart.errors import StatusError

    stub = int(raw.CUDA_ERROR_STUB_LIBRARY)
    result: dict = {"calls": 0, "reached": 0, "other": []}
    for name, values in calls:
        result["calls"] += 1
        try:
            getattr(checked, name)(**values)
            outcome = "returned"
        except StatusError as exc:
            outcome = "reached" if int(exc.code) == stub else f"{type(exc).__name__}: {exc}"
        except Exception as exc:
            outcome = f"{type(exc).__name__}: {exc}"
        if outcome == "reached":
            result["reached"] += 1
        else:
            result["other"].append(f"{name}: {outcome}")
    return result


def _class_names(raw, spec: dict) -> None:
    """Records by their ctypes class's name (a typedef's record is its struct's class:
    cudaEglFrame is cudaEglFrame_st), as the checked layer compares them."""
    for f in spec["functions"] + spec["builders"]:
        for p in f["params"]:
            cls = getattr(raw, p["check"].get("cls") or "", None)
            if isinstance(cls, type):
                p["check"]["cls"] = cls.__name__


def _fuzz_one(figures, key: str, name: str, call, params, fillers: dict, raw, classify):
    """Each parameter of `params` of `name` given each bad value, the others `fillers`:
    `call(values, positionally)` returns what C got (None: nothing reached it);
    `classify` says why it is nonsense, or None. Each case is called by keyword and
    positionally, to the same outcome; an exception that is no refusal is a failure."""
    part = figures[key]
    for p in params:
        for label, value in _bad_values(raw, p["check"]).items():
            part["cases"] += 1
            values = {**fillers, p["py"]: value}
            where = f"{name}({p['py']}={label})"
            (got, error), again = (_call_outcome(call, values, way) for way in (False, True))
            if again != (_comparable(got), _comparable(error)):
                part["positional_differences"].append(
                    f"{where}: by keyword {_comparable(got)} {error!r}, positionally {again}"
                )
            if error is not None and not isinstance(error, REFUSALS):
                part["other_errors"].append(f"{where}: {type(error).__name__}: {error}")
            if got is None:
                part["refused"] += 1
                continue
            part["reached"] += 1
            why = classify(got, values)
            if why:
                _count_nonsense(figures, f"{key}: {why[0]}({p['py']}={label})", why[1], why[2])


def _call_outcome(call, values: dict, positionally: bool) -> tuple:
    """(what C got or None, the exception or None); positionally, comparable forms."""
    try:
        got, error = call(values, positionally), None
    except Exception as exc:
        got, error = None, exc
    if positionally:
        return _comparable(got), _comparable(error)
    return got, error


def _comparable(value):
    """`value` as two calls' outcomes compare: storage a call made by its ctypes type,
    an exception by its class and message."""
    if isinstance(value, BaseException):
        return (type(value).__name__, str(value))
    if isinstance(value, (list, tuple)):
        return [_comparable(v) for v in value]
    if isinstance(value, _CDATA) or type(value).__name__ == "CArgObject":  # byref()
        return type(value).__name__
    return value


class _Namespace:
    """The raw module, with some of its names replaced (a recording stand-in)."""

    def __init__(self, raw, **replaced) -> None:
        self._raw = raw
        vars(self).update(replaced)

    def __getattr__(self, name: str):
        return getattr(self._raw, name)


def _builders(checked, raw, builders: list[dict], figures: dict) -> None:
    """The checked inline record builders: C is the raw record's construction (ctypes
    fields, which mask what they are given), recorded in the raw builder's place."""
    namespace = vars(checked)
    saved = namespace["_lib"]
    try:
        for b in builders:
            fn, raw_fn = getattr(checked, b["name"], None), getattr(raw, b["name"], None)
            if fn is None or fn is raw_fn:
                continue  # offered as the raw one: no integer to check (floats)
            calls: list[tuple] = []

            def record(*args, raw_fn=raw_fn, calls=calls):
                raw_fn(*args)  # what the record's fields refuse never reaches C
                calls.append(args)
                return None

            namespace["_lib"] = _Namespace(saved, **{b["name"]: record})
            fillers = {q["py"]: _filler(raw, q) for q in b["params"]}

            def call(values, positionally, fn=fn, calls=calls):
                calls.clear()
                fn(*positional(fn, values)) if positionally else fn(**values)
                return calls[0] if calls else None

            def classify(args, values, b=b):
                for q, arg in zip(b["params"], args, strict=True):
                    why = nonsense(arg, q["check"])
                    if why:
                        return b["name"], why, q["check"]["t"]
                return None

            _fuzz_one(figures, "builders", b["name"], call, b["params"], fillers, raw, classify)
    finally:
        namespace["_lib"] = saved


# cudart.occupancy's ports and their fuzzed parameters (the shared-memory size is a
# callable's result in the VariableSMem forms). What reaches C is classified by the
# parameters of the raw queries the ports make (_OCCUPANCY_QUERIES).
_OCCUPANCY = {
    "cudaOccupancyMaxPotentialBlockSize": ("func", "dynamicSMemSize", "blockSizeLimit"),
    "cudaOccupancyMaxPotentialBlockSizeWithFlags": (
        "func",
        "dynamicSMemSize",
        "blockSizeLimit",
        "flags",
    ),
    "cudaOccupancyMaxPotentialBlockSizeVariableSMem": (
        "func",
        "blockSizeToDynamicSMemSize",
        "blockSizeLimit",
    ),
    "cudaOccupancyMaxPotentialBlockSizeVariableSMemWithFlags": (
        "func",
        "blockSizeToDynamicSMemSize",
        "blockSizeLimit",
        "flags",
    ),
}
_OCCUPANCY_QUERIES = (
    "cudaFuncGetAttributes",
    "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
)


def _occupancy(raw, functions: list[dict], figures: dict) -> None:
    """The occupancy ports with a stand-in runtime: a device of 1 SM of 2048 threads,
    warps of 32, blocks of up to 1024; its two queries of the kernel record what the
    raw layer's ctypes conversion hands C."""
    from cudart import occupancy

    by_name = {f["name"]: f for f in functions}
    queries = {name: by_name[name] for name in _OCCUPANCY_QUERIES if name in by_name}
    if len(queries) != len(_OCCUPANCY_QUERIES):
        return
    calls: list[tuple[str, tuple]] = []
    rt = _occupancy_runtime(raw, calls)
    checks = {
        "func": {"t": "device_function"},
        "dynamicSMemSize": _int_check(0, (1 << 64) - 1),
        "blockSizeToDynamicSMemSize": _int_check(0, (1 << 64) - 1),
        "blockSizeLimit": _int_check(-(1 << 31), (1 << 31) - 1),
        "flags": _int_check(0, (1 << 32) - 1),
    }
    for name, fuzzed in _OCCUPANCY.items():
        port = getattr(occupancy, name)
        params = [{"py": n, "check": checks[n], "kind": "scalar", "role": "in"} for n in fuzzed]
        fillers = {"func": 0x10000, "dynamicSMemSize": 0, "blockSizeLimit": 0, "flags": 0}
        fillers["blockSizeToDynamicSMemSize"] = lambda block: 0

        def call(values, positionally, port=port, fuzzed=fuzzed):
            given = {n: values[n] for n in fuzzed}
            smem = given.get("blockSizeToDynamicSMemSize")
            if smem is not None and not callable(smem):
                given["blockSizeToDynamicSMemSize"] = lambda block, v=smem: v
            calls.clear()
            storage = {"minGridSize": ctypes.c_int(), "blockSize": ctypes.c_int()}
            if positionally:
                port(*positional(port, storage | given), rt=rt)
            else:
                port(rt=rt, **storage, **given)
            return list(calls) or None

        def classify(got, values):
            for query, args in got:
                for q, arg in zip(queries[query]["params"], args, strict=True):
                    if q["role"] == "in" and (why := nonsense(arg, q["check"])):
                        return query, why, q["check"]["t"]
            return None

        _fuzz_one(figures, "occupancy", name, call, params, fillers, raw, classify)


def _int_check(low: int, high: int) -> dict:
    return {"t": "int", "low": low, "high": high, "members": None, "flags": None}


def _occupancy_runtime(raw, calls: list):
    """A runtime for cudart.occupancy: the device answers from a table, the kernel
    queries convert their arguments as ctypes would and record them."""
    values = {
        raw.cudaDevAttrMaxThreadsPerMultiProcessor: 2048,
        raw.cudaDevAttrWarpSize: 32,
        raw.cudaDevAttrMaxThreadsPerBlock: 1024,
        raw.cudaDevAttrMultiProcessorCount: 1,
    }
    argtypes = {name: _raw_argtypes(raw, name) for name in _OCCUPANCY_QUERIES}

    def convert(name: str, args: tuple) -> None:
        for arg, argtype in zip(args, argtypes[name], strict=True):
            argtype.from_param(arg)  # ctypes' refusal is a TypeError, as at a call
        calls.append((name, args))

    def get_device(device):
        device._obj.value = 0
        return 0

    def get_attribute(value, which, device):
        value._obj.value = values[which]
        return 0

    def get_attributes(attrs, func):
        convert("cudaFuncGetAttributes", (attrs, func))
        attrs._obj.maxThreadsPerBlock = 1024
        return 0

    def active_blocks(blocks, func, block_size, smem, flags):
        convert(
            "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
            (blocks, func, block_size, smem, flags),
        )
        blocks._obj.value = 1
        return 0

    return _Namespace(
        raw,
        cudaGetDevice=get_device,
        cudaDeviceGetAttribute=get_attribute,
        cudaFuncGetAttributes=get_attributes,
        cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags=active_blocks,
    )


def _raw_argtypes(raw, name: str):
    from cudart._contract import unpack

    return unpack(vars(raw)["_FUNCTIONS"][name])[2]


def _compiled_grid(checked, raw, fast, grid, outcomes: dict[int, tuple]) -> dict:
    """The same cases with the compiled backend in C's place (its test build: the
    arguments as converted for C, kept instead of calling it), by keyword and
    positionally, each outcome compared with the ctypes backend's: C reached with the
    same arguments (_same_arguments), or a refusal of the same exception class and
    message. The public names are the test build's C checked functions (bound to
    counting stand-ins of their references), where the build has one; a positional call
    the reference did not serve took the C path."""
    from cudart import _checked
    from cudart._backend import spec

    namespace = vars(checked)
    served: list[str] = []
    reference = {
        name: _counting(python_function(checked, name), served)
        for name in {f["name"] for f, *_ in grid}
    }
    installed = fast.checked(reference, _checked, namespace) if hasattr(fast, "checked") else {}
    result: dict = {
        "keyword": _new_way(),
        "positional": _new_way(),
        "c_functions": len(installed),
        # Positional calls the C checked function served itself (and, the check that
        # the count sees what it counts, keyword ones: those always go to the
        # reference).
        "c_path": 0,
        "c_path_by_keyword": 0,
        "c_path_functions": [],
    }
    c_path_functions: set[str] = set()
    namespace["_compiled"] = True
    variants: dict[str, tuple] = {}  # name -> (variant, output variant or None)
    fast.record(True)
    try:
        for f, values, by_position, name, label, case in grid:
            # As cudart._checked binds them: a variant under the checked argtypes' spec,
            # and the one providing the outputs where the function has one.
            unbound = namespace["_" + f["name"]]
            out = namespace.get("_" + f["name"] + "_out")
            if f["name"] not in variants:
                variants[f["name"]] = (
                    fast.variant(f["name"], spec(unbound.argtypes)),
                    (
                        None
                        if out is None
                        else fast.variant(f["name"], spec(out.argtypes, out.outputs))
                    ),
                )
            compiled, compiled_out = variants[f["name"]]
            namespace["_" + f["name"]] = compiled
            if out is not None:
                namespace["_" + f["name"] + "_out"] = compiled_out
            public = installed.get(f["name"], reference[f["name"]])
            where = f"{f['name']}({name}={label})"
            for way, args in (("keyword", None), ("positional", by_position)):
                fast.recorded().clear()
                served.clear()
                try:
                    public(**values) if args is None else public(*args)
                    error = None
                except Exception as exc:
                    error = exc
                recorded = fast.recorded()
                outcome = _outcome(list(recorded[0][1]) if recorded else None, error)
                _tally(result[way], outcomes[case], outcome, error, where, values, _same_outcome)
                if recorded and not served:
                    if way == "keyword":
                        # (A function of no parameters is called alike both ways.)
                        result["c_path_by_keyword"] += bool(values)
                    else:
                        result["c_path"] += 1
                        c_path_functions.add(f["name"])
            namespace["_" + f["name"]] = unbound
            if out is not None:
                namespace["_" + f["name"] + "_out"] = out
    finally:
        fast.record(False)
        namespace["_compiled"] = False
    result["c_path_functions"] = sorted(c_path_functions)
    # The C checked functions no grid call took the C path of (their legal values are
    # not all on its happy path, or every bad one leaves it).
    result["c_path_never"] = sorted(set(installed) - c_path_functions)
    return result


def _counting(reference, served: list):
    """`reference`, noting each call it serves (in `served`)."""

    def call(*args, **kwargs):
        served.append(reference.__name__)
        return reference(*args, **kwargs)

    return functools.wraps(reference)(call)


# The exceptions a refusal raises: the conversions' TypeError (ctypes' ArgumentError
# reworded), OverflowError and ValueError; the checked layer's own are among them
# (HandleDestroyedError is a ValueError). Anything else (an AttributeError, a KeyError)
# is the checked layer failing where it should refuse, or after C.
REFUSALS = (TypeError, ValueError, OverflowError)
# The raw layer's (ctypes' own and the compiled functions', which word theirs as ctypes
# does): also ctypes.ArgumentError, which a raw call raises for what from_param refuses.
RAW_REFUSALS = (*REFUSALS, ctypes.ArgumentError)


def python_function(checked, name: str):
    """The Python checked function `name` (fast_support.python_checked): the public one,
    or where the compiled backend bound that name to C, its reference."""
    return vars(checked).get("_reference", {}).get(name) or getattr(checked, name)


def positional(fn, values: dict) -> tuple:
    """`values` (by parameter name) as `fn`'s positional arguments: in its signature's
    order, up to the last one given, a parameter not given in between at its default."""
    names, defaults, index = _signature(fn)
    try:
        last = max(map(index.__getitem__, values), default=-1)
    except KeyError as exc:
        raise AssertionError(f"{fn.__name__} has no parameter {exc}") from None
    args = tuple(values.get(n, d) for n, d in zip(names[: last + 1], defaults, strict=False))
    if any(a is inspect.Parameter.empty for a in args):
        raise AssertionError(f"{fn.__name__}: a parameter is neither given nor defaulted")
    return args


@functools.cache
def _signature(fn) -> tuple:
    """(names, defaults, name -> position) of `fn`'s parameters, made once per grid."""
    params = inspect.signature(fn).parameters.values()
    names = tuple(p.name for p in params)
    return names, tuple(p.default for p in params), {n: i for i, n in enumerate(names)}


def _ctypes_call(fn, recorder: _Recorder, values: dict, args: tuple | None) -> tuple:
    """(outcome, the arguments the recorder got or None, the exception or None) of one
    call through ctypes storage: by keyword (args None), else positionally."""
    recorder.calls.clear()
    try:
        fn(**values) if args is None else fn(*args)
        error = None
    except Exception as exc:  # a refusal, or a failure before or after the recorder
        error = exc
    got = recorder.calls[0] if recorder.calls else None
    c_args = None if got is None else _c_arguments(got, recorder.argtypes, values)
    return _outcome(c_args, error), got, error


def _new_way() -> dict:
    """The figures of one way of calling, against the ctypes backend by keyword."""
    return {
        "cases": 0,
        "same": 0,
        "reached": 0,
        "refused": 0,
        "other_errors": [],
        "differences": [],
    }


def _tally(way: dict, expected: tuple, got: tuple, error, where: str, values: dict, same) -> None:
    way["cases"] += 1
    if got[0] == "reached":
        way["reached"] += 1
    elif isinstance(error, REFUSALS):
        way["refused"] += 1
    if error is not None and not isinstance(error, REFUSALS):
        way["other_errors"].append(f"{where}: {type(error).__name__}: {error}")
    if same(expected, got, values):
        way["same"] += 1
    else:
        way["differences"].append(f"{where}: by keyword through ctypes {expected}, here {got}")


def _equal(expected: tuple, got: tuple, values: dict) -> bool:
    # Through ctypes both ways: memory the checked layer made is STORAGE in both.
    return expected == got


def _outcome(arguments: list | None, error: BaseException | None) -> tuple:
    """("reached", what C got) or (the exception's class, its message)."""
    if arguments is not None:
        return ("reached", arguments)
    return (type(error).__name__, str(error))


def _same_outcome(ctypes_outcome: tuple, compiled: tuple, values: dict) -> bool:
    if ctypes_outcome[0] != compiled[0]:
        return False
    if ctypes_outcome[0] != "reached":
        return ctypes_outcome[1] == compiled[1]
    return _same_arguments(ctypes_outcome[1], compiled[1], values)


# Where the ctypes backend passed memory the checked layer made for the call (storage
# for an output, a copy, a callback's thunk): its address is the call's own, so the
# compiled backend's (its own output slot, its own copy) is another; both must be
# an address, neither NULL nor in the caller's values.
STORAGE = "storage"


def _same_arguments(ctypes_args: list, compiled_args: list, values: dict) -> bool:
    if len(ctypes_args) != len(compiled_args):
        return False
    caller = _caller_memory(values)
    for expected, got in zip(ctypes_args, compiled_args, strict=True):
        if expected == STORAGE:
            if not (isinstance(got, int) and got and not _within(got, caller)):
                return False
        elif expected != got:
            return False
    return True


def _c_arguments(args: tuple, argtypes, values: dict) -> list:
    """What C gets from the ctypes backend, as the compiled recorder records it: an
    integer's value as its C type holds it, a float, a record by value's bytes, an
    address (STORAGE where it is memory the checked layer made for the call)."""
    given = [id(v) for v in values.values()]
    caller = _caller_memory(values)
    return [_c_argument(a, t, given, caller) for a, t in zip(args, argtypes, strict=True)]


_INTEGER_CODES = frozenset("bBhHiIlLqQ?")
# ctypes' instances (ctypes._CData is no public base before Python 3.12).
_CDATA = (
    ctypes._SimpleCData,
    ctypes.Structure,
    ctypes.Union,
    ctypes.Array,
    ctypes._Pointer,
    ctypes._CFuncPtr,
)
_FLOAT_CODES = frozenset("fdg")


def _c_argument(arg, argtype, given: list[int], caller: list[tuple[int, int]]):
    if isinstance(argtype, type) and issubclass(argtype, (ctypes.Structure, ctypes.Union)):
        return bytes(arg)
    code = getattr(argtype, "_type_", None)
    if isinstance(code, str) and code in _INTEGER_CODES | _FLOAT_CODES:
        scalar = arg.value if isinstance(arg, ctypes._SimpleCData) else arg
        held = argtype(scalar).value  # as ctypes converts it (the checked layer's range)
        return float(held) if code in _FLOAT_CODES else int(held)
    by_reference = (
        isinstance(argtype, type)
        and issubclass(argtype, ctypes._Pointer)
        and isinstance(arg, argtype._type_)
    )
    if by_reference:  # ctypes passes a T for a T * by its address
        obj, address = arg, ctypes.addressof(arg)
    else:
        obj, address = getattr(arg, "_obj", arg), _address(arg)  # byref(x): x's memory
    # byref(x) passes x's memory, as a T for a T * does: a handle's storage, say.
    passes_memory = by_reference or obj is not arg
    if _made_for_the_call(obj, given, passes_memory) and not _within(address, caller):
        return STORAGE
    return address


def _made_for_the_call(obj, given: list[int], by_reference: bool) -> bool:
    """Memory the checked layer made (a copy, storage): not the caller's object, nor an
    address value."""
    if id(obj) in given or obj is None or isinstance(obj, int):
        return False
    if isinstance(obj, ctypes.c_void_p) and not by_reference:
        return False  # a handle or an address: its value is passed
    return isinstance(obj, (bytes, bytearray, *_CDATA))


def _address(arg) -> int:
    """The address ctypes passes for a pointer argument."""
    if arg is None:
        return 0
    if isinstance(arg, int):
        return arg
    if isinstance(arg, bytes):
        return ctypes.cast(ctypes.c_char_p(arg), ctypes.c_void_p).value or 0
    if isinstance(arg, bytearray):
        return ctypes.addressof(ctypes.c_char.from_buffer(arg)) if arg else 0
    try:
        return ctypes.cast(arg, ctypes.c_void_p).value or 0
    except ctypes.ArgumentError:
        return ctypes.addressof(arg)  # a record or scalar ctypes passes by reference


def _caller_memory(values: dict) -> list[tuple[int, int]]:
    """(address, size) of the memory the caller's values own."""
    spans = []
    for v in values.values():
        if isinstance(v, (bytes, bytearray)) and v:
            spans.append((_address(v), len(v)))
        elif isinstance(v, _CDATA) and not isinstance(v, ctypes.c_void_p):
            spans.append((ctypes.addressof(v), ctypes.sizeof(v)))
    return spans


def _within(address: int, spans: list[tuple[int, int]]) -> bool:
    return any(start <= address < start + size for start, size in spans)


def _compiled_raw_layer(raw, fast, spec: list[dict], unpack) -> dict:
    """The raw layer's grid through the compiled functions (recording, not calling C):
    each parameter given each bad value, the others a legal raw value."""
    figures: dict = {
        "cases": 0,
        "refused": 0,
        "reached": 0,
        "nonsense": 0,
        "by_reason": {},
        "other_errors": [],
    }
    table = vars(raw)["_FUNCTIONS"]
    fast.record(True)
    try:
        for f in spec:
            if f["name"] != f["symbol"] or f["name"] not in table:
                continue
            fn = getattr(fast, f["name"])
            legal = [_raw_filler(raw, q) for q in f["params"]]
            for i, p in enumerate(f["params"]):
                for value in _bad_values(raw, p["check"]).values():
                    figures["cases"] += 1
                    fast.recorded().clear()
                    try:
                        fn(*legal[:i], value, *legal[i + 1 :])
                    except RAW_REFUSALS:
                        figures["refused"] += 1
                        continue
                    except Exception as exc:
                        figures["other_errors"].append(
                            f"{f['name']}({p['name']}={value!r}): {type(exc).__name__}: {exc}"
                        )
                        continue
                    figures["reached"] += 1
                    why = nonsense(value, p["check"])
                    if why:
                        figures["nonsense"] += 1
                        figures["by_reason"][why] = figures["by_reason"].get(why, 0) + 1
    finally:
        fast.record(False)
    return figures


def _raw_filler(raw, p: dict):
    check = p["check"]
    if check["t"] == "int":
        return 0
    if check["t"] == "struct":
        return getattr(raw, check["cls"])()
    if check["t"] == "other":
        return 0.0
    return None


def _raw_layer(raw, spec: list[dict], figures: dict, unpack, mismatches: list) -> None:
    """The raw layer converts with ctypes alone: what each argtype accepts reaches C."""
    table = vars(raw)["_FUNCTIONS"]
    for f in spec:
        if f["name"] != f["symbol"] or f["name"] not in table:
            continue  # an alias: the same ctypes function as its target
        argtypes = unpack(table[f["name"]])[2]
        for p, argtype in zip(f["params"], argtypes, strict=True):
            check = p["check"]
            if check["t"] == "int" and not check["char"] and p["role"] == "in":
                # The generator's range against ctypes' own idea of the argument's type.
                bits = 8 * ctypes.sizeof(argtype)
                low = -(1 << (bits - 1)) if argtype(-1).value < 0 else 0
                high = (1 << (bits - 1 if low else bits)) - 1
                if (low, high) != (check["low"], check["high"]):
                    mismatches.append(f"{f['name']}.{p['name']}")
            for value in _bad_values(raw, p["check"]).values():
                figures["cases"] += 1
                try:
                    argtype.from_param(value)
                except RAW_REFUSALS:
                    figures["refused"] += 1
                    continue
                except Exception as exc:
                    figures["other_errors"].append(
                        f"{f['name']}({p['name']}={value!r}): {type(exc).__name__}: {exc}"
                    )
                    continue
                figures["reached"] += 1
                why = nonsense(value, p["check"])
                if why:
                    figures["nonsense"] += 1
                    reasons = figures.setdefault("by_reason", {})
                    reasons[why] = reasons.get(why, 0) + 1
                    checks = figures.setdefault("by_check", {})
                    checks[check["t"]] = checks.get(check["t"], 0) + 1


def figures_for(
    keys: list[str],
    workdir: Path,
    surface: str = RUNTIME,
    envs: dict[str, dict[str, str]] | None = None,
) -> dict[str, dict]:
    """Each version's figures for one surface; `envs`: per version, what its child's
    environment adds (run_version)."""
    from concurrent.futures import ThreadPoolExecutor

    from models import models_for

    from generator.fetch import fetch_version
    from generator.manifest import Manifest

    manifest = Manifest.load(REPO / "cuda_headers_manifest.toml")
    models = models_for({key: fetch_version(manifest, key, _quiet, surface) for key in keys})

    def one(key: str) -> tuple[str, dict]:
        # The module's number is the pinned version's (another surface's model has no
        # version macro of its own: generator/generate.py).
        module = str(manifest.get(key).number)
        env = (envs or {}).get(key)
        return key, run_version(module, specs(models[key]), workdir, surface, env)

    # The children run two at a time.
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(one, keys))


def _quiet(*args, **kwargs) -> None:
    pass


def table(results: dict[str, dict]) -> str:
    head = (
        "version | checked: cases, refused in Python, reached C (legit), nonsense reached C, "
        "crashes, other errors | positionally: differences | raw: cases, refused by ctypes, "
        "reached C, nonsense reached C | builders, occupancy: cases, refused, reached | "
        "compiled by keyword, positionally: cases, differences, other errors; positional "
        "calls served by the C checked functions (of how many functions)"
    )
    rows = [head]
    for key, r in results.items():
        c, w = r["checked"], r["raw"]
        b, o = r["builders"], r["occupancy"]
        row = (
            f"{key} | {c['cases']}, {c['refused']}, {c['reached'] - c['nonsense']}, "
            f"{c['nonsense']}, {c['crashes']}, {c['other_errors']} | "
            f"{len(r['positional']['differences'])} | {w['cases']}, {w['refused']}, "
            f"{w['reached']}, {w['nonsense']} | {b['cases']}, {b['refused']}, {b['reached']}; "
            f"{o['cases']}, {o['refused']}, {o['reached']} | "
        )
        if "compiled" in r:
            compiled = r["compiled"]
            for way in ("keyword", "positional"):
                k = compiled[way]
                row += f"{k['cases']}, {len(k['differences'])}, {len(k['other_errors'])}; "
            row += f"{compiled['c_path']} ({len(compiled['c_path_functions'])} of "
            row += f"{compiled['c_functions']})"
        else:
            row += "no compiled backend"
        rows.append(row)
    return "\n".join(rows)


def differences(r: dict) -> list[str]:
    """Every case on which a way of calling departed from the ctypes backend by keyword,
    or raised what no refusal raises, named by the way."""
    lines = [f"ctypes positionally: {d}" for d in r["positional"]["differences"]]
    lines += [f"ctypes positionally: {d}" for d in r["positional"]["other_errors"]]
    for way in ("keyword", "positional"):
        k = r.get("compiled", {}).get(way, _new_way())
        lines += [f"compiled {way}: {d}" for d in k["differences"] + k["other_errors"]]
    for part in ("builders", "occupancy"):
        lines += [f"{part}: {d}" for d in r[part]["positional_differences"]]
        lines += [f"{part}: {d}" for d in r[part]["other_errors"]]
    return lines


if __name__ == "__main__":
    if sys.argv[1] == "--child":
        result = child(sys.argv[2], sys.argv[3], sys.argv[4], {int(a) for a in sys.argv[5:]})
        print(json.dumps(result))
    else:
        import tempfile

        sys.path.insert(0, str(REPO))
        with tempfile.TemporaryDirectory() as tmp:
            found = figures_for(sys.argv[1:], Path(tmp))
        print(table(found))
        for key, r in found.items():
            for line in r["nonsense_cases"][:20] + r["other_error_cases"][:20]:
                print(key, line)
            for line in differences(r)[:40]:
                print(key, line)
            print(key, "raw layer's nonsense by reason:", r["raw"].get("by_reason"))
            if r["range_mismatches"]:
                print(key, "range mismatches:", ", ".join(r["range_mismatches"]))
            if r["baseline_refused"]:
                print(key, "baseline refused:", ", ".join(r["baseline_refused"]))
