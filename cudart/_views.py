"""The per-version modules (cudart.sys_12050, cudart.driver_checked_13000, ...) as views
of one merged module per header family, layer and CUDA major (cudart/_generated/_sys_12.py).

generator/merge.py writes each merged module so that executing it with `_VERSION` set to
one of its versions runs exactly that minor's module; the module computes `_VERSION`
itself from its own name (`view_version`). The finder here answers `import
cudart.sys_12050` with a module made from `_sys_12.py`, compiled once (its bytecode
cached as any module's is) and executed once per version imported. Which views exist is
the generated table `cudart._versions` (VIEWS); this module is the one place that knows
how a view's name maps to its merged file, and the generator names its files by it.

The compiled backend is merged the same way (one extension per header family and CUDA
major, cudart/_generated/_fast_12.c, generator/render/compiled.py): `import cudart._fast_12050` is
answered by the extension cudart._fast_12, whose view(12050) makes (once) the module of
exactly that minor's functions.

Standard library only, and only what `import cudart` already pays for.
"""

from __future__ import annotations

import os
import sys
from importlib.machinery import ModuleSpec, SourceFileLoader

from ._contract import CUDA_SCALE

_PACKAGE = __name__.rpartition(".")[0]
# Where the merged modules are, in the package: generated/ itself (a link to it in a
# checkout, the folder in the wheel; generator/tree.py makes the link).
GENERATED_FOLDER = "_generated"
_FOLDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), GENERATED_FOLDER)


def split_name(name: str) -> tuple[str, int] | None:
    """("driver_checked", 12050) for "driver_checked_12050", ("toyown", 1030) for
    "toyown_1030" (an own-axis family's numbers need not have CUDA's five digits); None
    for another name. String methods, not re: `import cudart` would pay milliseconds to
    import re."""
    layer, _, digits = name.rpartition("_")
    if not layer or not digits.isascii() or not digits.isdigit() or digits[0] == "0":
        return None
    return layer, int(digits)


def merged_name(layer: str, version: int, major_scale: int | None = None) -> str:
    """The merged module that holds the view `<layer>_<version>`, one per major of the
    layer's family: _sys_12 for sys_12050, _toyown_1 for toyown_10300 (its family's
    major_scale, 10000: the table's where not given)."""
    if major_scale is None:
        views()
        major_scale = _major_scales.get(layer, CUDA_SCALE[0])
    return f"_{layer}_{version // major_scale}"


_table: dict[str, tuple[int, ...]] | None = None
_compiled: dict[str, str] = {}
# Layer -> its family's major_scale (cudart._versions FAMILIES' `scale`).
_major_scales: dict[str, int] = {}


def views() -> dict[str, tuple[int, ...]]:
    """cudart._versions' table, read on first use; empty where the generator has not
    written it yet (a checkout being generated for the first time)."""
    global _table
    if _table is None:
        try:
            from ._versions import FAMILIES, VIEWS
        except ImportError:
            return {}
        _compiled.update(
            {str(row["compiled"]): str(row["raw"]) for row in FAMILIES.values() if row["compiled"]}
        )
        for row in FAMILIES.values():
            scale = row["scale"]
            assert isinstance(scale, tuple), row  # the table's (major_scale, minor_scale)
            _major_scales[str(row["raw"])] = _major_scales[str(row["checked"])] = scale[0]
        _table = VIEWS
    return _table


def compiled_layers() -> dict[str, str]:
    """The compiled backend's view prefixes (cudart._fast_12050, cudart._fast_driver_13000:
    the family table's `compiled`) and the layer whose versions they are views of."""
    views()
    return _compiled


def versions(layer: str) -> list[int]:
    """The versions a layer has views of, ascending (cudart._versions)."""
    return list(views().get(layer, ()))


def is_view(layer: str, version: int) -> bool:
    return version in views().get(layer, ())


def view_version(module_name: str, held: tuple[int, ...]) -> int:
    """A merged module's `_VERSION`: the version in the name it is imported under, one
    of the versions `held` in the file."""
    split = split_name(module_name.rpartition(".")[2])
    if split is None or split[1] not in held:
        raise ImportError(
            f"{module_name}: a merged module runs as one of its versions' views "
            f"(cudart.<layer>_<version>, <version> one of {held}), not under this name"
        )
    return split[1]


def compiled_extension(layer: str, version: int) -> str:
    """The extension holding the compiled view `<layer>_<version>`: _fast_12 for _fast_12050."""
    return f"{layer}_{version // 1000}"


class CompiledViewLoader:
    """Makes cudart._fast_<ver> as its extension's view(<ver>): the module is the
    extension's own, made once, whatever imports it."""

    def __init__(self, extension: str, version: int) -> None:
        self.extension = extension
        self.version = version

    def create_module(self, spec: ModuleSpec):
        import importlib

        try:
            return importlib.import_module(self.extension).view(self.version)
        except LookupError as exc:  # a build holding other views (CUDART_VIEW)
            raise ImportError(str(exc), name=spec.name) from None

    def exec_module(self, module) -> None:
        pass


def _compiled_spec(fullname: str, layer: str, version: int) -> ModuleSpec | None:
    """The spec of a compiled view, where its extension is built (its origin is the
    extension's file: cudart._backend.refuse_foreign_build reads it)."""
    import importlib.util

    if not is_view(compiled_layers()[layer], version):
        return None
    extension = f"{_PACKAGE}.{compiled_extension(layer, version)}"
    found = importlib.util.find_spec(extension)
    if found is None:
        return None
    return ModuleSpec(fullname, CompiledViewLoader(extension, version), origin=found.origin)  # type: ignore[arg-type]


class ViewFinder:
    """Finds cudart.<layer>_<version> for every view of cudart._versions, and the
    compiled backend's views of those (cudart._fast_12050), a sys.meta_path finder;
    it answers no other name."""

    @classmethod
    def find_spec(cls, fullname: str, path=None, target=None) -> ModuleSpec | None:
        package, _, name = fullname.rpartition(".")
        if package != _PACKAGE:
            return None
        split = split_name(name)
        if split is not None and split[0] in compiled_layers():
            return _compiled_spec(fullname, *split)
        if split is None or not is_view(*split):
            return None
        source = os.path.join(_FOLDER, merged_name(*split) + ".py")
        if not os.path.exists(source):
            return None
        spec = ModuleSpec(fullname, SourceFileLoader(fullname, source), origin=source)
        spec.has_location = True  # __file__ is the merged file; its bytecode is cached
        return spec


def install() -> None:
    """Put the finder first on sys.meta_path, once: first, so that a stale per-version
    file left in the package folder by an older install never shadows a view."""
    if ViewFinder not in sys.meta_path:
        sys.meta_path.insert(0, ViewFinder)
