"""Typed JIT and library options (issue 33 item 14b) without a GPU: what the checked
cuModuleLoadDataEx, cuLinkCreate / cuLinkAddData / cuLinkAddFile / cuLinkComplete,
cuLibraryLoadData and the runtime's cudaLibraryLoadData hand C, and what they return.

C is a stand-in built here with gcc (as tests/runtime/test_driver_checked.py's): every
symbol returns CUDA_ERROR_STUB_LIBRARY (34), and the option-list functions record the
bytes of the `options` and `optionValues` arrays C is given, then write back as cuda.h
documents it (a log into the buffer, the bytes it filled into the size option's slot,
the wall time "overwrites the option value"; cuLinkComplete writes the wall time
through the slot's pointer instead, as NVIDIA's ptxjit sample has it). The tests read
the record back byte by byte and hold it against cuda.h's layout: a 32-bit enum per
option, one 8-byte `void *` per value.

The conversion and range checks of each option type run in this process (no library
is called: cudart._jitoptions packs before C); every option of every pinned version's
table is packed once.
"""

from __future__ import annotations

import ctypes
import importlib
import json
import struct
import textwrap

import pytest
from driver_stub import writing_libcuda
from suite import run_python, version_keys

from generator.jit_options import FUNCTIONS, ValueKind

pytestmark = pytest.mark.backend

# cuda.h's values (the same in every pinned version; tests/generator/test_jit_option_types.py
# holds the docs that type them).
MAX_REGISTERS, THREADS_PER_BLOCK, WALL_TIME, INFO_LOG, INFO_SIZE = 0, 1, 2, 3, 4
ERROR_LOG, ERROR_SIZE, OPTIMIZATION_LEVEL, TARGET_FROM_CUCONTEXT, TARGET = 5, 6, 7, 8, 9
LOG_VERBOSE, SYMBOL_NAMES, SYMBOL_ADDRESSES, SYMBOL_COUNT = 12, 17, 18, 19
INVALID_PTX = 218

