"""fetch -> parse -> render for each CUDA version (generator/tree.py writes the trees).

Versions are independent, so render_all makes them in parallel worker processes and
puts the results together in manifest order: the bytes never depend on the number of
workers or on which finished first.
"""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from cudart._views import merged_name, split_name

from . import model_cache
from .attributes import undecided as undecided_attributes
from .context import GenerationContext, generation_context
from .families import compiled_families, families, family, runtime_table
from .fetch import HeaderSet, Progress, fetch_release, fetch_version, print_to_stderr
from .files import write_atomically
from .jit_options import undecided as undecided_options
from .lifetimes import undecided as undecided_lifetimes
from .manifest import DEFAULT_SURFACE, Manifest, split_unit, unit_label
from .model import ApiModel
from .parse import parse_version
from .render.base import (
    RenderContext,
    checked_module_name,
    module_name,
    render_template,
)
from .render.checked import render_checked
from .render.compiled import FastPieces, merge_fast, render_fast
from .render.raw import render_module
from .resolve import describe, doc_name_mismatches, table_uses
from .tree import FOLDER_GUARD, GENERATED, REPO
from .views import merged_module, read_merged
from .workers import die_with_parent

SNAPSHOTS = REPO / "tests" / "snapshots"
# The type checkers' view of `cudart`: the newest version's modules (cudart/__init__.pyi
# star-imports it), rewritten whenever the version set changes.
LATEST_STUB = "_latest.pyi"
# The table of views (cudart._views reads it as cudart._versions).
VERSIONS_TABLE = "_versions.py"
JOBS_ENV = "CUDART_BINDGEN_JOBS"


@dataclass(frozen=True)
class RenderedVersion:
    key: str  # a unit of the manifest: a CUDA key ("12.5"), or a release ("toyown 1.3")
    files: dict[str, str]  # file name in generated/ -> source
    # One reviewable line per function of the unit's home surface (the runtime's:
    # tests/snapshots/outputs_<key>.txt; an own-axis family's: <family>_outputs_<key>.txt).
    snapshot: str
    log: tuple[str, ...] = ()  # progress lines of a worker, replayed by the parent
    # The other surfaces' snapshots (nvrtc_outputs_<key>.txt), by surface.
    surface_snapshots: tuple[tuple[str, str], ...] = ()
    # The compiled backend's pieces of each surface that has one (merged per major into
    # generated/_fast_<major>.c by fast_files).
    fast: tuple[FastPieces, ...] = ()


def snapshot_name(key: str, surface: str = DEFAULT_SURFACE) -> str:
    """The file of a unit's output-shape snapshot of one surface, in SNAPSHOTS (a
    release's unit, "toyown 1.3", by its own key: toyown_outputs_1.3.txt)."""
    prefix = "" if surface == DEFAULT_SURFACE else f"{surface}_"
    return f"{prefix}outputs_{split_unit(key)[1]}.txt"


def unit_number(manifest: Manifest, unit: str) -> int:
    """The version number a unit's modules are named by: CUDA's (12050), or an own-axis
    release's by its family's numbering (toyown 1.3: 10300)."""
    name, key = split_unit(unit)
    if not name:
        return manifest.get(key).number
    found = family(name)
    if found.axis != "own":
        raise ValueError(
            f"the manifest's [releases.{name}] tables are an own-axis family's, and "
            f"{name}.toml says axis = {found.axis!r}"
        )
    return found.number(key)


def _home(unit: str) -> str:
    """The surface a unit's main snapshot is of: the runtime's, or its family's."""
    return split_unit(unit)[0] or DEFAULT_SURFACE


def _fetch(manifest: Manifest, unit: str, surface: str, progress: Progress) -> HeaderSet:
    name, key = split_unit(unit)
    if name:
        return fetch_release(manifest, name, key, progress)
    return fetch_version(manifest, key, progress, surface)


def render_version(
    manifest: Manifest, key: str, progress: Progress = print_to_stderr
) -> RenderedVersion:
    """The raw and checked modules of every surface of one unit of the manifest
    (sys_<ver>.py and checked_<ver>.py for the runtime, <surface>_<ver>.py and
    <surface>_checked_<ver>.py for another header family; an own-axis release, "toyown
    1.3", is its family's alone) and the output-shape snapshot of each surface
    (tests/generator/test_checked.py and tests/runtime/test_nvrtc.py hold them)."""
    files: dict[str, str] = {}
    snapshots: dict[str, str] = {}
    fast: list[FastPieces] = []
    for surface in manifest.unit_major(key).surfaces:
        rendered_files, snapshots[surface], pieces = _render_surface(
            manifest, key, surface, progress
        )
        files.update(rendered_files)
        if pieces is not None:
            fast.append(pieces)
    return RenderedVersion(
        key=key,
        files=files,
        snapshot=snapshots.pop(_home(key), ""),
        surface_snapshots=tuple(snapshots.items()),
        fast=tuple(fast),
    )


