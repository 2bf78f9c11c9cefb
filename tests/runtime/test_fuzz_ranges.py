"""The fuzz of issue 11: every checked function of every version, each input parameter
given each of str, float, -1, 2**70, None, object(), a list, a 1-byte bytes and a
wrong-kind handle, with the C functions replaced by a recorder (tests/support/fuzz_ranges.py
says how, and what "nonsense reached C" means). Required: nothing out of range or of
the wrong kind reaches C, and nothing crashes. The raw layer's figures (ctypes alone)
are printed for the record; it passes what C's types allow, by design.
"""

from __future__ import annotations

import pytest
from suite import version_keys
from fast_support import skip_or_fail_missing
from fuzz_ranges import figures_for, table


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
    assert c["cases"] == c["refused"] + c["reached"] + c["other_errors"]
    # Every value of the grid that C cannot take is refused: only None (NULL), a bytes
    # where C takes memory or text, and a list where C takes an array reach it.
    assert c["refused"] > 8 * c["reached"] // 10
    assert r["range_mismatches"] == []


@pytest.mark.parametrize("key", version_keys())
def test_every_function_reaches_c_with_legal_arguments(figures, key):
    # A function whose legal call the driver cannot make is not fuzzed honestly: its
    # refusals could be the filler's. cudaMemRangeGetAttributes takes parallel lists of
    # attributes and sizes whose legal combination the driver's small search misses.
    assert figures[key]["baseline_refused"] in ([], ["cudaMemRangeGetAttributes"])


def test_the_raw_layer_lets_nonsense_through(figures):
    # For the record, and so the classification is seen to find what it looks for.
    for r in figures.values():
        assert r["raw"]["nonsense"] > 1000


@pytest.mark.parametrize("key", version_keys())
def test_the_compiled_backend_refuses_what_the_ctypes_backend_refuses(figures, key):
    # Issue 13: the same grid with the compiled backend's conversions in C's place
    # (recording what C would get); each case reaches C or is refused with the same
    # exception class as through ctypes.
    r = figures[key]
    if "compiled" not in r:
        skip_or_fail_missing()
    c = r["compiled"]
    assert c["cases"] == r["checked"]["cases"] > 0
    assert c["differences"] == []
    assert c["same"] == c["cases"]


@pytest.mark.parametrize("key", version_keys())
def test_the_compiled_raw_layer_refuses_what_c_cannot_take(figures, key):
    # The raw layer passes what C's types allow; compiled, what they hold: nothing out
    # of an integer's range, no negative or too large address. What still reaches C is
    # what C's types cannot tell apart: a handle of another kind, a non-member enum
    # value, a small int as a record's address, and a short buffer where the pointer
    # may be an array (of zero records, as far as the raw layer knows; a buffer for
    # exactly one record, generator/sizes.py's, is checked).
    r = figures[key]
    if "compiled_raw" not in r:
        skip_or_fail_missing()
    reasons = r["compiled_raw"]["by_reason"]
    for why in (
        "out of range",
        "pointer out of range",
        "handle out of range",
    ):
        assert why not in reasons, (why, reasons)
    assert r["compiled_raw"]["nonsense"] < r["raw"]["nonsense"]
