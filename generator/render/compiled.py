"""The compiled backend's C module of one header family and version
(cudart/_fast_<ver>.c): the raw functions (fast.py's view) and, beside them, the
checked functions in C (fast_checked.py's, issue 23), which build on the raw ones; this
module puts the two into templates/fast_module.c.j2, so that neither imports the other's
renderer."""

from __future__ import annotations

from ..context import GenerationContext
from .base import environment
from .fast import FastView
from .fast_checked import CheckedCompiler


def render_fast(context: GenerationContext) -> str:
    raw = FastView(context)
    checked = CheckedCompiler(context, raw.functions)
    return environment().get_template("fast_module.c.j2").render(v=raw, c=checked)