def _render_surface(
    manifest: Manifest, key: str, surface: str, progress: Progress
) -> tuple[dict[str, str], str, FastPieces | None]:
    number = unit_number(manifest, key)
    headers = _fetch(manifest, key, surface, progress)
    tag = key if surface == _home(key) else f"{key} {surface}"
    model = _model(headers, tag, progress)
    progress(
        f"[{tag}] rendering: {len(model.functions)} functions, {len(model.enums)} enums, "
        f"{len(model.records)} records, {len(model.macros)} macros"
    )
    generation = surface_context(manifest, key, surface, model)
    plans = list(generation.plans)
    # What the exceptions table decided rather than the header's docs, every time.
    for line in table_uses(plans):
        progress(f"[{tag}] from the exceptions table: {line}")
    for name, why in model.unbound_inline:
        progress(f"[{tag}] not bound, an inline body no construct expresses: {name}: {why}")
    for line in doc_name_mismatches(model):
        progress(f"[{tag}] doc names {line}")
    for line in undecided_attributes(model):
        progress(f"[{tag}] no attribute value type (add it to generator/attributes.py): {line}")
    for line in undecided_options(model):
        progress(f"[{tag}] no option value type (add it to generator/jit_options.py): {line}")
    for name in undecided_lifetimes({plan.function.name for plan in plans}):
        progress(f"[{tag}] destroy-like, undecided (generator/lifetimes.py NOT_MARKED): {name}")
    files = {
        module_name(number, surface) + ".py": render_module(generation),
        checked_module_name(number, surface) + ".py": render_checked(generation),
    }
    # The compiled backend of the raw module (generator/render/fast.py): this minor's
    # pieces of its major's C file.
    pieces = render_fast(generation) if surface in compiled_families() else None
    return files, "".join(describe(plan) + "\n" for plan in plans), pieces


def surface_context(
    manifest: Manifest, key: str, surface: str, model: ApiModel
) -> GenerationContext:
    """What every view of one family of one unit reads (its modules, the reference
    of generator/render/docs.py), from the family's parsed model."""
    pin = manifest.unit_pin(key)
    major = manifest.unit_major(key)
    number = unit_number(manifest, key)
    descriptor = family(surface)
    if surface == DEFAULT_SURFACE:
        if model.cuda_version != number:
            raise ValueError(
                f"the {key} headers define CUDART_VERSION {model.cuda_version}, not {number}"
            )
    else:
        # Another header family (nvrtc.h) defines no version macro: it is the CUDA
        # version its wheel was pinned for, or the own-axis release's number.
        model = dataclasses.replace(model, cuda_version=number)
    roles = {w.role for w in major.surface_wheels(surface)}
    sources = tuple(
        f"{w.package}=={w.version} ({role} wheel)"
        for role, w in pin.wheels.items()
        if role in roles
    )
    name, release = split_unit(key)
    if pin.cuda is not None:
        # An own-axis release: the CUDA headers its own include are part of its parse.
        cuda = manifest.get(pin.cuda)
        runtime = {w.role for w in manifest.majors[cuda.major].surface_wheels(DEFAULT_SURFACE)}
        sources += tuple(
            f"{w.package}=={w.version} (CUDA {pin.cuda} {role} wheel, included)"
            for role, w in cuda.wheels.items()
            if role in runtime
        )
    context = RenderContext(
        version_key=release,
        # An own-axis release is its family's API's ("the 2.21 NCCL API"), not CUDA's.
        release=release if name else unit_label(key),
        generate_args=f"--family {name} {release}" if name else release,
        sources=sources,
        surface=surface,
        api=descriptor.api,
        library=descriptor.library,
    )
    return generation_context(model, context)


def _model(headers: HeaderSet, tag: str, progress: Progress) -> ApiModel:
    """The parse of `headers`, from the model cache where an earlier run (or the test
    suite) made it (generator/model_cache.py says why that is the same)."""
    names = ", ".join(h.name for h in headers.headers)

    def announce(cached: bool) -> None:
        progress(f"[{tag}] parsing {names}" + (": the model cache has it" if cached else ""))

    return model_cache.model_for(
        headers, parse_version, announce, lambda why: progress(f"[{tag}] {why}")
    )


def _render_in_worker(manifest: Manifest, key: str) -> RenderedVersion:
    log: list[str] = []
    rendered = render_version(manifest, key, log.append)
    return dataclasses.replace(rendered, log=tuple(log))


