"""The generator's own tools, and what to say when one is missing.

The generator runs from a checkout (`make setup` installs requirements/dev.txt into
.venv); the cudart wheel ships none of it. Anyone who reaches the generator without
its tools gets one line saying how to install them, not a traceback from deep inside.
"""

from __future__ import annotations

import importlib.util

# import name -> distribution (requirements/generator.txt pins each)
TOOLS = {"clang": "libclang", "jinja2": "jinja2", "black": "black", "tomli_w": "tomli-w"}


def missing_tools() -> list[str]:
    """Distributions of the generator's tools that this Python cannot import."""
    return [dist for module, dist in TOOLS.items() if importlib.util.find_spec(module) is None]


def missing_tools_message() -> str | None:
    missing = missing_tools()
    if not missing:
        return None
    return (
        f"cudart-bindgen: error: the generator needs {', '.join(missing)}, which this Python "
        "lacks: run `make setup` in a cudart checkout, or "
        "`pip install -r requirements/generator.txt`"
    )
