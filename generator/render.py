"""model -> Python source, through the jinja2 templates in templates/, formatted by black.

The only module that imports jinja2 or black. It never sees libclang: everything it
knows comes from the model. Output is a pure function of (model, sources): no
timestamps, no absolute paths, no hash ordering.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import black
import jinja2

from .ctypes_map import RenderError, TypeMapper
from .model import ApiModel, EnumRef, FunctionProto, Pointer, Record, RecordRef, Typedef, TypedefRef

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
BLACK_MODE = black.Mode(target_versions={black.TargetVersion.PY311}, line_length=100)

# Bit flags of a function entry, read by cudart._binding.
FLAG_DEPRECATED = 1


@dataclass(frozen=True)
class RenderContext:
    version_key: str  # "12.5"
    sources: tuple[str, ...]  # "nvidia-cuda-runtime-cu12==12.5.82", ...


def module_name(cuda_version: int) -> str:
    return f"sys_{cuda_version}"


def render_module(model: ApiModel, context: RenderContext) -> str:
    view = _ModuleView(model, context)
    template = _environment().get_template("sys_module.py.j2")
    source = template.render(v=view)
    return black.format_str(source, mode=BLACK_MODE)


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


class _ModuleView:
    """What the template reads: names and ctypes spellings, decided here once."""

    def __init__(self, model: ApiModel, context: RenderContext) -> None:
        self.model = model
        self.context = context
        self.types = TypeMapper(model)
        self._check_unique_names()

    @property
    def cuda_version(self) -> int:
        return self.model.cuda_version

    @property
    def header_sha256(self) -> str:
        return self.model.header_sha256

    @property
    def enums(self):
        return [e for e in self.model.enums if e.enumerators]

    def enum_ctype(self, enum) -> str:
        return self.types.builtin(enum.underlying.name)

    @property
    def macros(self):
        return self.model.macros

    @property
    def records(self) -> list[Record]:
        return self.model.records

    def record_doc(self, rec: Record) -> str:
        where = f" ({rec.header})" if rec.header else ""
        if rec.opaque:
            return f"Opaque {rec.kind} {rec.name}{where}: only pointers to it exist."
        spelling = rec.c_spelling or f"anonymous {rec.kind} member of {rec.nested_in}"
        return f"{spelling}{where}: {rec.size} bytes, aligned to {rec.align}."

    def record_align(self, rec: Record) -> int | None:
        """The _align_ to emit where C aligns more than ctypes would on its own."""
        if rec.opaque:
            return None
        natural = self.types.natural_layout(rec)[1]
        return rec.align if rec.align > natural else None

    @property
    def layouts(self) -> list[tuple[Record, list]]:
        """Defined records with their _fields_, each after the records it holds by value."""
        defined = {r.name: r for r in self.model.records if not r.opaque}
        ordered: list[Record] = []
        done: set[str] = set()

        def place(rec: Record, path: tuple[str, ...]) -> None:
            if rec.name in done:
                return
            if rec.name in path:
                raise RenderError(f"records contain each other by value: {' -> '.join(path)}")
            for dep in self.types.by_value_dependencies(rec):
                place(defined[dep], path + (rec.name,))
            done.add(rec.name)
            ordered.append(rec)

        for rec in defined.values():
            place(rec, ())
        return [(rec, self.types.slots(rec)) for rec in ordered]

    def anonymous_fields(self, rec: Record) -> list[str]:
        return [f.name for f in rec.fields if f.anonymous]

    @property
    def typedefs(self) -> list[Typedef]:
        return [t for t in self.model.typedefs if not t.system]

    def typedef_kind(self, td: Typedef) -> str:
        if self.types.is_handle_typedef(td):
            return "handle"
        if self.types.is_callback_typedef(td):
            return "callback"
        return "alias"

    def typedef_value(self, td: Typedef) -> str:
        """Right-hand side of an alias: an enum's class, a record's class, or a ctypes type."""
        target = td.target
        kind = self.typedef_kind(td)
        if kind == "callback":
            assert isinstance(target, Pointer) and isinstance(target.pointee, FunctionProto)
            return self.types.callback_type(target.pointee)
        resolved = self.types.resolve(target)
        if isinstance(resolved, EnumRef) and resolved.name:
            return resolved.name
        if isinstance(target, (TypedefRef, RecordRef)):
            return target.name
        return self.types.field_type(target)

    def typedef_doc(self, td: Typedef) -> str:
        if td.from_macro:
            return f"#define {td.name} {getattr(td.target, 'name', '')}"
        return "typedef " + self.types.c_declaration(td.target, td.name)

    @property
    def functions(self) -> list[dict]:
        """Every public name callable from the module, sorted by name: declared
        functions and the macro names that C resolves to a versioned symbol."""
        by_name = {f.name: f for f in self.model.functions}
        entries = {}
        for f in self.model.functions:
            entries[f.name] = self._function_entry(f.name, f)
        for alias in self.model.aliases:
            entries[alias.public] = self._function_entry(alias.public, by_name[alias.symbol])
        return [entries[name] for name in sorted(entries)]

    def _function_entry(self, public: str, f) -> dict:
        flags = FLAG_DEPRECATED if f.deprecated else 0
        # The header's prototype, parameter names included.
        params = [self.types.c_declaration(p.type, p.name) for p in f.params]
        if f.variadic:
            params.append("...")
        prototype = self.types.c_declaration(f.result, f"{f.name}({', '.join(params) or 'void'})")
        return {
            "name": public,
            "symbol": f.name,
            "restype": self.types.result_type(f.result),
            "argtypes": [self.types.param_type(p.type) for p in f.params],
            "flags": flags,
            "prototype": prototype,
            "variadic": f.variadic,
        }

    @staticmethod
    def tuple(items: list[str], quoted: bool = False) -> str:
        """A tuple literal without a trailing comma, which black would explode."""
        parts = [f'"{i}"' if quoted else i for i in items]
        return f"({parts[0]},)" if len(parts) == 1 else f"({', '.join(parts)})"

    @property
    def deprecated_count(self) -> int:
        return sum(1 for f in self.model.functions if f.deprecated)

    def _check_unique_names(self) -> None:
        """Every module-level name must mean one thing; C's namespaces (tags, ordinary
        identifiers, macros) are flattened into one here."""
        seen: dict[str, str] = {}

        def claim(name: str, what: str) -> None:
            if name in seen and seen[name] != what:
                raise RenderError(f"'{name}' would be both {seen[name]} and {what}")
            seen[name] = what

        for e in self.model.enums:
            if e.name:
                claim(e.name, "an enum")
            for k in e.enumerators:
                claim(k.name, "an enumerator")
        for m in self.model.macros:
            claim(m.name, "a macro")
        for r in self.model.records:
            claim(r.name, "a record")
        for t in self.model.typedefs:
            if not t.system:
                claim(t.name, "a typedef")
        for f in self.model.functions:
            claim(f.name, "a function")
        for a in self.model.aliases:
            claim(a.public, "a function")
