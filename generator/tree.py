"""Writing generated/ safely, linking it into cudart/, and comparing it with what the
generator makes.

One list says which files of the output folder are the generator's (GENERATED_SUFFIXES):
the writer's fallback removes the ones no longer made, compare_tree reports them. Anything
else there (notes, caches) is left alone. link_package gives cudart/ its links into
generated/ (PACKAGE_LINKS says which): the folder as cudart/_generated/, and the few files
the package reaches by their own name in cudart/.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from cudart._views import GENERATED_FOLDER

from .files import folder_mode, process_alive, remove_stale_temporaries, write_atomically

REPO = Path(__file__).resolve().parent.parent
GENERATED = REPO / "generated"
PACKAGE = REPO / "cudart"
# generated/ is the generator's output folder; the package reaches it as cudart/_generated/
# (a link to the folder in a checkout, the folder itself in the wheel and the sdist), so a
# module has one import name (cudart.sys_12050, which cudart/_views.py's finder makes from
# cudart/_generated/_sys_12.py). This file keeps the folder from importing as a package of
# its own, under either name (a second name for every module).
FOLDER_GUARD = "__init__.py"
# What the generator writes: the modules, their stubs, and the compiled backend's C
# sources (built from cudart/_generated/ by setup.py, including cudart/_fastcall.h).
GENERATED_SUFFIXES = (".py", ".pyi", ".c")
# The most links into generated/ that cudart/ may hold (issue 32): `check` fails beyond.
LINK_BUDGET = 10


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


def linked_by_name(name: str) -> bool:
    """Whether cudart/ links a generated file by its own name: the table of views, which
    `cudart._views` imports as cudart._versions, and the type stubs, where type checkers
    look for them (cudart/sys_13050.pyi, cudart/_latest.pyi). Every other file (the merged
    modules, the C) the package reads from cudart/_generated/."""
    return name == "_versions.py" or name.endswith(".pyi")


def package_links(
    names: list[str], target: Path = GENERATED, package: Path = PACKAGE
) -> dict[str, str]:
    """cudart/'s links into `target` for a tree of the files `names`: the name in
    `package` -> the link's text, sorted (the folder's own link first)."""
    links = {GENERATED_FOLDER: os.path.relpath(target, package)}
    for name in sorted(names):
        if linked_by_name(name):
            links[name] = os.path.relpath(target / name, package)
    return links


def link_package(target: Path = GENERATED, package: Path = PACKAGE) -> None:
    """Give cudart/ its links into generated/ (package_links) for the files generated/ now
    holds, and remove every other link into it (a file that is gone, or one that the
    package now reads through cudart/_generated/). Only the repository's own generated/
    is linked: an --output elsewhere is a scratch tree."""
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
    """What link_package would change, as problems (empty when cudart/ is as it should be),
    and a layout of more links than LINK_BUDGET."""
    if target.resolve() != GENERATED.resolve():
        return []
    missing, stale = _link_changes(names, target, package)
    problems = [f"{package.name}/{name}: not a link to {text}" for name, text in missing.items()]
    problems += [
        f"{package.name}/{path.name}: a link into {target.name}/ that the package does not read"
        for path in stale
    ]
    wanted = len(package_links(names, target, package))
    held = sum(1 for p in package.iterdir() if p.is_symlink() and _points_into(p, target))
    for what, count in (("the layout has", wanted), ("holds", held)):
        if count > LINK_BUDGET:
            problems.append(
                f"{package.name}/ {what} {count} links into {target.name}/, more than "
                f"{LINK_BUDGET} (generator/tree.py LINK_BUDGET)"
            )
    return problems


def _link_changes(
    names: list[str], target: Path, package: Path
) -> tuple[dict[str, str], list[Path]]:
    """(name -> link text of each link in `package` that is missing or points elsewhere,
    links in `package` into `target` or at it that are not wanted), both sorted."""
    wanted = package_links(names, target, package)
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


def _points_into(link: Path, target: Path) -> bool:
    """Whether `link` points into `target` or at it."""
    pointed = Path(os.path.normpath(link.parent / os.readlink(link)))
    return target in (pointed, pointed.parent)


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
