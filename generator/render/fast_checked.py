"""The checked layer compiled (issue 23): a C function per checked function, in the
compiled backend's module (templates/fast_module.c.j2), from the same plans as
generator/render/checked.py.

A checked function is compiled when every parameter is of a kind with a C converter
(cudart/_fastchecked.h: one per kind) and its result is a status (ResultKind.ERROR or
QUERY); its C function takes the happy path only. Anything a converter does not take
as is (another type, an int out of range, a destroyed handle, a subclass, a keyword,
an omitted argument without a None default) goes to the Python checked function, the
reference, with the same arguments: every refusal is the reference's own, exception
class and message, by construction. So the converters accept only what the Python
fast path accepts unchanged:
  * an integer: an exact int in its C type's range; an enum: an object of its class
    or an exact int, whose value is a member (for a flags enum: an OR of them);
  * a float: an exact float;
  * a handle: an object of exactly the handle class (so never a destroyed one), an
    int in [0, 2**64), or None;
  * a pointer, an integer handle: an int in [0, 2**64) (a pointer also None); a
    pointer to a record (REF): an int that can be a record's address.
Outputs: scalars, enums, addresses and handles, written to an 8-byte slot of the
call's own. The rest (records, buffers, callbacks, sequences, in-out values, arrays,
deprecated functions, effects other than a destroy or a free) keep the Python function;
`why_not` says why for each.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

from cudart._fastproto import OUTPUT_CODES

from ..context import GenerationContext
from ..ctypes_map import TypeKind, integer_range
from ..lifetimes import PARENT_KINDS, RELEASES_CALLABLES
from ..plan import Effect, FunctionPlan, ParamKind, ResultKind, Role
from .fast import FastFunction, FastParam
from .raw import PER_THREAD_INLINES

# Handle kinds whose destroy also releases the Python callables only they held, or marks
# the children made under them (lifetimes.PARENTS): their `_c.destroyed` runs after C.
_HOLDER_KINDS = RELEASES_CALLABLES | PARENT_KINDS
_OUTPUT_KINDS = frozenset({ParamKind.SCALAR, ParamKind.ENUM, ParamKind.ADDRESS, ParamKind.HANDLE})


@dataclass(frozen=True)
class CheckedInput:
    """One input: the C converter's call, over the argument `x<position>`, into the raw
    function's local (FastParam.local)."""

    raw: FastParam
    py_name: str
    position: int  # among the Python arguments
    convert: str  # a C expression: 1 taken, 0 not (then the reference serves)
    default_none: bool = False  # omitted, it is None
    default: str = ""  # omitted, the local is this integer literal (C)
    handle_class: str = ""  # a handle object's class (kept for the destroy's claim)
    effect: str = ""  # "destroys" or "frees": what a successful call ends


@dataclass(frozen=True)
class CheckedOutput:
    raw: FastParam
    value: str  # a C expression making the Python value from the slot `o<index>`


@dataclass(frozen=True)
class CheckedFunction:
    name: str
    raw: FastFunction
    inputs: tuple[CheckedInput, ...]
    outputs: tuple[CheckedOutput, ...]
    query: int | None  # QUERY: the status that is False (cudaErrorNotReady)
    index: int  # in the module's table of compiled checked functions
    destroys_holder: str = ""  # a graph's handle kind: `_c.destroyed` runs for ints too

    @property
    def params(self) -> list[FastParam]:
        return list(self.raw.params)

    @property
    def temporaries(self) -> list[str]:
        """The 64-bit temporaries its integer converters write (CheckedCompiler._integer)."""
        return [
            f"{kind} {name};"
            for kind, name in (("long long", "sn"), ("unsigned long long", "un"))
            if any(f"&{name})" in i.convert for i in self.inputs)
        ]

    @property
    def min_args(self) -> int:
        return sum(1 for i in self.inputs if not (i.default_none or i.default))

    @property
    def max_args(self) -> int:
        return len(self.inputs)


