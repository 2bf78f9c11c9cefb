"""libclang -> model. The only module that imports clang.

The headers are parsed as C, the way a C program including cuda_runtime_api.h sees
them, with the standard headers of the system C compiler: the same compiler the ABI
tests hold the bindings against.
"""

from __future__ import annotations

import ctypes
import hashlib
import re
import subprocess
from collections.abc import Iterable
from ctypes import POINTER, Structure, c_char_p, c_int, c_longlong, c_uint, c_ulonglong, c_void_p
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import clang.cindex as ci

from .doxygen import parse_comment, summary
from .model import (
    ApiModel,
    Array,
    Builtin,
    CType,
    Enum,
    Enumerator,
    EnumRef,
    Field,
    Function,
    FunctionProto,
    Macro,
    Param,
    Pointer,
    Record,
    RecordBuilder,
    RecordRef,
    SymbolAlias,
    Typedef,
    TypedefRef,
)

if TYPE_CHECKING:  # at run time the parse reads only a HeaderSet's fields
    from .fetch import HeaderSet


class ParseError(Exception):
    """The headers did not parse cleanly; the message carries clang's diagnostics."""


# Stand-ins for the GL, EGL and VDPAU headers that the interop headers include (see
# shims/README.md): put first on the system include path, by the parse and by gcc alike.
SHIMS = Path(__file__).resolve().parent / "shims"


@dataclass(frozen=True)
class ParseInput:
    # The headers the parse starts from, in order: the runtime surface (or a test header).
    headers: tuple[Path, ...]
    include_dirs: tuple[Path, ...]
    system_include_dirs: tuple[Path, ...] = ()
    # Only declarations from files under these folders enter the model; system
    # headers' declarations are used but not bound.
    own_dirs: tuple[Path, ...] = ()
    # Headers of other APIs whose types the surface names (the GL/EGL/VDPAU shims): a
    # typedef from there that the surface uses enters the model as a foreign typedef.
    foreign_dirs: tuple[Path, ...] = ()

    def __post_init__(self) -> None:
        if not self.headers:
            raise ParseError("nothing to parse: no header given")

    @property
    def umbrella(self) -> tuple[str, str]:
        """(path, text) of the translation unit that includes every header in order; it
        lives in memory only, beside the first header."""
        text = "".join(f'#include "{h.resolve()}"\n' for h in self.headers)
        return str(self.headers[0].resolve().parent / "__cudart_surface__.c"), text

    @property
    def names(self) -> str:
        return ", ".join(h.name for h in self.headers)


_BUILTINS = {
    ci.TypeKind.VOID: "void",
    ci.TypeKind.BOOL: "_Bool",
    ci.TypeKind.CHAR_S: "char",
    ci.TypeKind.CHAR_U: "char",
    ci.TypeKind.SCHAR: "signed char",
    ci.TypeKind.UCHAR: "unsigned char",
    ci.TypeKind.SHORT: "short",
    ci.TypeKind.USHORT: "unsigned short",
    ci.TypeKind.INT: "int",
    ci.TypeKind.UINT: "unsigned int",
    ci.TypeKind.LONG: "long",
    ci.TypeKind.ULONG: "unsigned long",
    ci.TypeKind.LONGLONG: "long long",
    ci.TypeKind.ULONGLONG: "unsigned long long",
    ci.TypeKind.FLOAT: "float",
    ci.TypeKind.DOUBLE: "double",
    ci.TypeKind.LONGDOUBLE: "long double",
    ci.TypeKind.INT128: "__int128",
    ci.TypeKind.UINT128: "unsigned __int128",
}
_INTEGER_KINDS = {
    k for k, v in _BUILTINS.items() if v not in ("void", "float", "double", "long double")
}
_RECORD_CURSORS = (ci.CursorKind.STRUCT_DECL, ci.CursorKind.UNION_DECL)
_TAG_CURSORS = _RECORD_CURSORS + (ci.CursorKind.ENUM_DECL,)


def system_include_dirs(compiler: str = "cc") -> tuple[Path, ...]:
    """The include search list of the system C compiler, in its order.

    libclang from PyPI ships without clang's own headers (stddef.h, limits.h), so we
    borrow the C compiler's, which also keeps the parse faithful to what gcc sees.
    """
    try:
        proc = subprocess.run(
            [compiler, "-xc", "-E", "-v", "-"],
            input="",
            capture_output=True,
            text=True,
            check=False,
        )
    except FileNotFoundError:
        raise ParseError(
            f"no C compiler '{compiler}' on PATH: it is needed to find the standard C headers"
        ) from None
    lines = proc.stderr.splitlines()
    try:
        start = lines.index("#include <...> search starts here:") + 1
        end = lines.index("End of search list.")
    except ValueError:
        raise ParseError(f"could not read the include search list of '{compiler}'") from None
    return tuple(Path(line.strip()) for line in lines[start:end])


def clang_args(inp: ParseInput) -> list[str]:
    args = ["-x", "c", "-std=gnu11", "-nostdinc"]
    for d in inp.include_dirs:
        args += ["-I", str(d)]
    for d in inp.system_include_dirs:
        args += ["-isystem", str(d)]
    return args


def parse(inp: ParseInput) -> ApiModel:
    with _global_locale():
        return _parse(inp)


class _global_locale:
    """Parses on the process's locale, as a fresh process does. A thread another
    library left on its own locale (libnvrtc's LLVM leaves the "C" one, through
    uselocale, in a process that compiled with the raw NVRTC bindings) makes libclang
    attach some doc comments otherwise, and the generated bytes differ."""

    _GLOBAL = ctypes.c_void_p(-1)  # LC_GLOBAL_LOCALE: glibc, musl and macOS alike

    def __enter__(self) -> None:
        self._uselocale = _uselocale()
        self._saved = self._uselocale(self._GLOBAL) if self._uselocale else None

    def __exit__(self, *exc: object) -> None:
        if self._uselocale and self._saved:
            self._uselocale(self._saved)


def _uselocale():
    try:
        uselocale = ctypes.CDLL(None).uselocale  # POSIX 2008
    except (AttributeError, OSError):
        return None
    uselocale.restype = c_void_p
    uselocale.argtypes = [c_void_p]
    return uselocale


