"""Download the pinned CUDA header wheels from PyPI and unpack what the generator needs.

Layout of the cache (see cache_root()):

    wheels/<wheel filename>                      verified wheels, kept so a later
                                                 fetch need not download again
    <package>-<version>-<sha256>/                the extracted subset of one wheel,
        .complete                                keyed by the wheel's full sha256;
                                                 the marker names the wheel and keeps
                                                 a copy of its RECORD; before each use
                                                 the copy is held to the manifest's
                                                 record_sha256 and every file to the
                                                 copy: a tree that differs is
                                                 unpacked again

Nothing in the cache is trusted by its name alone, nor by anything else in the cache: a
cached wheel is hashed before use, a cached tree is compared with the digests of the
wheel's RECORD, whose own digest the manifest pins; and a file the manifest disagrees
with is never deleted (the manifest may be the one that is wrong).

All downloads go through pip (run as ``sys.executable -m pip``) so that the
user's index, proxy and certificate settings apply unchanged.
"""

from __future__ import annotations

import base64
import csv
import fnmatch
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import NoReturn

from .files import folder_mode, process_alive
from .manifest import (
    DEFAULT_SURFACE,
    Major,
    Manifest,
    VersionPin,
    WheelKind,
    WheelPin,
    parse_version_key,
)

__all__ = [
    "ChecksumMismatchError",
    "FetchError",
    "HeaderSet",
    "NetworkError",
    "cache_root",
    "fetch_release",
    "fetch_version",
    "new_minors",
    "released_versions",
    "resolve_newest",
    "resolve_release",
]

Progress = Callable[[str], None]

# The headers are platform independent, but the wheels are only published for
# specific platforms; x86_64 is pinned so every host hashes the same file.
PIP_PLATFORMS = (
    "manylinux2014_x86_64",
    "manylinux_2_17_x86_64",
    "manylinux_2_27_x86_64",
    "manylinux_2_28_x86_64",
)
PIP_PYTHON_VERSION = "3.11"

CACHE_ENV = "CUDART_BINDGEN_CACHE"
COMPLETE_MARKER = ".complete"
# The first line of a completion marker; a marker without it (an older cache's, or a
# damaged one) is not ours, and its tree is unpacked again. Format 3: the wheel's name and
# sha256, then a copy of its RECORD (checked against the manifest's record_sha256).
MARKER_FORMAT = "cudart-bindgen extracted tree, format 3"
# A requirement as this module builds one: a validated project name, '==', a version or
# a version pattern. Checked again right before pip sees it, so that nothing read from a
# file can become one of pip's options.
# Applied with fullmatch: `$` would also match before a final newline.
_REQUIREMENT_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*==[0-9][0-9A-Za-z.*]*", re.ASCII)


class FetchError(Exception):
    """Getting or unpacking a header wheel failed; the message is one line."""


class ChecksumMismatchError(FetchError):
    pass


class NetworkError(FetchError):
    pass


