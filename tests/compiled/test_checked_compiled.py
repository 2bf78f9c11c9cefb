"""The checked layer compiled (issue 23): each checked function whose parameters all have
a C converter is also a C function (generator/render/fast_checked.py), which takes the
happy path and hands everything else to the Python checked function, its reference.

Differential: over the fuzz grid's cases (tests/support/fuzz_ranges.py, read as is) and
the happy values beside them, the C function and its reference give the same outcome:
C reached with the same arguments (the test build's recorder), the same value back, or
the same exception class and message. The C function is called positionally (a keyword
always goes to the reference, which would make the comparison hold trivially).
"""

from __future__ import annotations

import contextlib
import copy
import ctypes
import functools
import importlib
import inspect
import json
import pickle

import needs
import pytest
from fast_support import compiler, merged_source, recording_module
from fuzz_ranges import _bad_values, _fillers, specs
from models import models_for
from suite import quiet, run_python, version_keys
from thread_storm import storm

from cudart import _checked
from generator.fetch import fetch_version
from generator.manifest import Manifest


def _number(key: str) -> int:
    major, minor = key.split(".")
    return int(major) * 1000 + int(minor) * 10


# The surfaces the compiled backend serves: (checked module, raw module, extension)
# prefixes.
SURFACES = {
    "runtime": ("checked_", "sys_", "_fast_"),
    "driver": ("driver_checked_", "driver_", "_fast_driver_"),
}


def _has_checked_c(key: str, surface: str) -> bool:
    source = merged_source(_number(key), surface)
    view = f"unsigned short cudart_checked_{_number(key)}[]"
    return source.is_file() and view in source.read_text()


# Every version whose generated C has the checked functions: each is the recording test
# build of its extensions, which the fuzz grid (tests/runtime/test_fuzz_ranges.py) builds
# and holds to the ctypes backend in the same run (tests/support/fast_support.py keeps
# one build per source), so the grid here adds only its own calls.
VERSIONS = [k for k in version_keys() if _has_checked_c(k, "runtime")]
CASES = [(k, s) for k in VERSIONS for s in SURFACES if _has_checked_c(k, s)]


class _Version:
    """One version's checked module, its recording build's C checked functions (bound
    to the module's reference functions) and the fuzz grid's specs of its functions."""

    def __init__(self, key: str, surface: str, model) -> None:
        number = _number(key)
        checked, raw, _ = SURFACES[surface]
        self.checked = importlib.import_module(f"cudart.{checked}{number}")
        self.raw = importlib.import_module(f"cudart.{raw}{number}")
        self.namespace = vars(self.checked)
        self.reference = self.namespace.get("_reference") or {
            name: value
            for name, value in self.namespace.items()
            if inspect.isfunction(value) and value.__module__ == self.checked.__name__
        }
        self.fast = recording_module(number, surface)
        # As cudart._checked.compile_checked makes them, from the recording build.
        self.compiled = _checked.compiled_functions(
            self.fast.checked, self.reference, self.namespace
        )
        self.specs = {f["name"]: f for f in specs(model)["functions"]}

    def recording(self, name: str):
        """Put the recording build's raw variants where the reference calls C (as
        cudart._checked binds them for the compiled backend); returns an undo."""
        from cudart._backend import spec

        saved = {}
        for suffix in ("", "_out"):
            key = f"_{name}{suffix}"
            if key not in self.namespace:
                continue
            saved[key] = self.namespace[key]
            # What bind_on_first_call put there, with its types: another test of this
            # process may have bound it already.
            unbound = self.namespace["_UNBOUND"][key]
            outputs = unbound.outputs
            self.namespace[f"_{name}{suffix}"] = self.fast.variant(
                name, spec(unbound.argtypes, outputs)
            )
        self.namespace["_compiled"] = True

        def undo() -> None:
            self.namespace.update(saved)

        return undo


@pytest.fixture(scope="module")
def versions(header_sets):
    """(key, surface) -> its _Version."""
    if compiler() is None:
        pytest.skip("no C compiler")
    manifest = Manifest.load()
    found = {}
    for surface in SURFACES:
        keys = [key for key, s in CASES if s == surface]
        headers = {
            key: (
                header_sets[key]
                if surface == "runtime"
                else fetch_version(manifest, key, quiet, surface)
            )
            for key in keys
        }
        models = models_for(headers)
        found.update({(key, surface): _Version(key, surface, models[key]) for key in keys})
    return found


