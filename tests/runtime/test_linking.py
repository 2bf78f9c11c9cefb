"""cudart.link on the CPU: NVRTC and nvJitLink both work without a GPU, with the real
libraries the wheels of requirements/dev.txt install (the loader finds them as a user's
would). Loading the linked cubin is tests/gpu/test_linking_gpu.py's.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

import cudart
from cudart import linking

SM = "sm_90"
REPO = Path(__file__).resolve().parents[2]
ADD = "__device__ int add(int a, int b) { return a + b; }\n"
KERNEL = (
    "extern __device__ int add(int a, int b);\n"
    'extern "C" __global__ void add_kernel(int *p) { p[0] = add(p[1], p[2]); }\n'
)


def _symbols(elf: bytes) -> set[str]:
    """The names in an ELF64 image's symbol tables, read here from the section headers
    (independent of cudart's own image reader)."""
    assert elf[:4] == b"\x7fELF" and elf[4] == 2, "not an ELF64 image"
    (shoff,) = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", elf, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * shentsize) for i in range(shnum)]
    names = set()
    for _name, kind, _flags, _addr, offset, size, link, _info, _align, entsize in sections:
        if kind != 2:  # SHT_SYMTAB
            continue
        strtab = sections[link]
        for at in range(offset, offset + size, entsize):
            (st_name,) = struct.unpack_from("<I", elf, at)
            start = strtab[4] + st_name
            names.add(elf[start : elf.index(b"\0", start)].decode())
    return names


@pytest.fixture(scope="module")
def ltoir():
    return (
        cudart.compile(ADD, arch=SM, output="ltoir", cache=False),
        cudart.compile(KERNEL, arch=SM, output="ltoir", cache=False),
    )


@pytest.fixture(scope="module")
def ptx():
    return tuple(
        cudart.compile(src, arch=SM, output="ptx", load=False, cache=False, options=["-rdc=true"])
        for src in (ADD, KERNEL)
    )


def test_compile_to_ltoir_returns_the_lto_ir(ltoir):
    """output="ltoir" is NVRTC's -dlto: NVVM's LTO-IR (its magic), not loadable."""
    for image in ltoir:
        assert struct.unpack_from("<I", image)[0] == linking.LTOIR_MAGIC
        assert linking.input_kind(image) == "ltoir"
    with pytest.raises(ValueError, match="link it with cudart.link"):
        cudart.compile(ADD, arch=SM, output="ltoir", load=True)


def test_link_two_ltoir_programs_into_a_cubin(ltoir):
    cubin = cudart.link(ltoir, arch=SM, load=False)
    assert linking.input_kind(cubin) == "cubin"
    assert "add_kernel" in _symbols(cubin)
    # The same link for every spelling of the architecture compile() takes.
    assert cudart.link(ltoir, arch=(9, 0), load=False) == cubin


def test_link_ptx_inputs(ptx):
    assert [linking.input_kind(p) for p in ptx] == ["ptx", "ptx"]
    cubin = cudart.link(ptx, arch=90, load=False)
    assert "add_kernel" in _symbols(cubin)


def test_link_takes_paths_and_kind_pairs(ltoir, tmp_path):
    path = tmp_path / "add.ltoir"
    path.write_bytes(ltoir[0])
    cubin = cudart.link([path, ("ltoir", ltoir[1])], arch=SM, load=False)
    assert "add_kernel" in _symbols(cubin)


def test_link_relocatable_cubins_with_ltoir(ltoir):
    """A relocatable cubin (-rdc=true) defines add for the kernel's LTO-IR: kinds mix."""
    add = cudart.compile(ADD, arch=SM, load=False, cache=False, options=["-rdc=true"])
    assert linking.input_kind(add) == "cubin"
    assert "add_kernel" in _symbols(cudart.link([add, ltoir[1]], arch=SM, load=False))


def test_an_unresolved_function_raises_with_the_log(ltoir):
    with pytest.raises(cudart.LinkError) as info:
        cudart.link([ltoir[1]], arch=SM, load=False)
    exc = info.value
    assert "_Z3addii" in exc.log  # add(int, int), which nothing defines
    assert "_Z3addii" in str(exc) and "-lto" in exc.options
    assert isinstance(exc.status, cudart.NvjitlinkError)


def test_an_input_of_the_wrong_kind_raises_with_the_log(ltoir):
    with pytest.raises(cudart.LinkError) as info:
        cudart.link([("ptx", ltoir[0])], arch=SM, load=False)
    assert info.value.log.strip()
    assert info.value.log.splitlines()[0] in str(info.value)


@pytest.mark.parametrize(
    "objects, error, text",
    [
        ([], ValueError, "at least one"),
        (b"abc", TypeError, "sequence of inputs"),
        (("ptx", b".version 8.0 .target sm_90"), TypeError, "not one tuple"),
        ([b"not device code"], ValueError, "not a link input"),
        ([("elf", b"x")], ValueError, "kind one of"),
        ([42], TypeError, "bytes, a path"),
        ([b""], ValueError, "empty"),
    ],
)
def test_bad_objects_are_refused_before_nvjitlink(objects, error, text):
    with pytest.raises(error, match=text):
        cudart.link(objects, arch=SM, load=False)


def test_the_architecture_comes_from_arch_only(ltoir):
    with pytest.raises(ValueError, match="arch=..."):
        cudart.link(ltoir, arch=SM, options=["-arch=sm_80"], load=False)
    with pytest.raises(ValueError, match="arch must be"):
        cudart.link(ltoir, arch="ninety", load=False)


def test_input_kinds_from_the_leading_bytes():
    assert linking.input_kind(b"!<arch>\nrest") == "library"
    # ELF64 with EM_X86_64 (62): a host object; EM_CUDA (190): a cubin.
    head = b"\x7fELF\x02\x01\x01" + bytes(11)
    assert linking.input_kind(head + struct.pack("<H", 62) + bytes(8)) == "object"
    assert linking.input_kind(head + struct.pack("<H", 190) + bytes(8)) == "cubin"
    fatbin = struct.pack("<IHHQ", 0xBA55ED50, 1, 16, 0)
    assert linking.input_kind(fatbin) == "fatbin"


def _fifo(tmp_path):
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return path


# cudart.link of one path in a child process whose address space is capped and whose
# run is timed: an unbounded read fails there with MemoryError instead of taking the
# machine's memory (as the old code did with /dev/zero), and a read that blocks (a FIFO
# without a writer) is a timeout, not a hung suite.
BOUNDED_LINK = r"""
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
import cudart
try:
    cudart.link([sys.argv[1]], arch=sys.argv[2], load=False)
    print(json.dumps(["linked", ""]))
except BaseException as exc:
    print(json.dumps([type(exc).__name__, str(exc)]))
"""


def _link_in_a_bounded_child(path) -> tuple[str, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    try:
        proc = subprocess.run(
            [sys.executable, "-c", BOUNDED_LINK, str(path), SM],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
    except subprocess.TimeoutExpired:
        raise AssertionError(f"link({path}) blocked") from None
    assert proc.returncode == 0, proc.stderr
    kind, message = json.loads(proc.stdout.splitlines()[-1])
    return kind, message


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda tmp_path: "/dev/zero", "a character device"),
        (_fifo, "a FIFO"),
        (lambda tmp_path: tmp_path, "a directory"),
    ],
)
def test_a_path_that_is_not_a_regular_file_is_refused_before_reading(tmp_path, make, words):
    """Issue 33, item 29: /dev/zero was read until MemoryError, and a FIFO blocked for a
    writer; each is refused with what it is, at once (in a capped, timed child)."""
    kind, message = _link_in_a_bounded_child(make(tmp_path))
    assert kind == "ValueError" and words in message, (kind, message)
    assert "objects[0]" in message


