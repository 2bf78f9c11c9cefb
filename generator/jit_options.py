"""JIT and library options: the value type of each member of an option enum
(CUjit_option, CUlibraryOption, cudaJitOption, cudaLibraryOption), for the functions
that take a list of options and a `void **` of their values (issue 33 item 14b).

`cuModuleLoadDataEx(module, image, numOptions, options, optionValues)` takes, per
option, one `void *` slot whose meaning depends on the option: an unsigned int or an
int stored in the pointer's bits, a `char *` log buffer, a `const char **` array, an
enumerator of CUjit_target ... The driver writes back into some slots (the bytes of a
log it filled, the wall time). The checked layer takes the options typed, as a mapping
`{option: value}` (or `(option, value)` pairs, or cuda-bindings' two lists), converts
and range-checks each value to its option's type, allocates the log buffers asked for,
and returns what C wrote back (cudart._jitoptions). That needs, per enumerator, its
value's type. That is decided here, once:

* from the header's documentation where it says the type: each CUjit_option's comment
  ends "Option type: unsigned int" ("int", "float", "char *", "const char **",
  "void **", "unsigned int for enumerated type ::CUjit_target", "No option value
  needed"); "OUT:" or "Overwrites the option value" says C writes the slot back; "the
  buffer size is specified via option ::X" and "Must contain ::X entries" name the
  option that gives a buffer's or an array's length;
* from REVIEWED, each entry with its reason, where the docs say nothing or say wrong;
* or REFUSED, with its reason, for what no caller should pass (internal, end markers).

An enumerator that neither decides is undecided: `listing` shows it, the checked
function refuses it at run time (ValueError), and tests/generator/test_jit_option_types.py
fails until it has a decision.

Parsing never reads this; resolve.py (the plans' option groups) and render/checked.py
(the module's option tables) do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from .ctypes_map import TypeMapper
from .model import ApiModel, CType, EnumRef, TypedefRef


@dataclass(frozen=True)
class OptionGroup:
    """One option list of a function: its count, its option array and its `void **`
    values, by C parameter name."""

    count: str
    options: str
    values: str


_JIT = OptionGroup("numOptions", "options", "optionValues")
_LIBRARY_JIT = OptionGroup("numJitOptions", "jitOptions", "jitOptionsValues")
_LIBRARY = OptionGroup("numLibraryOptions", "libraryOptions", "libraryOptionValues")

# Every function that takes typed option lists, by C name (the _v2 symbols the public
# names are). tests/generator/test_jit_option_types.py holds that every function of every
# version with an option-enum array beside a `void **` is here.
FUNCTIONS: dict[str, tuple[OptionGroup, ...]] = {
    "cuModuleLoadDataEx": (_JIT,),
    "cuLinkCreate_v2": (_JIT,),
    "cuLinkAddData_v2": (_JIT,),
    "cuLinkAddFile_v2": (_JIT,),
    "cuLibraryLoadData": (_LIBRARY_JIT, _LIBRARY),
    "cuLibraryLoadFromFile": (_LIBRARY_JIT, _LIBRARY),
    # cuda_runtime_api.h (12.8+), the same shape with the runtime's enums.
    "cudaLibraryLoadData": (_LIBRARY_JIT, _LIBRARY),
    "cudaLibraryLoadFromFile": (_LIBRARY_JIT, _LIBRARY),
}

# Functions whose option values C may use after it returns, and the output handle they
# are kept with (as long as that handle object lives):
# * cuLinkCreate: "optionValues must remain valid for the life of the CUlinkState if
#   output options are used" (the logs, the wall time and the log sizes "accumulate
#   data until the CUlinkState is destroyed");
# * the library loads: with lazy loading (CUDA_MODULE_LOADING=LAZY, the default) a
#   library "will only be loaded when a function is needed for that context", and the
#   docs do not say the JIT (which writes the logs) happens before the call returns.
KEPT_WITH: dict[str, str] = {
    "cuLinkCreate_v2": "stateOut",
    "cuLibraryLoadData": "library",
    "cuLibraryLoadFromFile": "library",
    "cudaLibraryLoadData": "library",
    "cudaLibraryLoadFromFile": "library",
}


class ValueKind(StrEnum):
    """What one option's `void *` slot holds."""

    UNSIGNED = "unsigned int"  # the number in the slot's bits
    INT = "int"  # the number in the slot's bits, sign-extended as C's (void *)(intptr_t)
    ENUM = "enum"  # an enumerator of `enum`, in the slot's bits
    FLOAT = "float"  # a float: C overwrites the slot with it (CU_JIT_WALL_TIME)
    LOG = "log"  # a `char *` buffer C writes text to; `length` names its size option
    STRINGS = "strings"  # a `const char **` array; `length` names its count option
    POINTERS = "pointers"  # a `void **` array of addresses; `length` names its count
    POINTER = "pointer"  # a `void *` address, given as is (a record's address)
    NONE = "none"  # no value: the slot is NULL


