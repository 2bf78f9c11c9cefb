"""model -> Python source, through the jinja2 templates in templates/, formatted by black
(generator/formatting.py).

Two views, one module each: render_raw.py (sys_<version>.py, the ctypes layer) and
render_checked.py (checked_<version>.py). This module holds what both share: the
jinja2 environment, the render context and the module names. Rendering never sees
libclang: everything it knows comes from the model. Output is a pure function of
(model, sources): no timestamps, no absolute paths, no hash ordering.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import jinja2

from cudart._contract import FLAG_DEPRECATED

from .model import ApiModel

__all__ = [
    "FLAG_DEPRECATED",
    "RenderContext",
    "checked_module_name",
    "module_name",
    "render_checked",
    "render_module",
    "render_template",
]

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"


@dataclass(frozen=True)
class RenderContext:
    version_key: str  # "12.5"
    sources: tuple[str, ...]  # "nvidia-cuda-runtime-cu12==12.5.82", ...
    # The header family (manifest surface) rendered: its name picks the module names
    # (module_name); `api` and `library` are what the module's docs call it.
    surface: str = "runtime"
    api: str = "runtime"
    library: str = "libcudart"


# The runtime surface's modules keep their first names; another surface's are named by
# it: nvrtc_12050 (raw) and nvrtc_checked_12050.
RUNTIME_SURFACE = "runtime"


def module_name(cuda_version: int, surface: str = RUNTIME_SURFACE) -> str:
    return f"sys_{cuda_version}" if surface == RUNTIME_SURFACE else f"{surface}_{cuda_version}"


def checked_module_name(cuda_version: int, surface: str = RUNTIME_SURFACE) -> str:
    if surface == RUNTIME_SURFACE:
        return f"checked_{cuda_version}"
    return f"{surface}_checked_{cuda_version}"


def render_module(model: ApiModel, context: RenderContext) -> str:
    """The raw module (render_raw.py)."""
    from .render_raw import render_module

    return render_module(model, context)


def render_checked(model: ApiModel, context: RenderContext, plans=None) -> str:
    """The checked module (render_checked.py); `plans` defaults to resolve(model)."""
    from .render_checked import render_checked

    return render_checked(model, context, plans)


def render_template(name: str, **values: object) -> str:
    """A template of templates/ that needs no model (the version-set files)."""
    return environment().get_template(name).render(**values)


def environment() -> jinja2.Environment:
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