def default_jobs() -> int:
    explicit = os.environ.get(JOBS_ENV)
    if explicit:
        try:
            jobs = int(explicit)
        except ValueError:
            raise ValueError(f"${JOBS_ENV}={explicit!r} is not a number of workers") from None
        if jobs < 1:
            raise ValueError(f"${JOBS_ENV} must be at least 1, not {jobs}")
        return jobs
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def render_all(
    manifest: Manifest,
    keys: list[str],
    progress: Progress = print_to_stderr,
    jobs: int | None = None,
) -> dict[str, RenderedVersion]:
    """Every version of `keys`, in that order, rendered by up to `jobs` processes."""
    jobs = min(jobs or default_jobs(), len(keys)) or 1
    if jobs == 1:
        out = {}
        for n, key in enumerate(keys, 1):
            progress(f"[{n}/{len(keys)}] {unit_label(key)}")
            out[key] = render_version(manifest, key, progress)
        return out
    # Headers are fetched here first, once: workers then only read the cache, and a
    # download or checksum failure is reported before any work starts.
    for key in keys:
        for surface in manifest.unit_major(key).surfaces:
            _fetch(manifest, key, surface, lambda _message: None)
    progress(f"rendering {len(keys)} versions in {jobs} processes")
    with _pool(jobs) as pool:
        futures = {key: pool.submit(_render_in_worker, manifest, key) for key in keys}
        out = {}
        for n, key in enumerate(keys, 1):
            rendered = futures[key].result()
            progress(f"[{n}/{len(keys)}] {unit_label(key)}")
            for line in rendered.log:
                progress(line)
            out[key] = rendered
    return out


def package_files(manifest: Manifest) -> dict[str, str]:
    """Files of generated/ that depend on the whole version set, not on one version:
    the package guard, the table of views (cudart._versions) and the type checkers'
    view of `cudart` (_latest.pyi)."""
    numbers = [manifest.get(key).number for key in manifest.keys()]
    if not numbers:
        return {}
    newest = max(numbers)
    return {
        FOLDER_GUARD: render_template("generated_init.py.j2"),
        VERSIONS_TABLE: render_template(
            "versions_table.py.j2",
            families={
                name: {key: _literal(value) for key, value in facts.items()}
                for name, facts in runtime_table().items()
            },
            views=view_table(manifest),
        ),
        LATEST_STUB: render_template(
            "latest_stub.pyi.j2",
            raw=module_name(newest),
            checked=checked_module_name(newest),
            versions=sorted(numbers),
        ),
    }


def _literal(value: object) -> str:
    """A family table value as Python source, in black's quotes."""
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, tuple):
        return "(" + "".join(_literal(item) + ", " for item in value).rstrip(" ") + ")"
    return repr(value)


def view_table(manifest: Manifest) -> dict[str, tuple[int, ...]]:
    """Layer ("sys", "driver_checked", "toyown", ...) -> the versions it has a view of."""
    table: dict[str, set[int]] = {}
    for key in manifest.units():
        number = unit_number(manifest, key)
        for surface in manifest.unit_major(key).surfaces:
            for name in (
                module_name(number, surface),
                checked_module_name(number, surface),
            ):
                split = split_name(name)
                assert split is not None, name
                table.setdefault(split[0], set()).add(split[1])
    return {layer: tuple(sorted(found)) for layer, found in sorted(table.items())}


def split_files(
    rendered: dict[str, RenderedVersion], newest: int
) -> tuple[dict[str, dict[int, str]], dict[str, str]]:
    """The rendered versions' files as (merged module -> {version: that version's
    module}, the files written as they are: each version's compiled C and, for the
    newest version, its runtime modules as the type checkers' stubs (_latest.pyi
    imports them: mypy cannot follow a merged module's gates))."""
    by_module: dict[str, dict[int, str]] = {}
    files: dict[str, str] = {}
    for version in rendered.values():
        for name, text in version.files.items():
            stem, _, suffix = name.partition(".")
            split = split_name(stem) if suffix == "py" else None
            if split is None:
                files[name] = text
                continue
            by_module.setdefault(merged_name(*split, _major_scales()[split[0]]), {})[
                split[1]
            ] = text
            if split[1] == newest and split[0] in (_RAW_LAYER, _CHECKED_LAYER):
                files[stem + ".pyi"] = text
    return by_module, files


def fast_files(rendered: list[RenderedVersion]) -> dict[str, str]:
    """The compiled backend's C files, one per (family, major), from the minors' pieces
    (generator/render/compiled.py)."""
    by_file: dict[str, list[FastPieces]] = {}
    for version in rendered:
        for pieces in version.fast:
            by_file.setdefault(pieces.merged + ".c", []).append(pieces)
    return {name: merge_fast(found) for name, found in sorted(by_file.items())}


def _pool(jobs: int) -> ProcessPoolExecutor:
    context = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
    return ProcessPoolExecutor(
        max_workers=jobs,
        mp_context=context,
        initializer=die_with_parent,
        initargs=(os.getpid(),),
    )


