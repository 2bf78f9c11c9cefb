"""Memory (device, pinned, mapped, managed), copies and memsets, events, device
properties checked against nvidia-smi and cuda-bindings, and peer copies."""

from __future__ import annotations

import csv
import ctypes
import io
import json
import re
import shutil
import subprocess
import sys
import time

import pytest


def check(rt, status: int) -> None:
    if status != 0:
        raise AssertionError(
            f"{rt.cudaGetErrorName(status).decode()} ({status}): "
            f"{rt.cudaGetErrorString(status).decode()}"
        )


def pattern(n: int, seed: int = 0) -> bytes:
    return bytes((i * 31 + seed) & 0xFF for i in range(n))


class Owned:
    """Frees what a test allocated, in reverse order, even when it fails."""

    def __init__(self, rt):
        self.rt = rt
        self._undo = []

    def add(self, free, handle):
        self._undo.append((free, handle))
        return handle

    def device(self, n: int) -> int:
        p = ctypes.c_void_p()
        check(self.rt, self.rt.cudaMalloc(ctypes.byref(p), n))
        return self.add(self.rt.cudaFree, p).value

    def stream(self):
        s = self.rt.cudaStream_t()
        check(
            self.rt,
            self.rt.cudaStreamCreateWithFlags(ctypes.byref(s), self.rt.cudaStreamNonBlocking),
        )
        return self.add(self.rt.cudaStreamDestroy, s)

    def event(self, flags: int = 0):
        e = self.rt.cudaEvent_t()
        check(self.rt, self.rt.cudaEventCreateWithFlags(ctypes.byref(e), flags))
        return self.add(self.rt.cudaEventDestroy, e)

    def release(self):
        self.rt.cudaDeviceSynchronize()
        while self._undo:
            free, handle = self._undo.pop()
            check(self.rt, free(handle))


@pytest.fixture
def own(rt):
    o = Owned(rt)
    yield o
    o.release()


def device_count(rt) -> int:
    n = ctypes.c_int()
    check(rt, rt.cudaGetDeviceCount(ctypes.byref(n)))
    return n.value


def properties(rt, device: int):
    prop = rt.cudaDeviceProp()
    check(rt, rt.cudaGetDeviceProperties(ctypes.byref(prop), device))
    return prop


def attribute(rt, attr, device: int) -> int:
    v = ctypes.c_int()
    check(rt, rt.cudaDeviceGetAttribute(ctypes.byref(v), attr, device))
    return v.value


def pointer_type(rt, ptr: int):
    attrs = rt.cudaPointerAttributes()
    check(rt, rt.cudaPointerGetAttributes(ctypes.byref(attrs), ptr))
    return attrs


# ------------------------------------------------------------------------- memory


def test_device_memory_copies_and_memsets(rt, own):
    n = 1 << 20
    d1, d2 = own.device(n), own.device(n)
    host = (ctypes.c_ubyte * n)()

    check(rt, rt.cudaMemset(d1, 0xAB, n))
    check(rt, rt.cudaMemcpy(host, d1, n, rt.cudaMemcpyDeviceToHost))
    assert bytes(host) == b"\xab" * n

    data = pattern(n)
    check(rt, rt.cudaMemcpy(d1, data, n, rt.cudaMemcpyHostToDevice))
    check(rt, rt.cudaMemcpy(d2, d1, n, rt.cudaMemcpyDeviceToDevice))
    check(rt, rt.cudaMemset(d2 + 1000, 0, 24))  # an offset pointer is a plain int sum
    check(rt, rt.cudaMemcpy(host, d2, n, rt.cudaMemcpyDefault))
    assert bytes(host) == data[:1000] + bytes(24) + data[1024:]

    attrs = pointer_type(rt, d1)
    current = ctypes.c_int()
    check(rt, rt.cudaGetDevice(ctypes.byref(current)))
    assert (attrs.type, attrs.device, attrs.devicePointer) == (
        rt.cudaMemoryTypeDevice,
        current.value,
        d1,
    )