_STAND_IN = r"""
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Every option list C is given, appended: n (4 bytes), the n options (4 bytes each),
   the n values (8 bytes each), then, for CU_JIT_GLOBAL_SYMBOL_NAMES, the names each
   with its NUL. */
static unsigned char recorded[1 << 16];
static size_t recorded_size;
size_t stub_recorded(void *out) { memcpy(out, recorded, recorded_size); return recorded_size; }
void stub_reset(void) { recorded_size = 0; }

static void put(const void *p, size_t n) {
    memcpy(recorded + recorded_size, p, n);
    recorded_size += n;
}

static void record(unsigned int n, const unsigned int *options, void **values) {
    put(&n, 4);
    if (n == 0) return;
    put(options, 4 * (size_t)n);
    put(values, 8 * (size_t)n);
    for (unsigned int i = 0; i < n; i++)
        if (options[i] == 17)
            for (unsigned int j = 0; j < n; j++)
                if (options[j] == 19)
                    for (uintptr_t k = 0; k < (uintptr_t)values[j]; k++)
                        put(((char **)values[i])[k], strlen(((char **)values[i])[k]) + 1);
}

/* A log into option `buffer`'s buffer, capped at its size option's bytes (with the NUL);
   the bytes filled written back into the size option's slot (cuda.h: "OUT: Amount of
   log buffer filled with messages"). */
static void write_log(unsigned int n, const unsigned int *o, void **v, unsigned int buffer,
                      const char *text) {
    for (unsigned int i = 0; i < n; i++) {
        if (o[i] != buffer) continue;
        for (unsigned int j = 0; j < n; j++) {
            if (o[j] != buffer + 1) continue;
            unsigned int size = (unsigned int)(uintptr_t)v[j];
            if (size == 0) return;
            snprintf((char *)v[i], size, "%s", text);
            size_t used = strlen(text) + 1;
            v[j] = (void *)(uintptr_t)(used < size ? used : size);
        }
    }
}

static void write_back(unsigned int n, const unsigned int *o, void **v, const char *info,
                       const char *error, float wall, int through_pointer) {
    write_log(n, o, v, 3, info);
    write_log(n, o, v, 5, error);
    for (unsigned int i = 0; i < n; i++) {
        if (o[i] == 2) {
            if (through_pointer) *(float *)v[i] = wall;
            else memcpy(&v[i], &wall, sizeof wall);  /* "Overwrites the option value" */
        }
        if (o[i] == 1) v[i] = (void *)(uintptr_t)128;  /* the threads it targeted */
    }
}

int cuCtxGetCurrent(void **ctx) { *ctx = 0; return 0; }

int cuModuleLoadDataEx(void **module, const void *image, unsigned int n, unsigned int *o,
                       void **v) {
    record(n, o, v);
    if (strstr((const char *)image, "no_such_instruction")) {
        write_back(n, o, v, "", "ptxas fatal: unknown instruction no_such_instruction", 0, 0);
        return 218;  /* CUDA_ERROR_INVALID_PTX */
    }
    write_back(n, o, v, "info: compiled entry jit_kernel", "", 1.5f, 0);
    *module = (void *)0x51;
    return 0;
}

/* cuLinkCreate keeps the arrays: cuLinkComplete writes through them ("optionValues must
   remain valid for the life of the CUlinkState"). */
static unsigned int link_n;
static unsigned int *link_o;
static void **link_v;
int cuLinkCreate_v2(unsigned int n, unsigned int *o, void **v, void **state) {
    record(n, o, v);
    link_n = n; link_o = o; link_v = v;
    *state = (void *)0x77;
    return 0;
}
int cuLinkAddData_v2(void *state, int type, void *data, size_t size, const char *name,
                     unsigned int n, unsigned int *o, void **v) {
    record(n, o, v);
    return 0;
}
int cuLinkAddFile_v2(void *state, int type, const char *path, unsigned int n,
                     unsigned int *o, void **v) {
    record(n, o, v);
    return 0;
}
int cuLinkComplete(void *state, void **cubin, size_t *size) {
    write_back(link_n, link_o, link_v, "info: linked 2 inputs", "", 2.25f, 1);
    *cubin = (void *)0x900; *size = 16;
    return 0;
}
int cuLinkDestroy(void *state) { return 0; }

int cuLibraryLoadData(void **library, const void *code, unsigned int *jo, void **jv,
                      unsigned int jn, unsigned int *lo, void **lv, unsigned int ln) {
    record(jn, jo, jv);
    record(ln, lo, lv);
    write_back(jn, jo, jv, "info: library", "", 0.5f, 0);
    *library = (void *)0x61;
    return 0;
}
int cuLibraryLoadFromFile(void **library, const char *path, unsigned int *jo, void **jv,
                          unsigned int jn, unsigned int *lo, void **lv, unsigned int ln) {
    record(jn, jo, jv);
    record(ln, lo, lv);
    write_back(jn, jo, jv, path, "", 0.25f, 0);  /* the log names the file C was given */
    *library = (void *)0x62;
    return 0;
}
"""

_WRITTEN = {
    "cuCtxGetCurrent",
    "cuModuleLoadDataEx",
    "cuLinkCreate_v2",
    "cuLinkAddData_v2",
    "cuLinkAddFile_v2",
    "cuLinkComplete",
    "cuLinkDestroy",
    "cuLibraryLoadData",
    "cuLibraryLoadFromFile",
}

PTX = b".version 8.0\n.target sm_90\n.address_size 64\n// jit_kernel\n"


@pytest.fixture(scope="module")
def libcuda(tmp_path_factory) -> str:
    return str(writing_libcuda(tmp_path_factory.mktemp("libcuda"), _STAND_IN, _WRITTEN))


# Runs first in each child: `records()` reads back what C was given, one
# (options, values, names) per option list, in call order.
_PRELUDE = f"""
PTX = {PTX!r}
import ctypes, json, os, struct
import cudart
from cudart import driver
stub = ctypes.CDLL(os.environ["CUDART_DRIVER_LIBRARY"])
def records():
    out = (ctypes.c_ubyte * (1 << 16))()
    data = bytes(out[: stub.stub_recorded(out)])
    stub.stub_reset()
    found, at = [], 0
    while at < len(data):
        (n,) = struct.unpack_from("<I", data, at); at += 4
        options = list(struct.unpack_from(f"<{{n}}I", data, at)); at += 4 * n
        values = list(struct.unpack_from(f"<{{n}}Q", data, at)); at += 8 * n
        names = []
        if 17 in options:
            for _ in range(values[options.index(19)]):
                end = data.index(b"\\0", at)
                names.append(data[at:end].decode()); at = end + 1
        found.append([options, values, names])
    return found
def show(value):
    print(json.dumps(value))
"""