def _major_scales() -> dict[str, int]:
    """Layer -> its family's major_scale, from the descriptors (the generated table the
    runtime reads it from may be the one being replaced)."""
    return {layer: f.scale[0] for f in families() for layer in (f.raw, f.checked)}


def _axis_label(merged: str) -> str:
    """What a merged module's header calls its major's axis: "CUDA", or the own-axis
    family's provider ("toyown library")."""
    layer = merged[1:].rpartition("_")[0]
    found = next(f for f in families() if layer in (f.raw, f.checked))
    return "CUDA" if found.axis == "cuda" else found.provider


def merged_files(by_module: dict[str, dict[int, str]], jobs: int | None = None) -> dict[str, str]:
    """Each merged module's text, made by up to `jobs` processes: merging a major's
    versions (and proving the result gives each back) is as long as rendering them."""
    jobs = min(jobs or default_jobs(), len(by_module)) or 1
    if jobs == 1:
        return {
            f"{m}.py": merged_module(m, sources, _axis_label(m)) for m, sources in by_module.items()
        }
    # The largest first, so that no process is left with a driver module at the end.
    largest = sorted(by_module, key=lambda m: -sum(map(len, by_module[m].values())))
    with _pool(jobs) as pool:
        futures = {m: pool.submit(merged_module, m, by_module[m], _axis_label(m)) for m in largest}
        return {f"{m}.py": futures[m].result() for m in by_module}


_RAW_LAYER = module_name(0).rpartition("_")[0]
_CHECKED_LAYER = checked_module_name(0).rpartition("_")[0]


def newest_number(manifest: Manifest) -> int:
    return max(manifest.get(key).number for key in manifest.keys())


def tree_files(rendered: dict[str, RenderedVersion], manifest: Manifest) -> dict[str, str]:
    """The whole of generated/ for the manifest: every major's merged modules and
    compiled C, plus the version-set files."""
    by_module, files = split_files(rendered, newest_number(manifest))
    fast = fast_files(list(rendered.values()))
    return merged_files(by_module) | files | fast | package_files(manifest)


def version_files(
    manifest: Manifest, key: str, progress: Progress = print_to_stderr, target: Path = GENERATED
) -> tuple[RenderedVersion, dict[str, str]]:
    """One unit rendered (a CUDA key, or an own-axis release), and the files of
    generated/ it changes: its major's merged modules (the other versions of its track
    as `target`'s merged modules hold them, or rendered too where `target` has none),
    its major's compiled C (the major's other versions rendered too: the C is merged
    from every minor's pieces), the version-set files."""
    rendered = render_version(manifest, key, progress)
    by_module, files = split_files({key: rendered}, newest_number(manifest))
    number = unit_number(manifest, key)
    # The units of its track (CUDA's keys, or its family's releases) and their numbers.
    name = split_unit(key)[0]
    track = [k for k in manifest.units() if split_unit(k)[0] == name]
    wanted = {unit_number(manifest, k) for k in track}
    major_scale = family(_home(key)).scale[0]
    # The C of the major is merged from every minor's pieces, which no file keeps.
    missing = bool(rendered.fast)
    for merged, sources in by_module.items():
        committed = read_merged(target / f"{merged}.py")
        if committed is None:
            missing = True
            continue
        for version in committed.versions:
            if version != number and version in wanted:
                sources[version] = committed.project(version)
    major = [rendered]
    if missing:
        progress(
            f"{name or 'CUDA'} {number // major_scale}'s other versions are rendered too "
            "(its merged files)"
        )
        others = [
            k
            for k in track
            if k != key and unit_number(manifest, k) // major_scale == number // major_scale
        ]
        more_rendered = {k: render_version(manifest, k, progress) for k in others}
        major += list(more_rendered.values())
        more, _ = split_files(more_rendered, newest_number(manifest))
        for merged, sources in more.items():
            by_module[merged] = sources | by_module[merged]
    fast = fast_files(major)
    return rendered, merged_files(by_module) | files | fast | package_files(manifest)


def write_snapshot(rendered: RenderedVersion, folder: Path = SNAPSHOTS) -> tuple[Path, str | None]:
    """Write a unit's output-shape snapshots (each surface's); returns its home
    surface's path (the runtime's, an own-axis family's) and the text it replaced (None
    for a new file), so the caller can show what changed."""
    folder.mkdir(parents=True, exist_ok=True)
    for surface, text in rendered.surface_snapshots:
        _write_if_changed(folder / snapshot_name(rendered.key, surface), text)
    home = snapshot_name(rendered.key, _home(rendered.key))
    return _write_if_changed(folder / home, rendered.snapshot)


def _write_if_changed(path: Path, text: str) -> tuple[Path, str | None]:
    old = path.read_text(encoding="utf-8") if path.is_file() else None
    if old != text:
        write_atomically(path, text)
    return path, old
