"""Coredump attributes on a GPU (issue 33, items 7 and 15): the checked driver getters
return the Python value typed by attrib and the setters take it, the size C is told
computed for the caller. The CPU side is tests/runtime/test_output_shapes.py.

Only what cuda.h documents is asserted: a Bool attribute reads back as a bool, a string
set (globally or for the context) reads back as set, and CU_COREDUMP_MAX is refused
before C. Each test restores what it changed.
"""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def driver(primary_driver):
    """cudart.driver in the primary context (conftest.py), where it has the coredump
    attributes (CUDA 12.1+)."""
    if not hasattr(primary_driver, "cuCoredumpGetAttribute"):
        pytest.skip("no coredump attributes before CUDA 12.1")
    return primary_driver


BOOLS = (
    "CU_COREDUMP_ENABLE_ON_EXCEPTION",
    "CU_COREDUMP_TRIGGER_HOST",
    "CU_COREDUMP_LIGHTWEIGHT",
    "CU_COREDUMP_ENABLE_USER_TRIGGER",
)


@pytest.mark.parametrize("scope", ["", "Global"])
def test_bool_attributes_read_as_bools(driver, scope):
    get = getattr(driver, f"cuCoredumpGetAttribute{scope}")
    for name in BOOLS:
        got = get(getattr(driver, name))
        assert type(got) is bool, (name, got)


@pytest.mark.parametrize("scope", ["", "Global"])
def test_enable_on_exception_round_trip(driver, scope):
    get = getattr(driver, f"cuCoredumpGetAttribute{scope}")
    set_ = getattr(driver, f"cuCoredumpSetAttribute{scope}")
    attrib = driver.CU_COREDUMP_ENABLE_ON_EXCEPTION
    before = get(attrib)
    try:
        for value in (True, False):
            set_(attrib, value)
            assert get(attrib) is value
    finally:
        set_(attrib, before)


@pytest.mark.parametrize("scope", ["", "Global"])
def test_file_round_trip(driver, scope, tmp_path):
    get = getattr(driver, f"cuCoredumpGetAttribute{scope}")
    set_ = getattr(driver, f"cuCoredumpSetAttribute{scope}")
    attrib = driver.CU_COREDUMP_FILE
    before = get(attrib)
    assert type(before) is str
    path = str(tmp_path / f"core{scope}.cuda")
    try:
        set_(attrib, path)
        assert get(attrib) == path
    finally:
        if before:
            set_(attrib, before)


def test_pipe_reads_as_a_string(driver):
    got = driver.cuCoredumpGetAttributeGlobal(driver.CU_COREDUMP_PIPE)
    assert type(got) is str


def test_max_is_refused_before_c(driver):
    with pytest.raises(ValueError, match="CU_COREDUMP_MAX"):
        driver.cuCoredumpGetAttribute(driver.CU_COREDUMP_MAX)
    with pytest.raises(ValueError, match="CU_COREDUMP_MAX"):
        driver.cuCoredumpSetAttributeGlobal(driver.CU_COREDUMP_MAX, True)
