"""Kernel images that only the hardened image reader covers: a fatbin whose SASS is
LZ4-compressed (the cubin read after decompression), and fatbins that claim more
than they hold, which load_module refuses before either route hands them to C."""

from __future__ import annotations

import struct

import pytest

from cudart.kernels import ImageError, load_module

from .support import ALL_KERNELS, KERNELS, check, routes


@pytest.mark.parametrize("route", ["register", "library"])
def test_lz4_sass_fatbin_loads_and_launches(rt, route):
    if route not in routes(rt):
        pytest.skip(f"the {route} route needs cudaLibraryLoadData (CUDA 12.8+)")
    with load_module(KERNELS / "kernels_lz4_sass.fatbin", route=route) as m:
        assert set(m.function_names()) == ALL_KERNELS
        m.get_function("empty").launch(1, 1)
        check(rt, rt.cudaDeviceSynchronize())
        assert m.get_global("dev_table").size == 64


@pytest.mark.parametrize("route", ["register", "library"])
def test_fatbin_claiming_more_than_it_holds_never_reaches_c(rt, route):
    if route not in routes(rt):
        pytest.skip(f"the {route} route needs cudaLibraryLoadData (CUDA 12.8+)")
    rt.cudaGetLastError()  # an earlier test's error is not this test's
    data = (KERNELS / "kernels.fatbin").read_bytes()
    body_past_the_end = bytearray(data)
    struct.pack_into("<Q", body_past_the_end, 8, len(data) * 64)
    entry_past_the_end = bytearray(data)
    struct.pack_into("<Q", entry_past_the_end, 16 + 8, 1 << 40)
    for bad in (data[: len(data) // 2], bytes(body_past_the_end), bytes(entry_past_the_end)):
        with pytest.raises(ImageError, match="malformed fatbin"):
            load_module(bad, route=route)
    assert rt.cudaGetLastError() == 0
    with load_module(data, route=route) as m:
        m.get_function("empty").launch(1, 1)
        check(rt, rt.cudaDeviceSynchronize())