def _run(libcuda: str, body: str, version: str | None = None) -> list:
    """The JSON lines the child prints, parsed."""
    header = _PRELUDE
    if version is not None:  # a pinned version's own modules, not the one served
        header += (
            f"import cudart.driver_checked_{version} as driver\n"
            f"import cudart.driver_{version} as raw\n"
        )
    code = header + textwrap.dedent(body)
    out = run_python(code, env={"CUDART_DRIVER_LIBRARY": libcuda}).stdout
    return [json.loads(line) for line in out.splitlines()]


def _float_bits(value: float) -> int:
    return struct.unpack("<I", struct.pack("<f", value))[0]


# ------------------------------------------------------------- what reaches C


def test_c_gets_cuda_h_arrays_of_the_typed_options(libcuda):
    """A mapping: each option's 32-bit enum and its 8-byte slot, byte by byte: numbers in
    the slot's bits (an int sign-extended, as C's cast), an enum's value, NULL for an
    option without a value; the log buffer's size option added after the given ones."""
    (record,) = _run(
        libcuda,
        """
        module, written = driver.cuModuleLoadDataEx(PTX, options={
            driver.CU_JIT_MAX_REGISTERS: 32,
            driver.CU_JIT_OPTIMIZATION_LEVEL: 3,
            driver.CU_JIT_LOG_VERBOSE: -1,
            driver.CU_JIT_TARGET: driver.CU_TARGET_COMPUTE_90,
            driver.CU_JIT_TARGET_FROM_CUCONTEXT: None,
            driver.CU_JIT_INFO_LOG_BUFFER: 4096,
        })
        show(records())
        """,
    )
    options, values, _names = record[0]
    assert options == [
        MAX_REGISTERS,
        OPTIMIZATION_LEVEL,
        LOG_VERBOSE,
        TARGET,
        8,
        INFO_LOG,
        INFO_SIZE,
    ]
    assert values[:5] == [32, 3, (1 << 64) - 1, 90, 0]
    assert values[5] != 0  # the buffer cudart allocated
    assert values[6] == 4096  # its size, the option cudart added


def test_written_back_logs_sizes_and_wall_time(libcuda):
    """What C wrote comes back beside the module: the log cut at the bytes C said it
    filled, the size it wrote (with the NUL), the float C put in the slot, the in/out
    threads per block."""
    (line,) = _run(
        libcuda,
        """
        module, written = driver.cuModuleLoadDataEx(PTX, None, {
            driver.CU_JIT_INFO_LOG_BUFFER: 4096,
            driver.CU_JIT_WALL_TIME: None,
            driver.CU_JIT_THREADS_PER_BLOCK: 32,
        })
        show([hex(int(module)), {k.name: v for k, v in written.items()},
              sorted(type(k).__name__ for k in written)])
        """,
    )
    module, written, classes = line
    text = "info: compiled entry jit_kernel"
    assert module == "0x51"
    assert written == {
        "CU_JIT_INFO_LOG_BUFFER": text,
        "CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES": len(text) + 1,
        "CU_JIT_WALL_TIME": 1.5,
        "CU_JIT_THREADS_PER_BLOCK": 128,
    }
    assert set(classes) == {"CUjit_option_enum"}


def test_a_caller_buffer_and_a_short_size(libcuda):
    """A bytearray of the caller's is the buffer C writes into; a size option smaller
    than it caps the log (C writes at most that many bytes, the NUL among them)."""
    (line,) = _run(
        libcuda,
        """
        log = bytearray(64)
        module, written = driver.cuModuleLoadDataEx(PTX, 2, {
            driver.CU_JIT_INFO_LOG_BUFFER: log,
            driver.CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES: 10,
        })
        (options, values, _), = records()
        import ctypes as c
        mine = c.addressof((c.c_char * 64).from_buffer(log))
        show([written[driver.CU_JIT_INFO_LOG_BUFFER],
              written[driver.CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES],
              bytes(log[:12]).decode("latin-1"), values[0] == mine])
        """,
    )
    assert line == ["info: com", 10, "info: com" + "\0\0\0", True]


