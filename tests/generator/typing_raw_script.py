"""A user's script on the raw layer, type-checked by tests/generator/test_typing.py
(`mypy --strict`).

Never run by the tests (it needs a GPU): only its types are checked, against the
declarations each raw module makes for type checkers (the functions' parameters typed
by what their ctypes argtypes accept). Lines marked `# type: ignore[...]` must stay errors.
"""

from __future__ import annotations

import ctypes

import cudart
import cudart.sys_12050 as rt12


def main() -> None:
    rt = cudart.sys  # the raw module of the newest version, for type checkers
    count = ctypes.c_int()
    status: int = rt.cudaGetDeviceCount(ctypes.byref(count))
    if status != rt.cudaSuccess:
        name: bytes | None = rt.cudaGetErrorName(status)
        print(name, rt.cudaGetErrorString(status))

    ptr = ctypes.c_void_p()
    rt.cudaMalloc(ctypes.byref(ptr), 1 << 20)
    host = ctypes.create_string_buffer(1 << 20)
    rt.cudaMemcpy(host, ptr, len(host), rt.cudaMemcpyDeviceToHost)
    rt.cudaMemcpy(ptr.value, b"\x00" * 16, 16, rt.cudaMemcpyHostToDevice)
    rt.cudaMemset(ptr, 0, 16)

    stream = rt.cudaStream_t()
    rt.cudaStreamCreateWithFlags(ctypes.byref(stream), rt.cudaStreamNonBlocking)
    rt.cudaStreamSynchronize(stream)
    rt.cudaStreamSynchronize(None)  # the default stream
    rt.cudaStreamDestroy(stream)

    prop = rt.cudaDeviceProp()
    rt.cudaGetDeviceProperties(ctypes.byref(prop), 0)
    print(prop.name.decode(), prop.major)
    rt.cudaFree(ptr)

    version = ctypes.c_int()
    rt12.cudaRuntimeGetVersion(ctypes.pointer(version))
    desc: rt12.cudaChannelFormatDesc = rt12.cudaCreateChannelDesc(
        8, 0, 0, 0, rt12.cudaChannelFormatKindUnsigned
    )
    print(desc.x, version.value)

    # Mistakes mypy must catch (each is a ctypes.ArgumentError or TypeError at run time).
    rt.cudaGetDeviceCount(count)  # type: ignore[arg-type]  # the c_int itself, not byref(count)
    rt.cudaMalloc(ctypes.byref(ptr), "16")  # type: ignore[arg-type]
    rt.cudaMalloc(ctypes.byref(ptr))  # type: ignore[call-arg]
    rt.cudaMemcpy("dst", ptr, 16, 1)  # type: ignore[arg-type]
    rt.cudaMallocc(ctypes.byref(ptr), 16)  # type: ignore[attr-defined]
    text: str = rt.cudaGetErrorString(status)  # type: ignore[assignment]  # bytes | None
    rt12.cudaCreateChannelDesc(8, 0, 0, 0, 1.5)  # type: ignore[arg-type]
    print(text)


if __name__ == "__main__":
    main()
