"""One version's generation context: what every view reads, built once.

`generation_context` turns the model (and the render context: version, sources,
surface) into the facts the views share: the type mapper, the status enum, the
attribute and option value types and the plans (resolve.py's, with the size relations of
sizes.py and the lifetime tables of lifetimes.py applied). The views
(generator/render/) take it whole and decide nothing of this again; none of them
runs resolve() or builds a TypeMapper of its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from .attributes import AttributeTypes
from .ctypes_map import TypeMapper
from .jit_options import OptionTypes
from .model import ApiModel
from .plan import FunctionPlan
from .render.base import RenderContext
from .resolve import replacements, resolve
from .status import StatusEnum, status_enum


@dataclass(frozen=True)
class GenerationContext:
    model: ApiModel
    render: RenderContext
    types: TypeMapper
    status: StatusEnum | None  # generator/status.py
    attributes: AttributeTypes  # generator/attributes.py
    options: OptionTypes  # generator/jit_options.py
    plans: tuple[FunctionPlan, ...]  # one per public function, sorted by name
    # (deprecated function, what its header says to use instead), by public name.
    replacements: tuple[tuple[str, str], ...]

    @property
    def cuda_version(self) -> int:
        return self.model.cuda_version


def generation_context(model: ApiModel, render: RenderContext) -> GenerationContext:
    types = TypeMapper(model)
    attributes = AttributeTypes(model, types)
    return GenerationContext(
        model=model,
        render=render,
        types=types,
        status=status_enum(model),
        attributes=attributes,
        options=OptionTypes(model, types),
        plans=tuple(resolve(model, types, attributes)),
        replacements=tuple(replacements(model, types)),
    )
