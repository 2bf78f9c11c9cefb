"""fetch -> parse -> render for each CUDA version, and writing whole trees safely.

Versions are independent, so render_all makes them in parallel worker processes and
puts the results together in manifest order: the bytes never depend on the number of
workers or on which finished first.
"""

from __future__ import annotations

import dataclasses
import errno
import multiprocessing
import os
import re
import shutil
import signal
import tempfile
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .attributes import undecided as undecided_attributes
from .fetch import HeaderSet, Progress, fetch_version, print_to_stderr
from .files import folder_mode, process_alive, write_atomically
from .lifetimes import undecided as undecided_lifetimes
from .manifest import DEFAULT_SURFACE, Manifest
from .model import ApiModel
from .parse import SHIMS, ParseInput, parse, system_include_dirs
from .render import (
    RenderContext,
    checked_module_name,
    module_name,
    render_checked,
    render_module,
    render_template,
)
from .render_fast import fast_module_name, render_fast
from .resolve import describe, doc_name_mismatches, resolve, table_uses
from .workers import die_with_parent

REPO = Path(__file__).resolve().parent.parent
GENERATED = REPO / "generated"
PACKAGE = REPO / "cudart"
SNAPSHOTS = REPO / "tests" / "snapshots"
# The type checkers' view of `cudart`: the newest version's modules (cudart/__init__.pyi
# star-imports it), rewritten whenever the version set changes.
LATEST_STUB = "_latest.pyi"
# generated/ is the generator's output folder; the package reaches each module through a
# link in cudart/, so a module has one import name (cudart.sys_12050). This file keeps
# the folder from importing as a package of its own (a second name for every module).
FOLDER_GUARD = "__init__.py"
# What cudart/ links: the modules, their stubs, and the compiled backend's C sources
# (built from cudart/, beside cudart/_fastcall.h, by setup.py).
LINKED_SUFFIXES = (".py", ".pyi", ".c")
JOBS_ENV = "CUDART_BINDGEN_JOBS"


@dataclass(frozen=True)
class RenderedVersion:
    key: str
    files: dict[str, str]  # file name in generated/ -> source
    snapshot: str  # one reviewable line per function (tests/snapshots/outputs_<key>.txt)
    log: tuple[str, ...] = ()  # progress lines of a worker, replayed by the parent


def parse_version(headers: HeaderSet) -> ApiModel:
    return parse(
        ParseInput(
            headers=headers.headers,
            include_dirs=headers.include_dirs,
            system_include_dirs=(SHIMS, *system_include_dirs()),
            foreign_dirs=(SHIMS,),
        )
    )


def render_version(
    manifest: Manifest, key: str, progress: Progress = print_to_stderr
) -> RenderedVersion:
    """The raw and checked modules of every surface of one version of the manifest
    (sys_<ver>.py and checked_<ver>.py for the runtime, <surface>_<ver>.py and
    <surface>_checked_<ver>.py for another header family) and the runtime's
    output-shape snapshot (tests/test_checked.py holds it)."""
    pin = manifest.get(key)
    family = manifest.families[pin.family]
    files: dict[str, str] = {}
    snapshot = ""
    for surface in family.surfaces:
        rendered_files, lines = _render_surface(manifest, key, surface, progress)
        files.update(rendered_files)
        if surface == DEFAULT_SURFACE:
            snapshot = lines
    return RenderedVersion(key=key, files=files, snapshot=snapshot)


