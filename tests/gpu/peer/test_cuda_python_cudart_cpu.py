"""The argument handling of ports the GPU machine's driver cannot run (CUDA 13.1+ calls
on a 13.0 driver), checked on the CPU through the real libcudart: the call reaches C
in the shape C documents, and C's answer (no usable driver here) comes back as its
error.

cudaDevSmResourceSplitByCount (test_cuda_python_cudart.py's port of upstream's test):
C takes `result` (an array of *nbGroups records, or NULL to only count), `nbGroups`
(in: the array's length; out: the groups made), `input` and `remaining` (written).
"""

from __future__ import annotations

import json

import pytest
from suite import run_python

CPU_CHECKS = True  # tests/gpu/conftest.py: not a GPU test

# Calls the checked function with a spy in front of the C function it binds (the call
# still goes to the real libcudart): what C was handed, and what came back.
SPLIT_BY_COUNT = r"""
import ctypes, inspect, json
import cudart
checked = __import__(f"cudart.checked_{cudart.sys.CUDA_VERSION}", fromlist=["x"])
real = checked._cudaDevSmResourceSplitByCount
seen = []

def spy(result, nbGroups, input, remaining, flags, minCount):
    seen.append({
        "result": None if result is None else [type(result).__name__, len(result)],
        "nbGroups": [type(nbGroups).__name__, nbGroups.value],
        "input": getattr(input, "_obj", input) is resource,  # by reference or itself
        "remaining": type(remaining).__name__,
        "flags": flags,
        "minCount": minCount,
    })
    status = real(result, nbGroups, input, remaining, flags, minCount)
    checked._cudaDevSmResourceSplitByCount = spy  # a first call may bind the name anew
    return status

checked._cudaDevSmResourceSplitByCount = spy
out = {
    "parameters": list(inspect.signature(cudart.cudaDevSmResourceSplitByCount).parameters),
    "returns": inspect.signature(cudart.cudaDevSmResourceSplitByCount).return_annotation,
    "calls": [],
    "refused": [],
}
resource = cudart.cudaDevResource()
for groups in (0, 3):
    try:
        cudart.cudaDevSmResourceSplitByCount(groups, resource, 0, 2)
        out["calls"].append("no error")
    except cudart.CudaError as exc:
        out["calls"].append([type(exc).__name__, int(exc.code)])
for groups in (-1, 1 << 32):
    try:
        cudart.cudaDevSmResourceSplitByCount(groups, resource, 0, 2)
    except (OverflowError, TypeError, ValueError) as exc:
        out["refused"].append([type(exc).__name__, "nbGroups" in str(exc)])
out["seen"] = seen
print(json.dumps(out))
"""


@pytest.mark.parametrize("version", ["13.5"])  # 13.1-13.4: the same shape
def test_cudaDevSmResourceSplitByCount_reaches_c_in_its_shape(header_sets, version):
    lib = str(header_sets[version].library)
    got = json.loads(run_python(SPLIT_BY_COUNT, env={"CUDART_LIBRARY": lib}).stdout)
    # What a user needs back: the groups, how many C made, and what is left.
    assert got["parameters"] == ["nbGroups", "input", "flags", "minCount"]
    assert got["returns"] == "tuple[list[cudaDevResource], int, cudaDevResource]"
    # 0 asks for the count (NULL result); 3 hands C an array of 3 records to fill.
    assert got["seen"] == [
        {
            "result": result,
            "nbGroups": ["c_uint", groups],
            "input": True,
            "remaining": "cudaDevResource_st",
            "flags": 0,
            "minCount": 2,
        }
        for groups, result in ((0, None), (3, ["cudaDevResource_st_Array_3", 3]))
    ]
    # No driver here: C's own answer, as its exception class, for both calls.
    assert got["calls"] == [["CudaErrorInsufficientDriver", 35]] * 2
    # A count C's unsigned int cannot hold never reaches C (the spy saw two calls).
    assert got["refused"] == [["OverflowError", True]] * 2
