"""The fuzz of issue 11: every checked function of every version, each input (and
in-out) parameter given each of str, float, -1, 2**70, None, object(), a list, a
1-byte bytes and bytearray, a wrong-kind handle and, where a record is taken, a record
of another class, with the C functions replaced by a recorder (tests/support/fuzz_ranges.py
says how, and what "nonsense reached C" means for each kind of parameter). The inline
record builders and cudart.occupancy's ports are fuzzed alike. Required: nothing out of
range or of the wrong kind reaches C, and nothing crashes. The raw layer's figures
(ctypes alone) are printed for the record; it passes what C's types allow, by design.

The driver API's checked functions (cudart.driver, cuda.h) are on the same grid, every
version, with the stand-in libcuda loaded (tests/support/driver_stub.py): each
function's legal call then goes through the real binding to the stub, whose
CUDA_ERROR_STUB_LIBRARY says it reached C.

Every case (each function's legal call among them) is called by keyword and
positionally: the compiled checked functions take their C path on positional calls only
(a keyword goes to the Python reference). Both surfaces with a compiled backend (the
runtime's, the driver's) run each case again through it both ways, in the same process
(its test build: the recorder in C's place, and its C checked functions as the public
names): C reached with the same arguments, or the same exception class and message, as
through ctypes by keyword. Only TypeError, ValueError and OverflowError count as a
refusal (the checked layer's own errors are of these); any other exception, before C or
after it, is a failure.
"""

from __future__ import annotations

import ctypes
import json
import textwrap
from concurrent.futures import ThreadPoolExecutor

import pytest
from fast_support import compiler, skip_or_fail_missing
from fuzz_ranges import (
    REFUSALS,
    STORAGE,
    _attribute_nonsense,
    _c_arguments,
    _inout_nonsense,
    _new_way,
    _outcome,
    _same_outcome,
    _tally,
    figures_for,
    nonsense,
    specs,
    table,
)
from snapshot_files import hold
from suite import REPO, run_python, version_keys

from cudart._views import is_view


@pytest.fixture(scope="module")
def figures(tmp_path_factory, header_sets):
    found = figures_for(version_keys(), tmp_path_factory.mktemp("fuzz"))
    print("\n" + table(found))
    return found


@pytest.mark.parametrize("key", version_keys())
def test_no_nonsense_reaches_c_and_nothing_crashes(figures, key):
    r = figures[key]
    c = r["checked"]
    assert c["crashes"] == 0, r["crashed_cases"]
    assert c["nonsense"] == 0, r["nonsense_cases"][:30]
    assert c["other_errors"] == 0, r["other_error_cases"][:30]
    assert r["range_mismatches"] == []
    _assert_same_positionally(r)
    # The raw layer's grid too: what ctypes does not take it refuses (a TypeError or
    # ctypes' ArgumentError), nothing else.
    assert r["raw"]["other_errors"] == [], r["raw"]["other_errors"][:30]


# The other header families (their checked modules take the same conversions), each
# version's grid once per module.
FAMILIES = ("nvrtc", "nvjitlink")


@pytest.fixture(scope="module")
def family_figures(tmp_path_factory):
    found = {}
    for family in FAMILIES:
        found[family] = figures_for(version_keys(), tmp_path_factory.mktemp(family), family)
        print(f"\n{family}\n" + table(found[family]))
    return found


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("key", version_keys())
def test_no_nonsense_reaches_the_other_families(family_figures, family, key):
    """NVRTC's and nvJitLink's checked functions refuse what their C types cannot take,
    as the runtime's do, and every one of them is fuzzed from a legal call."""
    r = family_figures[family][key]
    c = r["checked"]
    assert c["crashes"] == 0, r["crashed_cases"]
    assert c["nonsense"] == 0, r["nonsense_cases"][:30]
    assert c["other_errors"] == 0, r["other_error_cases"][:30]
    assert r["range_mismatches"] == []
    _assert_same_positionally(r)
    # The raw layer's grid too: what ctypes does not take it refuses (a TypeError or
    # ctypes' ArgumentError), nothing else.
    assert r["raw"]["other_errors"] == [], r["raw"]["other_errors"][:30]
    assert r["baseline_refused"] == []
    assert c["reached"] > 0 and c["refused"] > 0


