"""`cudart-bindgen docs`: the API reference's sources for the Sphinx site (`make docs`).

Every family of every version of the manifest is parsed (through `family_models`),
turned into the same GenerationContext the modules are rendered from, and rendered by
generator/render/docs.py into docs/reference/ (gitignored: it is made at build time,
like generated/ is made from the headers, but never committed). Files whose text did not
change are left alone, so Sphinx rebuilds only what changed.
"""

from __future__ import annotations

from pathlib import Path

from . import model_cache
from .fetch import Progress, fetch_version
from .files import write_atomically
from .generate import surface_context
from .manifest import Manifest
from .model import ApiModel
from .parse import parse_version
from .render.docs import FOLDER, FamilyReference, family_reference, render_reference
from .tree import REPO

DOCS = REPO / "docs"


def family_models(manifest: Manifest, surface: str, keys: list[str]) -> dict[str, ApiModel]:
    """The parsed model of one header family for each version of `keys`: the one place
    the reference gets models, from the model cache that `generate`, `check` and the
    tests share (generator/model_cache.py), parsed where it has none."""
    quiet: Progress = lambda _message: None  # noqa: E731
    return {
        key: model_cache.model_for(fetch_version(manifest, key, quiet, surface), parse_version)
        for key in keys
    }


def families(manifest: Manifest, progress: Progress) -> list[FamilyReference]:
    """Each header family of the manifest (its surfaces, in manifest order) over the
    versions that have it."""
    surfaces: dict[str, list[str]] = {}
    for key in manifest.keys():
        for surface in manifest.majors[manifest.get(key).major].surfaces:
            surfaces.setdefault(surface, []).append(key)
    out = []
    for surface, keys in surfaces.items():
        progress(f"reference: {surface}, {len(keys)} versions")
        models = family_models(manifest, surface, keys)
        contexts = {key: surface_context(manifest, key, surface, models[key]) for key in keys}
        out.append(family_reference(surface, contexts))
    return out


def write_reference(files: dict[str, str], docs: Path = DOCS) -> int:
    """Write the reference's pages below `docs`; remove pages no longer made. Returns
    how many files changed."""
    folder = docs / FOLDER
    changed = 0
    for relative, text in files.items():
        path = docs / relative
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(path, text)
            changed += 1
    wanted = {docs / relative for relative in files}
    for stale in folder.rglob("*.rst") if folder.is_dir() else ():
        if stale not in wanted:
            stale.unlink()
            changed += 1
    return changed


def build_reference(manifest: Manifest, progress: Progress, docs: Path = DOCS) -> int:
    files = render_reference(families(manifest, progress))
    changed = write_reference(files, docs)
    progress(f"reference: {len(files)} pages in {docs / FOLDER}, {changed} changed")
    return changed