def print_to_stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def cache_root() -> Path:
    """Where the cache is ($CUDART_BINDGEN_CACHE, else the user's cache folder)."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg:
        return Path(xdg).expanduser() / "cudart-bindgen"
    return Path.home() / ".cache" / "cudart-bindgen"


def _ready_cache() -> Path:
    """The cache folder, made if missing; a FetchError when it cannot be one (a file, a
    folder without write permission)."""
    root = cache_root()
    try:
        root.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        reason = "it is not a folder"
    except OSError as e:
        reason = e.strerror or str(e)
    else:
        return root
    raise FetchError(f"cannot use {root} as the cache ({reason}); set ${CACHE_ENV} to a folder")


@dataclass(frozen=True)
class HeaderSet:
    key: str
    include_dirs: tuple[Path, ...]  # one per wheel role, in the major table's order
    headers: tuple[Path, ...]  # the surface headers, where the parse starts
    # The surface's library as unpacked; None where no wheel holds it (libcuda.so.1,
    # a manifest `system_library`: the machine's driver, if any, is the real one).
    library: Path | None
    # Where only these of include_dirs hold the family's own headers (an own-axis
    # release: the CUDA runtime's that its headers include come after them), the
    # folders whose declarations are bound; () binds every include folder's.
    own_dirs: tuple[Path, ...] = ()


# --------------------------------------------------------------------------- pip


class _NoMatchingRelease(Exception):
    """pip reached the index, but no release satisfies the requirement."""


_NOISE_PREFIXES = (
    "WARNING: Location ",  # file:// extra indexes without the package
    "[notice]",
    "WARNING: You are using pip version",
)
_FETCH_FAIL_RE = re.compile(r"Could not fetch URL (\S+?): (.*?)(?: - skipping)?$")
_CONN_REASON_RES = (
    re.compile(r"Failed to establish a new connection: ([^'\")]+)"),
    re.compile(r"(Read timed out[^'\")]*)"),
    re.compile(r"(Connection to \S+ timed out[^'\")]*)"),
    re.compile(r"(Temporary failure in name resolution|Name or service not known)"),
    re.compile(r"(certificate verify failed[^'\")]*)"),
)
_VERSIONS_RE = re.compile(r"\(from versions: ([^)]*)\)")


def _one_line(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _meaningful_lines(stderr: str) -> list[str]:
    lines = []
    for raw in stderr.splitlines():
        line = raw.strip()
        if not line or line.startswith(_NOISE_PREFIXES):
            continue
        lines.append(line)
    return lines


def _fetch_failure(log_text: str) -> str | None:
    """The last 'could not reach the index' reason in pip's debug log, condensed."""
    found = None
    for raw in log_text.splitlines():
        m = _FETCH_FAIL_RE.search(raw)
        if m is None:
            continue
        url, reason = m.group(1), m.group(2)
        for rx in _CONN_REASON_RES:
            r = rx.search(reason)
            if r:
                reason = r.group(1).strip()
                break
        found = f"could not fetch {url} ({reason})"
    return found


def _pip_download(requirement: str, dest: Path, progress: Progress) -> Path:
    """Run pip download for one requirement into an empty dest; return the wheel.

    Raises _NoMatchingRelease when the index answered but had nothing that fits,
    NetworkError for every other pip failure.
    """
    progress(f"downloading {requirement}")
    proc, log_text = _run_pip_download(requirement, dest)
    if proc.returncode != 0:
        _raise_pip_failure(requirement, proc, log_text)
    wheels = sorted(dest.glob("*.whl"))
    if len(wheels) != 1:
        names = ", ".join(p.name for p in wheels) or "nothing"
        raise FetchError(f"pip download of {requirement} produced {names}, expected one wheel")
    return wheels[0]


def _run_pip_download(requirement: str, dest: Path) -> tuple[subprocess.CompletedProcess, str]:
    # pip reports unreachable indexes only at debug level; its --log file is
    # always at debug level, so it tells a network failure from "no such
    # release" without making the console output verbose.
    if not _REQUIREMENT_RE.fullmatch(requirement):
        raise FetchError(f"refusing to pass {requirement!r} to pip: not a 'name==version'")
    log_path = dest.parent / f".{dest.name}.pip.log"
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
    for plat in PIP_PLATFORMS:
        cmd += ["--platform", plat]
    cmd += [
        "--python-version",
        PIP_PYTHON_VERSION,
        "--log",
        str(log_path),
        "-d",
        str(dest),
        # Whatever follows '--' is an argument, never an option.
        "--",
        requirement,
    ]

    show = sys.stderr.isatty()
    try:
        # pip writes its progress bar to stdout; on a terminal we route it to
        # our stderr so the caller's stdout stays clean.
        proc = subprocess.run(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=sys.stderr if show else subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
        )
        if show and proc.stderr:
            sys.stderr.write(proc.stderr)
        log_text = log_path.read_text(errors="replace") if log_path.exists() else ""
    finally:
        log_path.unlink(missing_ok=True)
    return proc, log_text