@pytest.mark.parametrize("key", version_keys())
def test_every_function_reaches_c_with_legal_arguments(figures, key):
    # A function whose legal call the driver cannot make is not fuzzed honestly: its
    # refusals could be the filler's.
    assert figures[key]["baseline_refused"] == []


@pytest.mark.parametrize("key", version_keys())
def test_the_builders_and_occupancy_ports_are_on_the_grid(figures, key):
    # Their legal values reach the record (or the runtime's queries), so their
    # refusals are the bad values'; positionally each case ends as by keyword.
    r = figures[key]
    for part in ("builders", "occupancy"):
        assert r[part]["reached"] > 0, (part, r[part])
        assert r[part]["other_errors"] == [], r[part]["other_errors"][:30]
        assert r[part]["positional_differences"] == [], r[part]["positional_differences"][:30]


def _assert_same_positionally(r: dict) -> None:
    # Through ctypes: the same case positionally reaches C with the same arguments, or
    # is refused with the same class and message, as by keyword (every case, the legal
    # calls among them).
    way = r["positional"]
    assert way["differences"] == [], way["differences"][:30]
    assert way["other_errors"] == [], way["other_errors"][:30]
    assert way["cases"] == way["same"] == r["checked"]["cases"]
    assert way["reached"] == r["checked"]["reached"] > 0


def test_the_raw_layer_lets_nonsense_through(figures):
    # For the record, and so the classification is seen to find what it looks for:
    # for every kind of parameter the raw layer has, something it lets through.
    for r in figures.values():
        assert r["raw"]["nonsense"] > 1000
        assert {
            "int",
            "handle",
            "pointer",
            "function",
            "device_function",
            "kernel_args",
        } <= set(
            r["raw"]["by_check"]
        ), r["raw"]["by_check"]
    assert any("image" in r["raw"]["by_check"] for r in figures.values())


def test_the_oracle_flags_what_the_raw_layer_cannot_show():
    # In-out storage and attribute values are made by the checked layer only: the
    # oracle's verdicts on them, on values the checked layer never makes.
    member = {"t": "int", "low": 0, "high": 2**32 - 1, "members": [0, 1], "flags": None}
    assert _inout_nonsense(ctypes.byref(ctypes.c_uint(2**32 - 1)), -1, member)
    assert _inout_nonsense(ctypes.c_uint(7), 7, member) == "not an enum value"
    assert _inout_nonsense(b"\0\0\0\0", 0, member)
    assert _inout_nonsense(ctypes.c_uint(1), 1, member) is None

    class Spec:
        ctype, array = ctypes.c_int, False

    assert _attribute_nonsense(ctypes.byref(ctypes.c_int(1)), 5, {5: Spec}) is None
    assert _attribute_nonsense(ctypes.byref(ctypes.c_char(b"x")), 5, {5: Spec})
    assert _attribute_nonsense(b"xxxx", 5, {5: Spec})
    assert _attribute_nonsense(ctypes.byref(ctypes.c_int(1)), 6, {5: Spec, 6: None})

    # A record of another class where C reads a record, by pointer and by value.
    class Other(ctypes.Structure):
        _fields_ = [("a", ctypes.c_size_t * 8)]

    record = {"t": "pointer", "record": 24, "cls": "cudaPos"}
    assert nonsense(ctypes.byref(Other()), record) == "record of another class"
    assert nonsense(Other(), {"t": "struct", "cls": "cudaPos"}) == "another record"


@pytest.mark.parametrize("key", version_keys())
def test_the_compiled_backend_refuses_what_the_ctypes_backend_refuses(figures, key):
    # Issue 13: the same grid with the compiled backend's conversions in C's place
    # (recording what C would get); each case reaches C with the same arguments or is
    # refused with the same exception class and message as through ctypes, so what
    # reaches C through it is what the oracle classified above.
    _assert_same_on_both_backends(figures[key])