def _parse(inp: ParseInput) -> ApiModel:
    index = ci.Index.create()
    # Bodies are parsed: an inline helper's body is what its binding rebuilds.
    options = ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD
    name, text = inp.umbrella
    tu = index.parse(name, args=clang_args(inp), unsaved_files=[(name, text)], options=options)
    _raise_on_diagnostics(tu, "parsing " + inp.names)
    walker = _Walker(inp, _skipped_lines(tu))
    walker.walk(tu)
    macros, aliases = _evaluate_macros(index, inp, walker)
    per_thread = _per_thread_symbols(index, inp, walker.functions, aliases, walker.forwarders)
    aliases += walker.forwarders
    model = ApiModel(
        cuda_version=next((m.value for m in macros if m.name == "CUDART_VERSION"), 0),
        header_hashes=tuple(
            (h.name, hashlib.sha256(h.read_bytes()).hexdigest()) for h in inp.headers
        ),
        records=walker.records,
        enums=walker.enums,
        typedefs=walker.typedefs,
        functions=walker.functions,
        macros=macros,
        aliases=aliases,
        per_thread_symbols=per_thread,
        builders=walker.builders,
        unbound_inline=walker.unbound_inline,
    )
    return model


def _raise_on_diagnostics(tu: ci.TranslationUnit, what: str) -> None:
    bad = [d for d in tu.diagnostics if d.severity >= ci.Diagnostic.Warning]
    if bad:
        shown = "\n".join(_format_diagnostic(d) for d in bad[:20])
        more = f"\n... and {len(bad) - 20} more" if len(bad) > 20 else ""
        raise ParseError(f"{len(bad)} diagnostic(s) {what}:\n{shown}{more}")


def _cxx_default_param(text: str) -> tuple[str, int] | None:
    """(name, default) of a C++ parameter `unsigned int vx = 1`; None for another form."""
    m = re.fullmatch(r"\s*[\w\s]*?\b(\w+)\s*=\s*(\d+)[uU]?\s*", text)
    return (m.group(1), int(m.group(2))) if m else None


def _doc(raw: str | None) -> str:
    """A declaration's doc comment as plain text, "" where it has none."""
    return summary(raw) if raw else ""


def _format_diagnostic(d: ci.Diagnostic) -> str:
    severity = {2: "warning", 3: "error", 4: "fatal"}.get(d.severity, "note")
    loc = d.location
    where = f"{loc.file.name}:{loc.line}:{loc.column}" if loc.file else "<unknown>"
    return f"{where}: {severity}: {d.spelling}"


