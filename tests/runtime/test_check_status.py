"""cudart.check(status): the checked layer's mapping from a raw cudaError_t to its
exception, public, against each version's real library."""

from __future__ import annotations

import pytest
from suite import probe_each_version

# The calls go through the backend in force: make test-ctypes runs them on ctypes too.
pytestmark = pytest.mark.backend

PROBE = r"""
import ctypes, json
import cudart

rt = cudart.sys
out = {"success": cudart.check(0)}
count = ctypes.c_int()
status = rt.cudaGetDeviceCount(ctypes.byref(count))  # no GPU here: an error code
try:
    cudart.check(status)
    out["raw"] = None
except cudart.CudaError as exc:
    out["raw"] = [status, type(exc).__name__, exc.name, int(exc.code)]
try:
    cudart.cudaGetDeviceCount()
    out["checked"] = None
except cudart.CudaError as exc:
    out["checked"] = [type(exc).__name__, exc.name, str(exc)]
try:
    cudart.check(2)
except cudart.CudaErrorMemoryAllocation as exc:
    out["two"] = [exc.name, isinstance(exc, cudart.CudaError)]
for bad in ("2", 2.0, True, None):
    try:
        cudart.check(bad)
        out.setdefault("accepted", []).append(repr(bad))
    except TypeError:
        pass
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def reports(header_sets):
    return probe_each_version(PROBE, header_sets)


def test_check_raises_what_the_checked_layer_raises(reports):
    for key, r in reports.items():
        assert r["success"] is None, key
        assert r["raw"] is not None, f"{key}: cudaGetDeviceCount succeeded without a GPU?"
        status, cls, name, code = r["raw"]
        assert code == status and cls == "CudaError" + name[len("cudaError") :], (key, r)
        # The same class, name and message as the checked function's own exception.
        assert r["checked"][:2] == [cls, name], (key, r)
        assert r["two"] == ["cudaErrorMemoryAllocation", True], key
        assert "accepted" not in r, (key, r["accepted"])