def _outcome(fn, args: list) -> tuple:
    try:
        result = fn(*args)
    except Exception as exc:
        return ("raised", type(exc).__name__, str(exc))
    return ("returned", type(result).__name__, repr(result))


def _happy_values(raw, check: dict) -> dict:
    """Values the C converters take (or must hand on: a destroyed handle, a subclass),
    beyond the grid's nonsense: an integer's ends and an enum's members, a handle
    object of the class, an address."""
    from cudart._handles import mark_destroyed

    t = check["t"]
    if t == "int":
        values = {"low": check["low"], "high": check["high"], "true": True}
        if check["members"]:
            values["member"] = check["members"][-1]
            if check["enum"]:
                enum = getattr(raw, check["enum"])
                values["enum member"] = enum(check["members"][-1])
        if check["flags"]:
            values["flags"] = check["flags"]
        return values
    if t == "handle":
        cls = getattr(raw, check["cls"])
        dead = cls(0x5678)
        mark_destroyed(dead, "test")
        # A view of other memory (a record's field): C gets what that memory holds.
        view = cls.from_buffer(bytearray((0x9ABC).to_bytes(ctypes.sizeof(cls), "little")))
        return {
            "own": cls(0x5678),
            "view": view,
            "int": 0x5678,
            "destroyed": dead,
            "top": 2**64 - 1,
        }
    if t == "pointer":
        return {"int": 0x10000, "small": 0x10, "top": 2**64 - 1, "bytearray": bytearray(64)}
    if t == "other":
        return {"float": 2.5, "int": 2}
    return {}


def _cases(version: _Version, name: str):
    """(label, positional-argument maker) for each case of the function: its legal
    call, then each input given each grid value and each happy value."""
    f = version.specs[name]
    ref = version.reference[name]
    inputs = [p for p in f["params"] if p["role"] in ("in", "inout")]
    order = list(inspect.signature(ref).parameters)
    assert [p["py"] for p in inputs] == order, (name, order)
    fillers = _legal(version, name, inputs)

    def maker(which: str | None = None, label: str | None = None):
        def make() -> list:
            values = dict(fillers)
            if which is not None:
                p = next(q for q in inputs if q["py"] == which)
                every = {
                    **_bad_values(version.raw, p["check"]),
                    **_happy_values(version.raw, p["check"]),
                }
                values[which] = every[label]
            return [values[n] for n in order]

        return make

    yield "legal", maker()
    parameters = inspect.signature(ref).parameters.values()
    required = sum(1 for q in parameters if q.default is inspect.Parameter.empty)
    if required < len(order):  # the defaults, as C takes them when omitted
        legal = maker()
        yield "defaults omitted", lambda: legal()[:required]
    for p in inputs:
        labels = {**_bad_values(version.raw, p["check"]), **_happy_values(version.raw, p["check"])}
        for label in labels:
            yield f"{p['py']}={label}", maker(p["py"], label)


def _legal(version: _Version, name: str, inputs: list[dict]) -> dict:
    """The first combination of the grid's legal values the reference takes to C."""
    import itertools

    choices = [(p["py"], _fillers(version.raw, p)) for p in inputs]
    undo = version.recording(name)
    try:
        for combination in itertools.islice(itertools.product(*(c for _, c in choices)), 256):
            values = {n: v for (n, _), v in zip(choices, combination, strict=True)}
            version.fast.recorded().clear()
            try:
                version.reference[name](**values)
            except Exception:
                continue
            if version.fast.recorded():
                return values
    finally:
        undo()
    raise AssertionError(f"{name}: no legal call of the grid reaches C")


def _outputs(f: dict) -> set[int]:
    return {i for i, p in enumerate(f["params"]) if p["role"] != "in"}


def _memory(f: dict, args: list) -> set[int]:
    """The C parameters given memory (a buffer: each call's fresh object has its own
    address), which the comparison takes as reaching C, at whatever address."""
    from cudart._handles import Handle

    inputs = [i for i, p in enumerate(f["params"]) if p["role"] in ("in", "inout")]
    return {
        c
        for c, arg in zip(inputs, args)  # noqa: B905 (omitted defaults: fewer args)
        if not (arg is None or isinstance(arg, (int, float, Handle)))
    }