def test_mem_get_info(rt):
    free, total = ctypes.c_size_t(), ctypes.c_size_t()
    check(rt, rt.cudaMemGetInfo(ctypes.byref(free), ctypes.byref(total)))
    current = ctypes.c_int()
    check(rt, rt.cudaGetDevice(ctypes.byref(current)))
    assert 0 < free.value <= total.value
    # Both come from the driver; allow for what the driver keeps back in either.
    assert abs(total.value - properties(rt, current.value).totalGlobalMem) <= total.value // 50


def test_pinned_and_mapped_host_memory_with_async_copies(rt, own):
    n = 1 << 20
    pinned, mapped = ctypes.c_void_p(), ctypes.c_void_p()
    check(rt, rt.cudaMallocHost(ctypes.byref(pinned), n))
    own.add(rt.cudaFreeHost, pinned)
    check(
        rt,
        rt.cudaHostAlloc(
            ctypes.byref(mapped), n, rt.cudaHostAllocMapped | rt.cudaHostAllocPortable
        ),
    )
    own.add(rt.cudaFreeHost, mapped)
    assert pointer_type(rt, pinned.value).type == rt.cudaMemoryTypeHost
    assert pointer_type(rt, mapped.value).type == rt.cudaMemoryTypeHost
    mapped_dev = ctypes.c_void_p()
    check(rt, rt.cudaHostGetDevicePointer(ctypes.byref(mapped_dev), mapped, 0))
    assert mapped_dev.value

    d = own.device(n)
    s = own.stream()
    check(rt, rt.cudaMemsetAsync(d, 0x11, n, s))
    check(rt, rt.cudaMemcpyAsync(pinned, d, n, rt.cudaMemcpyDeviceToHost, s))
    check(rt, rt.cudaStreamSynchronize(s))
    assert ctypes.string_at(pinned.value, n) == b"\x11" * n

    data = pattern(n, 5)
    ctypes.memmove(mapped.value, data, n)
    check(rt, rt.cudaMemcpyAsync(d, mapped, n, rt.cudaMemcpyHostToDevice, s))
    check(rt, rt.cudaMemsetAsync(d, 0x77, 16, s))
    check(rt, rt.cudaMemcpyAsync(pinned, d, n, rt.cudaMemcpyDeviceToHost, s))
    check(rt, rt.cudaStreamSynchronize(s))
    assert ctypes.string_at(pinned.value, n) == b"\x77" * 16 + data[16:]

    # The device's address of the mapped buffer names the same bytes.
    ctypes.memset(mapped.value, 0x22, 8)
    check(rt, rt.cudaMemcpyAsync(d, mapped_dev, 64, rt.cudaMemcpyDefault, s))
    check(rt, rt.cudaMemcpyAsync(pinned, d, 64, rt.cudaMemcpyDeviceToHost, s))
    check(rt, rt.cudaStreamSynchronize(s))
    assert ctypes.string_at(pinned.value, 64) == b"\x22" * 8 + data[8:64]