@dataclass(frozen=True)
class OptionType:
    kind: ValueKind
    enum: str | None = None  # ENUM: the C enum (or its typedef) named by the docs
    out: bool = False  # C writes the slot back (an in/out or out-only option)
    length: str | None = None  # LOG, STRINGS, POINTERS: the option that gives the length

    def describe(self) -> str:
        what = f"enum {self.enum}" if self.kind is ValueKind.ENUM else str(self.kind)
        if self.length:
            what += f" (length: {self.length})"
        return what + (", written back" if self.out else "")


# (enum, enumerator) -> (value type, why), where the header's docs do not say it or say
# it wrong. Each is reviewed against the header and cuda-bindings' _HelperCUjit_option
# / _HelperCUlibraryOption (cuda_bindings 12.9, cuda/bindings/_lib/utils.pxi).
REVIEWED: dict[tuple[str, str], tuple[OptionType, str]] = {
    ("CUlibraryOption_enum", "CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE"): (
        OptionType(ValueKind.POINTER),
        "undocumented; cuda-bindings passes the address of a "
        "CUlibraryHostUniversalFunctionAndDataTable (cuda.h declares the record beside it)",
    ),
    ("CUlibraryOption_enum", "CU_LIBRARY_BINARY_IS_PRESERVED"): (
        OptionType(ValueKind.UNSIGNED),
        '"Specifes that the argument code ... will be preserved": a flag, no type given; '
        "cuda-bindings takes an unsigned int",
    ),
    ("cudaLibraryOption", "cudaLibraryHostUniversalFunctionAndDataTable"): (
        OptionType(ValueKind.POINTER),
        "as CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE (undocumented; an address)",
    ),
    ("cudaLibraryOption", "cudaLibraryBinaryIsPreserved"): (
        OptionType(ValueKind.UNSIGNED),
        "as CU_LIBRARY_BINARY_IS_PRESERVED (a flag; cuda-bindings: unsigned int)",
    ),
}

# (enum, enumerator) -> why the checked layer refuses it (ValueError, before C). The
# end markers' docs are the previous enumerator's (the comment the parser finds before
# them), so their "Option type" is wrong: the table decides before the docs.
REFUSED: dict[tuple[str, str], str] = {
    ("CUjit_option_enum", "CU_JIT_NEW_SM3X_OPT"): (
        '"This jit option is deprecated and should not be used" (no option type)'
    ),
    ("CUjit_option_enum", "CU_JIT_FAST_COMPILE"): (
        '"This jit option is used for internal purpose only" (no option type)'
    ),
    ("CUjit_option_enum", "CU_JIT_NUM_OPTIONS"): "the enum's end marker, no option",
    ("CUlibraryOption_enum", "CU_LIBRARY_NUM_OPTIONS"): "the enum's end marker, no option",
}

_OPTION_TYPE = re.compile(r"Option type: (.+?)(?:\s+Applies to:|$)")
_ENUMERATED = re.compile(r"^unsigned int for enumerated type (\w+)$")
_SIMPLE = {
    "unsigned int": ValueKind.UNSIGNED,
    "int": ValueKind.INT,
    "float": ValueKind.FLOAT,
    "char *": ValueKind.LOG,
    "const char **": ValueKind.STRINGS,
    "void **": ValueKind.POINTERS,
    "No option value needed": ValueKind.NONE,
}
_WRITTEN = re.compile(r"\bOUT:|Overwrites the option value")
_LENGTH = re.compile(r"buffer size is specified via option (\w+)|Must contain (\w+) entries")


