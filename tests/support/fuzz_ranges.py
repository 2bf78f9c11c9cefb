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

"Nonsense reached C" means the recorder got, for some input parameter:
  * an integer outside its C type's range (what ctypes would mask or wrap), or, for an
    enum, a value that is none of its members (for a flags enum: not an OR of them);
  * for a handle: a negative int or one of 2**64 or more, or a handle object of
    another kind (not the parameter's, nor a kind C converts to it);
  * for a pointer (memory, `T *`, device function, kernel arguments): a negative int or
    one of 2**64 or more, or a handle object; where C reads a record, also an int from
    1 to 65535 or a buffer / ctypes object smaller than the record;
  * for a record by value, another class.
Everything else that reaches the recorder is legitimate (None is NULL, which C checks).
For the raw layer, which converts with ctypes alone, the same rules classify what each
argtype's from_param accepts.
"""

from __future__ import annotations

import ctypes
import importlib
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BAD = ("str", "float", "negative", "2**70", "None", "object", "list", "bytes1", "handle")
ADDRESS_END = 1 << 64
LOWEST_RECORD = 1 << 16


# ---------------------------------------------------------------- parent: specs


def specs(model) -> list[dict]:
    """Per checked function: its name, C parameters and what C takes for each."""
    from generator.ctypes_map import POINTER_KINDS, TypeKind, TypeMapper, integer_range
    from generator.resolve import resolve

    types = TypeMapper(model)
    out = []
    for plan in resolve(model):
        params = []
        c_params = {q.name: q for q in plan.function.params}
        for p in plan.params:
            t = c_params[p.name].type
            if p.role == "inout" and p.kind in ("scalar", "enum"):
                t = types.pointee(t)  # the value goes in as what the pointer points to
            kind = types.classify(t)
            check: dict
            if (r := integer_range(types, t)) is not None:
                check = {
                    "t": "int",
                    "low": r.low,
                    "high": r.high,
                    "members": sorted(r.members) if r.members is not None else None,
                    "flags": r.flags,
                    "enum": r.enum,
                    "bits": 8 * types.size_align(t)[0],
                    "char": kind in (TypeKind.CHAR, TypeKind.BOOL),
                }
            elif kind is TypeKind.HANDLE:
                name = types.handle_name(t)
                td = types.typedefs[name]
                check = {"t": "handle", "cls": name, "accepts": types.const_twins(td)}
            elif kind in POINTER_KINDS or kind is TypeKind.ARRAY:
                record = None
                if kind is TypeKind.POINTER and (
                    types.classify(types.pointee(t)) is TypeKind.RECORD
                ):
                    record = types.size_align(types.pointee(t))[0]
                check = {"t": "pointer", "record": record}
            elif kind is TypeKind.RECORD:
                check = {"t": "struct", "cls": types.record_class(t)}
            else:
                check = {"t": "other"}
            params.append(
                {
                    "name": p.name,
                    "py": p.py_name,
                    "role": str(p.role),
                    "kind": str(p.kind),
                    "partner": p.partner,
                    "check": check,
                }
            )
        out.append({"name": plan.name, "symbol": plan.function.name, "params": params})
    return out


def run_version(module: str, spec: list[dict], workdir: Path) -> dict:
    """The child's figures for one version, rerun past each case that crashed it."""
    spec_file = workdir / f"{module}.json"
    spec_file.write_text(json.dumps(spec))
    progress = workdir / f"{module}.progress"
    skip: list[int] = []
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUDART_")}
    env["PYTHONPATH"] = str(REPO)
    while True:
        proc = subprocess.run(
            [sys.executable, __file__, "--child", module, str(spec_file), str(progress)]
            + [str(i) for i in skip],
            capture_output=True,
            text=True,
            env=env,
            cwd=REPO,
        )
        if proc.returncode == 0:
            figures = json.loads(proc.stdout.splitlines()[-1])
            figures["checked"]["crashes"] = len(skip)
            figures["crashed_cases"] = skip
            return figures
        if proc.returncode > 0:  # a Python failure of the driver itself, not a crash
            raise AssertionError(f"{module}: fuzz driver failed:\n{proc.stdout}\n{proc.stderr}")
        skip.append(int(progress.read_text() or -1))


# ---------------------------------------------------------------- child


def _bad_values(raw, check: dict) -> dict:
    handle_cls = raw.cudaEvent_t
    if check["t"] == "handle" and (
        check["cls"] == "cudaEvent_t" or "cudaEvent_t" in check["accepts"]
    ):
        handle_cls = raw.cudaStream_t
    return {
        "str": "x",
        "float": 1.5,
        "negative": -1,
        "2**70": 2**70,
        "None": None,
        "object": object(),
        "list": [1],
        "bytes1": b"x",
        "handle": handle_cls(0x1234),
    }


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
        return None
    if t == "struct":
        if type(value).__name__ != check["cls"] and not isinstance(value, ctypes.Structure):
            return "another record"
        return None
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


def child(module: str, spec_file: str, progress_file: str, skip: set[int]) -> dict:
    warnings.simplefilter("ignore")
    checked = importlib.import_module(f"cudart.checked_{module}")
    raw = importlib.import_module(f"cudart.sys_{module}")
    from cudart._backend import compiled_module
    from cudart._contract import unpack

    spec = json.loads(Path(spec_file).read_text())
    progress = os.open(progress_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    figures = {
        "checked": {"cases": 0, "refused": 0, "reached": 0, "nonsense": 0, "other_errors": 0},
        "raw": {"cases": 0, "refused": 0, "reached": 0, "nonsense": 0},
        "baseline_refused": [],
        "nonsense_cases": [],
        "other_error_cases": [],
        "by_reason": {},
        "range_mismatches": [],
    }
    # This pass calls through ctypes storage (the recorder converts as ctypes would),
    # whichever backend is built; the compiled one is _compiled_grid's.
    vars(checked)["_compiled"] = False
    case = -1
    outcomes: dict[int, str] = {}  # case -> "reached" or the refusal's exception class
    grid: list[tuple[dict, dict, str, object, int]] = []
    for f in spec:
        fn = getattr(checked, f["name"])
        unbound = vars(checked)["_" + f["name"]]
        recorder = _Recorder(unbound.restype, unbound.argtypes)
        vars(checked)["_" + f["name"]] = recorder
        inputs = [p for p in f["params"] if p["role"] in ("in", "inout")]
        fillers = _baseline(fn, recorder, [(p["py"], _fillers(raw, p)) for p in inputs])
        if fillers is None:
            figures["baseline_refused"].append(f["name"])
            fillers = {p["py"]: _fillers(raw, p)[0] for p in inputs}
        for p in inputs:
            for label, value in _bad_values(raw, p["check"]).items():
                case += 1
                if case in skip:
                    continue
                os.pwrite(progress, str(case).encode().ljust(12), 0)
                grid.append((f, fillers, p["py"], label, case))
                figures["checked"]["cases"] += 1
                recorder.calls.clear()
                try:
                    fn(**{**fillers, p["py"]: value})
                    error = None
                except Exception as exc:  # a refusal, or a failure after the recorder
                    error = exc
                outcomes[case] = "reached" if recorder.calls else type(error).__name__
                if recorder.calls:
                    figures["checked"]["reached"] += 1
                    args = recorder.calls[0]
                    for q, arg in zip(f["params"], args, strict=True):
                        if q["role"] != "in":
                            continue
                        why = nonsense(arg, q["check"])
                        if why:
                            figures["checked"]["nonsense"] += 1
                            figures["by_reason"][why] = figures["by_reason"].get(why, 0) + 1
                            figures["nonsense_cases"].append(
                                f"{f['name']}({q['py']}={label}): {why}"
                            )
                            break
                elif isinstance(error, (TypeError, OverflowError, ValueError)):
                    figures["checked"]["refused"] += 1
                else:
                    figures["checked"]["other_errors"] += 1
                    figures["other_error_cases"].append(
                        f"{f['name']}({p['py']}={label}): {type(error).__name__}: {error}"
                    )
        vars(checked)["_" + f["name"]] = unbound
    _raw_layer(raw, spec, figures["raw"], unpack, figures["range_mismatches"])
    fast = compiled_module(raw.CUDA_VERSION)
    if fast is not None:
        # The same source built with the call recorder (the users' build has none).
        from fast_support import recording_module

        fast = recording_module(raw.CUDA_VERSION)
        figures["compiled"] = _compiled_grid(checked, raw, fast, grid, outcomes)
        figures["compiled_raw"] = _compiled_raw_layer(raw, fast, spec, unpack)
    os.close(progress)
    return figures


def _compiled_grid(checked, raw, fast, grid, outcomes: dict[int, str]) -> dict:
    """The same cases with the compiled backend in C's place (its recorder: the
    arguments as converted for C, kept instead of calling it), each outcome compared
    with the ctypes backend's: reached C, or refused with the same exception class."""
    from cudart._backend import spec

    result: dict = {"cases": 0, "same": 0, "reached": 0, "refused": 0, "differences": []}
    namespace = vars(checked)
    namespace["_compiled"] = True
    variants: dict[str, tuple] = {}  # name -> (variant, output variant or None)
    fast.record(True)
    try:
        for f, fillers, name, label, case in grid:
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
            value = _bad_values(raw, _check_of(f, name))[label]
            fast.recorded().clear()
            try:
                getattr(checked, f["name"])(**{**fillers, name: value})
                error = None
            except Exception as exc:
                error = exc
            namespace["_" + f["name"]] = unbound
            if out is not None:
                namespace["_" + f["name"] + "_out"] = out
            outcome = "reached" if fast.recorded() else type(error).__name__
            result["cases"] += 1
            result["reached" if outcome == "reached" else "refused"] += 1
            if outcome == outcomes[case]:
                result["same"] += 1
            else:
                result["differences"].append(
                    f"{f['name']}({name}={label}): ctypes {outcomes[case]}, compiled {outcome}"
                    + (f" ({error})" if error is not None else "")
                )
    finally:
        fast.record(False)
        namespace["_compiled"] = False
    return result


def _check_of(f: dict, py_name: str) -> dict:
    return next(p["check"] for p in f["params"] if p["py"] == py_name)


def _compiled_raw_layer(raw, fast, spec: list[dict], unpack) -> dict:
    """The raw layer's grid through the compiled functions (recording, not calling C):
    each parameter given each bad value, the others a legal raw value."""
    figures: dict = {"cases": 0, "refused": 0, "reached": 0, "nonsense": 0, "by_reason": {}}
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
                    except Exception:
                        figures["refused"] += 1
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
                except Exception:
                    figures["refused"] += 1
                    continue
                figures["reached"] += 1
                why = nonsense(value, p["check"])
                if why:
                    figures["nonsense"] += 1
                    reasons = figures.setdefault("by_reason", {})
                    reasons[why] = reasons.get(why, 0) + 1


def figures_for(keys: list[str], workdir: Path) -> dict[str, dict]:
    from concurrent.futures import ThreadPoolExecutor

    from models import models_for

    from generator.fetch import fetch_version
    from generator.manifest import Manifest
    from generator.render.base import module_name

    manifest = Manifest.load(REPO / "cuda_headers_manifest.toml")
    models = models_for({key: fetch_version(manifest, key, _quiet) for key in keys})

    def one(key: str) -> tuple[str, dict]:
        model = models[key]
        module = module_name(model.cuda_version).removeprefix("sys_")
        return key, run_version(module, specs(model), workdir)

    # The children run two at a time.
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(one, keys))


def _quiet(*args, **kwargs) -> None:
    pass


def table(results: dict[str, dict]) -> str:
    head = (
        "version | checked: cases, refused in Python, reached C (legit), nonsense reached C, "
        "crashes, other errors | raw: cases, refused by ctypes, reached C, nonsense reached C"
    )
    rows = [head]
    for key, r in results.items():
        c, w = r["checked"], r["raw"]
        rows.append(
            f"{key} | {c['cases']}, {c['refused']}, {c['reached'] - c['nonsense']}, "
            f"{c['nonsense']}, {c['crashes']}, {c['other_errors']} | {w['cases']}, {w['refused']}, "
            f"{w['reached']}, {w['nonsense']}"
        )
    return "\n".join(rows)


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
            print(key, "raw layer's nonsense by reason:", r["raw"].get("by_reason"))
            if r["range_mismatches"]:
                print(key, "range mismatches:", ", ".join(r["range_mismatches"]))
            if r["baseline_refused"]:
                print(key, "baseline refused:", ", ".join(r["baseline_refused"]))