def _raise_pip_failure(
    requirement: str, proc: subprocess.CompletedProcess, log_text: str
) -> NoReturn:
    stderr = proc.stderr or ""
    fetch_fail = _fetch_failure(log_text)
    no_match = "No matching distribution found" in stderr or "Could not find a version" in stderr
    m = _VERSIONS_RE.search(stderr)
    index_answered = m is not None and m.group(1).strip() not in ("", "none")
    if no_match and (index_answered or fetch_fail is None):
        raise _NoMatchingRelease(requirement)
    lines = _meaningful_lines(stderr)
    reason = fetch_fail or (lines[-1] if lines else f"pip exited with status {proc.returncode}")
    raise NetworkError(_one_line(f"pip could not download {requirement}: {reason}"))


# ------------------------------------------------------------------ wheel cache


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _mismatch(pin: WheelPin, actual: str, what: str) -> ChecksumMismatchError:
    return ChecksumMismatchError(
        f"sha256 mismatch for {pin.wheel}: the manifest pins {pin.sha256}, {what} is {actual}"
    )


def _ensure_wheel(pin: WheelPin, root: Path, progress: Progress) -> Path:
    """The cached wheel of `pin`, downloaded if it is missing or differs from the pin.

    A file is never deleted because it differs from the manifest: the manifest may be
    what is wrong. A fresh download replaces the cached file only once it matches."""
    wheels_dir = root / "wheels"
    cached = wheels_dir / pin.wheel
    cached_sha = None
    if cached.is_file():
        cached_sha = _sha256(cached)
        if cached_sha == pin.sha256:
            progress(f"verified sha256 of cached {pin.wheel}")
            return cached
        progress(
            f"cached {pin.wheel} has sha256 {cached_sha}, not the manifest's; "
            "downloading it again to compare"
        )

    wheels_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=root, prefix=_scratch("download")) as tmp:
        requirement = f"{pin.package}=={pin.version}"
        try:
            downloaded = _pip_download(requirement, Path(tmp) / "d", progress)
        except _NoMatchingRelease:
            raise FetchError(f"no release of {pin.package} matches =={pin.version}") from None
        if downloaded.name != pin.wheel:
            raise FetchError(
                f"pip chose {downloaded.name} for {requirement}, but the manifest pins {pin.wheel}"
            )
        actual = _sha256(downloaded)
        if actual != pin.sha256:
            what = (
                "the download, like the cached file, " if actual == cached_sha else "the download "
            )
            raise _mismatch(pin, actual, what.rstrip(", "))
        progress(f"verified sha256 of {pin.wheel}")
        os.replace(downloaded, cached)
    return cached


# ------------------------------------------------------------------- extraction


def _tree_listing(folder: Path) -> dict[str, str] | None:
    """{relative path: sha256} of every file under `folder` but the marker, or None when
    something there is neither a plain file nor a folder (we never unpack links)."""
    found: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        here = Path(dirpath)
        for name in dirnames:
            if (here / name).is_symlink():
                return None
        for name in filenames:
            path = here / name
            rel = path.relative_to(folder).as_posix()
            if rel == COMPLETE_MARKER:
                continue
            if path.is_symlink() or not path.is_file():
                return None
            found[rel] = _sha256(path)
    return found


# A wheel's record of its own files (PEP 376/427): one per wheel, in its .dist-info folder.
_RECORD_RE = re.compile(r"[^/]+\.dist-info/RECORD")


def _read_record(zf: zipfile.ZipFile, wheel: str) -> bytes:
    names = [n for n in zf.namelist() if _RECORD_RE.fullmatch(n)]
    if len(names) != 1:
        raise FetchError(f"{wheel} holds {len(names)} .dist-info/RECORD files, not one")
    return zf.read(names[0])


def record_sha256(wheel: Path) -> str:
    """The sha256 of a wheel's RECORD, as the manifest pins it (record_sha256)."""
    with zipfile.ZipFile(wheel) as zf:
        return hashlib.sha256(_read_record(zf, wheel.name)).hexdigest()


