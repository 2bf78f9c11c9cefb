"""A stand-in libcuda.so.1 for one version's driver model: C source only.

NVIDIA's toolkit ships a stub libcuda whose every function returns
CUDA_ERROR_STUB_LIBRARY; machines without an NVIDIA driver link against it. The tests
render the same from the model (every symbol the raw module can bind: each declared
function, each `#define cuX cuX_v2` rename's target and each per-thread symbol), build
it with gcc (tests/support/driver_stub.py) and point $CUDART_DRIVER_LIBRARY at it. It is
never generated into generated/ nor shipped: a user's import must never find a libcuda
that is no driver.

Each function is defined with the prototype cuda.h gives it (the version's own cuda.h
is included, so gcc checks every definition against the header's declaration); a
per-thread symbol, which cuda.h declares only under CUDA_API_PER_THREAD_DEFAULT_STREAM,
takes the prototype of the legacy function it stands for. The status values come
from the model's CUresult enumerators. Rendering reads the model only (no libclang).

Test variants, all off by default so that the default stub is NVIDIA's:
  * `driver_version`: cuDriverGetVersion writes it and succeeds (the rule "the newest
    module not newer than the driver" becomes testable without a driver);
  * `omit`: symbols left out (a driver older than the headers);
  * `record`: each function appends its own symbol's name and a newline to the char
    array RECORD_SYMBOL (RECORD_SIZE bytes, NUL-terminated; the calls that no longer
    fit are dropped): which of cuX / cuX_ptsz ran, and what the error path then asked;
    and to ARGUMENTS_SYMBOL (as large) a line of what C received: the symbol, then
    `name=value` (decimal) per integer parameter and, for a launch's `extra` option list
    (resolve.ARGUMENT_BUFFERS), `extra=` its pointers in hex up to CU_LAUNCH_PARAM_END
    (comma-separated), `extra.size=` the size_t CU_LAUNCH_PARAM_BUFFER_SIZE points at and
    `extra.bytes=` the first bytes of that size (at most ARGUMENT_BYTES) of the buffer
    CU_LAUNCH_PARAM_BUFFER_POINTER names, in hex.
"""

from __future__ import annotations

from dataclasses import replace

from ..ctypes_map import TypeMapper, integer_range
from ..families import family
from ..model import ApiModel, Function
from ..resolve import ARGUMENT_BUFFERS
from ..status import status_enum
from .base import c_prototype

__all__ = [
    "ARGUMENTS_SYMBOL",
    "ARGUMENT_BYTES",
    "RECORD_SIZE",
    "RECORD_SYMBOL",
    "STUB_STATUS",
    "render_stub",
    "stub_symbols",
]

# The CUresult enumerator every function of NVIDIA's stub returns (34).
STUB_STATUS = "CUDA_ERROR_STUB_LIBRARY"
# Where a `record` stub logs the symbols called, in order (`char[RECORD_SIZE]`).
RECORD_SYMBOL = "cudart_stub_calls"
RECORD_SIZE = 1 << 16
# Where a `record` stub logs the arguments C received, a line per call (as large).
ARGUMENTS_SYMBOL = "cudart_stub_arguments"
# The most bytes of an `extra` argument buffer logged.
ARGUMENT_BYTES = 256
VERSION_FUNCTION = family("driver").probe.function
INVALID_VALUE = "CUDA_ERROR_INVALID_VALUE"


class StubError(ValueError):
    """The model lacks what a stub needs (its status enum, the stub's code)."""


def stub_symbols(model: ApiModel) -> dict[str, Function]:
    """Every symbol the raw module may bind, sorted, with the declared function whose
    prototype it has."""
    declared = {f.name: f for f in model.functions}
    legacy = {a.public: a.symbol for a in model.aliases}
    found = dict(declared)
    for alias in model.aliases:
        if alias.symbol in declared:
            found[alias.symbol] = declared[alias.symbol]
    for alias in model.per_thread_symbols:
        function = declared.get(legacy.get(alias.public, alias.public))
        if function is not None:
            found[alias.symbol] = function
    return dict(sorted(found.items()))


def _status(model: ApiModel) -> tuple[str, int, int, int]:
    """(the C spelling functions return, success, the stub's status, invalid value)."""
    status = status_enum(model)
    if status is None:
        raise StubError("the model has no status enum (is it cuda.h's?)")
    values = {name: status.value_of(name) for name in (status.success, STUB_STATUS, INVALID_VALUE)}
    missing = [name for name, value in values.items() if value is None]
    if missing:
        raise StubError(f"{status.enum} has no {', '.join(missing)}")
    return (
        status.result,
        values[status.success] or 0,
        values[STUB_STATUS] or 0,
        values[INVALID_VALUE] or 0,
    )