class _Walker:
    """One pass over the translation unit, collecting declarations in header order."""

    def __init__(self, inp: ParseInput, skipped: dict[str, set[int]] | None = None) -> None:
        self.skipped = skipped or {}
        self._file_lines: dict[str, list[str]] = {}
        self.own_dirs = tuple(str(d.resolve()) for d in (inp.own_dirs or inp.include_dirs))
        self.foreign_dirs = tuple(str(d.resolve()) + "/" for d in inp.foreign_dirs)
        self.records: list[Record] = []
        self.enums: list[Enum] = []
        self.typedefs: list[Typedef] = []
        self.functions: list[Function] = []
        self.builders: list[RecordBuilder] = []
        self.unbound_inline: list[tuple[str, str]] = []
        # `static inline R f(a, b) { return g(a, b); }`: C code calling f calls g.
        self.forwarders: list[SymbolAlias] = []
        self.macro_cursors: list[ci.Cursor] = []
        self._record_names: dict[tuple, str] = {}  # definition location -> model name
        self._seen_records: set[str] = set()
        self._seen_enums: set[str] = set()
        self._seen_typedefs: set[str] = set()
        self._seen_functions: set[str] = set()
        # Names C code can use; a synthesized name must not take one of them.
        self._reserved: set[str] = set()

    # -- helpers

    def is_own(self, cursor: ci.Cursor) -> bool:
        f = cursor.location.file
        return f is not None and str(Path(f.name).resolve()).startswith(self.own_dirs)

    def is_foreign(self, cursor: ci.Cursor) -> bool:
        f = cursor.location.file
        return f is not None and str(Path(f.name).resolve()).startswith(
            self.foreign_dirs or ("\0",)
        )

    def header_of(self, cursor: ci.Cursor) -> str:
        f = cursor.location.file
        return Path(f.name).name if f else ""

    @staticmethod
    def _key(cursor: ci.Cursor) -> tuple:
        loc = cursor.location
        return (loc.file.name if loc.file else "", loc.offset)

    # -- walk

    def walk(self, tu: ci.TranslationUnit) -> None:
        top = [c for c in tu.cursor.get_children() if self.is_own(c)]
        for c in top:
            for d in c.walk_preorder():
                if d.kind in _TAG_CURSORS + (ci.CursorKind.TYPEDEF_DECL,) and not d.is_anonymous():
                    self._reserved.add(d.spelling)
        for c in top:
            if c.kind in _RECORD_CURSORS:
                self.visit_record(c)
            elif c.kind == ci.CursorKind.ENUM_DECL:
                self.visit_enum(c)
            elif c.kind == ci.CursorKind.TYPEDEF_DECL:
                self.visit_typedef(c)
            elif c.kind == ci.CursorKind.FUNCTION_DECL:
                self.visit_function(c)
            elif c.kind == ci.CursorKind.MACRO_DEFINITION:
                self.macro_cursors.append(c)

    def record_name(self, decl: ci.Cursor) -> str:
        defn = decl.get_definition() or decl
        key = self._key(defn)
        if key in self._record_names:
            return self._record_names[key]
        if defn.is_anonymous():
            # Nested unnamed records are named when their parent is visited, and the
            # parent visits its fields' types first, so this is unreachable from C.
            raise ParseError(f"unnamed record outside a parent at {key[0]}:{key[1]}")
        # A typedef'd tagless record (`typedef struct { ... } anon_t;`) is spelled by
        # libclang with its typedef name, which is also how C code names it.
        self._record_names[key] = defn.spelling
        return defn.spelling

    def synthesize_name(self, base: str) -> str:
        name = base
        while name in self._reserved:
            name += "_"
        self._reserved.add(name)
        return name

    def visit_record(
        self,
        cursor: ci.Cursor,
        name: str | None = None,
        c_spelling: str | None = None,
        nested_in: str | None = None,
    ) -> None:
        defn = cursor.get_definition()
        if name is None:
            if cursor.is_anonymous():
                return  # an unnamed record used only as a field type: its parent names it
            name = self.record_name(cursor)
        if name in self._seen_records and (
            defn is None or any(r.name == name and not r.opaque for r in self.records)
        ):
            return
        kind = "union" if cursor.kind == ci.CursorKind.UNION_DECL else "struct"
        if c_spelling is None and nested_in is None:
            c_spelling = _c_spelling(defn or cursor, kind, name)
        if defn is None:
            self._seen_records.add(name)
            self.records.append(
                Record(name, kind, (), None, None, c_spelling, nested_in, self.header_of(cursor))
            )
            return
        # A forward declaration seen earlier gives way to the definition.
        self.records = [r for r in self.records if r.name != name]
        self._seen_records.add(name)
        fields: list[Field] = []
        anonymous_count = 0
        nested: list[tuple[ci.Cursor, str | None, str | None]] = []
        for f in defn.type.get_fields():
            fname = f.spelling
            anonymous = False
            decl = _strip_to_declaration(f.type)
            if decl is not None and decl.kind in _RECORD_CURSORS and decl.is_anonymous():
                if _is_anonymous_member(decl):
                    anonymous = True
                    fname = f"_anon{anonymous_count}"
                    anonymous_count += 1
                    nested_c = None  # C cannot name the type of an anonymous member
                else:
                    nested_c = f"__typeof__((({c_spelling} *)0)->{fname})" if c_spelling else None
                nested_name = self.synthesize_name(f"{name}_{fname}")
                self._record_names[self._key(decl.get_definition() or decl)] = nested_name
                nested.append((decl, nested_name, nested_c))
            elif (
                decl is not None
                and decl.kind in _RECORD_CURSORS
                and decl.get_definition() is not None
            ):
                # `struct A { struct B { int x; } b; };` declares B at file scope in C.
                nested.append((decl, None, None))
            fields.append(
                Field(
                    name=fname,
                    type=self.convert(f.type),
                    offset=f.get_field_offsetof() // 8,
                    bit_width=f.get_bitfield_width() if f.is_bitfield() else None,
                    anonymous=anonymous,
                    doc=_doc(f.raw_comment),
                )
            )
        # Nested records precede their parent so every list is in dependency order.
        for inner, inner_name, inner_c in nested:
            if inner_name is None:
                self.visit_record(inner)
            else:
                self.visit_record(inner, name=inner_name, c_spelling=inner_c, nested_in=name)
        self.records.append(
            Record(
                name=name,
                kind=kind,
                fields=tuple(fields),
                size=defn.type.get_size(),
                align=defn.type.get_align(),
                c_spelling=c_spelling,
                nested_in=nested_in,
                header=self.header_of(defn),
                # A nested record's lines above are its parent's members, and their comments.
                doc=_doc(defn.raw_comment if nested_in else self.doc_comment(defn)),
                cxx_defaults=self.cxx_record_defaults(defn, name, [f.name for f in fields]),
            )
        )

    def cxx_record_defaults(
        self, defn: ci.Cursor, name: str, members: list[str]
    ) -> tuple[tuple[str, int], ...]:
        """The member defaults of the record's C++-only constructor, from the lines the
        C parse skipped inside its body: `name(T a = 1, T b = 1) : m(a), n(b) {}`, every
        parameter defaulted to an integer literal and stored into a member. The first
        such constructor; () where there is none."""
        f = defn.extent.start.file
        if f is None:
            return ()
        lines = self._lines(f.name)
        skipped = self.skipped.get(f.name, set())
        start, end = defn.extent.start.line, defn.extent.end.line
        body = "\n".join(lines[n - 1] for n in range(start, end + 1) if n in skipped)
        for m in re.finditer(rf"\b{re.escape(name)}\s*\(([^()]*)\)\s*:([^{{]*)\{{", body):
            params = [_cxx_default_param(p) for p in m.group(1).split(",")]
            stores = dict(re.findall(r"(\w+)\s*\(\s*(\w+)\s*\)", m.group(2)))
            if not params or None in params:
                continue
            defaults = dict(p for p in params if p is not None)
            found = tuple((member, defaults.get(stores.get(member, ""))) for member in members)
            if all(d is not None for _, d in found) and len(stores) == len(members):
                return tuple((member, int(d)) for member, d in found if d is not None)
        return ()

    def visit_enum(self, cursor: ci.Cursor) -> None:
        if not cursor.is_definition():
            return
        if cursor.is_anonymous():
            name = c_spelling = ""  # `enum { A, B };`: constants only
        else:
            name = cursor.spelling
            c_spelling = _c_spelling(cursor, "enum", name)
        if name and name in self._seen_enums:
            return
        self._seen_enums.add(name)
        underlying = _BUILTINS[cursor.enum_type.get_canonical().kind]
        self.enums.append(
            Enum(
                name=name,
                underlying=Builtin(underlying),
                enumerators=tuple(
                    Enumerator(c.spelling, c.enum_value, _doc(c.raw_comment))
                    for c in cursor.get_children()
                    if c.kind == ci.CursorKind.ENUM_CONSTANT_DECL
                ),
                c_spelling=c_spelling,
                header=self.header_of(cursor),
                doc=_doc(self.doc_comment(cursor)),
            )
        )

    def visit_typedef(self, cursor: ci.Cursor) -> None:
        name = cursor.spelling
        if name in self._seen_typedefs:
            return
        target = self.convert(cursor.underlying_typedef_type)
        if isinstance(target, (RecordRef, EnumRef)) and target.name == name:
            return  # `typedef struct dim3 dim3;` adds no name
        self._seen_typedefs.add(name)
        self.typedefs.append(Typedef(name, target, header=self.header_of(cursor)))

    def visit_function(self, cursor: ci.Cursor) -> None:
        if cursor.spelling in self._seen_functions:
            return
        if cursor.is_definition():
            if cursor.linkage == ci.LinkageKind.INTERNAL:
                self.visit_inline(cursor)
            return
        if cursor.linkage != ci.LinkageKind.EXTERNAL:
            return
        self._seen_functions.add(cursor.spelling)
        ftype = cursor.type
        arguments = list(cursor.get_arguments())
        defaults = _default_arguments(cursor, len(arguments))
        cxx = self.cxx_defaults(cursor, len(arguments))
        defaults = [d if d is not None else x for d, x in zip(defaults, cxx, strict=True)]
        raw = self.doc_comment(cursor)
        self.functions.append(
            Function(
                name=cursor.spelling,
                result=self.convert(ftype.get_result()),
                params=tuple(
                    Param(a.spelling or f"arg{i}", self.convert(a.type), defaults[i])
                    for i, a in enumerate(arguments)
                ),
                variadic=ftype.kind == ci.TypeKind.FUNCTIONPROTO and ftype.is_function_variadic(),
                deprecated=cursor.availability == ci.AvailabilityKind.DEPRECATED,
                header=self.header_of(cursor),
                doc=parse_comment(raw) if raw else None,
            )
        )

    def visit_inline(self, cursor: ci.Cursor) -> None:
        """A `static inline` definition: a RecordBuilder when its body is one, else a
        line for the log saying why it is not bound."""
        self._seen_functions.add(cursor.spelling)
        target = _forwarding_target(cursor)
        if target is not None and self.forward(cursor, target):
            return
        try:
            record, assignments = _record_builder_body(cursor)
        except _NotABuilder as e:
            self.unbound_inline.append((cursor.spelling, str(e)))
            return
        raw = self.doc_comment(cursor)
        self.builders.append(
            RecordBuilder(
                name=cursor.spelling,
                record=self.record_name(record),
                params=tuple(
                    Param(a.spelling, self.convert(a.type)) for a in cursor.get_arguments()
                ),
                assignments=assignments,
                header=self.header_of(cursor),
                doc=parse_comment(raw) if raw else None,
            )
        )

    def forward(self, cursor: ci.Cursor, target: ci.Cursor) -> bool:
        """Bind an inline wrapper as an alias of the function it forwards to (nvJitLink.h's
        `nvJitLinkCreate` calls `__nvJitLinkCreate_12_5`, the symbol the library exports),
        where that function is bound. The header documents the wrapper, the public name,
        and not the symbol: the docs go to the function where it has none of its own."""
        index = next((i for i, f in enumerate(self.functions) if f.name == target.spelling), None)
        if index is None:
            return False
        raw = self.doc_comment(cursor)
        if raw and self.functions[index].doc is None:
            self.functions[index] = replace(self.functions[index], doc=parse_comment(raw))
        self.forwarders.append(
            SymbolAlias(public=cursor.spelling, symbol=target.spelling, inline=True)
        )
        return True

    def cxx_defaults(self, cursor: ci.Cursor, count: int) -> list[str | None]:
        """Per parameter, the `= x` default of the C++ twin of a declaration.

        The headers declare some functions twice: `#if defined(__cplusplus)` with C++
        default arguments (`unsigned int flags = cudaMemAttachGlobal`), `#else` without.
        The C parse skips the first; its lines are read here, from the skipped lines
        right above the declaration. A default is taken only from a declaration of the
        same name whose parameters, defaults aside, are token for token the C ones.
        """
        none: list[str | None] = [None] * count
        declared = _declaration_groups(cursor)
        f = cursor.extent.start.file
        if declared is None or f is None:
            return none
        name, c_groups = declared
        lines = self._lines(f.name)
        skipped = self.skipped.get(f.name, set())
        block: list[str] = []
        n = cursor.extent.start.line - 2
        while n >= 0 and ((n + 1) in skipped or lines[n].strip().startswith("#")):
            if (n + 1) in skipped:
                block.append(lines[n])
            n -= 1
        text = "\n".join(reversed(block))
        text = re.sub(r"//[^\n]*|/\*.*?\*/", " ", text, flags=re.S)
        tokens = _CXX_TOKEN.findall(text)
        want = [_without_default(g) for g in c_groups]
        for i, tok in enumerate(tokens):
            if tok != name or i + 1 >= len(tokens) or tokens[i + 1] != "(":
                continue
            groups = _parameter_groups(tokens[i + 1 :])
            if len(groups) != count or [_without_default(g) for g in groups] != want:
                continue
            found: list[str | None] = []
            for g in groups:
                depth, value = 0, None
                for j, t in enumerate(g):
                    depth += t in "([{"
                    depth -= t in ")]}"
                    if t == "=" and depth == 0:
                        value = " ".join(g[j + 1 :])
                        break
                found.append(value)
            return found
        return none

    def doc_comment(self, cursor: ci.Cursor) -> str | None:
        """The /** ... */ block that documents a declaration.

        libclang's raw_comment only sees a comment right above the declaration; the
        CUDA headers often put `#if __CUDART_API_VERSION >= ...` or a whole C++-only
        twin of the declaration (`#if defined(__cplusplus) ... #else`) in between. So
        walk up from the declaration past blank lines, preprocessor lines and lines the
        preprocessor skipped, and take the comment that ends there, if any.
        """
        f = cursor.extent.start.file
        if f is None:
            return None
        lines = self._lines(f.name)
        skipped = self.skipped.get(f.name, set())
        n = cursor.extent.start.line - 2  # 0-based index of the line above
        while n >= 0:
            text = lines[n].strip()
            if not text or text.startswith("#") or (n + 1) in skipped:
                n -= 1
                continue
            break
        if n < 0 or not lines[n].rstrip().endswith("*/"):
            return cursor.raw_comment
        end = n
        while n >= 0 and "/**" not in lines[n]:
            if "/*" in lines[n] and n != end:
                return None  # a plain comment, not documentation
            n -= 1
        if n < 0:
            return None
        first = lines[n][lines[n].index("/**") :]
        return "\n".join([first] + lines[n + 1 : end + 1])

    def _lines(self, path: str) -> list[str]:
        if path not in self._file_lines:
            self._file_lines[path] = Path(path).read_text(errors="replace").splitlines()
        return self._file_lines[path]

    # -- types

    def convert(self, t: ci.Type) -> CType:
        kind = t.kind
        if kind == ci.TypeKind.ELABORATED:
            return self.convert(t.get_named_type())
        if kind == ci.TypeKind.TYPEDEF:
            decl = t.get_declaration()
            name = decl.spelling
            if not self.is_own(decl) and name not in self._seen_typedefs:
                self._seen_typedefs.add(name)
                # A function type has no values, only pointers to it: nothing to name.
                foreign = self.is_foreign(decl) and t.get_canonical().kind not in (
                    ci.TypeKind.FUNCTIONPROTO,
                    ci.TypeKind.FUNCTIONNOPROTO,
                )
                self.typedefs.append(
                    Typedef(
                        name,
                        self.convert(
                            decl.underlying_typedef_type if foreign else t.get_canonical()
                        ),
                        system=not foreign,
                        header=self.header_of(decl),
                        foreign=foreign,
                    )
                )
            if self.is_own(decl):
                # `typedef struct dim3 dim3;` adds no name: refer to the record itself.
                target = self.convert(decl.underlying_typedef_type)
                if isinstance(target, (RecordRef, EnumRef)) and target.name == name:
                    return target
            return TypedefRef(name)
        if kind in _BUILTINS:
            return Builtin(_BUILTINS[kind])
        if kind == ci.TypeKind.POINTER:
            pointee = t.get_pointee()
            return Pointer(self.convert(pointee), pointee.is_const_qualified())
        if kind == ci.TypeKind.CONSTANTARRAY:
            return Array(self.convert(t.element_type), t.element_count)
        if kind == ci.TypeKind.INCOMPLETEARRAY:
            return Array(self.convert(t.element_type), None)
        if kind == ci.TypeKind.RECORD:
            decl = t.get_declaration()
            name = self.record_name(decl)
            if decl.get_definition() is None and name not in self._seen_records:
                # `struct never_defined *p` declares the tag right where it is used.
                self.visit_record(decl)
            return RecordRef(name)
        if kind == ci.TypeKind.ENUM:
            decl = t.get_declaration()
            if not self.is_own(decl):
                # A system header's enum (VdpStatus) is not bound: it is its integer type.
                return Builtin(_BUILTINS[decl.enum_type.get_canonical().kind])
            return EnumRef("" if decl.is_anonymous() else decl.spelling)
        if kind == ci.TypeKind.FUNCTIONPROTO:
            return FunctionProto(
                self.convert(t.get_result()),
                tuple(self.convert(a) for a in t.argument_types()),
                t.is_function_variadic(),
            )
        if kind == ci.TypeKind.FUNCTIONNOPROTO:
            return FunctionProto(self.convert(t.get_result()), ())
        raise ParseError(f"unsupported C type '{t.spelling}' ({kind})")