@dataclass(frozen=True)
class Decision:
    enumerator: str
    value: int
    type: OptionType | None  # None: refused or undecided
    source: str  # "docs", "table: <reason>", "refused: <reason>" or "undecided"


def documented(doc: str) -> OptionType | None:
    """What an enumerator's doc says of its value, if it gives an option type."""
    m = _OPTION_TYPE.search(doc)
    if m is None:
        return None
    spelled = m.group(1).strip()
    enumerated = _ENUMERATED.match(spelled)
    if enumerated:
        kind, enum = ValueKind.ENUM, enumerated.group(1)
    elif spelled in _SIMPLE:
        kind, enum = _SIMPLE[spelled], None
    else:
        return None  # a type this module does not know: undecided, the test names it
    length = _LENGTH.search(doc)
    partner = (length.group(1) or length.group(2)) if length else None
    if kind not in (ValueKind.LOG, ValueKind.STRINGS, ValueKind.POINTERS):
        partner = None
    return OptionType(kind, enum, bool(_WRITTEN.search(doc)), partner)


class OptionTypes:
    """Per option enum of one version, each member's decision."""

    def __init__(self, model: ApiModel, types: TypeMapper | None = None) -> None:
        self.types = types or TypeMapper(model)
        self.functions = {f.name: f for f in model.functions}

    def groups(self, function: str) -> tuple[OptionGroup, ...]:
        return FUNCTIONS.get(function, ()) if function in self.functions else ()

    def enum_of(self, function: str, group: OptionGroup) -> str:
        """The option enum of one of a function's groups (the options array's pointee)."""
        f = self.functions[function]
        options = next(p for p in f.params if p.name == group.options)
        r = self.types.resolve(self.types.pointee(options.type))
        assert isinstance(r, EnumRef), f"{function}.{group.options} is no enum array"
        return r.name

    def decisions(self, enum: str) -> list[Decision]:
        out = []
        for k in self.types.enums[enum].enumerators:
            if (enum, k.name) in REFUSED:
                out.append(Decision(k.name, k.value, None, f"refused: {REFUSED[enum, k.name]}"))
            elif (enum, k.name) in REVIEWED:
                value_type, why = REVIEWED[(enum, k.name)]
                out.append(Decision(k.name, k.value, value_type, f"table: {why}"))
            elif (found := documented(k.doc)) is not None:
                out.append(Decision(k.name, k.value, found, "docs"))
            else:
                out.append(Decision(k.name, k.value, None, "undecided"))
        return out

    def enum_type(self, name: str) -> CType:
        """The C type an ENUM option's docs name (an enum, or a typedef of one)."""
        if name in self.types.enums:
            return EnumRef(name)
        if name in self.types.typedefs:
            t = TypedefRef(name)
            if isinstance(self.types.resolve(t), EnumRef):
                return t
        raise KeyError(f"the docs name {name}, which is no enum of this version")

    def table_name(self, enum: str) -> str:
        """The generated module's table of an option enum's value types."""
        return f"_{enum}_options"


def listing(model: ApiModel) -> list[str]:
    """`enum: enumerator = value type (source)` for each option enum this version's
    FUNCTIONS take: the reviewable table."""
    options = OptionTypes(model)
    enums = sorted(
        {options.enum_of(f, g) for f in FUNCTIONS for g in options.groups(f)},
    )
    lines = []
    for enum in enums:
        for d in options.decisions(enum):
            what = d.type.describe() if d.type else d.source.split(":")[0].upper()
            lines.append(f"{enum}: {d.enumerator} = {what} ({d.source})")
    return lines


def undecided(model: ApiModel) -> list[str]:
    """The options of this version without a value type (refused at run time)."""
    return [line for line in listing(model) if line.endswith("(undecided)")]