def _assert_same_on_both_backends(r: dict) -> None:
    if "compiled" not in r:
        skip_or_fail_missing()
    compiled = r["compiled"]
    # Every case of the ctypes pass was compared, by keyword and positionally, some
    # reaching C and the others refused (an exception that is no refusal is a failure).
    for name in ("keyword", "positional"):
        way = compiled[name]
        assert way["differences"] == [], (name, way["differences"][:30])
        assert way["other_errors"] == [], (name, way["other_errors"][:30])
        assert way["cases"] == way["same"] == r["checked"]["cases"]
        assert way["reached"] == r["checked"]["reached"] > 0
        assert way["reached"] + way["refused"] == way["cases"]
    # The C checked functions served positional calls themselves (a regression that
    # sent them all to the Python reference shows here), and no keyword call: the
    # count tells the C path from the reference.
    assert compiled["c_functions"] > 0
    assert compiled["c_path"] > 0 and compiled["c_path_functions"], compiled
    assert compiled["c_path_by_keyword"] == 0


@pytest.mark.parametrize("key", version_keys())
def test_the_compiled_raw_layer_refuses_what_c_cannot_take(figures, key):
    _assert_compiled_raw_layer_holds_c_types(figures[key])


def _assert_compiled_raw_layer_holds_c_types(r: dict) -> None:
    # The raw layer passes what C's types allow; compiled, what they hold: nothing out
    # of an integer's range, no negative or too large address. What still reaches C is
    # what C's types cannot tell apart: a handle of another kind, a non-member enum
    # value, a small int as a record's address, and a short buffer where the pointer
    # may be an array (of zero records, as far as the raw layer knows; a buffer for
    # exactly one record, generator/sizes.py's, is checked).
    if "compiled_raw" not in r:
        skip_or_fail_missing()
    assert r["compiled_raw"]["other_errors"] == [], r["compiled_raw"]["other_errors"][:30]
    reasons = r["compiled_raw"]["by_reason"]
    for why in (
        "out of range",
        "pointer out of range",
        "handle out of range",
    ):
        assert why not in reasons, (why, reasons)
    assert r["compiled_raw"]["nonsense"] < r["raw"]["nonsense"]


def test_the_backends_comparison_sees_arguments_and_messages():
    # What the differential holds the compiled backend to, on outcomes made up here:
    # the caller's memory at its own address, the checked layer's storage anywhere
    # else (neither NULL nor the caller's), integers as C holds them, and a refusal's
    # words.
    data, storage = b"abcd", ctypes.c_int(5)
    values = {"data": data, "count": 4}
    argtypes = (ctypes.c_void_p, ctypes.POINTER(ctypes.c_int), ctypes.c_uint)
    got = _c_arguments((data, storage, 4), argtypes, values)
    address = ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value
    assert got == [address, STORAGE, 4]
    reached = _outcome(got, None)
    elsewhere = ctypes.addressof(ctypes.c_int())
    assert _same_outcome(reached, ("reached", [address, elsewhere, 4]), values)
    assert not _same_outcome(reached, ("reached", [address + 1, elsewhere, 4]), values)
    assert not _same_outcome(reached, ("reached", [address, 0, 4]), values)
    assert not _same_outcome(reached, ("reached", [address, address, 4]), values)
    assert not _same_outcome(reached, ("reached", [address, elsewhere, 4 + 2**32]), values)
    assert not _same_outcome(reached, ("TypeError", "x"), values)
    refused = _outcome(None, TypeError("f() argument 'x': wrong type"))
    assert _same_outcome(refused, ("TypeError", "f() argument 'x': wrong type"), {})
    assert not _same_outcome(refused, ("TypeError", "f() argument 'x': no"), {})
    assert not _same_outcome(refused, ("ValueError", "f() argument 'x': wrong type"), {})


DRIVER_KEYS = version_keys()


def _driver_module_generated(key: str) -> bool:
    major, minor = key.split(".")
    return is_view("driver", int(major) * 1000 + int(minor) * 10)


@pytest.fixture(scope="module")
def driver_figures(tmp_path_factory, driver_stub):
    keys = [k for k in DRIVER_KEYS if _driver_module_generated(k)]
    driver_stub.prepare(keys)
    # Every version's stub, two compilers at a time (the children run two at a time too).
    with ThreadPoolExecutor(max_workers=2) as pool:
        stubs = dict(zip(keys, pool.map(driver_stub, keys), strict=True))
    envs = {k: {"CUDART_DRIVER_LIBRARY": str(stub)} for k, stub in stubs.items()}
    found = figures_for(keys, tmp_path_factory.mktemp("fuzz_driver"), "driver", envs)
    print("\ndriver API\n" + table(found))
    for key, r in found.items():
        print(key, "through the stub:", r["stub"]["calls"], "calls,", r["stub"]["reached"], "34")
    return found