def _forwarding_target(fn: ci.Cursor) -> ci.Cursor | None:
    """The external function a body of exactly `return g(p1, ..., pn);` calls, with the
    parameters passed as they come (the same count, in order, nothing computed), and a
    result of the wrapper's type; None for any other body."""
    body = [c for c in fn.get_children() if c.kind == ci.CursorKind.COMPOUND_STMT]
    stmts = list(body[0].get_children()) if len(body) == 1 else []
    if len(stmts) != 1 or stmts[0].kind != ci.CursorKind.RETURN_STMT:
        return None
    returned = list(stmts[0].get_children())
    call = returned[0] if len(returned) == 1 else None
    while call is not None and call.kind == ci.CursorKind.UNEXPOSED_EXPR:
        inner = list(call.get_children())
        call = inner[0] if len(inner) == 1 else None
    if call is None or call.kind != ci.CursorKind.CALL_EXPR:
        return None
    callee = call.referenced
    if (
        callee is None
        or callee.kind != ci.CursorKind.FUNCTION_DECL
        or callee.linkage != ci.LinkageKind.EXTERNAL
        or callee.result_type.get_canonical() != fn.result_type.get_canonical()
    ):
        return None
    params = list(fn.get_arguments())
    passed = list(call.get_arguments())
    if len(passed) != len(params) or len(list(callee.get_arguments())) != len(params):
        return None
    for argument, param in zip(passed, params, strict=True):
        source = _referenced(argument)
        if source is None or source != param:
            return None
    return callee


