"""A user's script, type-checked by tests/generator/test_typing.py with `mypy --strict`.

It is never run by the tests (it needs a GPU): only its types are checked, against
the annotations cudart ships. Lines marked `# type: ignore[...]` must stay errors.
"""

from __future__ import annotations

import ctypes

import cudart


def main() -> None:
    n: int = cudart.cudaGetDeviceCount()
    print(f"{n} device(s), runtime {cudart.cudaRuntimeGetVersion()}")
    prop = cudart.cudaGetDeviceProperties(0)
    name: bytes = prop.name
    print(name.decode(), prop.major, prop.minor, prop.totalGlobalMem)

    stream = cudart.cudaStreamCreateWithFlags(cudart.cudaStreamNonBlocking)
    # Handles are values (cudart._handles.Handle).
    address: int = int(stream)
    protocol: tuple[int, int] = stream.__cuda_stream__()
    streams: dict[cudart.cudaStream_t, int] = {stream: address + protocol[1]}
    print(streams.get(cudart.cudaStream_t(address)), bool(stream))
    ptr: int = cudart.cudaMalloc(1 << 20)
    host = bytearray(1 << 20)
    cudart.cudaMemcpyAsync(ptr, b"\x01" * (1 << 20), 1 << 20, cudart.cudaMemcpyHostToDevice, stream)
    cudart.cudaMemcpyAsync(host, ptr, len(host), cudart.cudaMemcpyDeviceToHost, stream)
    done: bool = cudart.cudaStreamQuery(stream)
    if not done:
        cudart.cudaStreamSynchronize(stream)
    free, total = cudart.cudaMemGetInfo()
    print(free / total)
    # Attribute values are Python values of the attribute's type.
    pool = cudart.cudaDeviceGetDefaultMemPool(0)
    cudart.cudaMemPoolSetAttribute(pool, cudart.cudaMemPoolAttrReleaseThreshold, 2**30)
    held: int = cudart.cudaMemPoolGetAttribute(pool, cudart.cudaMemPoolAttrReleaseThreshold)
    cudart.cudaMemPoolSetAttribute(pool, cudart.cudaMemPoolAttrReleaseThreshold, "1")  # type: ignore[arg-type]
    ranges: int | list[int] = cudart.cudaMemRangeGetAttribute(
        4, cudart.cudaMemRangeAttributeReadMostly, ptr, 1 << 20
    )
    print(held, ranges)

    # Host allocations are addresses and buffers (cudart.HostMemory).
    pinned: cudart.HostMemory = cudart.cudaHostAlloc(1 << 10, cudart.cudaHostAllocMapped)
    pinned_address: int = int(pinned)
    floats: memoryview = pinned.view("f")
    mapped = cudart.cudaHostGetDevicePointer(pinned, 0)
    cudart.cudaMemcpy(pinned, ptr, len(pinned), cudart.cudaMemcpyDeviceToHost)
    print(pinned_address, floats.nbytes, memoryview(pinned).nbytes, int(mapped))
    cudart.cudaFreeHost(pinned)

    start = cudart.cudaEventCreate()
    end = cudart.cudaEventCreate()
    cudart.cudaEventRecord(start, stream)
    cudart.cudaEventRecord(end)  # the default stream, as C++ would default it
    cudart.cudaEventSynchronize(end)
    ms: float = cudart.cudaEventElapsedTime(start, end)
    print(f"{ms:.3f} ms")

    try:
        cudart.cudaMalloc(1 << 60)
    except cudart.CudaErrorMemoryAllocation as exc:
        code: cudart.cudaError = exc.code
        print(code, exc.name, exc.message)
    except cudart.CudaError as exc:
        print(exc)

    status = cudart.cudaStreamIsCapturing(stream)
    if status == cudart.cudaStreamCaptureStatusNone:
        print("not capturing")
    raw = ctypes.c_int()
    assert cudart.sys.cudaGetDevice(ctypes.byref(raw)) == cudart.cudaSuccess
    cudart.cudaFree(ptr)
    # Python callables as host functions, stream callbacks and host nodes.
    cudart.cudaLaunchHostFunc(stream, print, "reached")
    cudart.cudaLaunchHostFunc(stream, cudart.cudaHostFn_t(lambda p: None))
    cudart.cudaStreamAddCallback(stream, lambda s, status, data: None, None, 0)
    host_node = cudart.cudaHostNodeParams(fn=print, userData="node")
    graph = cudart.cudaGraphCreate(0)
    cudart.cudaGraphAddHostNode(graph, None, 0, host_node)
    cudart.cudaLaunchHostFunc(stream, 1.5)  # type: ignore[arg-type]
    # The occupancy templates of cuda_runtime.h, under their C names.
    grid_blocks: tuple[int, int] = cudart.cudaOccupancyMaxPotentialBlockSize(0, 0, 256)
    cudart.cudaOccupancyMaxPotentialBlockSizeWithFlags(0, 0, 0, cudart.cudaOccupancyDefault)
    cudart.cudaOccupancyMaxPotentialBlockSizeVariableSMem(0, lambda block: block * 4)
    cudart.cudaOccupancyMaxPotentialBlockSizeVariableSMemWithFlags(0, lambda b: 0, 0, 0)
    cudart.cudaOccupancyMaxPotentialBlockSizeVariableSMem(0, 4096)  # type: ignore[arg-type]
    print(grid_blocks)
    cudart.cudaStreamDestroy(stream)
    cudart.cudaMalloc("one megabyte")  # type: ignore[arg-type]
    wrong: str = cudart.cudaGetDevice()  # type: ignore[assignment]
    print(wrong)


if __name__ == "__main__":
    main()