def _recorded(version: _Version, hidden: set[int]) -> list:
    """What C got, the outputs' slots (addresses of the call's own) and memory's
    addresses left out."""
    return [
        (name, tuple(None if i in hidden else v for i, v in enumerate(values)))
        for name, values in version.fast.recorded()
    ]


def _run(version: _Version, fn, make, f: dict) -> tuple:
    version.fast.recorded().clear()
    args = make()
    outcome = _outcome(fn, args)
    return outcome, _recorded(version, _outputs(f) | _memory(f, args))


@pytest.mark.parametrize("key, surface", CASES)
def test_compiled_and_python_checked_functions_agree_on_the_grid(versions, key, surface):
    version = versions[key, surface]
    differences, cases = [], 0
    version.fast.record(True)
    try:
        for name, compiled in sorted(version.compiled.items()):
            f = version.specs[name]
            undo = version.recording(name)
            try:
                for label, make in _cases(version, name):
                    cases += 1
                    expected = _run(version, version.reference[name], make, f)
                    got = _run(version, compiled, make, f)
                    if got != expected:
                        differences.append(f"{name}({label}): python {expected}, C {got}")
            finally:
                undo()
    finally:
        version.fast.record(False)
    assert differences == [], differences[:20]
    assert cases > 10 * len(version.compiled)


def _python_path_refuses(namespace: dict, name: str) -> dict:
    """Make the reference's calls into C raise: the C function must not need them.
    Returns what it replaced."""

    def refuse(*args):
        raise AssertionError(f"{name}: the Python checked function was called")

    saved = {k: namespace[k] for k in (f"_{name}", f"_{name}_out") if k in namespace}
    namespace.update({k: refuse for k in saved})
    return saved


@pytest.mark.parametrize("key, surface", CASES)
def test_the_happy_path_stays_in_c(versions, key, surface):
    # The legal call of each compiled function reaches the recorder with the reference's
    # own calls into C made to fail: C took it, not the Python fallback.
    version = versions[key, surface]
    version.fast.record(True)
    taken = []
    try:
        for name, compiled in sorted(version.compiled.items()):
            args = next(iter(_cases(version, name)))[1]()
            # The grid's legal memory is None, which a `T *` takes through the
            # reference (its count is checked there): an address here.
            inputs = [p for p in version.specs[name]["params"] if p["role"] == "in"]
            args = [
                0x10000 if a is None and p["check"]["t"] == "pointer" else a
                for a, p in zip(args, inputs, strict=True)
            ]
            saved = _python_path_refuses(version.namespace, name)
            try:
                version.fast.recorded().clear()
                compiled(*args)
                taken.append(bool(version.fast.recorded()))
            finally:
                version.namespace.update(saved)
    finally:
        version.fast.record(False)
    assert taken and all(taken)


@pytest.mark.parametrize("key, surface", CASES)
def test_compiled_functions_keep_the_reference_signature_and_doc(versions, key, surface):
    # What help(), inspect and a reader see is the Python function's: its signature with
    # annotations, docstring, names and source (through __wrapped__).
    version = versions[key, surface]
    for name, compiled in version.compiled.items():
        ref = version.reference[name]
        assert inspect.signature(compiled) == inspect.signature(ref), name
        assert compiled.__doc__ == ref.__doc__, name
        assert compiled.__annotations__ == ref.__annotations__, name
        assert (compiled.__name__, compiled.__qualname__, compiled.__module__) == (
            ref.__name__,
            ref.__qualname__,
            ref.__module__,
        )
    name, compiled = next(iter(sorted(version.compiled.items())))
    assert inspect.getsource(compiled) == inspect.getsource(version.reference[name])
    assert inspect.isroutine(compiled) and not inspect.isbuiltin(compiled)
    # Pickled by name, as the Python function is: the module's function comes back.
    public = getattr(version.checked, name)
    assert pickle.loads(pickle.dumps(public)) is public
    assert copy.deepcopy(public) is public


