"""JIT and library option values (issue 33 item 14b): the generator's decisions
(generator/jit_options.py) for every option enum of every pinned version, and the plans
and tables they make.

A version whose header adds an option that neither its doc types nor REVIEWED /
REFUSED decide fails `test_every_option_of_every_version_is_decided`; a function that
takes an option-enum array beside a `void **` and is not in FUNCTIONS fails
`test_every_option_list_function_is_typed`.
"""

from __future__ import annotations

import pytest
from suite import version_keys

from generator.ctypes_map import TypeMapper
from generator.jit_options import (
    FUNCTIONS,
    KEPT_WITH,
    REFUSED,
    REVIEWED,
    OptionType,
    OptionTypes,
    ValueKind,
    documented,
    listing,
    undecided,
)
from generator.model import Builtin, EnumRef, Pointer
from generator.resolve import resolve

RUNTIME = {f for f in FUNCTIONS if f.startswith("cuda")}
DRIVER = set(FUNCTIONS) - RUNTIME
RUNTIME_SINCE = "12.8"  # cudaLibraryLoadData / cudaLibraryLoadFromFile


@pytest.fixture(scope="module")
def driver_models(manifest):
    """Every version's cuda.h model."""
    from models import models_for

    from generator.fetch import fetch_version

    return models_for(
        {key: fetch_version(manifest, key, lambda _: None, "driver") for key in version_keys()}
    )


def _both(models, driver_models, key):
    return [(models[key], RUNTIME), (driver_models[key], DRIVER)]


def _number(key: str) -> tuple[int, ...]:
    return tuple(int(x) for x in key.split("."))


@pytest.mark.parametrize("key", version_keys())
def test_every_option_of_every_version_is_decided(models, driver_models, key):
    """Each member of each option enum the functions take has a decision: the docs'
    type, or a reviewed or refused entry. A new option without one fails here."""
    for model, functions in _both(models, driver_models, key):
        assert undecided(model) == []
        options = OptionTypes(model)
        enums = {options.enum_of(f, g) for f in functions for g in options.groups(f)}
        for enum in enums:
            rows = options.decisions(enum)
            assert [d.enumerator for d in rows] == [
                k.name for k in options.types.enums[enum].enumerators
            ]
            for d in rows:
                assert d.type is not None or d.source.startswith("refused: "), d
    expected = {"CUjit_option_enum", "CUlibraryOption_enum"}
    if _number(key) >= _number(RUNTIME_SINCE):
        expected |= {"cudaJitOption", "cudaLibraryOption"}
    found = {
        line.split(":")[0] for m, _ in _both(models, driver_models, key) for line in listing(m)
    }
    assert found == expected


@pytest.mark.parametrize("key", version_keys())
def test_every_option_list_function_is_typed(models, driver_models, key):
    """Every function with an array of an option enum (a `*Option*` enum) beside a
    `void **` takes typed options; each of FUNCTIONS is such a function where declared."""
    for model, functions in _both(models, driver_models, key):
        types = TypeMapper(model)
        found = set()
        for f in model.functions:
            arrays = [
                p
                for p in f.params
                if isinstance(p.type, Pointer)
                and isinstance(r := types.resolve(p.type.pointee), EnumRef)
                and "option" in r.name.lower()
            ]
            slots = [
                p
                for p in f.params
                if isinstance(p.type, Pointer)
                and isinstance(p.type.pointee, Pointer)
                and types.resolve(p.type.pointee.pointee) == Builtin("void")
            ]
            if arrays and slots:
                found.add(f.name)
                groups = FUNCTIONS.get(f.name, ())
                assert {g.options for g in groups} == {p.name for p in arrays}, f.name
                assert {g.values for g in groups} == {p.name for p in slots}, f.name
        declared = {f.name for f in model.functions} & functions
        assert found == declared
        if functions is DRIVER or _number(key) >= _number(RUNTIME_SINCE):
            assert declared == functions


def test_reviewed_and_refused_entries_are_needed(models, driver_models):
    """Each table entry names an enumerator some version declares, and the docs of each
    reviewed one give no option type (or the table would repeat or contradict them)."""
    seen: dict[tuple[str, str], str] = {}
    for key in version_keys():
        for model, _ in _both(models, driver_models, key):
            for enum in model.enums:
                for k in enum.enumerators:
                    seen.setdefault((enum.name, k.name), k.doc)
    for entry in REVIEWED:
        assert entry in seen, entry
        assert documented(seen[entry]) is None, entry
    for entry in REFUSED:
        assert entry in seen, entry