def test_a_failure_carries_the_error_log(libcuda):
    """PTX C refuses: its CudaDriverError subclass, with what C wrote as `written`."""
    (line,) = _run(
        libcuda,
        """
        bad = PTX + b"no_such_instruction;\\n"
        try:
            driver.cuModuleLoadDataEx(bad, options=[(driver.CU_JIT_ERROR_LOG_BUFFER, 256)])
        except driver.CudaDriverErrorInvalidPtx as e:
            show([e.code, e.written[driver.CU_JIT_ERROR_LOG_BUFFER]])
        """,
    )
    assert line == [INVALID_PTX, "ptxas fatal: unknown instruction no_such_instruction"]


def test_cuda_bindings_form_and_pairs_pack_alike(libcuda):
    """cuda-bindings' call, `cuModuleLoadDataEx(image, numOptions, options, values)` with
    two lists, and (option, value) pairs give C the same options and numbers."""
    lines = _run(
        libcuda,
        """
        opts = [driver.CU_JIT_MAX_REGISTERS, driver.CU_JIT_LOG_VERBOSE,
                driver.CU_JIT_GENERATE_LINE_INFO]
        vals = [64, 1, 0]
        driver.cuModuleLoadDataEx(PTX, len(opts), opts, vals)
        driver.cuModuleLoadDataEx(PTX, None, list(zip(opts, vals)))
        driver.cuModuleLoadDataEx(PTX, options=dict(zip(opts, vals)))
        show(records())
        """,
    )
    a, b, c = lines[0]
    assert a == b == c == [[0, 12, 13], [64, 1, 0], []]


def test_symbol_names_and_addresses_with_their_count(libcuda):
    """`const char **` and `void **` options: arrays C reads, their count option added
    (the names reach C, each with its NUL)."""
    (line,) = _run(
        libcuda,
        """
        driver.cuModuleLoadDataEx(PTX, options={
            driver.CU_JIT_GLOBAL_SYMBOL_NAMES: ["alpha", b"beta"],
            driver.CU_JIT_GLOBAL_SYMBOL_ADDRESSES: [0x1000, None],
        })
        show(records())
        """,
    )
    ((options, values, names),) = line
    assert options == [SYMBOL_NAMES, SYMBOL_ADDRESSES, SYMBOL_COUNT]
    assert values[2] == 2 and values[0] and values[1]
    assert names == ["alpha", "beta"]


def test_the_raw_form_is_as_before(libcuda):
    """ctypes arrays and a count: passed as given, and C's writes are in them; nothing is
    typed, so nothing is written back."""
    (line,) = _run(
        libcuda,
        """
        log = ctypes.create_string_buffer(100)
        options = (ctypes.c_uint * 2)(
            driver.CU_JIT_INFO_LOG_BUFFER, driver.CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES
        )
        values = (ctypes.c_void_p * 2)(ctypes.addressof(log), 100)
        module, written = driver.cuModuleLoadDataEx(PTX, 2, options, values)
        show([log.value.decode(), values[1], len(written)])
        """,
    )
    assert line == ["info: compiled entry jit_kernel", 32, 0]


def test_no_options(libcuda):
    """No options at all (None, or the older `0, None, None`): C gets 0 and NULLs."""
    (line,) = _run(
        libcuda,
        """
        driver.cuModuleLoadDataEx(PTX)
        driver.cuModuleLoadDataEx(PTX, 0, None, None)
        driver.cuModuleLoadDataEx(PTX, 0, {})
        show(records())
        """,
    )
    assert line == [[[], [], []]] * 3