def test_the_checked_module_binds_its_names_to_the_c_functions():
    # In a fresh process with the 12.5 runtime: the public names are the C functions
    # (where the compiled backend is in force), the references stay.
    number = _number("12.5")
    code = f"""
import inspect, json, pydoc, cudart
from cudart import checked_{number} as m
print(json.dumps({{
    "backend": cudart.backend(),
    "public": type(m.cudaGetDevice).__name__,
    "reference": type(m._reference["cudaGetDevice"]).__name__,
    "not compiled": type(m.cudaGetErrorString).__name__,
    "signature": str(inspect.signature(m.cudaStreamQuery)),
    "python signature": str(inspect.signature(m._reference["cudaStreamQuery"])),
    "help": "(stream: 'cudaStream_t | _HandleLike') -> 'bool'"
    in pydoc.render_doc(m.cudaStreamQuery),
}}))
"""
    out = json.loads(run_python(code, env=_library_env("12.5")).stdout)
    needs.compiled_backend(out["backend"], "a fresh interpreter with the 12.5 runtime")
    assert out == {
        "backend": "compiled",
        "public": "compiled_checked_function",
        "reference": "function",
        "not compiled": "function",
        "signature": out["python signature"],
        "python signature": "(stream: 'cudaStream_t | _HandleLike') -> 'bool'",
        "help": True,
    }


def _library_env(key: str) -> dict[str, str]:
    headers = fetch_version(Manifest.load(), key, quiet)
    return {"CUDART_LIBRARY": str(headers.library)}


_REAL_CALLS = """
import json, cudart
from cudart import checked_{number} as m
out = {{"backend": cudart.backend(), "public": type(m.cudaGetDevice).__name__}}
if out["backend"] != "compiled":  # no C functions, so no _reference to compare them with
    print(json.dumps(out))
    raise SystemExit
def outcome(fn, *args):
    try:
        r = fn(*args)
    except Exception as exc:
        return [type(exc).__name__, str(exc), repr(exc.args)]
    return ["returned", repr(r)]
for name, args in [
    ("cudaRuntimeGetVersion", ()),
    ("cudaDriverGetVersion", ()),
    ("cudaGetDevice", ()),
    ("cudaGetDevice", ()),
    ("cudaStreamQuery", (0,)),
    ("cudaStreamQuery", (m.cudaStream_t(),)),
    ("cudaStreamCreate", ()),
    ("cudaMallocAsync", (4, 0)),
    ("cudaSetDevice", (-1,)),
    ("cudaSetDevice", (2**40,)),
]:
    out.setdefault(name, []).append(
        [outcome(getattr(m, name), *args), outcome(m._reference[name], *args)]
    )
print(json.dumps(out))
"""


@pytest.mark.parametrize("key", [VERSIONS[0], VERSIONS[-1]] if VERSIONS else [])
def test_the_real_library_answers_both_alike(key):
    # Without a GPU the runtime answers versions and fails device calls: the C function
    # returns and raises what its reference does (class, message, arguments), the
    # second raise of a code (from the per-code cache) included.
    out = json.loads(
        run_python(_REAL_CALLS.format(number=_number(key)), env=_library_env(key)).stdout
    )
    # Under ctypes both sides are the Python function, and the comparison holds trivially.
    needs.compiled_backend(out.pop("backend"), f"a fresh interpreter with the {key} runtime")
    assert out.pop("public") == "compiled_checked_function"
    for name, pairs in out.items():
        for compiled, reference in pairs:
            assert compiled == reference, (name, compiled, reference)
    assert out["cudaGetDevice"][0][0][0].startswith("CudaError")


def test_the_compiled_count_per_version(versions, capsys):
    # For the record: how many checked functions each version has in C.
    assert versions, "no version's C has the checked functions"
    rows = []
    for (key, surface), version in versions.items():
        total = sum(1 for f in version.specs)
        rows.append(f"{key} {surface}: {len(version.compiled)} of {total} checked functions in C")
        assert 0 < len(version.compiled) < total
    with capsys.disabled():
        print("\n" + "\n".join(rows))


