"""The intermediate model: what the headers declare, free of libclang.

parse.py fills it; resolve.py refines it; render.py reads it and nothing else.
Every list keeps header order, so output order never depends on hashing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# ---------------------------------------------------------------- C types


@dataclass(frozen=True)
class Builtin:
    """A C arithmetic type or void, spelled as C spells it ("unsigned int")."""

    name: str


@dataclass(frozen=True)
class Pointer:
    pointee: CType
    # Whether the pointee is const: `const void *` is an input, `void *` may be written.
    pointee_const: bool = False


@dataclass(frozen=True)
class Array:
    element: CType
    length: int | None  # None for an incomplete array `T x[]`


@dataclass(frozen=True)
class RecordRef:
    name: str  # model name of the Record (a tag, a typedef name or a synthesized name)


@dataclass(frozen=True)
class EnumRef:
    name: str


@dataclass(frozen=True)
class TypedefRef:
    name: str


@dataclass(frozen=True)
class FunctionProto:
    result: CType
    params: tuple[CType, ...]
    variadic: bool = False


CType = Builtin | Pointer | Array | RecordRef | EnumRef | TypedefRef | FunctionProto

# ---------------------------------------------------------------- declarations


@dataclass(frozen=True)
class Field:
    name: str  # for an anonymous member, a synthesized name (see `anonymous`)
    type: CType
    offset: int  # bytes from the start of the record
    bit_width: int | None = None
    anonymous: bool = False  # C's `union { ... };` member: its fields read as the parent's
    doc: str = (
        ""  # the header's doc comment (`/**< ... */` beside it or `/** ... */` above), plain text
    )


@dataclass(frozen=True)
class Record:
    name: str
    kind: str  # "struct" or "union"
    fields: tuple[Field, ...]
    size: int | None  # None when the record is opaque (declared, never defined)
    align: int | None
    # A C type expression gcc accepts in sizeof/offsetof, e.g. "struct dim3"; None for a
    # record nested as an anonymous member, which C cannot name.
    c_spelling: str | None = None
    nested_in: str | None = None  # the enclosing record, for records defined inside another
    header: str = ""
    doc: str = ""  # the header's doc comment, plain text
    # Members a C++-only constructor of the record defaults (`dim3(unsigned int vx = 1,
    # ...) : x(vx), ...`): (member, integer). C has no constructors; Python's follows C++.
    cxx_defaults: tuple[tuple[str, int], ...] = ()

    @property
    def opaque(self) -> bool:
        return self.size is None


@dataclass(frozen=True)
class Enumerator:
    name: str
    value: int
    doc: str = ""  # the header's doc comment, plain text


@dataclass(frozen=True)
class Enum:
    name: str  # the tag, or the typedef name for `typedef enum { ... } name;`
    underlying: Builtin
    enumerators: tuple[Enumerator, ...]
    c_spelling: str = ""
    header: str = ""
    doc: str = ""  # the header's doc comment, plain text


@dataclass(frozen=True)
class Typedef:
    name: str
    target: CType
    # Declared by a system header (size_t, uint64_t): the renderer maps it, not defines it.
    system: bool = False
    header: str = ""
    # A macro naming a type (`#define cudaStreamAttrValue cudaLaunchAttributeValue`).
    from_macro: bool = False
    # Declared by another API's header that the surface names types of (GL, EGL, VDPAU:
    # the parse's foreign folders): defined in the bindings, so users can name them.
    foreign: bool = False


@dataclass(frozen=True)
class Param:
    name: str
    type: CType
    # The C++ default argument the header gives through `__dv(x)`, as its tokens
    # ("0", "cudaMemcpyHostToDevice"); C mode expands __dv to nothing, so C never sees it.
    default: str | None = None


@dataclass(frozen=True)
class ParamDoc:
    name: str
    text: str  # Doxygen markup reduced to plain text
    direction: str | None = None  # `\param[out]`: "in", "out" or "in,out"; None: unstated


@dataclass(frozen=True)
class FunctionDoc:
    """The header's Doxygen comment above a declaration, reduced to plain text.

    Kept as the header says it: what it means (which parameters are outputs, what
    replaces a deprecated function) is decided by resolve.py, not here.
    """

    brief: str = ""
    description: tuple[str, ...] = ()  # paragraphs between \brief and the first section
    params: tuple[ParamDoc, ...] = ()
    returns: str = ""  # the \return section: for most functions a list of error codes
    deprecated: str | None = None  # the \deprecated section's text ("" when bare)
    notes: tuple[str, ...] = ()  # the \note paragraphs ("iterator is auto-advancing")
    # The names the \sa section refers to ("cudaFree", "cuMemFree_v2"), in its order: the
    # reference (generator/render/docs.py) links the ones it documents.
    see_also: tuple[str, ...] = ()

    def direction(self, name: str) -> str | None:
        """What `\\param[...]` declares for the parameter ("out", "in,out"), if anything."""
        return next((p.direction for p in self.params if p.name == name), None)

    def param(self, name: str) -> str | None:
        exact = next((p.text for p in self.params if p.name == name), None)
        if exact is not None:
            return exact
        # The docs spell some names in another case than the prototype (graphId for
        # graphID); C names differing only in case never share a parameter list here.
        folded = [p.text for p in self.params if p.name.lower() == name.lower()]
        return folded[0] if len(folded) == 1 else None

    def param_at(self, names: list[str], index: int) -> ParamDoc | None:
        """The \\param at a prototype parameter's position, where the docs name it
        otherwise (`handle_out` for `shareableHandle`): only when the docs list as many
        parameters as the prototype and the name at that position is no prototype name."""
        if len(self.params) != len(names):
            return None
        doc = self.params[index]
        folded = {n.lower() for n in names}
        return None if doc.name.lower() in folded else doc


@dataclass(frozen=True)
class Function:
    name: str  # the C name as declared, which is also the exported symbol
    result: CType
    params: tuple[Param, ...]
    variadic: bool = False
    deprecated: bool = False
    header: str = ""
    doc: FunctionDoc | None = None


@dataclass(frozen=True)
class RecordBuilder:
    """An inline helper whose body builds a record from its parameters and returns it
    (`static __inline__ struct cudaPos make_cudaPos(size_t x, ...) { struct cudaPos p;
    p.x = x; ... return p; }`). Not exported: the bindings rebuild it in Python."""

    name: str
    record: str  # model name of the Record it returns
    params: tuple[Param, ...]
    assignments: tuple[tuple[str, str], ...]  # (field, parameter), in the body's order
    header: str = ""
    doc: FunctionDoc | None = None


@dataclass(frozen=True)
class Macro:
    name: str
    value: int
    # "int": an integer constant expression; "pointer": an integer cast to a pointer
    # type, such as cudaStreamLegacy ((cudaStream_t)0x1).
    kind: str = "int"
    header: str = ""


@dataclass(frozen=True)
class SymbolAlias:
    """A macro that renames a function: C code calling `public` calls `symbol`; or, with
    `inline`, a `static inline` wrapper that only forwards its parameters to `symbol`
    (nvJitLink.h's nvJitLinkCreate and __nvJitLinkCreate_12_5): then the symbol is the
    library's versioned name of the public function, no API of its own."""

    public: str
    symbol: str
    inline: bool = False


@dataclass
class ApiModel:
    cuda_version: int  # CUDART_VERSION as the headers define it, e.g. 12050
    # (file name, sha256) of each header the parse started from, in that order
    header_hashes: tuple[tuple[str, str], ...] = ()
    records: list[Record] = field(default_factory=list)
    enums: list[Enum] = field(default_factory=list)
    typedefs: list[Typedef] = field(default_factory=list)
    functions: list[Function] = field(default_factory=list)
    macros: list[Macro] = field(default_factory=list)
    aliases: list[SymbolAlias] = field(default_factory=list)
    # Under -DCUDA_API_PER_THREAD_DEFAULT_STREAM: each public name (function or alias)
    # whose symbol then differs from the one above, sorted by name
    # (cudaMemcpy -> cudaMemcpy_ptds, cudaStreamGetCaptureInfo -> ..._v2_ptsz).
    per_thread_symbols: list[SymbolAlias] = field(default_factory=list)
    builders: list[RecordBuilder] = field(default_factory=list)
    # Inline definitions no model construct expresses: (name, why), for the log.
    unbound_inline: list[tuple[str, str]] = field(default_factory=list)

    def by_name(self, kind: str) -> dict:
        """Name -> declaration for one of records, enums, typedefs, functions, macros."""
        return {item.name: item for item in getattr(self, kind)}