def test_link_options_live_until_complete(libcuda):
    """cuLinkCreate's values stay C's until cuLinkDestroy: the log, its size and the
    wall time (written through the slot's pointer here) are read after cuLinkComplete,
    from the OptionsWritten cuLinkCreate returned, with the state object the only
    other holder. cuLinkAddData and cuLinkAddFile take options of their own (and return
    only what C wrote through them: nothing here)."""
    (line,) = _run(
        libcuda,
        """
        import gc
        state, written = driver.cuLinkCreate(options={
            driver.CU_JIT_INFO_LOG_BUFFER: 128,
            driver.CU_JIT_WALL_TIME: None,
            driver.CU_JIT_LOG_VERBOSE: 1,
        })
        before = dict(written)
        driver.cuLinkAddData(state, driver.CU_JIT_INPUT_PTX, bytearray(PTX), len(PTX), "a.ptx",
                             options={driver.CU_JIT_MAX_REGISTERS: 40})
        written_add = driver.cuLinkAddFile(state, driver.CU_JIT_INPUT_PTX, "/no/such.ptx",
                                           options={driver.CU_JIT_OPTIMIZATION_LEVEL: 2})
        gc.collect()
        cubin, size = driver.cuLinkComplete(state)
        after = {k.name: v for k, v in written.items()}
        show([records()[1:], {k.name: v for k, v in before.items()}, after, len(written_add)])
        """,
    )
    adds, before, after, added = line
    assert adds == [[[MAX_REGISTERS], [40], []], [[OPTIMIZATION_LEVEL], [2], []]]
    assert before["CU_JIT_INFO_LOG_BUFFER"] == "" and before["CU_JIT_WALL_TIME"] is None
    assert after == {
        "CU_JIT_INFO_LOG_BUFFER": "info: linked 2 inputs",
        "CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES": len("info: linked 2 inputs") + 1,
        "CU_JIT_WALL_TIME": 2.25,
    }
    assert added == 0


def test_link_options_are_kept_with_the_state(libcuda):
    """Dropping the OptionsWritten leaves the arrays C writes to alive with the state."""
    (line,) = _run(
        libcuda,
        """
        import gc, weakref
        state, written = driver.cuLinkCreate(options={driver.CU_JIT_INFO_LOG_BUFFER: 64})
        kept = weakref.ref(written._slots[driver.CU_JIT_INFO_LOG_BUFFER][0])  # its group
        del written
        gc.collect()
        alive = kept() is not None
        del state
        gc.collect()
        show([alive, kept() is None])
        """,
    )
    assert line == [True, True]


def test_library_load_has_two_groups(libcuda):
    """cuLibraryLoadData: the JIT options and the library options, each its own arrays;
    the JIT log comes back."""
    (line,) = _run(
        libcuda,
        """
        library, written = driver.cuLibraryLoadData(
            PTX,
            {driver.CU_JIT_INFO_LOG_BUFFER: 64, driver.CU_JIT_OPTIMIZATION_LEVEL: 1},
            libraryOptions={driver.CU_LIBRARY_BINARY_IS_PRESERVED: 1},
        )
        show([hex(int(library)), records(), written[driver.CU_JIT_INFO_LOG_BUFFER]])
        """,
    )
    library, (jit, lib), log = line
    assert library == "0x61"
    assert jit[0] == [INFO_LOG, OPTIMIZATION_LEVEL, INFO_SIZE] and jit[1][1:] == [1, 64]
    assert lib == [[1], [1], []]
    assert log == "info: library"


def test_library_load_from_file(libcuda, tmp_path):
    """cuLibraryLoadFromFile: the path, and typed JIT options beside it (a caller's
    bytearray for the log, the wall time in the slot)."""
    path = tmp_path / "kernel.ptx"
    path.write_bytes(PTX)
    (line,) = _run(
        libcuda,
        f"""
        log = bytearray(256)
        library, written = driver.cuLibraryLoadFromFile(
            {str(path)!r}, {{driver.CU_JIT_INFO_LOG_BUFFER: log, driver.CU_JIT_WALL_TIME: None}}
        )
        (jit, lib) = records()
        show([hex(int(library)), jit[0], lib, written[driver.CU_JIT_INFO_LOG_BUFFER],
              written[driver.CU_JIT_WALL_TIME], bytes(log).split(b"\\0")[0].decode()])
        """,
    )
    library, options, lib, log, wall, mine = line
    assert library == "0x62"
    assert options == [INFO_LOG, WALL_TIME, INFO_SIZE]
    assert lib == [[], [], []]
    assert log == mine == str(path)
    assert wall == 0.25


