"""Sphinx configuration of the cudart site (`make docs`; docs/maintainers/docs.rst says
why Sphinx, and how the site is built).

The API reference (reference/) is not committed: `cudart-bindgen docs` renders it from
every version's model before Sphinx runs. The site must build offline with warnings as
errors, so nothing here fetches anything (no intersphinx) and every extension is
Sphinx's own.
"""

project = "cudart"
author = "the cudart authors"
copyright = "the cudart authors"

extensions: list[str] = []
exclude_patterns = ["_build"]
templates_path: list[str] = []

# The builtin theme: no package beyond Sphinx's own dependencies.
html_theme = "alabaster"
html_theme_options = {"nosidebar": False, "fixed_sidebar": False}
html_title = "cudart"
html_static_path: list[str] = []
# The reference's pages are generated: their .rst sources are no reading matter, and
# copying them doubles the output.
html_copy_source = False
html_show_sourcelink = False
# The Python module index would list one "module" per header family; the reference's
# own pages are the index.
html_domain_indices = False
html_use_index = True

# The reference writes a link only to what it documents (generator/render/docs.py
# Linker): nitpicky makes any such link that does not resolve an error under -W. The
# types in signatures (C's typedef names, ctypes classes, the annotations' aliases) are
# cross-references Sphinx tries too; only those are let go.
nitpicky = True
nitpick_ignore_regex = [("py:class", r".*"), ("py:exc", r".*")]

add_module_names = False
