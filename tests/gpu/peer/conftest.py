"""The ports of the peers' runtime tests: tests/gpu/conftest.py marks and skips them."""

from __future__ import annotations

import pytest

import cudart


@pytest.fixture(autouse=True)
def _no_last_error_left_behind():
    """Upstream's expected failures leave the runtime's last error set; later suites in
    this process check it, so each port ends with it read and reset."""
    yield
    try:
        cudart.sys.cudaGetLastError()
    except Exception:  # no runtime at all: the test was skipped
        pass