@pytest.mark.parametrize("key", ["12.0", "12.4", "13.5"])
def test_each_major_and_option_set(libcuda, manifest, key):
    """A pinned version's own module (not only the one served): before 12.4, 31 is
    CU_JIT_NUM_OPTIONS, the end marker its table refuses before C; from 12.4 it is
    CU_JIT_MIN_CTA_PER_SM, an unsigned int C gets."""
    version = manifest.get(key).number
    (line,) = _run(
        libcuda,
        """
        module, written = driver.cuModuleLoadDataEx(PTX, options={raw.CU_JIT_INFO_LOG_BUFFER: 64})
        try:
            driver.cuModuleLoadDataEx(PTX, options={31: 2})
            refused = None
        except ValueError as e:
            refused = str(e)
        show([written[raw.CU_JIT_INFO_LOG_BUFFER], refused, len(records())])
        """,
        version=str(version),
    )
    log, refused, calls = line
    assert log == "info: compiled entry jit_kernel"
    if version < 12040:
        assert refused is not None and "CU_JIT_NUM_OPTIONS is not taken" in refused
        assert calls == 1
    else:
        assert refused is None and calls == 2


def test_runtime_library_load_takes_typed_options(tmp_path):
    """cudaLibraryLoadData (12.8+) has the driver's shape with the runtime's enums: its
    typed options are refused before the runtime is reached, by its own table."""
    out = run_python(f"PTX = {PTX!r}\n" + textwrap.dedent("""
            import cudart.checked_13050 as rt, cudart.sys_13050 as raw
            # A value out of range, a wall time that is no number, an option no
            # cudaJitOption has.
            for options in ({raw.cudaJitMaxRegisters: -1}, {raw.cudaJitWallTime: "x"}, {99: 1}):
                try:
                    rt.cudaLibraryLoadData(PTX, options)
                except (TypeError, ValueError, OverflowError) as e:
                    print(type(e).__name__, str(e))
            """)).stdout.splitlines()
    assert out == [
        "OverflowError cudaLibraryLoadData() option cudaJitMaxRegisters: -1 is outside "
        "unsigned int's range 0..4294967295",
        "TypeError cudaLibraryLoadData() option cudaJitWallTime takes None or a number (C "
        "writes the time), not 'x'",
        "ValueError cudaLibraryLoadData() argument 'jitOptions': 99 is not a cudaJitOption value",
    ]


# ------------------------------------------------------- conversions, in this process


def _module(version: int):
    return importlib.import_module(f"cudart.driver_checked_{version}")


def _pack(options, count=None, values=None, version=13050):
    m = _module(version)
    names = ("numOptions", "options", "optionValues")
    return m._c.options_in(
        count, options, values, m._CUjit_option_enum_options, "cuModuleLoadDataEx", names
    )


@pytest.mark.parametrize(
    ("options", "error", "says"),
    [
        # unsigned int
        ({MAX_REGISTERS: -1}, OverflowError, "CU_JIT_MAX_REGISTERS: -1 is outside unsigned int"),
        ({MAX_REGISTERS: 1 << 32}, OverflowError, "CU_JIT_MAX_REGISTERS: 4294967296 is outside"),
        ({MAX_REGISTERS: 2.0}, TypeError, "CU_JIT_MAX_REGISTERS: must be an int, not float"),
        ({MAX_REGISTERS: "8"}, TypeError, "CU_JIT_MAX_REGISTERS: must be an int, not str"),
        # int
        ({LOG_VERBOSE: 1 << 31}, OverflowError, "CU_JIT_LOG_VERBOSE: 2147483648 is outside int"),
        ({LOG_VERBOSE: -(1 << 31) - 1}, OverflowError, "CU_JIT_LOG_VERBOSE"),
        ({LOG_VERBOSE: None}, TypeError, "CU_JIT_LOG_VERBOSE: must be an int, not NoneType"),
        # enum
        ({TARGET: 7}, ValueError, "'CU_JIT_TARGET': 7 is not a CUjit_target_enum value"),
        ({TARGET: 1 << 40}, OverflowError, "CU_JIT_TARGET"),
        # log buffer
        ({INFO_LOG: 0}, OverflowError, "CU_JIT_INFO_LOG_BUFFER (the log's size): 0 is outside"),
        ({INFO_LOG: True}, TypeError, "not a bool"),
        ({INFO_LOG: b"read only"}, TypeError, "the log buffer must be writable (bytes is not)"),
        ({INFO_LOG: "text"}, TypeError, "a size in bytes or a writable buffer"),
        ({INFO_LOG: bytearray()}, ValueError, "contiguous and not empty"),
        (
            {INFO_LOG: bytearray(8), INFO_SIZE: 9},
            ValueError,
            "CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES is 9",
        ),
        # float (written by C)
        ({WALL_TIME: "1"}, TypeError, "CU_JIT_WALL_TIME takes None or a number"),
        ({WALL_TIME: True}, TypeError, "CU_JIT_WALL_TIME takes None or a number"),
        # no value
        ({TARGET_FROM_CUCONTEXT: 1}, TypeError, "CU_JIT_TARGET_FROM_CUCONTEXT takes no value"),
        # arrays and their counts
        ({SYMBOL_NAMES: "ab"}, TypeError, "CU_JIT_GLOBAL_SYMBOL_NAMES takes a list of str"),
        ({SYMBOL_NAMES: [1]}, TypeError, "each name is a str or bytes, not int"),
        ({SYMBOL_NAMES: ["a\0b"]}, ValueError, "holds a NUL"),
        ({SYMBOL_NAMES: ["a"], SYMBOL_COUNT: 2}, ValueError, "it must be exactly that"),
        ({SYMBOL_ADDRESSES: [-1]}, OverflowError, "CU_JIT_GLOBAL_SYMBOL_ADDRESSES: -1 is outside"),
        ({SYMBOL_ADDRESSES: 5}, TypeError, "takes a list of addresses"),
        # the options themselves
        ({99: 1}, ValueError, "'options': 99 is not a CUjit_option_enum value"),
        ({15: 1}, ValueError, 'CU_JIT_NEW_SM3X_OPT is not taken: "This jit option is deprecated'),
        ({16: 1}, ValueError, "CU_JIT_FAST_COMPILE is not taken"),
        ({36: 1}, ValueError, "CU_JIT_NUM_OPTIONS is not taken: the enum's end marker"),
    ],
)
def test_each_type_is_converted_and_range_checked(options, error, says):
    with pytest.raises(error) as info:
        _pack(options)
    assert says in str(info.value)
    assert str(info.value).startswith("cuModuleLoadDataEx()")