def _render_surface(
    manifest: Manifest, key: str, surface: str, progress: Progress
) -> tuple[dict[str, str], str]:
    pin = manifest.get(key)
    family = manifest.families[pin.family]
    headers = fetch_version(manifest, key, progress, surface)
    tag = key if surface == DEFAULT_SURFACE else f"{key} {surface}"
    progress(f"[{tag}] parsing {', '.join(h.name for h in headers.headers)}")
    model = parse_version(headers)
    if surface == DEFAULT_SURFACE:
        if model.cuda_version != pin.number:
            raise ValueError(
                f"the {key} headers define CUDART_VERSION {model.cuda_version}, not {pin.number}"
            )
    else:
        # Another header family (nvrtc.h) defines no version macro: it is the CUDA
        # version its wheel was pinned for.
        model = dataclasses.replace(model, cuda_version=pin.number)
    progress(
        f"[{tag}] rendering: {len(model.functions)} functions, {len(model.enums)} enums, "
        f"{len(model.records)} records, {len(model.macros)} macros"
    )
    roles = {w.role for w in family.surface_wheels(surface)}
    library = PurePosixPath(family.library_wheel(surface).library or "").name
    context = RenderContext(
        version_key=key,
        sources=tuple(
            f"{w.package}=={w.version} ({role} wheel)"
            for role, w in pin.wheels.items()
            if role in roles
        ),
        surface=surface,
        api="runtime" if surface == DEFAULT_SURFACE else surface.upper(),
        library=library.split(".so")[0],
    )
    plans = resolve(model)
    # What the exceptions table decided rather than the header's docs, every time.
    for line in table_uses(plans):
        progress(f"[{tag}] from the exceptions table: {line}")
    for name, why in model.unbound_inline:
        progress(f"[{tag}] not bound, an inline body no construct expresses: {name}: {why}")
    for line in doc_name_mismatches(model):
        progress(f"[{tag}] doc names {line}")
    for line in undecided_attributes(model):
        progress(f"[{tag}] no attribute value type (add it to generator/attributes.py): {line}")
    for name in undecided_lifetimes({f.name for f in model.functions}):
        progress(f"[{tag}] destroy-like, undecided (generator/lifetimes.py NOT_MARKED): {name}")
    files = {
        module_name(pin.number, surface) + ".py": render_module(model, context),
        checked_module_name(pin.number, surface) + ".py": render_checked(model, context, plans),
    }
    if surface == DEFAULT_SURFACE:
        # The compiled backend of the raw module (generator/render_fast.py).
        surface_headers = tuple(name for name, _ in model.header_hashes)
        files[fast_module_name(pin.number) + ".c"] = render_fast(
            model, context, surface_headers, plans
        )
    return files, "".join(describe(plan) + "\n" for plan in plans)


def _render_in_worker(manifest: Manifest, key: str) -> RenderedVersion:
    log: list[str] = []
    rendered = render_version(manifest, key, log.append)
    return RenderedVersion(rendered.key, rendered.files, rendered.snapshot, tuple(log))


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
            progress(f"[{n}/{len(keys)}] CUDA {key}")
            out[key] = render_version(manifest, key, progress)
        return out
    # Headers are fetched here first, once: workers then only read the cache, and a
    # download or checksum failure is reported before any work starts.
    for key in keys:
        for surface in manifest.families[manifest.get(key).family].surfaces:
            fetch_version(manifest, key, lambda _message: None, surface)
    progress(f"rendering {len(keys)} versions in {jobs} processes")
    context = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
    pool = ProcessPoolExecutor(
        max_workers=jobs,
        mp_context=context,
        initializer=die_with_parent,
        initargs=(os.getpid(),),
    )
    with pool:
        futures = {key: pool.submit(_render_in_worker, manifest, key) for key in keys}
        out = {}
        for n, key in enumerate(keys, 1):
            rendered = futures[key].result()
            progress(f"[{n}/{len(keys)}] CUDA {key}")
            for line in rendered.log:
                progress(line)
            out[key] = rendered
    return out


def package_files(manifest: Manifest) -> dict[str, str]:
    """Files of generated/ that depend on the whole version set, not on one version."""
    numbers = [manifest.get(key).number for key in manifest.keys()]
    if not numbers:
        return {}
    newest = max(numbers)
    return {
        FOLDER_GUARD: render_template("generated_init.py.j2"),
        LATEST_STUB: render_template(
            "latest_stub.pyi.j2",
            raw=module_name(newest),
            checked=checked_module_name(newest),
            versions=sorted(numbers),
        ),
    }


