"""Records of the checked layer as C code fills them and reads them: field by field
(a host node's `fn` and `userData` in either order), pointer members and builders
that take buffers and keep them alive, and records read out of records (views) with
`copy.copy` giving a detached value. No GPU: building and filling records is Python
and ctypes over the real libcudart's modules."""

from __future__ import annotations

import ctypes
import importlib

import pytest

import cudart

VERSIONS = [v for v in cudart.available_versions() if v in (12050, 13050)]


@pytest.fixture(params=VERSIONS, ids=[f"checked_{v}" for v in VERSIONS])
def checked(request):
    return importlib.import_module(f"cudart.checked_{request.param}")


# ---------------------------------------------------------------- host node records


def test_host_node_fn_set_after_construction(checked):
    params = checked.cudaHostNodeParams()
    params.fn = print
    assert params._python_fn_ == (print, None)
    assert not ctypes.cast(params.fn, ctypes.c_void_p).value  # the raw layer sees NULL


@pytest.mark.parametrize("data", [["any", "object"], 5, "text"])
def test_host_node_user_data_before_fn(checked, data):
    params = checked.cudaHostNodeParams()
    params.userData = data
    params.fn = print
    assert params._python_fn_ == (print, data)
    assert params.userData is None  # C's field holds nothing: the callable's data is Python's


def test_host_node_user_data_after_fn(checked):
    params = checked.cudaHostNodeParams()
    params.fn = print
    params.userData = {"k": 1}
    assert params._python_fn_ == (print, {"k": 1})


def test_host_node_python_fn_replaced_by_c_pointer_keeps_int_data(checked):
    params = checked.cudaHostNodeParams(fn=print, userData=1234)
    c_fn = checked._lib.cudaHostFn_t(lambda data: None)
    params.fn = c_fn
    assert params._python_fn_ is None
    assert params.userData == 1234
    params.fn = print  # and back: the data follows
    assert params._python_fn_ == (print, 1234)


def test_host_node_fn_none_clears_the_callable(checked):
    params = checked.cudaHostNodeParams(print, "x")
    params.fn = None
    assert params._python_fn_ is None
    params.fn = len
    assert params._python_fn_ == (len, "x")