@pytest.mark.parametrize("key", DRIVER_KEYS)
def test_no_nonsense_reaches_the_driver_and_nothing_crashes(driver_figures, key):
    if key not in driver_figures:
        pytest.skip(f"the {key} driver module is not generated in this checkout")
    r = driver_figures[key]
    c = r["checked"]
    assert c["crashes"] == 0, r["crashed_cases"]
    assert c["nonsense"] == 0, r["nonsense_cases"][:30]
    assert c["other_errors"] == 0, r["other_error_cases"][:30]
    assert r["range_mismatches"] == []
    _assert_same_positionally(r)
    # The raw layer's grid too: what ctypes does not take it refuses (a TypeError or
    # ctypes' ArgumentError), nothing else.
    assert r["raw"]["other_errors"] == [], r["raw"]["other_errors"][:30]
    assert r["baseline_refused"] == []
    # The grid saw the driver's parameters: legal values reached C, and the raw layer
    # (ctypes alone) lets nonsense of each kind through where the checked one does not.
    assert c["reached"] > 0 and c["refused"] > c["reached"]
    assert {"int", "handle", "pointer"} <= set(r["raw"]["by_check"]), r["raw"]["by_check"]


@pytest.mark.parametrize("key", DRIVER_KEYS)
def test_every_driver_function_reaches_the_stub_with_legal_arguments(driver_figures, key):
    # Through the real binding (ctypes, the checked argtypes) to the stand-in libcuda:
    # CUDA_ERROR_STUB_LIBRARY back from each, as the recorder's grid assumed.
    if key not in driver_figures:
        pytest.skip(f"the {key} driver module is not generated in this checkout")
    stub = driver_figures[key]["stub"]
    assert stub["other"] == []
    assert stub["reached"] == stub["calls"] > 400


@pytest.mark.parametrize("key", DRIVER_KEYS)
def test_the_compiled_driver_backend_gives_what_the_ctypes_one_gives(driver_figures, key):
    # Every case of every driver function, through the compiled backend's test build
    # (cudart._fast_driver_<ver>): C reached with the same arguments, or the same
    # refusal, as through ctypes.
    if key not in driver_figures:
        pytest.skip(f"the {key} driver module is not generated in this checkout")
    _assert_same_on_both_backends(driver_figures[key])


@pytest.mark.parametrize("key", DRIVER_KEYS)
def test_the_compiled_driver_raw_layer_refuses_what_c_cannot_take(driver_figures, key):
    if key not in driver_figures:
        pytest.skip(f"the {key} driver module is not generated in this checkout")
    _assert_compiled_raw_layer_holds_c_types(driver_figures[key])


def test_refusals_are_the_refusal_classes_alone():
    # What the grid counts a refusal: a TypeError, ValueError or OverflowError (the
    # checked layer's HandleDestroyedError is a ValueError); an AttributeError or a
    # KeyError where a refusal belongs is a failure, by keyword or positionally.
    from cudart.errors import HandleDestroyedError

    assert issubclass(HandleDestroyedError, REFUSALS)
    refusal = ("TypeError", "f() argument 'x': wrong type")
    for error in (TypeError(refusal[1]), ValueError("v"), OverflowError("o")):
        way = _new_way()
        _tally(way, refusal, (type(error).__name__, str(error)), error, "f(x=str)", {}, _eq)
        assert way["refused"] == 1 and way["other_errors"] == []
    for error in (KeyError("data"), AttributeError("ptr")):
        way = _new_way()
        _tally(way, refusal, (type(error).__name__, str(error)), error, "f(x=str)", {}, _eq)
        assert way["refused"] == 0, way
        assert way["other_errors"] == [f"f(x=str): {type(error).__name__}: {error}"]
    # After C too: reached, then failed making the outputs.
    way = _new_way()
    _tally(way, ("reached", [1]), ("reached", [1]), KeyError("out"), "f(legal)", {}, _eq)
    assert way["reached"] == 1 and way["other_errors"] == ["f(legal): KeyError: 'out'"]


def _eq(expected, got, values):
    return expected == got


