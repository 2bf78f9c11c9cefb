"""Ports of the runtime tests of cuda-python's `cuda_bindings/tests/test_utils.py` at
0b5c438195d3ccf8e32c8aead36bbe780ee05b18.

Upstream's `get_cuda_native_handle(obj)` is `int(obj)` for cudart's handles. Ported:
test_get_handle (its six runtime handle kinds; the eleven driver kinds are cuda-bindings'
driver module, which cudart does not bind) and test_get_handle_error (three of four
cases). Not ported, having no runtime part: test_ptx_utils (PTX text),
test_get_handle_does_not_report_a_registered_type_as_unknown (cuda-bindings' getter
registry), test_cyclical_imports (cuda-bindings' modules), test_get_c_compiler, and the
nine check_nvvm_compiler_options tests (libNVVM).
"""

from __future__ import annotations

import random

import pytest

import cudart

RUNTIME_KINDS = (
    "cudaStream_t",
    "cudaEvent_t",
    "cudaGraph_t",
    "cudaGraphNode_t",
    "cudaGraphExec_t",
    "cudaMemPool_t",
)


@pytest.mark.parametrize("target", RUNTIME_KINDS)
def test_get_handle(target):
    """Upstream NVIDIA/cuda-python: test_utils.py@0b5c438, test_get_handle (the runtime kinds)"""
    ptr = random.randint(1, 1024)
    obj = getattr(cudart, target)(ptr)
    handle = int(obj)
    assert handle == ptr


@pytest.mark.parametrize("target", ((1, 2, 3, 4), [5, 6], {}))
def test_get_handle_error(target):
    """Upstream NVIDIA/cuda-python: test_utils.py@0b5c438, test_get_handle_error

    A value that is no handle is a TypeError where a handle goes. Upstream's fourth
    case, None, is not an error here: None is C's NULL handle (the default stream)."""
    with pytest.raises(TypeError):
        cudart.cudaStreamQuery(target)