def tree_files(rendered: dict[str, RenderedVersion], manifest: Manifest) -> dict[str, str]:
    """The whole of generated/ for the manifest: every version's modules plus the
    version-set files."""
    files: dict[str, str] = {}
    for version in rendered.values():
        files.update(version.files)
    files.update(package_files(manifest))
    return files


def write_tree(files: dict[str, str], target: Path = GENERATED, replace_all: bool = False) -> None:
    """Write the files into `target` so that it is never seen half-written.

    With replace_all, the whole folder is built in an ignored place beside it
    (build/cudart-bindgen/, see staging_root) and exchanged with the old one in one
    step, so modules of versions no longer in the manifest go away and `target` is at
    every instant the whole old tree or the whole new one, even if the process is
    killed. Otherwise each file is written to a temporary name and renamed over its old
    self. Either way, what a killed earlier run left in the staging place is removed.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    clean_leftovers(target)
    if not replace_all:
        target.mkdir(exist_ok=True)
        for name, text in files.items():
            write_atomically(target / name, text)
        return
    staging = _new_staging(target)
    try:
        for name, text in files.items():
            (staging / name).write_text(text, encoding="utf-8", newline="")
            _test_checkpoint()
        os.chmod(staging, folder_mode())  # mkdtemp's 0700, made an ordinary folder's
        _test_checkpoint()
        if not target.exists():
            os.rename(staging, target)
        elif _exchange(staging, target):
            _test_checkpoint()  # staging now holds the old tree
        else:
            # No atomic exchange here (not Linux, a file system without it, or build/ on
            # another one): each file is replaced whole, then the files of dropped
            # versions are removed. `target` is always there and every file in it
            # whole, but until the last rename it mixes old and new files.
            for name, text in files.items():
                write_atomically(target / name, text)
                _test_checkpoint()
            for path in target.iterdir():
                if path.suffix in (".py", ".pyi") and path.name not in files:
                    path.unlink()
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        _drop_empty_staging_root(target)


def staging_root(target: Path) -> Path:
    """Where `write_tree` builds a new `target` tree: build/cudart-bindgen/ beside it, on
    the same file system (an exchange cannot cross one) and ignored by git."""
    return target.parent / "build" / "cudart-bindgen"


_STAGING_NAME = re.compile(r"^(?P<name>.+)\.(?P<pid>\d+)\.[A-Za-z0-9_]+$")
# What `generate --all` left beside generated/ before it staged under build/: the new
# tree (mkdtemp's ".generated-XXXXXXXX") and the old one ("...-old"), when killed.
_LEGACY_NAME = re.compile(r"^\.(?P<name>.+)-[a-z0-9_]{8}(?:-old)?$")


def _new_staging(target: Path) -> Path:
    root = staging_root(target)
    for attempt in range(3):
        root.mkdir(parents=True, exist_ok=True)
        try:
            return Path(tempfile.mkdtemp(prefix=f"{target.name}.{os.getpid()}.", dir=root))
        except FileNotFoundError:
            # A concurrent run removed the empty root between the two calls.
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def clean_leftovers(target: Path) -> None:
    """Remove the staging trees of killed runs for `target`: those of processes that are
    no longer alive (a running one's stays), and the old layout's folders beside it."""
    root = staging_root(target)
    if root.is_dir():
        for path in root.iterdir():
            m = _STAGING_NAME.match(path.name)
            if m and m["name"] == target.name and not process_alive(int(m["pid"])):
                shutil.rmtree(path, ignore_errors=True)
        _drop_empty_staging_root(target)
    for path in target.parent.glob(f".{target.name}-*"):
        m = _LEGACY_NAME.match(path.name)
        if m and m["name"] == target.name and path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)


def _drop_empty_staging_root(target: Path) -> None:
    """Remove build/cudart-bindgen/ and build/ when nothing is left in them."""
    root = staging_root(target)
    for folder in (root, root.parent):
        try:
            folder.rmdir()
        except OSError:
            return


_RENAME_EXCHANGE = 2  # linux/fs.h
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap the folders `a` and `b` in one step (Linux renameat2 RENAME_EXCHANGE), so
    that no instant sees either path missing. False where the system cannot."""
    import ctypes

    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    renameat2.argtypes = [
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_uint,
    ]
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EXDEV, errno.EOPNOTSUPP, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(b))