def _expected_files(record: bytes, wanted: Callable[[str], bool], wheel: str) -> dict[str, str]:
    """{member: sha256 in hex} of the wanted members that RECORD lists."""
    expected: dict[str, str] = {}
    for row in csv.reader(io.StringIO(record.decode("utf-8", errors="replace"))):
        if not row or not wanted(row[0]):
            continue
        algorithm, _, digest = (row[1] if len(row) > 1 else "").partition("=")
        if algorithm != "sha256":
            raise FetchError(f"{wheel}'s RECORD gives no sha256 for {row[0]!r}")
        try:
            expected[row[0]] = base64.urlsafe_b64decode(digest + "=" * (-len(digest) % 4)).hex()
        except ValueError:
            raise FetchError(f"{wheel}'s RECORD holds a malformed digest for {row[0]!r}") from None
    return expected


def _difference(expected: dict[str, str], actual: dict[str, str]) -> str | None:
    """The first way `actual` ({name: sha256}) differs from `expected`, or None."""
    changed = sorted(n for n in expected.keys() & actual.keys() if expected[n] != actual[n])
    missing = sorted(expected.keys() - actual.keys())
    extra = sorted(actual.keys() - expected.keys())
    for what, names in (("changed", changed), ("missing", missing), ("unexpected", extra)):
        if names:
            more = f" and {len(names) - 1} more" if len(names) > 1 else ""
            return f"{_one_line(names[0], 120)} is {what}{more}"
    return None


def _marker_head(pin: WheelPin) -> bytes:
    return f"{MARKER_FORMAT}\nwheel {pin.wheel}\nsha256 {pin.sha256}\n".encode()


def _tree_problem(target: Path, pin: WheelPin, wanted: Callable[[str], bool]) -> str | None:
    """Why the cached tree of `pin` cannot be used as it is, or None when it holds exactly
    the wanted files of the wheel, each with the sha256 the wheel's RECORD lists.

    The marker keeps a copy of that RECORD, which is trusted only when its sha256 is the
    manifest's record_sha256: a tree edited together with its marker is unpacked again."""
    try:
        marker = (target / COMPLETE_MARKER).read_bytes()
    except FileNotFoundError:
        return "it has no completion marker"
    except OSError as e:
        return f"its completion marker cannot be read ({e.strerror})"
    head = _marker_head(pin)
    if not marker.startswith(head):
        return "its completion marker is not for this wheel"
    record = marker[len(head) :]
    if hashlib.sha256(record).hexdigest() != pin.record_sha256:
        return "its completion marker's RECORD is not the wheel's"
    actual = _tree_listing(target)
    if actual is None:
        return "it holds a link or a special file"
    try:
        expected = _expected_files(record, wanted, pin.wheel)
    except FetchError as e:
        return str(e)
    return _difference(expected, actual)


_SCRATCH_RE = re.compile(r"\.(?:download|extract|stale|list)-(?P<pid>[0-9]+)-", re.ASCII)


def _scratch(kind: str) -> str:
    """The name prefix of a scratch folder in the cache: its owner's pid, so that a later
    run can tell a killed run's leftovers from a running one's folders."""
    return f".{kind}-{os.getpid()}-"


def clean_scratch(root: Path) -> None:
    """Remove the scratch folders of processes that no longer run (killed mid-download
    or mid-extraction)."""
    try:
        entries = list(os.scandir(root))
    except FileNotFoundError:
        return
    for entry in entries:
        m = _SCRATCH_RE.match(entry.name)
        if m and entry.is_dir(follow_symlinks=False) and not process_alive(int(m["pid"])):
            shutil.rmtree(entry.path, ignore_errors=True)


def _extracted_name(pin: WheelPin) -> str:
    # The full sha256: two wheels that share a name and a prefix of their digest must not
    # share a tree.
    return f"{pin.package}-{pin.version}-{pin.sha256}"


