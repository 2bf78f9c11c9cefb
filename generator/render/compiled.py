"""The compiled backend's C module of one header family and CUDA major
(generated/_fast_<major>.c, issue 32): the raw functions (fast.py's view) and, beside them,
the checked functions in C (fast_checked.py's, issue 23), which build on the raw ones,
for every minor of the major.

Each minor is rendered into pieces (`render_fast`: templates/fast_module.c.j2's macros,
in a worker process), then the minors of a major are merged (`merge_fast`, in the
parent): a piece (a record typedef, an enum's membership test, a function with its
checked function) that every minor having it renders alike is written once; one that
minors render otherwise is written once per text, its C names suffixed with the first
minor of that text (fast.SUFFIX). Each is gated by the minors having that text
(`#if CUDART_V(12050) || ...`), so that compiled with -DCUDART_VIEW=<ver> the file is
exactly that minor's (the judge's build against its headers), and without, every
minor's (the users' build). What is per minor at run time is a view's (cudart_view in
cudart/_fastcall.h): the slots, the record classes, the checked references and reports,
the classes the checked functions read, a method table of exactly that minor's
functions. A record's C name holds its size and alignment (fast.FastRecord), so a
function passing a record whose layout differs between minors is two texts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..context import GenerationContext
from ..ctypes_map import RenderError
from .base import RUNTIME_SURFACE, environment, module_name
from .fast import SUFFIX, FastView, fast_merged_name, fast_module_name
from .fast_checked import CheckedCompiler


@dataclass(frozen=True)
class FastPieces:
    """One minor's share of its major's C file."""

    version: int
    key: str  # "12.5"
    surface: str
    module: str  # the view's name: _fast_12050
    raw_module: str  # sys_12050
    api: str
    library: str
    sources: tuple[str, ...]
    protocol: tuple[tuple[str, int, str], ...]
    headers: tuple[str, ...]
    records: tuple[tuple[str, str], ...]  # C name -> its typedef (and the judge's)
    members: tuple[tuple[str, str], ...]  # enum -> its membership test
    functions: tuple[tuple[str, str], ...]  # name -> its raw (and checked) function
    checked: tuple[str, ...]  # the compiled checked functions, in order
    classes: tuple[str, ...]  # the ctypes classes of the records passed by value
    handles: tuple[str, ...]
    enums: tuple[str, ...]
    not_compiled: int

    @property
    def merged(self) -> str:
        return fast_merged_name(self.version, self.surface)


def render_fast(context: GenerationContext) -> FastPieces:
    raw = FastView(context)
    checked = CheckedCompiler(context, raw.functions)
    macros: Any = environment().get_template("fast_module.c.j2").module
    by_name = {c.name: c for c in checked.functions}
    return FastPieces(
        version=raw.cuda_version,
        key=raw.context.version_key,
        surface=raw.context.surface,
        module=raw.module,
        raw_module=raw.raw_module,
        api=raw.context.api,
        library=raw.context.library,
        sources=tuple(raw.context.sources),
        protocol=tuple(raw.protocol),
        headers=raw.headers,
        records=tuple((r.name, _text(macros.record(r))) for r in raw.records),
        members=tuple(
            (name, _text(macros.member(name, members, flags)))
            for name, (members, flags) in sorted(checked.members.items())
        ),
        functions=tuple(
            (f.name, _text(macros.function(f, by_name.get(f.name)))) for f in raw.functions
        ),
        checked=tuple(c.name for c in checked.functions),
        classes=tuple(sorted({r.python_class for r in raw.records if r.argument})),
        handles=tuple(sorted(checked.handle_classes)),
        enums=tuple(sorted(checked.enum_classes)),
        not_compiled=len(checked.not_compiled),
    )


def _text(rendered: str) -> str:
    return str(rendered).strip("\n") + "\n"


@dataclass(frozen=True)
class _View:
    version: int
    key: str
    module: str
    raw_module: str
    sources: tuple[str, ...]
    functions: tuple[tuple[str, str], ...]  # (name, C suffix)
    checked: tuple[tuple[str, str], ...]
    handles: tuple[str, ...]
    enums: tuple[str, ...]
    members: tuple[tuple[str, str], ...]
    not_compiled: int


def merge_fast(pieces: list[FastPieces]) -> str:
    """The C file of one (family, major) from its minors' pieces (see the module doc)."""
    pieces = sorted(pieces, key=lambda p: p.version)
    first = pieces[0]
    if {(p.merged, p.surface, p.api, p.library, p.protocol) for p in pieces} != {
        (first.merged, first.surface, first.api, first.library, first.protocol)
    }:
        raise RenderError(f"{first.merged}: its minors disagree on what the file is")
    versions = [p.version for p in pieces]

    def gate(having: list[int]) -> str:
        if having == versions:
            return ""
        return " || ".join(f"CUDART_V({v})" for v in having)

    def gated(having: list[int], text: str) -> str:
        condition = gate(having)
        return f"#if {condition}\n{text}#endif\n" if condition else text

    def merge(kind: str, named: bool) -> tuple[list[str], dict[int, dict[str, str]]]:
        """The pieces of `kind` merged: their texts, gated, and each minor's C suffix of
        each name."""
        texts: dict[str, dict[str, list[int]]] = {}
        for p in pieces:
            for name, text in getattr(p, kind):
                texts.setdefault(name, {}).setdefault(text, []).append(p.version)
        out: list[str] = []
        suffixes: dict[int, dict[str, str]] = {v: {} for v in versions}
        for name in sorted(texts):
            variants = texts[name]
            if len(variants) > 1 and not named:
                raise RenderError(f"{first.merged}: {name} has {len(variants)} texts")
            for text, having in variants.items():
                suffix = "" if len(variants) == 1 else f"_{having[0]}"
                for v in having:
                    suffixes[v][name] = suffix
                # A macro's variant argument reads "CUDART_BOUND(name, declared,)" where
                # empty, as a view's rows do.
                text = text.replace(f", {SUFFIX})", f", {suffix})" if suffix else ",)")
                out.append(gated(having, text.replace(SUFFIX, suffix)))
        return out, suffixes

    records, _ = merge("records", named=False)
    members, member_suffix = merge("members", named=True)
    functions, function_suffix = merge("functions", named=True)
    headers: dict[str, list[int]] = {}
    for p in pieces:
        for header in p.headers:
            headers.setdefault(header, []).append(p.version)
    views = [
        _View(
            version=p.version,
            key=p.key,
            module=p.module,
            raw_module=p.raw_module,
            sources=p.sources,
            functions=tuple((n, function_suffix[p.version][n]) for n, _ in p.functions),
            checked=tuple((n, function_suffix[p.version][n]) for n in p.checked),
            handles=p.handles,
            enums=p.enums,
            members=tuple((n, member_suffix[p.version][n]) for n, _ in p.members),
            not_compiled=p.not_compiled,
        )
        for p in pieces
    ]

    def table(kind: str, row: str, entry: str) -> tuple[list[str], list[str]]:
        """The major's rows of `kind` (each (name, C suffix) some view has, once, gated
        by the views having it), as enumerators and table entries: each view lists its
        rows by enumerator, two bytes a row, where a copy per view of each entry cost
        its pointers' relocations again (issue 32: 470 KB of the driver extensions)."""
        having: dict[tuple[str, str], list[int]] = {}
        for v in views:
            for pair in getattr(v, kind):
                having.setdefault(pair, []).append(v.version)
        enumerators, entries = [], []
        for (name, suffix), vs in sorted(having.items()):
            enumerators.append(gated(vs, f"    {row}{name}{suffix},\n"))
            entries.append(gated(vs, f"    {entry}({name},{' ' + suffix if suffix else ''}),\n"))
        return enumerators, entries

    function_rows, function_table = table("functions", "cudart_row_", "CUDART_METHOD")
    checked_rows, checked_table = table("checked", "cudart_checked_row_", "CUDART_CHECKED")
    merged = {
        "function_rows": function_rows,
        "function_table": function_table,
        "checked_rows": checked_rows,
        "checked_table": checked_table,
        "module": first.merged,
        "major": first.version // 1000,
        "api": first.api,
        "library": first.library,
        "raw_layer": module_name(first.version, first.surface).rpartition("_")[0],
        "protocol": first.protocol,
        "views": views,
        "headers": [(gate(having), header) for header, having in headers.items()],
        "slots": sorted({n for p in pieces for n, _ in p.functions}),
        "classes": sorted({n for p in pieces for n in p.classes}),
        "checked": sorted({n for p in pieces for n in p.checked}),
        "handles": sorted({n for p in pieces for n in p.handles}),
        "enums": sorted({n for p in pieces for n in p.enums}),
        "records": records,
        "members": members,
        "functions": functions,
    }
    macros: Any = environment().get_template("fast_module.c.j2").module
    text = macros.module(merged)
    return str(text).rstrip("\n") + "\n"


__all__ = ["FastPieces", "fast_module_name", "merge_fast", "render_fast", "RUNTIME_SURFACE"]