# Test hook, for the kill test only (tests/test_generate_kill.py): the N-th step of
# write_tree (one per file, then each rename) kills the process with SIGKILL, the way a
# kill -9 or a power cut would stop it there.
KILL_AT_ENV = "CUDART_BINDGEN_TEST_KILL_AT"
_checkpoints = 0


def _test_checkpoint() -> None:
    global _checkpoints
    wanted = os.environ.get(KILL_AT_ENV)
    if not wanted:
        return
    _checkpoints += 1
    if str(_checkpoints) == wanted:
        os.kill(os.getpid(), signal.SIGKILL)


def write_snapshot(rendered: RenderedVersion, folder: Path = SNAPSHOTS) -> tuple[Path, str | None]:
    """Write a version's output-shape snapshot; returns its path and the text it
    replaced (None for a new file), so the caller can show what changed."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"outputs_{rendered.key}.txt"
    old = path.read_text() if path.is_file() else None
    if old != rendered.snapshot:
        write_atomically(path, rendered.snapshot)
    return path, old


def link_package(target: Path = GENERATED, package: Path = PACKAGE) -> None:
    """Point cudart/<name> at generated/<name> for every module and stub generated/ now
    holds, and remove links to generated files that are gone. Only the repository's own
    generated/ is linked: an --output elsewhere is a scratch tree."""
    if target.resolve() != GENERATED.resolve():
        return
    names = [p.name for p in target.iterdir() if p.suffix in LINKED_SUFFIXES]
    missing, stale = _link_changes(names, target, package)
    for path in stale:
        path.unlink()
    for name, text in missing.items():
        tmp = package / f".{name}.link"
        tmp.unlink(missing_ok=True)
        os.symlink(text, tmp)
        os.replace(tmp, package / name)


def compare_links(names: list[str], target: Path = GENERATED, package: Path = PACKAGE) -> list[str]:
    """What link_package would change, as problems (empty when cudart/ is as it should be)."""
    if target.resolve() != GENERATED.resolve():
        return []
    missing, stale = _link_changes(names, target, package)
    problems = [f"{package.name}/{name}: not a link to {text}" for name, text in missing.items()]
    problems += [
        f"{package.name}/{path.name}: links to a file the generator no longer makes"
        for path in stale
    ]
    return problems


def _link_changes(
    names: list[str], target: Path, package: Path
) -> tuple[dict[str, str], list[Path]]:
    """(name -> link text of each link in `package` that is missing or points elsewhere,
    links in `package` into `target` for files not in `names`), both sorted."""
    wanted = {
        name: _link_text(name, target, package) for name in sorted(names) if name != FOLDER_GUARD
    }
    missing = {
        name: text
        for name, text in wanted.items()
        if not (package / name).is_symlink() or os.readlink(package / name) != text
    }
    stale = [
        path
        for path in sorted(package.iterdir())
        if path.is_symlink() and path.name not in wanted and _points_into(path, target)
    ]
    return missing, stale


def _link_text(name: str, target: Path, package: Path) -> str:
    return os.path.relpath(target / name, package)


def _points_into(link: Path, target: Path) -> bool:
    return Path(os.path.normpath(link.parent / os.readlink(link))).parent == target


def compare_tree(files: dict[str, str], target: Path = GENERATED) -> list[str]:
    """Names of files in `target` that differ from `files`: stale, missing or extra."""
    problems = []
    existing = set()
    if target.is_dir():
        existing = {p.name for pattern in ("*.py", "*.pyi") for p in target.glob(pattern)}
    for name in sorted(files):
        path = target / name
        if not path.is_file():
            problems.append(f"{name}: missing")
        elif path.read_text() != files[name]:
            problems.append(f"{name}: stale (differs from what the generator makes)")
    for name in sorted(existing - set(files)):
        problems.append(f"{name}: not made by the generator from the manifest")
    return problems