# The grid run on planted faults of the checked layer (a subprocess: the faults are
# planted in its modules): one function's Python checked function refuses a NULL stream
# that its C checked function takes (C's happy path and the reference disagree, which
# only a positional call can show), and another raises a KeyError where it should
# refuse. Each must show, on the way of calling where it is, and nowhere else.
_PLANTED = """
import functools, json, sys
sys.path.insert(0, "tests/support")
import fuzz_ranges as fr
from fast_support import recording_module
import cudart.checked_{n} as checked, cudart.sys_{n} as raw

def plant(name, fault):
    reference = fr.python_function(checked, name)
    planted = functools.update_wrapper(lambda stream: fault(stream) or reference(stream),
                                       reference)
    vars(checked).setdefault("_reference", {{}})[name] = planted
    vars(checked)[name] = planted

def refuse_null(stream):
    if stream is None:
        raise TypeError("planted: no NULL stream")

def key_error(stream):
    if isinstance(stream, str):
        raise KeyError("planted")

plant("cudaStreamSynchronize", refuse_null)
plant("cudaStreamQuery", key_error)
functions = json.loads(open({spec!r}).read())
figures = fr._new_figures()
grid, outcomes, _ = fr._ctypes_grid(checked, raw, functions, figures)
compiled = fr._compiled_grid(checked, raw, recording_module({n}), grid, outcomes)
print(json.dumps({{"ctypes": figures, "compiled": compiled}}))
"""


def test_the_grid_finds_planted_faults_on_the_way_they_are(models, tmp_path):
    if compiler() is None:
        pytest.skip("no C compiler: no test build of the compiled checked functions")
    key = "12.5" if "12.5" in models else sorted(models)[-1]
    major, minor = key.split(".")
    wanted = ("cudaStreamSynchronize", "cudaStreamQuery")
    functions = [f for f in specs(models[key])["functions"] if f["name"] in wanted]
    assert len(functions) == 2
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(functions))
    code = _PLANTED.format(n=int(major) * 1000 + int(minor) * 10, spec=str(spec))
    found = json.loads(run_python(code).stdout.splitlines()[-1])
    ctypes_figures, compiled = found["ctypes"], found["compiled"]
    key_error = "cudaStreamQuery(stream=str): KeyError: 'planted'"
    # The KeyError is a failure on every way of calling, never a refusal.
    assert ctypes_figures["checked"]["other_errors"] == 1
    assert ctypes_figures["other_error_cases"] == [key_error]
    assert ctypes_figures["positional"]["other_errors"] == [key_error]
    assert compiled["keyword"]["other_errors"] == [key_error]
    assert compiled["positional"]["other_errors"] == [key_error]
    cases = ctypes_figures["checked"]["cases"]
    assert compiled["keyword"]["refused"] == ctypes_figures["checked"]["refused"]
    assert compiled["keyword"]["refused"] + compiled["keyword"]["reached"] == cases - 1
    # The refused NULL stream shows positionally on the compiled backend alone, where
    # the C checked function serves it.
    assert ctypes_figures["positional"]["differences"] == []
    assert compiled["keyword"]["differences"] == []
    assert [d.split(":")[0] for d in compiled["positional"]["differences"]] == [
        "cudaStreamSynchronize(stream=None)"
    ]
    assert compiled["c_path_by_keyword"] == 0
    assert "cudaStreamSynchronize" in compiled["c_path_functions"]


C_PATH = REPO / "tests" / "expectations" / "fuzz_c_path.txt"


def test_the_c_path_served_what_the_reviewed_file_says(figures, driver_figures):
    # Issue 40: per surface and version, how many positional calls of the grid the C
    # checked functions served themselves, and which of them never served one. A
    # regression that sends calls back to the Python reference changes this reviewed
    # file (tests/support/snapshot_files.py), as does a C path that grows.
    if any("compiled" not in r for r in [*figures.values(), *driver_figures.values()]):
        skip_or_fail_missing()
    lines = []
    for surface, found in (("runtime", figures), ("driver", driver_figures)):
        for key, r in found.items():
            c = r["compiled"]
            lines.append(
                f"{surface} {key}: {c['c_path']} positional calls by the C path, of "
                f"{len(c['c_path_functions'])} of {c['c_functions']} C checked functions"
            )
            never = ", ".join(c["c_path_never"]) or "-"
            lines.append(
                textwrap.fill(never, 100, initial_indent="  never: ", subsequent_indent="    ")
            )
    hold(C_PATH, "\n".join(lines) + "\n")