class _NotABuilder(Exception):
    """An inline body the RecordBuilder construct does not express; says why."""


def _record_builder_body(fn: ci.Cursor) -> tuple[ci.Cursor, tuple[tuple[str, str], ...]]:
    """(the record's declaration, (field, parameter) pairs) of a body that reads exactly
    `T v; v.f1 = p1; ... v.fn = pn; return v;`, with every field of T assigned once from
    a parameter of the field's own type; _NotABuilder otherwise."""
    params = {a.spelling: a for a in fn.get_arguments()}
    body = [c for c in fn.get_children() if c.kind == ci.CursorKind.COMPOUND_STMT]
    if len(body) != 1:
        raise _NotABuilder("no body")
    stmts = list(body[0].get_children())
    if len(stmts) < 2 or stmts[0].kind != ci.CursorKind.DECL_STMT:
        raise _NotABuilder("the body does not open with a local record")
    decls = list(stmts[0].get_children())
    if len(decls) != 1 or decls[0].kind != ci.CursorKind.VAR_DECL:
        raise _NotABuilder("the body does not open with one local variable")
    local = decls[0]
    if list(local.get_children()) and any(
        c.kind != ci.CursorKind.TYPE_REF for c in local.get_children()
    ):
        raise _NotABuilder(f"{local.spelling} is initialized")
    record = _strip_to_declaration(local.type.get_canonical())
    if record is None or record.get_definition() is None:
        raise _NotABuilder(f"{local.spelling} is not a defined record")
    if local.type.get_canonical() != fn.result_type.get_canonical():
        raise _NotABuilder("the local record is not the function's result type")
    fields = {f.spelling: f for f in record.get_definition().type.get_fields()}
    assignments: list[tuple[str, str]] = []
    for stmt in stmts[1:-1]:
        parts = list(stmt.get_children())
        if stmt.kind != ci.CursorKind.BINARY_OPERATOR or len(parts) != 2:
            raise _NotABuilder(f"a statement other than a field assignment ({stmt.kind.name})")
        lhs, rhs = parts
        op = [t.spelling for t in stmt.get_tokens()][len(list(lhs.get_tokens()))]
        target = list(lhs.get_children())
        if (
            op != "="
            or lhs.kind != ci.CursorKind.MEMBER_REF_EXPR
            or len(target) != 1
            or _referenced(target[0]) != local
        ):
            raise _NotABuilder(f"a statement other than `{local.spelling}.field = parameter`")
        source = _referenced(rhs)
        if source is None or source.kind != ci.CursorKind.PARM_DECL:
            raise _NotABuilder(f"{local.spelling}.{lhs.spelling} is not set from a parameter")
        field = fields.get(lhs.spelling)
        if field is None or field.is_bitfield():
            raise _NotABuilder(f"{lhs.spelling} is not a plain field")
        if field.type.get_canonical() != params[source.spelling].type.get_canonical():
            raise _NotABuilder(f"{lhs.spelling} is set from a parameter of another type")
        if any(f == lhs.spelling for f, _ in assignments):
            raise _NotABuilder(f"{lhs.spelling} is assigned twice")
        assignments.append((lhs.spelling, source.spelling))
    last = stmts[-1]
    returned = list(last.get_children())
    if (
        last.kind != ci.CursorKind.RETURN_STMT
        or len(returned) != 1
        or _referenced(returned[0]) != local
    ):
        raise _NotABuilder(f"the body does not end with `return {local.spelling};`")
    unset = [name for name in fields if name not in dict(assignments)]
    if unset:
        raise _NotABuilder(f"fields left unset: {', '.join(unset)}")
    return record, tuple(assignments)