def test_managed_memory_small(rt, own):
    current = ctypes.c_int()
    check(rt, rt.cudaGetDevice(ctypes.byref(current)))
    if not attribute(rt, rt.cudaDevAttrManagedMemory, current.value):
        pytest.skip("this device does not support managed memory")
    n = 64 << 10  # small on purpose: managed memory can be oversubscribed, never needed here
    m = ctypes.c_void_p()
    check(rt, rt.cudaMallocManaged(ctypes.byref(m), n, rt.cudaMemAttachGlobal))
    own.add(rt.cudaFree, m)
    assert pointer_type(rt, m.value).type == rt.cudaMemoryTypeManaged

    ctypes.memset(m.value, 7, n)  # written by the host...
    s = own.stream()
    check(rt, rt.cudaMemsetAsync(m.value + n // 2, 9, n // 2, s))  # ...and by the device
    check(rt, rt.cudaStreamSynchronize(s))
    assert ctypes.string_at(m.value, n) == b"\x07" * (n // 2) + b"\x09" * (n // 2)

    d = own.device(n)
    check(rt, rt.cudaMemcpy(d, m, n, rt.cudaMemcpyDefault))
    back = (ctypes.c_ubyte * n)()
    check(rt, rt.cudaMemcpy(back, d, n, rt.cudaMemcpyDeviceToHost))
    assert bytes(back) == ctypes.string_at(m.value, n)


# ------------------------------------------------------------------------- events


def test_events_time_work_and_order_streams(rt, own):
    n = 256 << 20
    d = own.device(n)
    s1, s2 = own.stream(), own.stream()
    start, stop = own.event(), own.event()
    out = (ctypes.c_ubyte * 4)()

    t0 = time.perf_counter()
    check(rt, rt.cudaEventRecord(start, s1))
    for value in (1, 2, 3, 4):
        check(rt, rt.cudaMemsetAsync(d, value, n, s1))
    check(rt, rt.cudaEventRecord(stop, s1))
    # s2 reads only after s1's last memset, through the event.
    check(rt, rt.cudaStreamWaitEvent(s2, stop, 0))
    check(rt, rt.cudaMemcpyAsync(out, d + n - 4, 4, rt.cudaMemcpyDeviceToHost, s2))
    check(rt, rt.cudaStreamSynchronize(s2))
    host_ms = (time.perf_counter() - t0) * 1000

    check(rt, rt.cudaEventSynchronize(stop))
    check(rt, rt.cudaEventQuery(stop))
    assert bytes(out) == b"\x04" * 4
    ms = ctypes.c_float()
    check(rt, rt.cudaEventElapsedTime(ctypes.byref(ms), start, stop))
    # 1 GiB of memset takes measurable time, and no more than the host waited for it.
    assert 0.0 < ms.value <= host_ms + 1.0, (ms.value, host_ms)


def test_event_without_timing_has_no_elapsed_time(rt, own):
    a, b = own.event(rt.cudaEventDisableTiming), own.event(rt.cudaEventDisableTiming)
    check(rt, rt.cudaEventRecord(a, None))
    check(rt, rt.cudaEventRecord(b, None))
    check(rt, rt.cudaEventSynchronize(b))
    ms = ctypes.c_float()
    assert rt.cudaEventElapsedTime(ctypes.byref(ms), a, b) == rt.cudaErrorInvalidResourceHandle


# ------------------------------------------------------------- device properties


def _pci(text: str) -> tuple[int, int, int]:
    m = re.fullmatch(r"\s*([0-9a-fA-F]+):([0-9a-fA-F]+):([0-9a-fA-F]+)\.([0-9a-fA-F]+)\s*", text)
    assert m, f"not a PCI bus id: {text!r}"
    return int(m.group(1), 16), int(m.group(2), 16), int(m.group(3), 16)


def _bus_id(rt, device: int) -> str:
    buf = ctypes.create_string_buffer(64)
    check(rt, rt.cudaDeviceGetPCIBusId(buf, len(buf), device))
    return buf.value.decode()


def test_properties_agree_with_attributes_and_bus_id(rt):
    pairs = {
        "major": "cudaDevAttrComputeCapabilityMajor",
        "minor": "cudaDevAttrComputeCapabilityMinor",
        "multiProcessorCount": "cudaDevAttrMultiProcessorCount",
        "warpSize": "cudaDevAttrWarpSize",
        "maxThreadsPerBlock": "cudaDevAttrMaxThreadsPerBlock",
        "sharedMemPerBlock": "cudaDevAttrMaxSharedMemoryPerBlock",
        "totalConstMem": "cudaDevAttrTotalConstantMemory",
        "l2CacheSize": "cudaDevAttrL2CacheSize",
        "pciBusID": "cudaDevAttrPciBusId",
        "pciDeviceID": "cudaDevAttrPciDeviceId",
        "pciDomainID": "cudaDevAttrPciDomainId",
        "managedMemory": "cudaDevAttrManagedMemory",
    }
    for device in range(device_count(rt)):
        prop = properties(rt, device)
        got = {f: getattr(prop, f) for f in pairs}
        want = {f: attribute(rt, getattr(rt, a), device) for f, a in pairs.items()}
        assert got == want, f"device {device}"
        assert _pci(_bus_id(rt, device)) == (prop.pciDomainID, prop.pciBusID, prop.pciDeviceID)
        assert prop.name and prop.totalGlobalMem > 0 and prop.major >= 3


def _smi_rows() -> list[dict]:
    smi = shutil.which("nvidia-smi")
    if smi is None:
        pytest.skip("nvidia-smi not found on PATH")
    fields = ["name", "memory.total", "compute_cap", "pci.bus_id", "mig.mode.current", "uuid"]
    proc = subprocess.run(
        [smi, f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, f"nvidia-smi failed: {proc.stdout}{proc.stderr}"
    rows = [
        dict(zip(fields, (c.strip() for c in row), strict=True))
        for row in csv.reader(io.StringIO(proc.stdout))
        if row
    ]
    assert rows, "nvidia-smi listed no GPU"
    return rows


def _uuid_text(uuid: bytes) -> str:
    """nvidia-smi's spelling of a GPU UUID: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx."""
    h = uuid.hex()
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def test_properties_match_nvidia_smi(rt):
    rows = {_pci(r["pci.bus_id"]): r for r in _smi_rows()}
    for device in range(device_count(rt)):
        prop = properties(rt, device)
        where = (prop.pciDomainID, prop.pciBusID, prop.pciDeviceID)
        row = rows.get(where)
        assert (
            row is not None
        ), f"device {device} at PCI {where} is not among nvidia-smi's {list(rows)}"
        assert prop.name.decode() == row["name"]
        assert f"{prop.major}.{prop.minor}" == row["compute_cap"]
        # uuid.bytes and luid are bytes, read whole even where they hold a zero byte.
        assert len(prop.uuid.bytes) == 16 and len(prop.luid) == 8
        if row["mig.mode.current"] == "Enabled":
            continue  # a MIG instance has its own UUID and a slice of the memory
        assert _uuid_text(prop.uuid.bytes) == row["uuid"]
        # nvidia-smi reports MiB and, depending on the driver, counts memory the
        # driver reserves, which CUDA leaves out (well under 3% on current boards).
        smi_bytes = int(row["memory.total"]) << 20
        assert abs(prop.totalGlobalMem - smi_bytes) <= 0.03 * smi_bytes, (
            prop.totalGlobalMem,
            smi_bytes,
        )
    # nvidia-smi has no multiprocessor count; cudaDeviceGetAttribute and cuda-bindings
    # check it (test_properties_agree_with_attributes_and_bus_id, ..._cuda_bindings).


# What cuda-bindings reports, in a separate process: it loads a libcudart 13 of its
# own, and this one may hold a libcudart 12.
_THEIRS = r"""
import json, sys
try:
    from cuda.bindings import runtime
except ImportError as exc:
    print(json.dumps({"absent": str(exc)})); raise SystemExit(0)

def plain(v):
    if isinstance(v, (bytes, bytearray)):
        return {"bytes": bytes(v).hex()}
    if isinstance(v, str):
        return {"bytes": v.encode("utf-8", "surrogateescape").hex()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, float):
        return v
    if hasattr(v, "bytes"):
        return plain(v.bytes)
    try:
        return int(v)
    except (TypeError, ValueError):
        return {"other": repr(v)}

names = json.loads(sys.argv[1])
out = {}
for device in range(int(sys.argv[2])):
    err, prop = runtime.cudaGetDeviceProperties(device)
    if int(err) != 0:
        print(json.dumps({"error": f"device {device}: {err!r}"})); raise SystemExit(0)
    out[device] = {n: plain(getattr(prop, n)) for n in names if hasattr(prop, n)}
print(json.dumps({"props": out}))
"""

# Undefined on Linux (cudaDeviceProp documents them for Windows WDDM only).
_UNDEFINED_HERE = {"luid", "luidDeviceNodeMask"}


def _ours(value, ctype, raw: bytes):
    if issubclass(ctype, ctypes.Array):
        if issubclass(ctype._type_, ctypes.c_char):
            return {"bytes": raw.hex()}
        return [_ours(value[i], ctype._type_, b"") for i in range(ctype._length_)]
    if issubclass(ctype, ctypes.Structure):
        return {"bytes": raw.hex()}  # cudaUUID_t: 16 raw bytes
    return value


def _same(ours, theirs) -> bool:
    if isinstance(ours, dict) and isinstance(theirs, dict) and "bytes" in theirs:
        a, b = bytes.fromhex(ours["bytes"]), bytes.fromhex(theirs["bytes"])
        # A char array may come back whole, cut at its first NUL, or NUL-trimmed.
        return b in (a, a.split(b"\0", 1)[0]) or a.rstrip(b"\0") == b.rstrip(b"\0")
    if isinstance(ours, list) and isinstance(theirs, list):
        return len(ours) == len(theirs) and all(
            _same(x, y) for x, y in zip(ours, theirs, strict=True)
        )
    return ours == theirs


def test_properties_match_cuda_bindings(rt):
    fields = [
        (n, t)
        for n, t in rt.cudaDeviceProp._fields_
        if not n.startswith(("_", "reserved")) and n not in _UNDEFINED_HERE
    ]
    count = device_count(rt)
    proc = subprocess.run(
        [sys.executable, "-c", _THEIRS, json.dumps([n for n, _ in fields]), str(count)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    reply = json.loads(proc.stdout.strip().splitlines()[-1])
    if "absent" in reply:
        pytest.skip(f"cuda-bindings not installed: {reply['absent']}")
    assert "error" not in reply, reply
    compared = 0
    for device in range(count):
        prop = properties(rt, device)
        theirs = reply["props"][str(device)]
        wrong = {}
        for name, ctype in fields:
            if name not in theirs:
                continue  # a field of this CUDA version that CUDA 13 dropped
            offset, size = getattr(rt.cudaDeviceProp, name).offset, ctypes.sizeof(ctype)
            raw = ctypes.string_at(ctypes.addressof(prop) + offset, size)
            ours = _ours(getattr(prop, name), ctype, raw)
            if not _same(ours, theirs[name]):
                wrong[name] = (ours, theirs[name])
            compared += 1
        assert wrong == {}, f"device {device}: fields that differ (ours, cuda-bindings): {wrong}"
    # Most of the struct is shared between 12.x and 13: a near-empty overlap would
    # mean the comparison itself is broken.
    assert compared >= 60 * count, f"only {compared} fields in common"


# ------------------------------------------------------------------------- peers


def test_peer_access_and_memcpy_peer(rt, own):
    count = device_count(rt)
    if count < 2:
        pytest.skip(f"peer copies need 2 GPUs; this machine has {count}")
    n = 1 << 20
    original = ctypes.c_int()
    check(rt, rt.cudaGetDevice(ctypes.byref(original)))
    try:
        check(rt, rt.cudaSetDevice(0))
        d0 = own.device(n)
        check(rt, rt.cudaMemset(d0, 0x42, n))
        check(rt, rt.cudaSetDevice(1))
        d1 = own.device(n)
        check(rt, rt.cudaMemset(d1, 0, n))
        check(rt, rt.cudaDeviceSynchronize())

        # Works with or without peer access (staged through the host if need be).
        check(rt, rt.cudaMemcpyPeer(d1, 1, d0, 0, n))
        host = (ctypes.c_ubyte * n)()
        check(rt, rt.cudaMemcpy(host, d1, n, rt.cudaMemcpyDeviceToHost))
        assert bytes(host) == b"\x42" * n

        can = ctypes.c_int()
        check(rt, rt.cudaDeviceCanAccessPeer(ctypes.byref(can), 0, 1))
        if can.value:
            check(rt, rt.cudaSetDevice(0))
            status = rt.cudaDeviceEnablePeerAccess(1, 0)
            assert status in (rt.cudaSuccess, rt.cudaErrorPeerAccessAlreadyEnabled), status
            check(rt, rt.cudaMemset(d0, 0x24, 4096))
            check(rt, rt.cudaMemcpy(d1, d0, 4096, rt.cudaMemcpyDefault))  # direct, by UVA
            check(rt, rt.cudaMemcpy(host, d1, 4096, rt.cudaMemcpyDeviceToHost))
            assert bytes(host[:4096]) == b"\x24" * 4096
            if status == rt.cudaSuccess:
                check(rt, rt.cudaDeviceDisablePeerAccess(1))
    finally:
        rt.cudaSetDevice(original.value)