def test_a_link_to_dev_zero_and_an_oversized_file_are_refused(tmp_path):
    link = tmp_path / "zero.ltoir"
    link.symlink_to("/dev/zero")
    kind, message = _link_in_a_bounded_child(link)
    assert kind == "ValueError" and "not a regular file" in message, (kind, message)
    sparse = tmp_path / "huge.ltoir"
    with open(sparse, "wb") as f:
        f.truncate(linking.MAX_INPUT + 1)  # sparse: no disk used
    with pytest.raises(ValueError, match="MiB an input may be"):
        cudart.link([sparse], arch=SM, load=False)


def test_a_link_returns_nvjitlinks_info_log(ltoir):
    """Issue 33, item 14: the info log (warnings, -verbose's report) is part of the
    result, on the cubin (a bytes subclass) as on a loaded module."""
    cubin = cudart.link(ltoir, arch=SM, load=False, options=["-verbose"])
    assert isinstance(cubin, bytes) and "add_kernel" in _symbols(cubin)
    assert "Compiling entry function 'add_kernel' for 'sm_90'" in cubin.log
    assert cudart.link(ltoir, arch=SM, load=False).log.strip() == ""


@pytest.mark.parametrize(
    "given, named",
    [
        (lambda ltoir: ("ptx", ltoir[0], "add.ltoir"), "add.ltoir"),  # a triple's name
        (lambda ltoir: ("ptx", bytes(ltoir[0])), "objects[0]"),  # plain bytes: by position
        # An image of cudart.compile: by its program's name.
        (lambda ltoir: ("ptx", cudart.compile(ADD, arch=SM, output="ltoir", name="a.cu")), "a.cu"),
    ],
)
def test_a_links_messages_name_each_input_as_given(ltoir, given, named):
    """Issue 33, item 14: inputs were named input0, input1 in nvJitLink's messages."""
    with pytest.raises(cudart.LinkError) as info:
        cudart.link([given(ltoir)], arch=SM, load=False)
    assert f"refused {named} (ptx)" in str(info.value)
    assert named in info.value.log and "input0" not in str(info.value)


def test_a_triples_name_is_checked(ltoir):
    for name in ("", 5, "a\0b"):
        with pytest.raises(ValueError, match="a name is a str"):
            cudart.link([("ltoir", ltoir[0], name)], arch=SM, load=False)