def test_docs_give_the_documented_types(driver_models, models):
    """Spot checks of the docs' reading, against cuda.h's own words."""
    options = OptionTypes(driver_models["13.5"])
    by_name = {d.enumerator: d for d in options.decisions("CUjit_option_enum")}
    log = "CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES"
    assert by_name["CU_JIT_INFO_LOG_BUFFER"].type == OptionType(ValueKind.LOG, length=log)
    assert by_name[log].type == OptionType(ValueKind.UNSIGNED, out=True)  # "OUT: Amount ..."
    assert by_name["CU_JIT_WALL_TIME"].type == OptionType(ValueKind.FLOAT, out=True)
    assert by_name["CU_JIT_THREADS_PER_BLOCK"].type == OptionType(ValueKind.UNSIGNED, out=True)
    assert by_name["CU_JIT_MAX_REGISTERS"].type == OptionType(ValueKind.UNSIGNED)
    assert by_name["CU_JIT_LOG_VERBOSE"].type == OptionType(ValueKind.INT)
    assert by_name["CU_JIT_TARGET"].type == OptionType(ValueKind.ENUM, "CUjit_target")
    assert by_name["CU_JIT_CACHE_MODE"].type == OptionType(ValueKind.ENUM, "CUjit_cacheMode_enum")
    assert by_name["CU_JIT_TARGET_FROM_CUCONTEXT"].type == OptionType(ValueKind.NONE)
    count = "CU_JIT_GLOBAL_SYMBOL_COUNT"
    assert by_name["CU_JIT_GLOBAL_SYMBOL_NAMES"].type == OptionType(ValueKind.STRINGS, length=count)
    assert by_name["CU_JIT_GLOBAL_SYMBOL_ADDRESSES"].type == OptionType(
        ValueKind.POINTERS, length=count
    )
    assert {d.source for d in by_name.values()} >= {"docs"}
    runtime = OptionTypes(models["13.5"])
    rows = {d.enumerator: d for d in runtime.decisions("cudaJitOption")}
    assert rows["cudaJitErrorLogBuffer"].type == OptionType(
        ValueKind.LOG, length="cudaJitErrorLogBufferSizeBytes"
    )
    assert rows["cudaJitFallbackStrategy"].type == OptionType(ValueKind.ENUM, "cudaJit_Fallback")
    # Each enum an option names is one of that version's enums (or a typedef of one).
    for model in (driver_models["12.0"], driver_models["13.5"], models["13.5"]):
        o = OptionTypes(model)
        for f in FUNCTIONS:
            for g in o.groups(f):
                for d in o.decisions(o.enum_of(f, g)):
                    if d.type and d.type.kind is ValueKind.ENUM:
                        assert isinstance(o.types.resolve(o.enum_type(d.type.enum)), EnumRef)


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        ("Max registers. Option type: unsigned int Applies to: compiler only", ValueKind.UNSIGNED),
        ("Option type: int", ValueKind.INT),
        ("Overwrites the option value with the time Option type: float", ValueKind.FLOAT),
        ("Option type: unsigned int for enumerated type CUjit_target", ValueKind.ENUM),
        ("Option type: No option value needed", ValueKind.NONE),
        # A type the reading does not know stays undecided (the test above names it).
        ("Option type: double Applies to: compiler only", None),
        ("Option type: unsigned long long", None),
        ("This jit option is used for internal purpose only.", None),
        ("", None),
    ],
)
def test_the_docs_reading(doc, expected):
    found = documented(doc)
    assert (found.kind if found else None) == expected


def test_written_back_options_and_lengths_come_from_the_docs():
    assert documented("IN: size OUT: filled Option type: unsigned int").out
    assert not documented("IN: size Option type: unsigned int").out
    found = documented(
        "a buffer (the buffer size is specified via option X_SIZE) Option type: char *"
    )
    assert found == OptionType(ValueKind.LOG, length="X_SIZE")
    # A length phrase only means something for a buffer or an array.
    assert documented("Must contain X entries. Option type: unsigned int").length is None


@pytest.mark.parametrize("key", ["12.0", "13.5"])
def test_plans_carry_the_groups_and_default_them(driver_models, key):
    """The plans: each group on its function's plan, its parameters defaulting to None
    (the typed form needs no count), and cuLinkCreate's state keeps the options."""
    plans = {p.name: p for p in resolve(driver_models[key])}
    for c_name, groups in FUNCTIONS.items():
        if c_name in RUNTIME:
            continue
        plan = plans[c_name]
        assert plan.option_groups == groups
        names = {n for g in groups for n in (g.count, g.options, g.values)}
        assert {p.name for p in plan.params if p.default == "None"} >= names
    assert set(KEPT_WITH) <= set(FUNCTIONS)
    assert plans["cuLinkCreate"].option_groups == FUNCTIONS["cuLinkCreate_v2"]


def test_the_listing_is_deterministic(driver_models):
    model = driver_models["13.5"]
    assert listing(model) == listing(model)
    assert "CUjit_option_enum: CU_JIT_WALL_TIME = float, written back (docs)" in listing(model)


def test_cli_lists_the_table(capsys):
    from generator.cli import main

    assert main(["outputs", "--options", "13.5"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# CUDA 13.5: ")
    assert "  cudaJitOption: cudaJitWallTime = float, written back (docs)" in out
    assert "cudaLibraryOption: cudaLibraryBinaryIsPreserved = unsigned int (table: " in out
    assert "UNDECIDED" not in out