def _referenced(expr: ci.Cursor) -> ci.Cursor | None:
    """The declaration a plain name expression refers to, through implicit conversions."""
    while expr.kind == ci.CursorKind.UNEXPOSED_EXPR:
        inner = list(expr.get_children())
        if len(inner) != 1:
            return None
        expr = inner[0]
    return expr.referenced if expr.kind == ci.CursorKind.DECL_REF_EXPR else None


_CXX_TOKEN = re.compile(r"[A-Za-z_]\w*|\d[\w.]*|::|\S")


def _declaration_groups(cursor: ci.Cursor) -> tuple[str, list[list[str]]] | None:
    """The name a declaration spells and its parameters' tokens, one list each."""
    # The name token is where the cursor points, even when a macro renames the
    # function (`#define cudaStreamGetCaptureInfo ..._v2` spells the old name).
    raw_tokens = list(_tokens_from_name(cursor))
    where = cursor.location.offset
    starts = [i for i, t in enumerate(raw_tokens) if t.location.offset == where]
    if not starts:
        return None
    tokens = [t.spelling for t in raw_tokens]
    return tokens[starts[0]], _parameter_groups(tokens[starts[0] + 1 :])


def _tokens_from_name(cursor: ci.Cursor) -> Iterable[ci.Token]:
    # The declaration's own tokens, from locations made again from file, line and
    # column: where a declaration opens with a macro (cuda.h's `__CUDA_DEPRECATED`),
    # its extent starts at a macro location, and libclang would tokenize from where
    # the macro is defined, thousands of tokens earlier.
    start, end = cursor.extent.start, cursor.extent.end
    if start.file is None or end.file is None or start.file.name != end.file.name:
        return cursor.get_tokens()
    tu, f = cursor.translation_unit, start.file
    extent = ci.SourceRange.from_locations(
        ci.SourceLocation.from_position(tu, f, start.line, start.column),
        ci.SourceLocation.from_position(tu, f, end.line, end.column),
    )
    return tu.get_tokens(extent=extent)


def _parameter_groups(tokens: list[str]) -> list[list[str]]:
    """The tokens of each parameter of the list that `tokens` opens with `(`: split at
    the commas at depth one."""
    groups: list[list[str]] = [[]]
    depth = 0
    for tok in tokens:
        if tok == "(":
            depth += 1
            if depth == 1:
                continue
        elif tok == ")":
            depth -= 1
            if depth == 0:
                break
        elif tok == "," and depth == 1:
            groups.append([])
            continue
        groups[-1].append(tok)
    return groups


def _without_default(group: list[str]) -> list[str]:
    """A parameter's tokens without its `__dv(x)` or `= x` default."""
    out: list[str] = []
    depth = 0
    skipping = False
    for i, tok in enumerate(group):
        if tok == "__dv" and i + 1 < len(group) and group[i + 1] == "(":
            skipping = True
        elif tok == "=" and depth == 0:
            break
        if skipping:
            depth += tok == "("
            depth -= tok == ")"
            if tok == ")" and depth == 0:
                skipping = False
            continue
        depth += tok in "([{"
        depth -= tok in ")]}"
        out.append(tok)
    return out


def _default_arguments(cursor: ci.Cursor, count: int) -> list[str | None]:
    """Per parameter, the x of a trailing `__dv(x)`, read from the declaration's tokens.

    In C mode `__dv(x)` expands to nothing, so the AST never holds it; the tokens of
    the declaration still spell it. Parameters are split at the commas at depth one
    of the parameter list.
    """
    declared = _declaration_groups(cursor)
    if declared is None:
        return [None] * count
    defaults: list[str | None] = []
    for group in declared[1][:count]:
        value = None
        if "__dv" in group:
            i = group.index("__dv")
            inner, depth = [], 0
            for tok in group[i + 1 :]:
                depth += tok == "("
                depth -= tok == ")"
                if depth == 0:
                    break
                if not (tok == "(" and depth == 1):
                    inner.append(tok)
            value = " ".join(inner)
        defaults.append(value)
    defaults += [None] * (count - len(defaults))
    return defaults