def render_stub(
    model: ApiModel,
    *,
    driver_version: int | None = None,
    omit: frozenset[str] | set[str] | tuple[str, ...] = (),
    record: bool = False,
) -> str:
    """The stub's C source (see the module's docs for the variants)."""
    result, success, stub, invalid = _status(model)
    types = TypeMapper(model)
    symbols = stub_symbols(model)
    unknown = sorted(set(omit) - set(symbols))
    if unknown:
        raise StubError(f"no such symbols to omit: {', '.join(unknown)}")
    headers = [name for name, _ in model.header_hashes]
    lines = [
        "/* A stand-in libcuda.so.1 rendered by generator/render/stub.py: for tests only. */",
        *(f'#include "{h}"' for h in headers),
        "",
        f"#define STUB_STATUS (({result}){stub}) /* {STUB_STATUS} */",
    ]
    if record:
        lines += _RECORDER.format(
            log=RECORD_SYMBOL, args=ARGUMENTS_SYMBOL, size=RECORD_SIZE, most=ARGUMENT_BYTES
        ).splitlines()
    for symbol, function in symbols.items():
        if symbol in omit:
            continue
        # C before C23 wants every parameter of a definition named.
        params = tuple(replace(q, name=q.name or f"arg{i}") for i, q in enumerate(function.params))
        renamed = Function(symbol, function.result, params, function.variadic)
        body = []
        if record:
            body.append(f'stub_called("{symbol}");')
            body += _argument_lines(types, function, symbol, params)
        if symbol == VERSION_FUNCTION and driver_version is not None:
            body += _version_body(function, driver_version, result, success, invalid)
        else:
            body += [f"(void){q.name};" for q in params]
            body.append("return STUB_STATUS;")
        lines += ["", c_prototype(types, renamed), "{", *(f"    {b}" for b in body), "}"]
    return "\n".join(lines) + "\n"


_RECORDER = """
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
char {log}[{size}];
char {args}[{size}];
static void stub_called(const char *name)
{{
    size_t used = strlen({log}), length = strlen(name);
    if (used + length + 2 > sizeof {log})
        return;
    memcpy({log} + used, name, length);
    {log}[used + length] = '\\n';
    {log}[used + length + 1] = 0;
}}
static void stub_argument(const char *format, ...)
{{
    size_t used = strlen({args});
    va_list ap;
    va_start(ap, format);
    if (used + 1 < sizeof {args})
        vsnprintf({args} + used, sizeof {args} - used, format, ap);
    va_end(ap);
}}
/* A launch's `extra`: its pointers up to the end marker (at most 16), the size and the
   first bytes of the argument buffer it names. */
static void stub_options(const char *name, void **extra)
{{
    const unsigned char *buffer = 0;
    size_t size = 0, i;
    int sized = 0;
    if (extra == 0) {{
        stub_argument(" %s=NULL", name);
        return;
    }}
    stub_argument(" %s=", name);
    for (i = 0; i < 16; i += 2) {{
        stub_argument("%s0x%llx", i ? "," : "", (unsigned long long)(size_t)extra[i]);
        if (extra[i] == CU_LAUNCH_PARAM_END)
            break;
        stub_argument(",0x%llx", (unsigned long long)(size_t)extra[i + 1]);
        if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
            buffer = (const unsigned char *)extra[i + 1];
        else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[i + 1]) {{
            size = *(const size_t *)extra[i + 1];
            sized = 1;
        }}
    }}
    if (sized)
        stub_argument(" %s.size=%zu", name, size);
    if (buffer) {{
        stub_argument(" %s.bytes=", name);
        for (i = 0; i < size && i < {most}; i++)
            stub_argument("%02x", buffer[i]);
    }}
}}
"""


def _argument_lines(types: TypeMapper, function: Function, symbol: str, params) -> list[str]:
    """A `record` stub's lines logging what C received (see the module's docs)."""
    lines = [f'stub_argument("{symbol}");']
    for q in params:
        if integer_range(types, q.type) is not None:
            lines.append(f'stub_argument(" {q.name}=%llu", (unsigned long long){q.name});')
        elif (function.name, q.name) in ARGUMENT_BUFFERS:
            lines.append(f'stub_options("{q.name}", {q.name});')
    lines.append('stub_argument("\\n");')
    return lines


def _version_body(
    function: Function, version: int, result: str, success: int, invalid: int
) -> list[str]:
    if len(function.params) != 1 or not function.params[0].name:
        raise StubError(f"{function.name} is not `{result} {function.name}(int *)`")
    out = function.params[0].name
    return [
        f"if ({out} == 0) return ({result}){invalid};",
        f"*{out} = {version};",
        f"return ({result}){success};",
    ]