def _extract(
    pin: WheelPin,
    wanted: Callable[[str], bool],
    required: tuple[str, ...],
    root: Path,
    progress: Progress,
) -> Path:
    """Unpack the wanted members of a pinned wheel into its cache directory.

    The tree is built under a temporary name and renamed into place only when
    complete, so a crash or a concurrent run never sees half of it. A cached tree is
    used only when every file matches the digest the wheel's RECORD gives it; otherwise
    it is unpacked again from the verified wheel.
    """
    target = root / _extracted_name(pin)
    if target.is_dir():
        problem = _tree_problem(target, pin, wanted)
        if problem is None:
            progress(f"using cached {target.name}")
            return target
        progress(f"cached {target.name} differs from its wheel ({problem}); extracting again")

    wheel = _ensure_wheel(pin, root, progress)
    progress(f"extracting {pin.wheel}")
    staging = Path(tempfile.mkdtemp(dir=root, prefix=_scratch("extract")))
    os.chmod(staging, folder_mode())
    try:
        record = _unpack(wheel, pin, wanted, staging)
        names = set(_expected_files(record, wanted, pin.wheel))
        missing = [
            r for r in required if r not in names and not any(n.startswith(r + "/") for n in names)
        ]
        if missing:
            raise FetchError(
                f"{pin.wheel} lacks {', '.join(missing)}; check the manifest's major table's paths"
            )
        (staging / COMPLETE_MARKER).write_bytes(_marker_head(pin) + record)
        _put_in_place(staging, target, pin, wanted)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def _unpack(wheel: Path, pin: WheelPin, wanted: Callable[[str], bool], staging: Path) -> bytes:
    """Write the wanted members under `staging`, each checked against the wheel's RECORD
    (pinned by the manifest's record_sha256); returns that RECORD."""
    digests: dict[str, str] = {}
    with zipfile.ZipFile(wheel) as zf:
        record = _read_record(zf, pin.wheel)
        actual = hashlib.sha256(record).hexdigest()
        if actual != pin.record_sha256:
            raise ChecksumMismatchError(
                f"record_sha256 mismatch for {pin.wheel}: the manifest pins "
                f"{pin.record_sha256}, its RECORD is {actual}"
            )
        for info in zf.infolist():
            name = info.filename
            if info.is_dir() or not wanted(name):
                continue
            parts = PurePosixPath(name).parts
            unsafe = name.startswith("/") or "\\" in name or ".." in parts or "." in parts
            if unsafe or not name.isprintable():
                raise FetchError(f"{pin.wheel} holds an unsafe path: {_one_line(repr(name), 120)}")
            if name in digests:
                raise FetchError(f"{pin.wheel} holds {_one_line(repr(name), 120)} twice")
            data = zf.read(info)
            dest = staging.joinpath(*parts)
            try:
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(data)
            except OSError as e:
                raise FetchError(
                    f"cannot unpack {_one_line(repr(name), 120)} of {pin.wheel} into "
                    f"{staging.parent}: {e.strerror}"
                ) from None
            digests[name] = hashlib.sha256(data).hexdigest()
    problem = _difference(_expected_files(record, wanted, pin.wheel), digests)
    if problem is not None:
        raise FetchError(f"{pin.wheel} does not match its own RECORD: {problem}")
    return record


def _put_in_place(
    staging: Path, target: Path, pin: WheelPin, wanted: Callable[[str], bool]
) -> None:
    """Rename the finished `staging` tree to `target`, setting aside a stale tree there."""
    aside = None
    if target.exists():
        # Only a tree that failed its check can be here (or one a concurrent run just
        # replaced, which is as good as ours): move it out of the way in one rename, so a
        # reader sees the old tree or nothing, then the new one.
        if _tree_problem(target, pin, wanted) is None:
            # A concurrent run has just put a good tree there: keep it, drop ours.
            shutil.rmtree(staging, ignore_errors=True)
            return
        aside = Path(tempfile.mkdtemp(dir=target.parent, prefix=_scratch("stale")))
        try:
            os.rename(target, aside / "tree")
        except FileNotFoundError:
            pass
    try:
        os.rename(staging, target)
    except OSError:
        if _tree_problem(target, pin, wanted) is not None:
            raise
        # Another process finished the same extraction first; theirs is as good.
        shutil.rmtree(staging, ignore_errors=True)
    finally:
        if aside is not None:
            shutil.rmtree(aside, ignore_errors=True)