def _skipped_lines(tu: ci.TranslationUnit) -> dict[str, set[int]]:
    """File name -> line numbers the preprocessor skipped (inactive #if branches)."""

    class _RangeList(Structure):
        _fields_ = [("count", c_uint), ("ranges", POINTER(ci.SourceRange))]

    lib = ci.conf.lib
    lib.clang_getAllSkippedRanges.restype = POINTER(_RangeList)
    lib.clang_getAllSkippedRanges.argtypes = [c_void_p]
    lib.clang_disposeSourceRangeList.argtypes = [POINTER(_RangeList)]
    lib.clang_disposeSourceRangeList.restype = None
    found: dict[str, set[int]] = {}
    ranges = lib.clang_getAllSkippedRanges(tu.obj if hasattr(tu, "obj") else tu)
    if not ranges:
        return found
    try:
        for i in range(ranges.contents.count):
            r = ranges.contents.ranges[i]
            if r.start.file is None:
                continue
            found.setdefault(r.start.file.name, set()).update(range(r.start.line, r.end.line + 1))
    finally:
        lib.clang_disposeSourceRangeList(ranges)
    return found


def _c_spelling(decl: ci.Cursor, keyword: str, name: str) -> str:
    """How C names the type: `struct tag`, or the bare typedef name of a tagless one."""
    # libclang spells a tagged type "struct tag" and a typedef'd tagless one by the
    # typedef name alone; is_anonymous() is False for both.
    return f"{keyword} {name}" if decl.type.spelling.startswith(keyword + " ") else name


def _strip_to_declaration(t: ci.Type) -> ci.Cursor | None:
    while t.kind in (
        ci.TypeKind.CONSTANTARRAY,
        ci.TypeKind.INCOMPLETEARRAY,
        ci.TypeKind.ELABORATED,
    ):
        t = t.element_type if t.kind != ci.TypeKind.ELABORATED else t.get_named_type()
    if t.kind == ci.TypeKind.RECORD:
        return t.get_declaration()
    return None


def _is_anonymous_member(decl: ci.Cursor) -> bool:
    # clang distinguishes `union { int a; };` (an anonymous member, whose fields belong
    # to the parent) from `union { int a; } u;` (an unnamed type of a named field).
    check = getattr(decl, "is_anonymous_record_decl", None)
    if check is not None:
        return bool(check())
    return "(anonymous" in decl.type.spelling


# ---------------------------------------------------------------- macros

_PROBE_PREFIX = "__cudart_probe_"


def _evaluator():
    lib = ci.conf.lib
    signatures = {
        "clang_Cursor_Evaluate": (c_void_p, [ci.Cursor]),
        "clang_EvalResult_getKind": (c_int, [c_void_p]),
        "clang_EvalResult_getAsLongLong": (c_longlong, [c_void_p]),
        "clang_EvalResult_isUnsignedInt": (c_uint, [c_void_p]),
        "clang_EvalResult_getAsUnsigned": (c_ulonglong, [c_void_p]),
        "clang_EvalResult_getAsStr": (c_char_p, [c_void_p]),
        "clang_EvalResult_dispose": (None, [c_void_p]),
    }
    for fname, (restype, argtypes) in signatures.items():
        fn = getattr(lib, fname)
        fn.restype, fn.argtypes = restype, argtypes
    return lib


_EVAL_INT = 1
_EVAL_STRING_KINDS = {3, 4, 5, 6}


def _evaluate(lib, cursor: ci.Cursor) -> int | str | None:
    """clang's own constant evaluation of a variable's initializer."""
    result = lib.clang_Cursor_Evaluate(cursor)
    if not result:
        return None
    try:
        kind = lib.clang_EvalResult_getKind(result)
        if kind == _EVAL_INT:
            if lib.clang_EvalResult_isUnsignedInt(result):
                return lib.clang_EvalResult_getAsUnsigned(result)
            return lib.clang_EvalResult_getAsLongLong(result)
        if kind in _EVAL_STRING_KINDS:
            return lib.clang_EvalResult_getAsStr(result).decode()
        return None
    finally:
        lib.clang_EvalResult_dispose(result)


def _macro_candidates(walker: _Walker) -> list[tuple[str, str]]:
    """Object-like, public macros with a body, in header order: (name, header)."""
    seen: dict[str, str] = {}
    for c in walker.macro_cursors:
        name = c.spelling
        if name.startswith("_") or ci.conf.lib.clang_Cursor_isMacroFunctionLike(c):
            continue
        tokens = list(c.get_tokens())
        if len(tokens) < 2:
            continue
        seen.setdefault(name, walker.header_of(c))
    return list(seen.items())


_PROBE_PREAMBLE = "#define __cudart_str(x) #x\n#define __cudart_xstr(x) __cudart_str(x)\n"
_PROBE_FIRST_LINE = _PROBE_PREAMBLE.count("\n") + 1


def _probe_tu(
    index, inp: ParseInput, body: str, defines: tuple[str, ...] = ()
) -> tuple[ci.TranslationUnit, str]:
    umbrella, includes = inp.umbrella
    probe_name = str(Path(umbrella).parent / "__cudart_probe__.c")
    source = f"{includes}{_PROBE_PREAMBLE}{body}"
    return (
        index.parse(
            probe_name,
            args=clang_args(inp) + ["-ferror-limit=0"] + [f"-D{d}" for d in defines],
            unsaved_files=[(probe_name, source)],
            options=ci.TranslationUnit.PARSE_SKIP_FUNCTION_BODIES,
        ),
        probe_name,
    )


# A probe declaration's cursor and the value clang evaluates its initializer to.
_Probed = tuple[ci.Cursor, int | str | None]


