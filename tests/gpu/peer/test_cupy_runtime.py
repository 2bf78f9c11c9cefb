"""Ports of CuPy's `tests/cupy_tests/cuda_tests/test_runtime.py` at
01812b53ad27ec30c932dab35a32a8b730b87680, from CuPy's runtime wrappers to cudart's
checked API (5 tests: 4 ported, 1 skipped: it needs NVRTC).
"""

from __future__ import annotations

import importlib
import os
import pickle

import pytest

import cudart

from ._support import device_attribute


def test_exception_picklable():
    """Upstream cupy/cupy: test_runtime.py@01812b5, TestExceptionPicklable::test

    CuPy's CUDARuntimeError(1) is cudart's error for code 1, as cudart.check raises it."""
    with pytest.raises(cudart.CudaError) as info:
        cudart.check(1)
    e1 = info.value
    e2 = pickle.loads(pickle.dumps(e1))
    assert e1.args == e2.args
    assert str(e1) == str(e2)
    assert type(e1) is type(e2)


def test_mallocFromPoolAsync():
    """Upstream cupy/cupy: test_runtime.py@01812b5, TestMemPool::test_mallocFromPoolAsync"""
    if device_attribute(cudart.cudaDevAttrMemoryPoolsSupported) == 0:
        pytest.skip("cudaMemPool_t is not supported on device 0")
    # also test create/destroy a pool
    props = cudart.cudaMemPoolProps()
    props.allocType = cudart.cudaMemAllocationTypePinned
    props.handleTypes = cudart.cudaMemHandleTypeNone
    props.location.type = cudart.cudaMemLocationTypeDevice
    props.location.id = 0  # on device 0
    pool = cudart.cudaMemPoolCreate(props)
    assert int(pool) > 0
    s = cudart.cudaStreamCreate()
    ptr = cudart.cudaMallocFromPoolAsync(128, pool, s)
    assert ptr > 0
    cudart.cudaFreeAsync(ptr, s)
    cudart.cudaMemPoolDestroy(pool)
    cudart.cudaStreamSynchronize(s)
    cudart.cudaStreamDestroy(s)


# How the run paired NVRTC with the runtime ($CUDART_NVRTC_PAIRING, set by
# tests/gpu/run_on_device.sh): "same" (unset: cudart found both, one CUDA release, as
# upstream assumes), "pinned" (a 12.x runtime with the NVRTC named in
# $CUDART_NVRTC_LIBRARY) or "machine" (a 13.x runtime with the machine's own NVRTC).
NVRTC_PAIRING = "CUDART_NVRTC_PAIRING"


def test_assumed_runtime_version():
    """Upstream cupy/cupy: test_runtime.py@01812b5, test_assumed_runtime_version

    Upstream assumes the NVRTC and the runtime of one CUDA release: so here where
    cudart found both itself. Where the run pairs them by design (the pinned 12.5 NVRTC
    with each 12.x runtime, the machine's with each 13.x), the same major version is
    what must hold, and the NVRTC loaded must be the one the pairing names."""
    from cudart._loader import facts, load_nvrtc

    NVRTC_LIBRARY_ENV = facts("nvrtc")["env"]
    from cudart.nvrtc import nvrtc_version

    version = nvrtc_version()  # major * 1000 + minor * 10, as upstream computes it
    runtime = cudart.cudaRuntimeGetVersion()
    pairing = os.environ.get(NVRTC_PAIRING, "same")
    nvrtc = load_nvrtc()
    assert version // 1000 == runtime // 1000, (runtime, version, pairing)
    if pairing == "same":
        assert runtime == version, (
            f"runtime {runtime} and NVRTC {version} ({nvrtc.path}); if they were chosen "
            f"apart on purpose, say how in ${NVRTC_PAIRING}"
        )
    elif pairing == "pinned":
        assert nvrtc.path == os.environ[NVRTC_LIBRARY_ENV]
    else:
        assert pairing == "machine", pairing
        assert nvrtc.found_by != f"${NVRTC_LIBRARY_ENV}", nvrtc


def test_major_version():
    """Upstream cupy/cupy: test_runtime.py@01812b5, test_major_version (CUDA, not HIP)"""
    major = cudart.cudaRuntimeGetVersion() // 1000
    assert 10 < major < 20


def test_get_local_runtime_version_after_import():
    """Upstream cupy/cupy: test_runtime.py@01812b5, test_get_local_runtime_version_after_import

    CuPy's regression was importing its runtime module by name breaking the version
    query; here the loaded version's checked module is imported by name first."""
    version_module = f"cudart.checked_{cudart.sys.__name__.rsplit('_', 1)[1]}"
    importlib.import_module(version_module)
    version = cudart.cudaRuntimeGetVersion()
    assert isinstance(version, int)
    assert version > 0
