"""Writing generated/ safely, linking it into cudart/, and comparing it with what the
generator makes.

One list says which files of the output folder are the generator's (GENERATED_SUFFIXES):
the writer's fallback removes the ones no longer made, compare_tree reports them, and
link_package links them into cudart/. Anything else there (notes, caches) is left alone.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from .files import folder_mode, process_alive, remove_stale_temporaries, write_atomically

REPO = Path(__file__).resolve().parent.parent
GENERATED = REPO / "generated"
PACKAGE = REPO / "cudart"
# generated/ is the generator's output folder; the package reaches each module through a
# link in cudart/, so a module has one import name (cudart.sys_12050). This file keeps
# the folder from importing as a package of its own (a second name for every module).
FOLDER_GUARD = "__init__.py"
# What the generator writes: the modules, their stubs, and the compiled backend's C
# sources (built from cudart/, beside cudart/_fastcall.h, by setup.py).
GENERATED_SUFFIXES = (".py", ".pyi", ".c")


def _no_checkpoint() -> None:
    pass


def is_generated(path: Path) -> bool:
    """Whether a file of the output folder is of a kind the generator writes."""
    return path.suffix in GENERATED_SUFFIXES


def write_tree(
    files: dict[str, str],
    target: Path = GENERATED,
    replace_all: bool = False,
    checkpoint: Callable[[], None] = _no_checkpoint,
) -> None:
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
            checkpoint()
        os.chmod(staging, folder_mode())  # mkdtemp's 0700, made an ordinary folder's
        checkpoint()
        if not target.exists():
            os.rename(staging, target)
        elif _exchange(staging, target):
            checkpoint()  # staging now holds the old tree
        else:
            # No atomic exchange here (not Linux, a file system without it, or build/ on
            # another one): each file is replaced whole, then the files of dropped
            # versions are removed. `target` is always there and every file in it
            # whole, but until the last rename it mixes old and new files.
            for name, text in files.items():
                write_atomically(target / name, text)
                checkpoint()
            for path in target.iterdir():
                if is_generated(path) and path.name not in files:
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
    no longer alive (a running one's stays), and the old layout's folders beside it; and
    the temporaries of generated files that killed runs left in `target` itself (a
    single-version run writes there)."""
    remove_stale_temporaries(target, lambda name: is_generated(Path(name)))
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


def link_package(target: Path = GENERATED, package: Path = PACKAGE) -> None:
    """Point cudart/<name> at generated/<name> for every module and stub generated/ now
    holds, and remove links to generated files that are gone. Only the repository's own
    generated/ is linked: an --output elsewhere is a scratch tree."""
    if target.resolve() != GENERATED.resolve():
        return
    names = [p.name for p in target.iterdir() if is_generated(p)]
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
        existing = {p.name for p in target.iterdir() if p.is_file() and is_generated(p)}
    for name in sorted(files):
        path = target / name
        if not path.is_file():
            problems.append(f"{name}: missing")
        elif path.read_text(encoding="utf-8") != files[name]:
            problems.append(f"{name}: stale (differs from what the generator makes)")
    for name in sorted(existing - set(files)):
        problems.append(f"{name}: not made by the generator from the manifest")
    return problems