def _probe_values(
    index, inp, lines: dict[str, str], defines: tuple[str, ...] = ()
) -> dict[str, _Probed]:
    """Evaluate one C declaration per name, with the headers seen under `defines`;
    names whose line does not compile are dropped."""
    names = list(lines)
    for _ in range(2):
        body = "".join(lines[n] + "\n" for n in names)
        tu, probe_name = _probe_tu(index, inp, body, defines)
        first_line = len(inp.headers) + _PROBE_FIRST_LINE
        failing = {
            d.location.line - first_line
            for d in tu.diagnostics
            if d.severity >= ci.Diagnostic.Error
            and d.location.file
            and d.location.file.name == probe_name
        }
        others = [
            d
            for d in tu.diagnostics
            if d.severity >= ci.Diagnostic.Error
            and not (d.location.file and d.location.file.name == probe_name)
        ]
        if others:
            _raise_on_diagnostics(tu, "evaluating macros")
        if not failing:
            lib = _evaluator()
            values: dict[str, _Probed] = {}
            for c in tu.cursor.get_children():
                if c.kind == ci.CursorKind.VAR_DECL and c.spelling.startswith(_PROBE_PREFIX):
                    values[c.spelling[len(_PROBE_PREFIX) :]] = (c, _evaluate(lib, c))
            return values
        names = [n for i, n in enumerate(names) if i not in failing]
    raise ParseError("macro probe still fails after dropping the macros that do not compile")


def _evaluate_macros(
    index, inp: ParseInput, walker: _Walker
) -> tuple[list[Macro], list[SymbolAlias]]:
    candidates = _macro_candidates(walker)
    headers = dict(candidates)
    function_names = {f.name for f in walker.functions}
    expansions = _probe_values(
        index,
        inp,
        {n: f"static const char {_PROBE_PREFIX}{n}[] = __cudart_xstr({n});" for n, _ in candidates},
    )
    aliases: list[SymbolAlias] = []
    alias_names: set[str] = set()
    for name, _ in candidates:
        expanded = expansions.get(name, (None, None))[1]
        if isinstance(expanded, str) and expanded in function_names and expanded != name:
            aliases.append(SymbolAlias(public=name, symbol=expanded))
            alias_names.add(name)
    type_refs: dict[str, CType] = {e.name: EnumRef(e.name) for e in walker.enums if e.name}
    type_refs |= {r.name: RecordRef(r.name) for r in walker.records}
    type_refs |= {t.name: TypedefRef(t.name) for t in walker.typedefs}
    type_aliases: list[Typedef] = []
    for name, header in candidates:
        expanded = expansions.get(name, (None, None))[1]
        if (
            name not in alias_names
            and isinstance(expanded, str)
            and expanded in type_refs
            and expanded != name
        ):
            type_aliases.append(Typedef(name, type_refs[expanded], header=header, from_macro=True))
            alias_names.add(name)
    walker.typedefs.extend(type_aliases)
    value_names = [n for n, _ in candidates if n not in alias_names and n not in function_names]
    typed = _probe_values(
        index,
        inp,
        {n: f"static const __auto_type {_PROBE_PREFIX}{n} = ({n});" for n in value_names},
    )
    pointer_names = [
        n for n, (c, _) in typed.items() if c.type.get_canonical().kind == ci.TypeKind.POINTER
    ]
    as_integer = (
        _probe_values(
            index,
            inp,
            {
                n: f"static const unsigned long long {_PROBE_PREFIX}{n}"
                f" = (unsigned long long)({n});"
                for n in pointer_names
            },
        )
        if pointer_names
        else {}
    )
    macros: list[Macro] = []
    for name in value_names:
        if name not in typed:
            continue
        cursor, value = typed[name]
        kind = cursor.type.get_canonical().kind
        if kind in _INTEGER_KINDS and isinstance(value, int):
            macros.append(Macro(name, value, "int", headers[name]))
        elif name in as_integer and isinstance(address := as_integer[name][1], int):
            macros.append(Macro(name, address, "pointer", headers[name]))
    return macros, aliases


# The define that makes C code use the per-thread default stream (nvcc's
# --default-stream per-thread sets it): cuda_runtime_api.h then maps 59 to 73 public
# names, by version, to _ptds / _ptsz symbols through __CUDART_API_PTDS / __CUDART_API_PTSZ.
PER_THREAD_DEFINE = "CUDA_API_PER_THREAD_DEFAULT_STREAM"


def _per_thread_symbols(
    index,
    inp: ParseInput,
    functions: list[Function],
    aliases: list[SymbolAlias],
    forwarders: list[SymbolAlias],
) -> list[SymbolAlias]:
    """Public name -> symbol under PER_THREAD_DEFINE, where it differs from the legacy
    symbol, sorted by name.

    Read the way the legacy renames are: a second probe, with the define, stringifies
    every public name, so the preprocessor (not a list of ours) says what C calls.
    """
    # An inline wrapper is no macro: its name stringifies to itself, and C calls what it
    # forwards to under either setting.
    forwarded = {a.public: a.symbol for a in forwarders}
    legacy = {f.name: f.name for f in functions} | {a.public: a.symbol for a in aliases}
    legacy |= forwarded
    expansions = _probe_values(
        index,
        inp,
        {n: f"static const char {_PROBE_PREFIX}{n}[] = __cudart_xstr({n});" for n in legacy},
        defines=(PER_THREAD_DEFINE,),
    )
    found: list[SymbolAlias] = []
    for name in sorted(legacy):
        expanded = expansions.get(name, (None, None))[1]
        if not (isinstance(expanded, str) and expanded.isidentifier()):
            # Stringifying a name always compiles; anything else would be a silent
            # legacy binding under the per-thread switch.
            raise ParseError(
                f"{name} does not expand to a symbol under -D{PER_THREAD_DEFINE}: {expanded!r}"
            )
        expanded = forwarded.get(expanded, expanded)
        if expanded != legacy[name]:
            found.append(SymbolAlias(public=name, symbol=expanded))
    return found


def parse_version(headers: HeaderSet) -> ApiModel:
    """A version's header set, parsed, uncached (generator/model_cache.py keeps its
    results): with the shims first on the system include path, as gcc sees them."""
    return parse(
        ParseInput(
            headers=headers.headers,
            include_dirs=headers.include_dirs,
            system_include_dirs=(SHIMS, *system_include_dirs()),
            own_dirs=headers.own_dirs,
            foreign_dirs=(SHIMS,),
        )
    )
