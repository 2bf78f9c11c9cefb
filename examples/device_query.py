"""List the CUDA devices and their main properties, like CUDA's deviceQuery sample.

python examples/device_query.py
"""

import ctypes
import sys

import cudart


def check(rt, status):
    if status != rt.cudaSuccess:
        name = rt.cudaGetErrorName(status).decode()
        sys.exit(f"CUDA error {name} ({status}): {rt.cudaGetErrorString(status).decode()}")


def main():
    rt = cudart.sys
    runtime = cudart.load_runtime()
    driver = ctypes.c_int()
    check(rt, rt.cudaDriverGetVersion(ctypes.byref(driver)))
    print(f"CUDA runtime {runtime.version_text} ({runtime.path}), bindings {rt.__name__}")
    if driver.value == 0:
        sys.exit("no CUDA driver found")
    print(f"CUDA driver supports up to {driver.value // 1000}.{driver.value % 1000 // 10}")

    count = ctypes.c_int()
    check(rt, rt.cudaGetDeviceCount(ctypes.byref(count)))
    print(f"{count.value} CUDA device(s)")
    for device in range(count.value):
        prop = rt.cudaDeviceProp()
        check(rt, rt.cudaGetDeviceProperties(ctypes.byref(prop), device))
        bus_id = ctypes.create_string_buffer(32)
        check(rt, rt.cudaDeviceGetPCIBusId(bus_id, len(bus_id), device))
        uuid = bytes(prop.uuid).hex()
        print(f"\nDevice {device}: {prop.name.decode()}")
        print(f"  compute capability      {prop.major}.{prop.minor}")
        gib = prop.totalGlobalMem / 2**30
        print(f"  global memory           {prop.totalGlobalMem} bytes ({gib:.1f} GiB)")
        print(f"  multiprocessors         {prop.multiProcessorCount}")
        print(f"  warp size               {prop.warpSize}")
        print(f"  max threads per block   {prop.maxThreadsPerBlock}")
        print(f"  max block dimensions    {tuple(prop.maxThreadsDim)}")
        print(f"  max grid dimensions     {tuple(prop.maxGridSize)}")
        print(f"  shared memory per block {prop.sharedMemPerBlock} bytes")
        print(f"  L2 cache                {prop.l2CacheSize} bytes")
        print(f"  memory bus width        {prop.memoryBusWidth} bits")
        print(f"  managed memory          {'yes' if prop.managedMemory else 'no'}")
        print(f"  PCI bus id              {bus_id.value.decode()}")
        groups = (uuid[:8], uuid[8:12], uuid[12:16], uuid[16:20], uuid[20:])
        print(f"  UUID                    GPU-{'-'.join(groups)}")
        for peer in range(count.value):
            if peer != device:
                can = ctypes.c_int()
                check(rt, rt.cudaDeviceCanAccessPeer(ctypes.byref(can), device, peer))
                print(f"  peer access to device {peer}: {'yes' if can.value else 'no'}")


if __name__ == "__main__":
    main()