@pytest.mark.parametrize("key", VERSIONS[:1])
def test_the_waits_report_host_callback_failures_as_the_reference_does(versions, key, monkeypatch):
    # cudart._checked's wrapper of each wait reports with the status and, for a
    # stream's own wait, the stream; the compiled waits report alike, after C.
    from cudart import callbacks

    version = versions[key, "runtime"]
    reported = []
    monkeypatch.setattr(callbacks, "report_failures", lambda *args: reported.append(args))
    monkeypatch.setattr(
        _checked,
        "CALLBACK_FAILURES_UNRAISED",
        type(_checked.CALLBACK_FAILURES_UNRAISED)(["a failure"]),
    )
    # The compiled functions hold cudart._checked's deque: installed again, they read
    # this one.
    compiled = _checked.compiled_functions(
        version.fast.checked, version.reference, version.namespace
    )
    stream = version.raw.cudaStream_t(0x7000)
    version.fast.record(True)
    try:
        assert compiled["cudaStreamQuery"](stream) is True
        compiled["cudaDeviceSynchronize"]()
        compiled["cudaGetDevice"]()  # no wait: nothing reported
    finally:
        version.fast.record(False)
        monkeypatch.undo()
        version.fast.checked(version.reference, _checked, version.namespace)
    assert reported == [(0, stream), (0,)]


# ---------------------------------------------------------------- the destroy's mark in C


def _marking(version: _Version) -> list[tuple[str, int, type, list]]:
    """(name, input position, handle class, legal arguments) of each compiled function
    that marks a handle object before C (a DESTROYS or FREES effect on a handle). With
    the recorder on."""
    from generator.lifetimes import EFFECTS

    found = []
    for name in sorted(version.compiled):
        inputs = [p for p in version.specs[name]["params"] if p["role"] in ("in", "inout")]
        for i, p in enumerate(inputs):
            if (name, p["name"]) in EFFECTS and p["check"]["t"] == "handle":
                legal = next(iter(_cases(version, name)))[1]()
                found.append((name, i, getattr(version.raw, p["check"]["cls"]), legal))
    return found


def _python_calls(fn, *args) -> tuple[list[str], object]:
    """The Python functions `fn(*args)` calls (by name), and its outcome."""
    import sys

    names: list[str] = []

    def profile(frame, event, arg):
        if event == "call":
            names.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        outcome = _outcome(fn, list(args))
    finally:
        sys.setprofile(None)
    return names, outcome


def _with(args: list, i: int, value) -> list:
    return [value if n == i else a for n, a in enumerate(args)]


@pytest.mark.parametrize("key, surface", CASES)
def test_a_compiled_destroy_marks_its_handle_in_c(versions, key, surface):
    # cudart._handles.claim's step done in C: the object of exactly its class is marked
    # with this function's destroyed class before C, without Python's claim (after the
    # first call, which makes the class); marked, it is refused as the reference
    # refuses it, and C is not reached again.
    from cudart import HandleDestroyedError
    from cudart._handles import destroyed_by

    version = versions[key, surface]
    version.fast.record(True)
    try:
        marking = _marking(version)
        assert marking, "no compiled destroy"
        for n, (name, i, cls, legal) in enumerate(marking):
            compiled, ref = version.compiled[name], version.reference[name]
            for round in range(2):
                address = 0x70000 + 0x100 * n + round
                handle = cls(address)
                version.fast.recorded().clear()
                called, outcome = _python_calls(compiled, *_with(legal, i, handle))
                assert outcome[0] == "returned", (name, outcome)
                assert [v[i] for _, v in version.fast.recorded()] == [address], name
                assert type(handle) is not cls and isinstance(handle, cls), name
                assert type(handle).__name__ == cls.__name__ and int(handle) == address
                assert destroyed_by(handle) == name, (name, destroyed_by(handle))
                if round:  # the class made: nothing of Python's claim runs
                    assert not {"claim", "_destroyed_class"} & set(called), (name, called)
                version.fast.recorded().clear()
                again = _outcome(compiled, _with(legal, i, handle))
                assert again == _outcome(ref, _with(legal, i, handle)), name
                assert again[1] == HandleDestroyedError.__name__, (name, again)
                assert f"{address:#x} that {name} destroyed" in again[2], again
                assert version.fast.recorded() == [], name
    finally:
        version.fast.record(False)


