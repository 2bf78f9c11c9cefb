"""What every view shares: the jinja2 environment, the render context, the module
names and the docs helpers.

Three views, one module each, each reading one generator.context.GenerationContext:
raw.py (sys_<version>.py, the ctypes layer), checked.py (checked_<version>.py) and
fast.py (_fast_<version>.c, the compiled backend). A view imports this module and the
context, never another view. Rendering never sees libclang: everything it knows comes
from the model. Output is a pure function of (model, sources): no timestamps, no
absolute paths, no hash ordering.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import jinja2

from cudart._contract import FLAG_DEPRECATED

from ..ctypes_map import TypeMapper
from ..families import family
from ..model import Function

__all__ = [
    "FLAG_DEPRECATED",
    "RenderContext",
    "c_prototype",
    "checked_module_name",
    "function_doc",
    "module_name",
    "py_name",
    "range_name",
    "render_template",
]

TEMPLATES = Path(__file__).resolve().parent.parent.parent / "templates"


@dataclass(frozen=True)
class RenderContext:
    version_key: str  # "12.5"
    sources: tuple[str, ...]  # "nvidia-cuda-runtime-cu12==12.5.82", ...
    # The header family (manifest surface) rendered: its name picks the module names
    # (module_name); `api` and `library` are what the module's docs call it.
    surface: str = "runtime"
    api: str = "runtime"
    library: str = "libcudart"
    # What the docs call the release ("CUDA 12.5"; an own-axis family's "toyown 1.3")
    # and the arguments of `cudart-bindgen generate` that remake it ("12.5"; "--family
    # toyown 1.3"): the CUDA key's where not given.
    release: str = ""
    generate_args: str = ""

    def __post_init__(self) -> None:
        if not self.release:
            object.__setattr__(self, "release", f"CUDA {self.version_key}")
        if not self.generate_args:
            object.__setattr__(self, "generate_args", self.version_key)


# The runtime's family: its modules keep their first names (sys_12050, checked_12050).
RUNTIME_SURFACE = "runtime"
# The launch geometry record: its arguments and members take an int, a 1-3 tuple or a
# dim3-like as Function.launch does (cudart._convert.dim3).
DIM3 = "dim3"


def module_name(cuda_version: int, surface: str = RUNTIME_SURFACE) -> str:
    """The raw module of a family's version, as its descriptor names it (nvrtc_12050)."""
    return family(surface).module_name(cuda_version)


def checked_module_name(cuda_version: int, surface: str = RUNTIME_SURFACE) -> str:
    return family(surface).checked_module_name(cuda_version)


def render_template(name: str, **values: object) -> str:
    """A template of templates/ that needs no model (the version-set files)."""
    return environment().get_template(name).render(**values)


@cache
def environment() -> jinja2.Environment:
    """The templates' one environment: each template is compiled once per process, not
    once per module rendered. Shared: a view that adds filters makes its own
    (new_environment)."""
    return new_environment()


def new_environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def docstring(text: str) -> str:
    """Text safe inside a triple-quoted docstring."""
    return text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"').rstrip('"')


def first_sentence(text: str) -> str:
    """Docs grow every version's module: a parameter's first sentence says enough."""
    head, dot, rest = text.partition(". ")
    return head + "." if dot and rest else text


def tuple_literal(items: list[str]) -> str:
    """A tuple literal without a trailing comma, which black would explode."""
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"


def range_name(c_name: str) -> str:
    """The module-level name of a C type's range facts (`_range_size_t`), which the
    checked layer's argument checks and the raw layer's integer members read."""
    return "_range_" + re.sub(r"\W+", "_", c_name).strip("_")


def py_name(name: str) -> str:
    """A C parameter name as a Python one (C's `lambda` is Python's keyword)."""
    return name + "_" if keyword.iskeyword(name) else name


def function_doc(public: str, f: Function, prototype: str) -> str:
    """A raw function's __doc__ (the ctypes one and the compiled one alike): the C
    prototype and the header's docs, kept short (brief, each parameter's first
    sentence, the error codes): the table of them is read at every import."""
    lines = [prototype if public == f.name else f"{prototype}  (what C's {public} calls)"]
    doc = f.doc
    if doc and doc.brief:
        lines += ["", doc.brief.rstrip(".") + "."]
    described = [(p.name, doc.param(p.name)) for p in f.params] if doc else []
    if any(text for _, text in described):
        lines += ["", "Parameters:"]
        lines += [f"    {name}: {first_sentence(text or '')}".rstrip() for name, text in described]
    if doc and doc.returns:
        lines += ["", f"Returns: {doc.returns}"]
    if f.deprecated:
        lines += ["", "Deprecated." + (f" {doc.deprecated}" if doc and doc.deprecated else "")]
    return "\n".join(lines)


def c_prototype(types: TypeMapper, f: Function) -> str:
    """The header's prototype of `f`, parameter names included."""
    params = [types.c_declaration(p.type, p.name) for p in f.params]
    if f.variadic:
        params.append("...")
    return types.c_declaration(f.result, f"{f.name}({', '.join(params) or 'void'})")