def test_the_forms_and_the_count_are_checked():
    assert _pack({MAX_REGISTERS: 1}, count=1).count == 1
    assert _pack({INFO_LOG: 8}, count=1).count == 2  # the size option cudart adds
    with pytest.raises(ValueError, match="'numOptions' is 2, but 'options' gives 1 options"):
        _pack({MAX_REGISTERS: 1}, count=2)
    # cuda-bindings' two lists: the first numOptions of each, as there.
    packed = _pack([MAX_REGISTERS, LOG_VERBOSE], count=1, values=[5, 1])
    assert (packed.count, list(packed.options), list(packed.values)) == (1, [0], [5])
    assert _pack([MAX_REGISTERS, LOG_VERBOSE], count=0, values=[]).count == 0
    with pytest.raises(ValueError, match="'numOptions' is 3, but 'options' has 2 options"):
        _pack([MAX_REGISTERS, LOG_VERBOSE], count=3, values=[5, 1])
    with pytest.raises(OverflowError, match="numOptions"):
        _pack({MAX_REGISTERS: 1}, count=-1)
    with pytest.raises(TypeError, match="'optionValues' must be None"):
        _pack({MAX_REGISTERS: 1}, values=[1])
    with pytest.raises(ValueError, match="has 2 options but 'optionValues' 1 values"):
        _pack([MAX_REGISTERS, LOG_VERBOSE], values=[1])
    with pytest.raises(TypeError, match="takes a mapping or \\(option, value\\) pairs"):
        _pack([MAX_REGISTERS])
    with pytest.raises(ValueError, match="gives CU_JIT_MAX_REGISTERS twice"):
        _pack([(MAX_REGISTERS, 1), (MAX_REGISTERS, 2)])
    library = _module(13050)._CUlibraryOption_enum_options
    raw = importlib.import_module("cudart.driver_13050")
    with pytest.raises(TypeError, match="must be a CUjit_option_enum, not a CUlibraryOption_enum"):
        _pack({raw.CU_LIBRARY_BINARY_IS_PRESERVED: 1})
    assert library.member(1).name == "CU_LIBRARY_BINARY_IS_PRESERVED"
    # The raw form is left to the pointer conversions.
    assert _pack((ctypes.c_uint * 1)(0), count=1, values=(ctypes.c_void_p * 1)()) is None
    assert _pack(0, count=0, values=0) is None