def _under(prefix: str) -> Callable[[str], bool]:
    prefix = prefix.rstrip("/") + "/"
    return lambda name: name.startswith(prefix)


def _wanted(kinds: Sequence[WheelKind]) -> tuple[Callable[[str], bool], tuple[str, ...]]:
    """Which members of a wheel to unpack, and which of them must be there: for every
    role the wheel serves (the runtime wheel holds the driver's cuda.h too), so that
    its one cached tree is the same whichever surface is fetched first."""
    tests: list[Callable[[str], bool]] = []
    required: tuple[str, ...] = ()
    names: set[str] = set()
    companions: list[str] = []
    for kind in kinds:
        folders = [f"{kind.include}/{sub.strip('/')}" for sub in kind.unpack] or [kind.include]
        tests += [_under(f) for f in folders]
        required += tuple(f"{kind.include}/{h}" for h in kind.headers)
        required += tuple(folders if kind.unpack else ())
        if kind.library is not None:
            required += (kind.library,)
            names.add(kind.library)
        companions += kind.companions

    def wanted(name: str) -> bool:
        return (
            name in names
            or any(t(name) for t in tests)
            or any(fnmatch.fnmatchcase(name, c) for c in companions)
        )

    return wanted, tuple(dict.fromkeys(required))


def fetch_version(
    manifest: Manifest,
    key: str,
    progress: Progress = print_to_stderr,
    surface: str = DEFAULT_SURFACE,
) -> HeaderSet:
    """Make the headers and library of one surface of a pinned CUDA version available
    locally: libcudart and the runtime's headers by default, or another header family's
    (nvrtc: nvrtc.h and libnvrtc)."""
    pin = manifest.get(key)
    return _fetch_surface(manifest.majors[pin.major], pin, surface, progress)


def fetch_release(
    manifest: Manifest, family: str, key: str, progress: Progress = print_to_stderr
) -> HeaderSet:
    """The headers and library of one release of an own-axis family, with the runtime
    headers of the CUDA version its pin names after its own: its headers include them
    (nccl.h includes cuda_runtime.h), but only its own folders' declarations are bound."""
    track = manifest.track_of(family)
    pin = track.get(key)
    own = _fetch_surface(track.majors[pin.major], pin, family, progress)
    assert pin.cuda is not None  # an own-axis pin's (manifest.VersionPin)
    cuda = fetch_version(manifest, pin.cuda, progress)
    return HeaderSet(
        key=f"{family}_{key}",
        include_dirs=own.include_dirs + cuda.include_dirs,
        headers=own.headers,
        library=own.library,
        own_dirs=own.include_dirs,
    )


def _fetch_surface(major: Major, pin: VersionPin, surface: str, progress: Progress) -> HeaderSet:
    root = _ready_cache()
    clean_scratch(root)

    include_dirs: list[Path] = []
    headers: list[Path] = []
    library = None
    kinds = major.surface_wheels(surface)
    if not kinds:
        raise FetchError(f"{major.where} has no {surface!r} surface")
    for kind in kinds:
        wheel = pin.wheel(kind.role)
        sharing = [k for k in major.wheels if pin.wheel(k.role) == wheel]
        wanted, required = _wanted(sharing)
        unpacked = _extract(wheel, wanted, required, root, progress)
        include_dirs.append(unpacked / kind.include)
        headers += [unpacked / kind.include / h for h in kind.headers]
        if kind.library is not None:
            library = unpacked / kind.library
    return HeaderSet(
        key=pin.key, include_dirs=tuple(include_dirs), headers=tuple(headers), library=library
    )


# -------------------------------------------------------------------- resolving