@pytest.mark.parametrize("key, surface", CASES)
def test_a_compiled_destroy_reads_and_marks_only_what_the_reference_does(versions, key, surface):
    # NULL is not marked; a handle whose value changed after it was made is destroyed at
    # its value now; a subclass's object and a view of a record's field take the
    # reference's path and end as it leaves them.
    from cudart._handles import destroyed_by

    version = versions[key, surface]
    with _destroys_recorded(version) as destroys:
        for name, i, cls, legal, compiled, ref in destroys:
            null = cls()
            version.fast.recorded().clear()
            assert _outcome(compiled, _with(legal, i, null))[0] == "returned", name
            assert [v[i] for _, v in version.fast.recorded()] == [0]
            assert type(null) is cls and destroyed_by(null) is None, name

            moved = cls(0x1000)
            moved.value = 0x2000
            version.fast.recorded().clear()
            compiled(*_with(legal, i, moved))
            assert [v[i] for _, v in version.fast.recorded()] == [0x2000], name
            assert destroyed_by(moved) == name

            sub = type("Sub", (cls,), {})
            for kind in ("subclass", "view"):
                got, want = (
                    sub(0x3000) if kind == "subclass" else cls.from_buffer(bytearray(8))
                    for _ in range(2)
                )
                if not got:
                    got.value = want.value = 0x3100
                version.fast.recorded().clear()
                c_out = _outcome(compiled, _with(legal, i, got))
                c_calls = _recorded(version, set())
                version.fast.recorded().clear()
                assert c_out == _outcome(ref, _with(legal, i, want)), name
                assert c_calls == _recorded(version, set()), name
                assert type(got).__bases__ == type(want).__bases__, name
                assert destroyed_by(got) == destroyed_by(want), name


@contextlib.contextmanager
def _destroys_recorded(version):
    """(name, handle index, handle class, legal arguments, compiled, reference) of each
    compiled destroy, while the recorder stands in for C under both functions."""
    undos: list = []
    version.fast.record(True)

    def each():
        for name, i, cls, legal in _marking(version):
            undos.append(version.recording(name))  # the reference's C: the recorder too
            yield name, i, cls, legal, version.compiled[name], version.reference[name]

    try:
        yield each()
    finally:
        for undo in reversed(undos):
            undo()
        version.fast.record(False)


@pytest.mark.parametrize("key, surface", CASES)
def test_threads_destroying_one_handle_through_c_reach_it_once(versions, key, surface):
    # The C claim and Python's (the reference, which a keyword call takes) share one
    # lock: of threads destroying one object, through either, one reaches C.
    from cudart import HandleDestroyedError

    version = versions[key, surface]
    with _destroys_recorded(version) as destroys:
        for name, i, cls, legal, compiled, ref in destroys:
            for round in range(3):
                handle = cls(0x90000 + round)
                calls = [
                    functools.partial(_outcome, compiled if n % 2 else ref, _with(legal, i, handle))
                    for n in range(8)
                ]
                version.fast.recorded().clear()
                outcomes = storm(lambda n, calls=calls: calls[n](), len(calls))
                assert len(version.fast.recorded()) == 1, name
                assert [o[0] for o in outcomes].count("returned") == 1, (name, outcomes)
                lost = {o[1] for o in outcomes if o[0] == "raised"}
                assert lost == {HandleDestroyedError.__name__}, (name, outcomes)


def test_a_compiled_parent_destroy_marks_its_children():
    """The compiled destroy of a parent kind (generator/lifetimes.py PARENTS: cuCtxDestroy,
    cuModuleUnload) runs the checked layer's `destroyed` after C, as the Python one does:
    the children recorded under the parent are marked (the recorder stands in for C)."""
    from cudart._handles import add_child, destroyed_by

    number = max(_number(k) for k, s in CASES if s == "driver")
    checked = importlib.import_module(f"cudart.driver_checked_{number}")
    raw = importlib.import_module(f"cudart.driver_{number}")
    namespace = vars(checked)
    reference = namespace.get("_reference") or {
        n: v
        for n, v in namespace.items()
        if inspect.isfunction(v) and v.__module__ == checked.__name__
    }
    fast = recording_module(number, "driver")
    compiled = _checked.compiled_functions(fast.checked, reference, namespace)
    fast.record(True)
    try:
        for destroy, parent, child in (
            ("cuCtxDestroy_v2", raw.CUcontext(0x77000), raw.CUstream(0x77010)),
            ("cuModuleUnload", raw.CUmodule(0x77100), raw.CUfunction(0x77110)),
        ):
            add_child(child, type(parent)._kind_, parent.value)
            fast.recorded().clear()
            compiled[destroy](parent)
            assert [name for name, _ in fast.recorded()] == [destroy]  # C ran, in C
            assert destroyed_by(parent) == destroy and destroyed_by(child) == destroy
    finally:
        fast.record(False)
