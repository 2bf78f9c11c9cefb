"""model -> Python source, through the jinja2 templates in templates/, formatted by black
(generator/formatting.py).

The only module that imports jinja2. It never sees libclang: everything it
knows comes from the model. Output is a pure function of (model, sources): no
timestamps, no absolute paths, no hash ordering.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import jinja2

from .ctypes_map import RenderError, TypeMapper
from .formatting import format_python
from .model import (
    ApiModel,
    Array,
    Builtin,
    EnumRef,
    FunctionProto,
    Pointer,
    Record,
    RecordRef,
    Typedef,
    TypedefRef,
)

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"

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
    return format_python(source)


def render_template(name: str, **values: object) -> str:
    """A template of templates/ that needs no model (the version-set files)."""
    return _environment().get_template(name).render(**values)


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
        """C's alignment where no member can give it to the class (beyond 16): the
        class sets _align_ (3.13+) and the layouts call require_alignment (before)."""
        return self.types.raised_alignment(rec)

    @property
    def raises_alignment(self) -> bool:
        """Whether any record needs cudart._layout.require_alignment."""
        return any(self.types.raised_alignment(r) for r in self.model.records)

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

    @property
    def per_thread_symbols(self) -> list[tuple[str, str]]:
        """(public name, symbol) where -DCUDA_API_PER_THREAD_DEFAULT_STREAM makes C call
        another symbol than _FUNCTIONS records, sorted by name."""
        public = {f.name for f in self.model.functions} | {a.public for a in self.model.aliases}
        pairs = sorted((a.public, a.symbol) for a in self.model.per_thread_symbols)
        for name, _ in pairs:
            if name not in public:
                raise RenderError(f"per-thread symbol for '{name}', which is no public function")
        return pairs

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

    def field_annotations(self, rec: Record) -> list[tuple[str, str]]:
        """(field, Python type) for type checkers: what reading the field gives."""
        if rec.opaque:
            return []
        found = []
        for f in rec.fields:
            found.append((f.name, self._annotation(f.type)))
            if f.anonymous:  # C reads an anonymous member's fields on the parent
                inner = self.types.records[f.type.name]
                found += [a for a in self.field_annotations(inner) if not a[0].startswith("_anon")]
        return found

    def _annotation(self, t) -> str:
        if isinstance(t, TypedefRef):
            td = self.types.typedefs[t.name]
            if not td.system and self.types.is_handle_typedef(td):
                return td.name
            if self.types.is_callback_typedef(td):
                return "_CFuncPtr"
        r = self.types.resolve(t)
        if isinstance(r, Builtin):
            if r.name in ("float", "double", "long double"):
                return "float"
            if r.name == "_Bool":
                return "bool"
            if r.name == "char":
                return "bytes"
            return "int"
        if isinstance(r, EnumRef):
            return "int"
        if isinstance(r, RecordRef):
            return t.name if isinstance(t, TypedefRef) and not self.types.typedefs[t.name].system else r.name
        if isinstance(r, Array):
            element = self.types.resolve(r.element)
            if isinstance(element, Builtin) and element.name == "char":
                return "bytes"
            return f"Array[{self.types.field_type(r.element)}]"
        if isinstance(r, Pointer):
            spelled = self.types.field_type(t)
            if spelled == "c_char_p":
                return "bytes | None"
            if spelled.startswith("POINTER("):
                return f"_Pointer[{spelled[8:-1]}]"
            return "int | None"
        return "object"

    @property
    def replacements(self) -> list[tuple[str, str]]:
        from .resolve import replacements

        return replacements(self.model)

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


# ---------------------------------------------------------------- the checked layer


def checked_module_name(cuda_version: int) -> str:
    return f"checked_{cuda_version}"


def render_checked(model: ApiModel, context: RenderContext, plans=None) -> str:
    from .resolve import resolve

    view = _CheckedView(model, context, plans if plans is not None else resolve(model))
    template = _environment().get_template("checked_module.py.j2")
    return format_python(template.render(v=view))


def _tuple_literal(items: list[str]) -> str:
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"


def _first_sentence(text: str) -> str:
    """Docs grow every version's module: a parameter's first sentence says enough."""
    head, dot, rest = text.partition(". ")
    return head + "." if dot and rest else text


def _docstring(text: str) -> str:
    """Text safe inside a triple-quoted docstring."""
    return text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"').rstrip('"')


class _CheckedView:
    """What templates/checked_module.py.j2 reads: per function, its signature, the
    conversions of its inputs, the storage of its outputs, the call and the result."""

    def __init__(self, model: ApiModel, context: RenderContext, plans) -> None:
        self.model = model
        self.context = context
        self.types = TypeMapper(model)
        self.plans = plans
        self.raw_module = module_name(model.cuda_version)
        self.error_names = [
            k.name for e in model.enums if e.name == "cudaError" for k in e.enumerators
        ]
        self._imports: set[str] = set()
        self.functions = [self._function(p) for p in plans]

    @property
    def cuda_version(self) -> int:
        return self.model.cuda_version

    @property
    def imports(self) -> list[str]:
        """Names of the raw module the generated code uses at run time."""
        return sorted(self._imports)

    @property
    def error_classes(self) -> list[tuple[str, int]]:
        """(class name, code), one per distinct code, for type checkers."""
        seen: dict[int, str] = {}
        for e in self.model.enums:
            if e.name == "cudaError":
                for k in e.enumerators:
                    if k.value and k.value not in seen:
                        seen[k.value] = "Cuda" + k.name[4:]
        return [(name, code) for code, name in seen.items()]

    def _use(self, name: str) -> str:
        if not name.startswith("c_") and name not in ("None", "POINTER"):
            self._imports.add(name)
        return name

    def _function(self, plan) -> dict:
        signature = []
        converts = []
        storage = []
        call = []
        first_call = []  # for arrays filled by a second call: the call that asks the count
        arrays = []
        results = []
        result_types = []
        # The checked layer binds its own function objects: an output's argtype is
        # POINTER(storage), so the storage object itself is passed and ctypes takes its
        # address in C, which is much cheaper than byref() plus c_void_p's conversion.
        argtypes = []
        c_params = {q.name: q for q in plan.function.params}
        for p in plan.params:
            n = p.py_name
            if p.role == "in" or p.kind in ("array", "char_buffer"):
                argtypes.append(self._ctype(self.types.param_type(c_params[p.name].type)))
            else:
                storage_type = "c_void_p" if p.kind == "borrowed_array" else p.ctype
                argtypes.append(f"POINTER({self._ctype(storage_type)})")
            if p.role == "in":
                ann = p.py_type
                if p.kind in ("handle",):
                    self._use(p.ctype)
                    ann = f"{p.ctype} | _HandleLike"
                    converts.append(f"if {n}.__class__ is not {p.ctype}:\n        {n} = _c.handle({n}, {p.ctype}, {n!r})")
                elif p.kind == "pointer":
                    writable = self._writable(plan, p)
                    converts.append(f"if {n}.__class__ is not int:\n        {n} = _c.pointer({n}, {n!r}, {writable})")
                elif p.kind == "ref":
                    writable = self._writable(plan, p)
                    element = self._ctype(p.ctype)
                    converts.append(
                        f"if {n}.__class__ is not int:\n        {n} = _c.ref({n}, {element}, {n!r}, {writable})"
                    )
                elif p.kind == "string":
                    converts.append(f"if {n}.__class__ is not bytes:\n        {n} = _c.cstring({n}, {n!r})")
                elif p.kind == "struct":
                    self._use(p.ctype)
                elif p.kind == "scalar" and ann == "int" and self._enum_of(plan, p):
                    ann = f"{self._use(self._enum_of(plan, p))} | int"
                default = f" = {self._use(p.default) if p.default not in (None, 'None') and not p.default.lstrip('-').isdigit() else p.default}" if p.default is not None else ""
                signature.append(f"{n}: {ann}{default}")
                call.append(n)
                first_call.append(n)
                continue
            ctype = self._ctype(p.ctype)
            if p.role == "inout":
                signature.append(f"{n}: {p.py_type}")
                storage.append(f"{n} = {ctype}({n})")
            elif p.kind == "char_buffer":
                storage.append(f"{n} = _create_string_buffer({self._py(plan, p.partner)})")
            elif p.kind == "array":
                arrays.append(f"{n} = ({ctype} * {self._py(plan, p.partner)}.value)()")
            elif p.kind == "borrowed_array":
                storage.append(f"{n} = c_void_p()")  # the runtime's own array comes back
            else:
                storage.append(f"{n} = {ctype}()")
            if p.kind == "char_buffer":
                call.append(n)
                first_call.append(n)
            elif p.kind == "array":
                call.append(n)
                first_call.append("None")
            else:
                call.append(n)
                first_call.append(n)
            if p.role == "count":
                continue
            results.append(self._result(plan, p))
            result_types.append(self._result_type(p))
        storage = [s for s in storage if s]
        names = tuple(p.py_name for p in plan.params)
        if plan.result == "query":
            returns = "bool"
        elif plan.result in ("string", "struct", "value") and not results:
            returns = self._value_type(plan)
        elif plan.result in ("string", "struct", "value"):
            returns = f"tuple[{', '.join([self._value_type(plan)] + result_types)}]"
        elif not results:
            returns = "None"
        elif len(results) == 1:
            returns = result_types[0]
        else:
            returns = f"tuple[{', '.join(result_types)}]"
        return {
            "name": plan.name,
            "plan": plan,
            "signature": ", ".join(signature),
            "returns": returns,
            "converts": converts,
            "storage": storage,
            "arrays": arrays,
            "call": ", ".join(call),
            "restype": self._ctype(self.types.result_type(plan.function.result)),
            "argtypes": _tuple_literal(argtypes),
            "first_call": ", ".join(first_call),
            "names": names,
            "result": self._return_expression(results),
            "doc": self._doc(plan, ", ".join(signature), returns),
            "not_ready": next((k.value for e in self.model.enums if e.name == "cudaError"
                              for k in e.enumerators if k.name == "cudaErrorNotReady"), None),
        }

    def _value_type(self, plan) -> str:
        """The annotation of what the C function itself returns, when that is the result."""
        if plan.result == "string":
            return "str"
        if plan.result == "struct":
            return self._use(plan.result_ctype)
        return "float" if plan.result_ctype in ("c_float", "c_double") else "int"

    def _writable(self, plan, p) -> bool:
        c = next(q for q in plan.function.params if q.name == p.name)
        t = self.types.resolve(c.type)
        return isinstance(t, Pointer) and not t.pointee_const

    def _enum_of(self, plan, p) -> str | None:
        c = next(q for q in plan.function.params if q.name == p.name)
        t = self.types.resolve(c.type)
        if isinstance(t, EnumRef) and t.name and self.types.enums[t.name].enumerators:
            return t.name
        return None

    def _ctype(self, spelling: str) -> str:
        """A ctypes spelling with the raw module's names it uses imported."""
        for word in spelling.replace("*", " ").replace("(", " ").replace(")", " ").split():
            if word.isidentifier():
                self._use(word)
        return spelling

    @staticmethod
    def _py(plan, c_name: str) -> str:
        return next(p.py_name for p in plan.params if p.name == c_name)

    def _result(self, plan, p) -> str:
        n = p.py_name
        if p.kind == "scalar":
            return f"{n}.value"
        if p.kind == "enum":
            return f"_c.enum_value({self._use(p.py_type)}, {n}.value)"
        if p.kind in ("handle", "struct"):
            return n
        if p.kind == "address":
            return f"{n}.value or 0"
        if p.kind == "cstring":
            return f"_c.string({n}.value)"
        if p.kind == "char_buffer":
            return f"{n}.value.decode(errors='replace')"
        count = self._py(plan, p.partner)
        if p.kind == "array":
            return f"{n}[: {count}.value]"
        if p.kind == "borrowed_array":
            return f"_c.borrowed({n}.value, {p.ctype}, {count}.value)"
        raise RenderError(f"{plan.name}.{p.name}: no result for kind {p.kind}")

    def _result_type(self, p) -> str:
        if p.kind in ("handle", "struct", "enum"):
            return self._use(p.py_type)
        if p.kind in ("array", "borrowed_array"):
            for word in p.py_type.replace("[", " ").replace("]", " ").replace("|", " ").split():
                if word not in ("list", "None", "int", "float", "bool"):
                    self._use(word)
        return p.py_type

    @staticmethod
    def _return_expression(results: list[str]) -> str:
        if not results:
            return ""
        return ", ".join(results)

    def _doc(self, plan, signature: str, returns: str) -> str:
        f = plan.function
        doc = f.doc
        lines = [f"{plan.name}({signature}) -> {returns}", ""]
        if doc and doc.brief:
            lines += [doc.brief.rstrip(".") + ".", ""]
        described = [p for p in plan.inputs if p.doc]
        if described:
            lines.append("Parameters:")
            lines += [f"    {p.py_name}: {_first_sentence(p.doc)}" for p in described]
            lines.append("")
        outs = [p for p in plan.outputs if p.role != "count"]
        if plan.result == "query":
            lines += ["Returns True when the work is complete, False while cudaErrorNotReady.", ""]
        elif outs:
            lines.append("Returns:")
            lines += [f"    {p.py_name}: {_first_sentence(p.doc)}" if p.doc else f"    {p.py_name}" for p in outs]
            lines.append("")
        if plan.errors:
            lines += ["Raises CudaError subclasses for: " + ", ".join(plan.errors) + ".", ""]
        if f.deprecated:
            instead = f" Use {plan.replacement} instead." if plan.replacement else ""
            lines += [f"Deprecated.{instead}", ""]
        params = [self.types.c_declaration(p.type, p.name) for p in f.params]
        lines.append("C: " + self.types.c_declaration(f.result, f"{f.name}({', '.join(params) or 'void'})"))
        return _docstring("\n".join(lines))