def _resolve_one(package: str, key: str, root: Path, progress: Progress) -> WheelPin:
    spec = f"{key}.*"
    wheels_dir = root / "wheels"
    wheels_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=root, prefix=_scratch("download")) as tmp:
        try:
            wheel = _pip_download(f"{package}=={spec}", Path(tmp) / "d", progress)
        except _NoMatchingRelease:
            raise FetchError(f"no release of {package} matches {spec}") from None
        # Wheel names are {distribution}-{version}-{tags}.whl; the version
        # never contains '-' (PEP 427 escapes it).
        parts = wheel.name.split("-")
        if len(parts) < 5:
            raise FetchError(f"cannot read a version from wheel name {wheel.name}")
        version = parts[1]
        sha = _sha256(wheel)
        record = record_sha256(wheel)
        progress(f"resolved {package}=={version} (sha256 {sha[:12]}...)")
        # Keep it: the fetch that normally follows `add` can use it as is.
        os.replace(wheel, wheels_dir / wheel.name)
    return WheelPin(
        package=package, version=version, wheel=wheel.name, sha256=sha, record_sha256=record
    )


def released_versions(package: str, progress: Progress = print_to_stderr) -> list[str]:
    """Every release of `package` with a wheel for the pinned platforms, as the index
    lists them (pip names them when asked for a version that cannot exist)."""
    progress(f"listing the releases of {package}")
    root = _ready_cache()
    with tempfile.TemporaryDirectory(dir=root, prefix=_scratch("list")) as tmp:
        requirement = f"{package}==0.0.0a0.dev0"
        proc, log_text = _run_pip_download(requirement, Path(tmp) / "d")
    m = _VERSIONS_RE.search(proc.stderr or "")
    if proc.returncode == 0 or m is None:
        try:
            _raise_pip_failure(requirement, proc, log_text)
        except _NoMatchingRelease:
            raise FetchError(f"the index lists no release of {package}") from None
    return [v.strip() for v in m.group(1).split(",") if v.strip() and v.strip() != "none"]


def new_minors(manifest: Manifest, progress: Progress = print_to_stderr) -> list[str]:
    """CUDA minors ("13.6") released for a major of the manifest but not pinned in it,
    oldest first. Pre-releases and versions that are not MAJOR.MINOR.PATCH are skipped."""
    found: set[str] = set()
    for name, major in manifest.majors.items():
        for version in released_versions(major.runtime.package, progress):
            m = re.fullmatch(r"([0-9]+)\.([0-9]+)\.[0-9]+(?:\.post[0-9]+)?", version, re.ASCII)
            if m and m.group(1) == name:
                found.add(f"{int(m.group(1))}.{int(m.group(2))}")
    return sorted(found - set(manifest.versions), key=parse_version_key)


def resolve_newest(
    manifest: Manifest, key: str, progress: Progress = print_to_stderr
) -> VersionPin:
    """Pin the newest patch release of CUDA ``key`` (e.g. "12.6") of every wheel of its
    major table: each wheel's own newest ``key.*`` release, since the patch numbers of a
    CUDA release's wheels differ (runtime 12.5.82, profiler 12.5.39)."""
    parse_version_key(key)
    major = manifest.major_for(key)
    return VersionPin(key=key, major=major.name, wheels=_resolve_major(major, key, progress))


def resolve_release(
    manifest: Manifest, family: str, key: str, cuda: str, progress: Progress = print_to_stderr
) -> VersionPin:
    """Pin the newest patch release of an own-axis family's release ``key`` ("2.21": each
    wheel's newest 2.21.*), as resolve_newest does for a CUDA key, parsed with CUDA
    ``cuda``'s headers (a key the manifest pins)."""
    parse_version_key(key)
    manifest.get(cuda)
    major = manifest.track_of(family).major_for(key)
    wheels = _resolve_major(major, key, progress)
    return VersionPin(key=key, major=major.name, wheels=wheels, track=family, cuda=cuda)


def _resolve_major(major: Major, key: str, progress: Progress) -> dict[str, WheelPin]:
    root = _ready_cache()
    return {kind.role: _resolve_one(kind.package, key, root, progress) for kind in major.wheels}