def _sample(kind: str, spec) -> object:
    """One value C takes for an option of each type."""
    return {
        ValueKind.UNSIGNED: (1 << 32) - 1,
        ValueKind.INT: -(1 << 31),
        ValueKind.ENUM: None,  # below: the enum's first member
        ValueKind.FLOAT: None,
        ValueKind.LOG: 16,
        ValueKind.STRINGS: ["x"],
        ValueKind.POINTERS: [0x10],
        ValueKind.POINTER: 0x20,
        ValueKind.NONE: None,
    }[ValueKind(kind)]


@pytest.mark.parametrize("key", version_keys())
def test_every_option_of_every_version_packs(manifest, key):
    """Each option a version's tables type (both option enums of the driver, and the
    runtime's from 12.8) is packed alone: its slot's word is the value's, its length
    option follows where it has one; each refused option is refused."""
    version = manifest.get(key).number
    modules = [importlib.import_module(f"cudart.driver_checked_{version}")]
    if version >= 12080:
        modules.append(importlib.import_module(f"cudart.checked_{version}"))
    seen = 0
    for m in modules:
        for name in dir(m):
            if not name.endswith("_options") or not isinstance(getattr(m, name), m._c.OptionTable):
                continue
            table = getattr(m, name)
            enum = table.spec[0]
            assert set(table.values) == {int(k) for k in enum}  # every member has its row
            for number, spec in table.values.items():
                assert spec is not None
                option = {number: None}
                if spec.kind == "refused":
                    with pytest.raises(ValueError, match="is not taken"):
                        m._c.options_in(None, option, None, table, "f", ("n", "o", "v"))
                    continue
                value = _sample(spec.kind, spec.spec)
                if spec.kind == "enum":
                    value = next(iter(spec.spec[0]))
                packed = m._c.options_in(None, {number: value}, None, table, "f", ("n", "o", "v"))
                assert packed is not None and list(packed.options)[0] == number
                word = packed.values[0] or 0
                if spec.kind in ("unsigned int", "pointer"):
                    assert word == value
                elif spec.kind == "int":
                    assert word == value & ((1 << 64) - 1)
                elif spec.kind == "enum":
                    assert word == int(value)
                elif spec.kind == "none":
                    assert word == 0
                else:  # the address of what cudart made (a buffer, an array, a float)
                    assert word != 0
                if spec.length is not None:
                    assert list(packed.options)[1] == spec.length
                    assert packed.values[1] == (16 if spec.kind == "log" else 1)
                seen += 1
    assert seen >= 30


def test_every_typed_function_returns_what_c_wrote(manifest):
    """The eight functions' checked forms: typed options accepted, OptionsWritten last in
    the annotation (the same function objects on both backends: never compiled)."""
    version = manifest.get("13.5").number
    driver = importlib.import_module(f"cudart.driver_checked_{version}")
    runtime = importlib.import_module(f"cudart.checked_{version}")
    public = {"cuLinkCreate_v2": "cuLinkCreate", "cuLinkAddData_v2": "cuLinkAddData"}
    public["cuLinkAddFile_v2"] = "cuLinkAddFile"
    for c_name in FUNCTIONS:
        module = runtime if c_name.startswith("cuda") else driver
        f = getattr(module, public.get(c_name, c_name))
        returns = f.__annotations__["return"]
        # cuLinkAddData and cuLinkAddFile have no output of their own.
        assert returns.endswith("_c.OptionsWritten]") or returns == "_c.OptionsWritten", c_name
        assert "takes the options typed" in f.__doc__


def test_both_backends_serve_the_python_function(libcuda):
    """The compiled backend keeps these functions' Python checked function (its C
    converters take no typed options; generator/render/fast_checked.py's why_not), so
    the two backends are one code path for them; where it is in force, a plain function
    beside them is C's. What comes back is a cudart.OptionsWritten."""
    (line,) = _run(
        libcuda,
        """
        module, written = driver.cuModuleLoadDataEx(PTX, options={driver.CU_JIT_LOG_VERBOSE: 1})
        show([cudart.backend(), type(written) is cudart.OptionsWritten,
              type(driver.cuModuleLoadDataEx).__name__, type(driver.cuLinkCreate).__name__,
              type(driver.cuLibraryLoadData).__name__, type(driver.cuCtxGetCurrent).__name__])
        """,
    )
    backend, is_written, *functions, plain = line
    assert is_written
    assert functions == ["function"] * 3
    assert plain == ("compiled_checked_function" if backend == "compiled" else "function")