class CheckedCompiler:
    """Which checked functions of a version are compiled, and how."""

    def __init__(self, context: GenerationContext, functions: list[FastFunction]) -> None:
        self.context = context
        self.types = context.types
        self.status = context.status
        # As render/checked.py's: a query's status that is False.
        self.not_ready = self.status.value_of("cudaErrorNotReady") if self.status else None
        by_name = {f.name: f for f in functions}
        self.functions: list[CheckedFunction] = []
        self.not_compiled: dict[str, str] = {}
        self.handle_classes: set[str] = set()
        self.enum_classes: set[str] = set()
        # An enum's members and flags (None: not a flags enum), for its membership test.
        self.members: dict[str, tuple[frozenset[int], int | None]] = {}
        # Public names whose per-thread symbol the header defines inline.
        self.inlines = {
            a.public for a in context.model.per_thread_symbols if a.symbol in PER_THREAD_INLINES
        }
        for plan in context.plans:
            raw = by_name.get(plan.name)
            why = self.why_not(plan, raw)
            if why or raw is None:
                self.not_compiled[plan.name] = why or "no raw function"
                continue
            self.functions.append(self._function(plan, raw))

    def why_not(self, plan: FunctionPlan, raw: FastFunction | None) -> str:
        if raw is None:
            return "no compiled raw function"
        if plan.function.deprecated:
            return "deprecated (the reference warns)"
        if plan.result not in (ResultKind.ERROR, ResultKind.QUERY):
            return f"result {plan.result}"
        if plan.option_groups:
            # The Python reference packs the typed options and returns what C wrote back.
            return "typed option lists (generator/jit_options.py)"
        for p in plan.params:
            why = self._param_why_not(plan, p)
            if why:
                return f"{p.py_name}: {why}"
        if plan.name in self.inlines:
            # Its slot may hold the legacy symbol, whose flags the Python binding rewrites.
            return "a per-thread inline (raw.PER_THREAD_INLINES): the binding rewrites its flags"
        return ""

    def _param_why_not(self, plan: FunctionPlan, p) -> str:
        c = next(q for q in plan.function.params if q.name == p.name)
        if p.effect is not None and p.effect not in (Effect.DESTROYS, Effect.FREES):
            return f"effect {p.effect}"
        if p.parent is not None:
            return f"a child of {p.parent} (recorded in Python)"
        if p.role is Role.IN:
            if p.default is not None and p.default != "None" and not _literal(p.default):
                return f"default {p.default}"
            if _literal(p.default) and p.kind is not ParamKind.SCALAR:
                return f"default {p.default} for a {p.kind}"
            if p.kind is ParamKind.SCALAR:
                kind = self.types.classify(c.type)
                if integer_range(self.types, c.type) is None and kind is not TypeKind.FLOAT:
                    return f"a {kind.value} scalar"
                return ""
            if p.kind in (ParamKind.HANDLE, ParamKind.POINTER, ParamKind.INTEGER_HANDLE):
                return ""
            if p.kind is ParamKind.REF:
                return "" if p.default is None else "default"
            return f"kind {p.kind}"
        if p.role is not Role.OUT or p.kind not in _OUTPUT_KINDS:
            return f"{p.role} {p.kind}"
        if p.kind is not ParamKind.HANDLE and self._slot_code(p, c) is None:
            return f"output storage {p.ctype}"
        return ""

    def _function(self, plan: FunctionPlan, raw: FastFunction) -> CheckedFunction:
        c_index = {q.name: i for i, q in enumerate(plan.function.params)}
        inputs: list[CheckedInput] = []
        outputs: list[CheckedOutput] = []
        holder = ""
        for p in plan.params:
            fp = raw.params[c_index[p.name]]
            if p.role is Role.IN:
                if p.effect is Effect.DESTROYS and p.ctype in _HOLDER_KINDS:
                    holder = p.ctype
                inputs.append(self._input(plan, p, fp, len(inputs)))
            else:
                c = plan.function.params[c_index[p.name]]
                outputs.append(CheckedOutput(fp, self._output(p, c)))
        return CheckedFunction(
            plan.name,
            raw,
            tuple(inputs),
            tuple(outputs),
            self.not_ready if plan.result is ResultKind.QUERY else None,
            len(self.functions),
            holder,
        )

    def _input(self, plan: FunctionPlan, p, fp: FastParam, position: int) -> CheckedInput:
        c = next(q for q in plan.function.params if q.name == p.name)
        out = f"&{fp.local}"
        x = f"x{position}"
        handle = ""
        if p.kind is ParamKind.HANDLE:
            handle = p.ctype
            self.handle_classes.add(handle)
            convert = f"cudart_c_handle({x}, view->handles[cudart_handle_{handle}], {out})"
        elif p.kind is ParamKind.POINTER:
            convert = f"cudart_c_address({x}, 1, 0, {out})"
        elif p.kind is ParamKind.REF:
            record = self.types.classify(self.types.pointee(c.type)) is TypeKind.RECORD
            convert = f"cudart_c_address({x}, 0, {int(record)}, {out})"
        elif p.kind is ParamKind.INTEGER_HANDLE:
            convert = self._integer(fp, f"cudart_c_unsigned({x}, UINT64_MAX, &n)")
        else:
            convert = self._scalar(c, fp, x)
        effect = str(p.effect) if p.effect in (Effect.DESTROYS, Effect.FREES) else ""
        literal = f"{p.default}LL" if _literal(p.default) else ""
        return CheckedInput(
            fp, p.py_name, position, convert, p.default == "None", literal, handle, effect
        )

    def _integer(self, fp: FastParam, call: str) -> str:
        """An integer converter's call into a 64-bit temporary (`sn` signed, `un`
        unsigned), then into the raw function's local."""
        kind = "long long" if fp.local.startswith("i") else "unsigned long long"
        temp = "un" if call.startswith("cudart_c_unsigned") else "sn"
        return f"({call.replace('&n', '&' + temp)} && ((void)({fp.local} = ({kind}){temp}), 1))"

    def _scalar(self, c, fp: FastParam, x: str) -> str:
        r = integer_range(self.types, c.type)
        if r is None:
            return f"cudart_c_double({x}, &{fp.local})"
        if r.enum is not None:
            self.enum_classes.add(r.enum)
            self.members[r.enum] = (r.members or frozenset(), r.flags)
            at = f"[cudart_enum_{r.enum}]"
            return self._integer(fp, f"cudart_c_enum({x}, view->enums{at}, view->members{at}, &n)")
        if r.low < 0:
            return self._integer(fp, f"cudart_c_signed({x}, {_low(r.low)}, {r.high}LL, &n)")
        return self._integer(fp, f"cudart_c_unsigned({x}, {_high(r.high)}, &n)")

    def _slot_code(self, p, c) -> str | None:
        """How the output's slot is read: its storage class's ctypes code, or, for an
        integer typedef the raw module names (CUdeviceptr: a c_ulonglong), its C type's."""
        code = _code(p.ctype)
        if code is not None or p.kind is not ParamKind.SCALAR:
            return code
        pointee = self.types.pointee(c.type)
        r = integer_range(self.types, pointee)
        if r is None or self.types.classify(pointee) is not TypeKind.INTEGER:
            return None
        bits = (r.high - r.low).bit_length()
        codes = {8: "b", 16: "h", 32: "i", 64: "q"}
        if bits not in codes:
            return None
        return codes[bits].upper() if r.low == 0 else codes[bits]

    def _output(self, p, c) -> str:
        if p.kind is ParamKind.HANDLE:
            self.handle_classes.add(p.ctype)
            return f"cudart_c_new_handle(view->handles[cudart_handle_{p.ctype}], {{slot}})"
        code = self._slot_code(p, c)
        if p.kind is ParamKind.ENUM:
            enum = p.py_type
            self.enum_classes.add(enum)
            return f"cudart_c_enum_value(view->enums[cudart_enum_{enum}], '{code}', {{slot}})"
        # A scalar's `.value`; an address's `.value or 0`, which reading a 'P' slot is.
        return f"cudart_output_value('{code}', {{slot}})"


def _literal(default: str | None) -> bool:
    """Whether a default is an integer literal (the C local takes it as is)."""
    return default is not None and default.lstrip("-").isdigit()


def _code(ctype: str) -> str | None:
    """The ctypes `_type_` code of a storage class named `ctype`, if a slot can hold it."""
    cls = getattr(ctypes, ctype, None)
    code = getattr(cls, "_type_", None)
    return code if isinstance(code, str) and code in OUTPUT_CODES else None


def _low(low: int) -> str:
    return "INT64_MIN" if low == -(1 << 63) else f"{low}LL"


def _high(high: int) -> str:
    return "UINT64_MAX" if high == (1 << 64) - 1 else f"{high}ULL"
