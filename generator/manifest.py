"""The pinned set of CUDA header wheels, read from and written to cuda_headers_manifest.toml.

A CUDA release is described in two layers so that supporting a new major
version, a new wheel or a new header is a data change: a *major* table says, per wheel
role (runtime, crt, profiler, ...), which package holds headers, where they sit and
which of them belong to the runtime surface; a *version pin* names the exact wheel
of every role for one ``major.minor`` release and its sha256.
"""

from __future__ import annotations

import json
import os
import re
import stat
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from cudart._contract import CUDA_SCALE

from .files import write_atomically

__all__ = [
    "DEFAULT_MANIFEST_PATH",
    "DEFAULT_SURFACE",
    "Major",
    "Manifest",
    "ManifestError",
    "UnknownVersionError",
    "VersionPin",
    "WheelKind",
    "WheelPin",
    "parse_version_key",
    "release_unit",
    "split_unit",
    "unit_label",
]

DEFAULT_MANIFEST_PATH = Path(__file__).resolve().parent.parent / "cuda_headers_manifest.toml"
# Far above any manifest (some 2 KiB a version): a larger file is not one, and reading it
# whole could exhaust memory (`--manifest /dev/zero` once read until MemoryError).
MAX_MANIFEST_BYTES = 8 << 20
# Opened without waiting for a FIFO's writer (where the OS has the flag): a FIFO is
# refused by its type at once instead of hanging the command.
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)

# Every pattern below is applied with fullmatch and re.ASCII: `$` would also match before
# a final newline ("12.5\n"), and `\d` any script's digits ("１２.５" would be int 12.5).
# A version key (and a major table's number) is canonical, one spelling per number: no leading
# zero, so that "12.05" or "012.5" can never alias "12.5" (and render sys_12050 twice).
_NUMBER = r"(?:0|[1-9][0-9]*)"
_KEY_RE = re.compile(rf"({_NUMBER})\.({_NUMBER})", re.ASCII)
_SHA256_RE = re.compile(r"[0-9a-f]{64}", re.ASCII)
_ROLE_RE = re.compile(r"[a-z][a-z0-9_]*", re.ASCII)
_MAJOR_RE = re.compile(_NUMBER, re.ASCII)
_MAJOR_WHAT = "a major is a major version number such as '12'"
# An own-axis family's name (families/<name>.toml's rule).
_FAMILY_RE = re.compile(r"[a-z][a-z0-9]*", re.ASCII)
# Every string of the manifest ends up in a pip command line, a cache path or a path
# inside a wheel, so each is held to the grammar of what it names before anything uses
# it: a name that does not fit is refused, never escaped.
# A registry project name (PEP 508): letters and digits, with '.', '_' or '-' inside
# only, so never an option ('-...') and never a path.
_PACKAGE_RE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?", re.ASCII)
# A public PEP 440 version as the index spells a release: a release number, optional
# pre-, post- and dev-release parts. No '-' (a wheel name's field separator) and no
# local '+...' part (the index holds none).
_VERSION_RE = re.compile(
    r"[0-9]+(?:\.[0-9]+)*(?:(?:a|b|rc)[0-9]+)?(?:\.post[0-9]+)?(?:\.dev[0-9]+)?", re.ASCII
)
# A wheel file name (PEP 427): {distribution}-{version}[-{build}]-{python}-{abi}-{platform}.whl,
# each field of letters, digits, '_' and '.', the distribution's '-' escaped as '_'.
_WHEEL_RE = re.compile(
    r"(?P<dist>[A-Za-z0-9](?:[A-Za-z0-9_.]*[A-Za-z0-9])?)-(?P<version>[A-Za-z0-9_.!+]+)"
    r"(?:-[0-9][A-Za-z0-9_.]*)?(?:-[A-Za-z0-9_.]+){3}\.whl",
    re.ASCII,
)
# A path inside a wheel: relative, '/'-separated, plain names (no '.', '..', empty part).
_MEMBER_PART_RE = re.compile(r"[A-Za-z0-9_+][A-Za-z0-9_.+-]*", re.ASCII)
# A library's soname, as the system loader finds it: never a path.
_SONAME_RE = re.compile(r"lib[A-Za-z0-9_+-]+\.so(?:\.[0-9]+)*", re.ASCII)
# The CUDA runtime's header family; a wheel without `surface` belongs to it.
DEFAULT_SURFACE = "runtime"

# dumps() always writes this header, so it must carry every explanation the
# file needs: comments written by hand would be lost on the next rewrite.
HEADER = """\
# Pinned PyPI wheels holding the NVIDIA CUDA runtime headers and libcudart,
# one entry per supported CUDA version. The generator downloads exactly these
# wheels and refuses any whose sha256 differs.
#
# This file is rewritten by `cudart-bindgen add X.Y`; edits by hand are kept
# only as data (comments other than this header are dropped).
#
# [majors.<major>.<role>] is one wheel of a CUDA major version, by role
# (runtime, crt, profiler, ...; the order of the roles is the include order):
#   package: its PyPI name; include: its include folder, as a path inside the
#     wheel (passed to the compiler as -I, in role order);
#   headers: the headers of the runtime surface this wheel holds; the parse
#     starts from all of them, in order, and binds every declaration in files
#     under the include folders (a header they include needs no entry);
#   unpack: optional, the subfolders of `include` to unpack when the rest of
#     the folder is not needed (the crt wheel: only crt/, which
#     cuda_runtime_api.h includes but the runtime wheel lacks);
#   library: in exactly one role of each surface, the library's path inside that
#     wheel (libcudart for the runtime surface);
#   surface: optional, the header family the wheel belongs to (families/<name>.toml):
#     "runtime" when absent; another name (nvrtc) is a second family of the same CUDA version,
#     with its own entry headers and library, rendered into modules of its own
#     (named by its descriptor: nvrtc_<ver>.py and nvrtc_checked_<ver>.py);
#   companions: optional, globs of files beside the library that it loads
#     itself (libnvrtc's builtins), unpacked with it.
#   system_library: instead of `library`, for a surface whose library no wheel
#     holds: its soname, as the system loader finds it (the driver API's
#     libcuda.so.1 comes with the NVIDIA driver; its headers with the runtime wheel).
# Adding a wheel or a surface header is a change to these tables alone;
# `cudart-bindgen add` pins the newest patch release of the same minor for
# every role (the wheels' patch numbers differ: runtime 12.5.82, profiler 12.5.39).
# [versions."<major>.<minor>"] names its table of roles (major = "12"), and
# [versions."<major>.<minor>".<role>] pins the exact wheel of every role: its
# sha256, and record_sha256, that of the wheel's RECORD (the sha256 of each of its
# files), against which an unpacked tree in the cache is checked before each use.
#
# A family on its own version axis (axis = "own" in families/<name>.toml: NCCL's
# 2.21, not a CUDA minor) has its own tables, rewritten by
# `cudart-bindgen add --family <name> M.m`, which pins the newest patch release
# of that release of each of its wheels:
# [releases.<name>.majors.<major>.<role>] is one wheel of the family's own major
#   (the keys of a [majors] role; every wheel of it belongs to the family);
# [releases.<name>.versions."<major>.<minor>"] names its major and `cuda`, the
#   CUDA key of [versions] whose runtime headers its headers include (parsed with
#   them, bound without them), and [releases.<name>.versions."<major>.<minor>".<role>]
#   pins each wheel as a CUDA version's are.
"""


def _read_manifest(path: Path) -> bytes:
    """The bytes of the regular file at `path` (a link to one is followed), read only up to
    MAX_MANIFEST_BYTES: anything else is a ManifestError naming what it is."""
    fd = os.open(path, _OPEN_FLAGS)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ManifestError(f"manifest {path} is not a regular file ({_file_kind(info)})")
        too_large = f"manifest {path} is larger than {MAX_MANIFEST_BYTES >> 20} MiB: not a manifest"
        if info.st_size > MAX_MANIFEST_BYTES:
            raise ManifestError(too_large)
        with open(fd, "rb", closefd=False) as f:
            data = f.read(info.st_size + 1)  # one more: a file that grew is still bounded
    finally:
        os.close(fd)
    if len(data) > MAX_MANIFEST_BYTES:
        raise ManifestError(too_large)
    return data


def _file_kind(info: os.stat_result) -> str:
    kinds = (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    )
    return next((what for test, what in kinds if test(info.st_mode)), "not a file")


class ManifestError(Exception):
    """The manifest is malformed or does not hold what was asked for."""


class UnknownVersionError(ManifestError):
    """A CUDA version that the manifest does not pin."""


def normalize_package(name: str) -> str:
    """A project name as the index compares it (PEP 503): 'Nvidia_CUDA.runtime' and
    'nvidia-cuda-runtime' are one project."""
    return re.sub(r"[-_.]+", "-", name).lower()


def check_package(value: str, where: str) -> None:
    if not _PACKAGE_RE.fullmatch(value):
        raise ManifestError(
            f"{where} is not a registry project name (letters, digits and '.-_' inside): "
            f"{value!r}"
        )


def check_version(value: str, where: str) -> None:
    if not _VERSION_RE.fullmatch(value):
        raise ManifestError(f"{where} is not a release version such as '12.5.82': {value!r}")


def check_wheel_name(wheel: str, package: str, version: str, where: str) -> None:
    """A bare wheel file name (PEP 427) of exactly this package and version: it becomes a
    file name in the cache and is compared with what pip downloaded."""
    m = _WHEEL_RE.fullmatch(wheel)
    if m is None:
        raise ManifestError(
            f"{where} is not a wheel file name ('<name>-<version>-<tags>.whl', no folders): "
            f"{wheel!r}"
        )
    if normalize_package(m["dist"]) != normalize_package(package):
        raise ManifestError(f"{where} {wheel!r} is not a wheel of the package {package!r}")
    if m["version"] != version:
        raise ManifestError(f"{where} {wheel!r} is not a wheel of version {version!r}")


def check_member_path(value: str, where: str, *, glob: bool = False) -> None:
    """A path inside a wheel: relative, '/'-separated, every part a plain name; with
    `glob`, the last part may also hold '*' (companion libraries: libnvrtc-builtins.so.*)."""
    parts = value.split("/")
    last = parts[-1].replace("*", "x") if glob else parts[-1]
    if not all(_MEMBER_PART_RE.fullmatch(part) for part in [*parts[:-1], last]):
        raise ManifestError(
            f"{where} is not a relative path inside the wheel ('a/b/c', no '..', "
            f"no leading '/' or '.'): {value!r}"
        )


def _key_field(key: str) -> str:
    # json quoting: the key is shown as TOML spells it, on one line whatever it holds.
    return f"versions.{json.dumps(key)}"


def parse_version_key(key: str) -> tuple[int, int]:
    """Split "12.5" into (12, 5); anything else is a ManifestError."""
    m = _KEY_RE.fullmatch(key) if isinstance(key, str) else None
    if m is None:
        raise ManifestError(f"malformed CUDA version {key!r}: expected MAJOR.MINOR such as '12.5'")
    return int(m.group(1)), int(m.group(2))


_PIN_FIELDS = ("package", "version", "wheel", "sha256", "record_sha256")
_DIGEST_FIELDS = ("sha256", "record_sha256")


@dataclass(frozen=True)
class WheelPin:
    package: str
    version: str
    wheel: str
    sha256: str
    # The sha256 of the wheel's RECORD: it lists the sha256 of every file in the wheel, so
    # a tree unpacked in the cache is checked against it (held here, where the cache
    # cannot rewrite it) without hashing the whole wheel again on each use.
    record_sha256: str

    def to_toml(self) -> dict[str, str]:
        return {name: getattr(self, name) for name in _PIN_FIELDS}

    @classmethod
    def from_toml(cls, data: Any, where: str) -> WheelPin:
        fields = _require_table(data, where, _PIN_FIELDS)
        for name in _DIGEST_FIELDS:
            if not _SHA256_RE.fullmatch(fields[name].lower()):
                raise ManifestError(f"{where}.{name} is not 64 hex digits: {fields[name]!r}")
            fields[name] = fields[name].lower()
        pin = cls(**fields)
        pin.validate(where)
        return pin

    def validate(self, where: str) -> None:
        """Refuse a pin whose strings could be read as anything but what they name."""
        for name in _PIN_FIELDS:
            if not isinstance(getattr(self, name), str):
                raise ManifestError(f"{where}.{name} must be a string")
        check_package(self.package, f"{where}.package")
        check_version(self.version, f"{where}.version")
        check_wheel_name(self.wheel, self.package, self.version, f"{where}.wheel")
        for name in _DIGEST_FIELDS:
            if not _SHA256_RE.fullmatch(getattr(self, name)):
                raise ManifestError(
                    f"{where}.{name} is not 64 lowercase hex digits: {getattr(self, name)!r}"
                )


@dataclass(frozen=True)
class WheelKind:
    """One wheel role of a major table: where its headers are and which belong to the surface."""

    role: str
    package: str
    include: str
    headers: tuple[str, ...] = ()
    unpack: tuple[str, ...] = ()
    library: str | None = None
    # The header family (surface) this wheel's headers and library belong to: the CUDA
    # runtime's by default, another (NVRTC's) when it has its own entry headers and
    # library. Each surface is rendered into modules of its own.
    surface: str = DEFAULT_SURFACE
    # Files beside the library that it loads itself, as globs inside the wheel
    # (libnvrtc dlopens libnvrtc-builtins.so.X.Y), unpacked with it.
    companions: tuple[str, ...] = ()
    # A surface whose library no wheel holds names its soname instead (the driver's
    # libcuda.so.1 comes with the NVIDIA driver): the wheel gives the headers only.
    system_library: str | None = None

    @property
    def library_name(self) -> str | None:
        """The file name of the library this wheel's surface binds (libcudart.so.12,
        libcuda.so.1), or None where this wheel holds none of it."""
        if self.system_library is not None:
            return self.system_library
        return self.library.rsplit("/", 1)[-1] if self.library is not None else None

    def to_toml(self, default_surface: str = DEFAULT_SURFACE) -> dict[str, Any]:
        out: dict[str, Any] = {
            "package": self.package,
            "include": self.include,
            "headers": list(self.headers),
        }
        if self.unpack:
            out["unpack"] = list(self.unpack)
        if self.library is not None:
            out["library"] = self.library
        if self.companions:
            out["companions"] = list(self.companions)
        if self.system_library is not None:
            out["system_library"] = self.system_library
        if self.surface != default_surface:
            out["surface"] = self.surface
        return out

    @classmethod
    def from_toml(
        cls, role: str, data: Any, where: str, default_surface: str = DEFAULT_SURFACE
    ) -> WheelKind:
        if not _ROLE_RE.fullmatch(role):
            raise ManifestError(f"{where}: a wheel role is a lowercase word, not {role!r}")
        if not isinstance(data, dict):
            raise ManifestError(f"{where} must be a table")
        known = (
            "package",
            "include",
            "headers",
            "unpack",
            "library",
            "companions",
            "surface",
            "system_library",
        )
        extra = sorted(set(data) - set(known))
        if extra:
            raise ManifestError(f"{where} has unknown keys: {', '.join(extra)}")
        strings = _require_table(
            {k: data.get(k) for k in ("package", "include")}, where, ("package", "include")
        )
        library = data.get("library")
        if library is not None and (not isinstance(library, str) or not library):
            raise ManifestError(f"{where}.library must be a non-empty string")
        surface = data.get("surface", default_surface)
        if not isinstance(surface, str) or not _ROLE_RE.fullmatch(surface):
            raise ManifestError(f"{where}.surface is a lowercase word, not {surface!r}")
        companions = _string_list(data.get("companions", []), f"{where}.companions")
        if companions and library is None:
            raise ManifestError(f"{where}.companions needs a library beside them")
        system_library = data.get("system_library")
        if system_library is not None and not isinstance(system_library, str):
            raise ManifestError(f"{where}.system_library must be a string")
        kind = cls(
            role=role,
            package=strings["package"],
            include=strings["include"].rstrip("/"),
            headers=_string_list(data.get("headers", []), f"{where}.headers"),
            unpack=_string_list(data.get("unpack", []), f"{where}.unpack"),
            library=library,
            surface=surface,
            companions=companions,
            system_library=system_library,
        )
        kind.validate(where)
        return kind

    def validate(self, where: str) -> None:
        if not isinstance(self.role, str) or not _ROLE_RE.fullmatch(self.role):
            raise ManifestError(f"{where}: a wheel role is a lowercase word, not {self.role!r}")
        check_package(self.package, f"{where}.package")
        check_member_path(self.include, f"{where}.include")
        for name in ("headers", "unpack"):
            for n, value in enumerate(getattr(self, name)):
                check_member_path(value, f"{where}.{name}[{n}]")
        if self.library is not None:
            check_member_path(self.library, f"{where}.library")
        for n, value in enumerate(self.companions):
            check_member_path(value, f"{where}.companions[{n}]", glob=True)
        if self.system_library is not None:
            if self.library is not None:
                raise ManifestError(
                    f"{where} names both a library in the wheel and a system_library"
                )
            if not _SONAME_RE.fullmatch(self.system_library):
                raise ManifestError(
                    f"{where}.system_library is a soname such as 'libcuda.so.1', "
                    f"not {self.system_library!r}"
                )


def _track_prefix(track: str) -> str:
    """Where a track's tables are: "" for CUDA's ([majors], [versions]), "releases.<family>."
    for an own-axis family's."""
    return f"releases.{track}." if track else ""


@dataclass(frozen=True)
class Major:
    name: str
    wheels: tuple[WheelKind, ...]
    # "" for a CUDA major; an own-axis family's name for one of its own majors, whose
    # every wheel is of that family.
    track: str = ""

    @property
    def where(self) -> str:
        return f"{_track_prefix(self.track)}majors.{self.name}"

    @property
    def home(self) -> str:
        """The surface every major of its track has: the runtime's, or the family's."""
        return self.track or DEFAULT_SURFACE

    def __post_init__(self) -> None:
        _check_word(_MAJOR_RE, self.name, f"{_track_prefix(self.track)}majors", _MAJOR_WHAT)
        where = self.where
        for w in self.wheels:
            w.validate(f"{where}.{w.role}")
        roles = [w.role for w in self.wheels]
        if len(set(roles)) != len(roles):
            raise ManifestError(f"{where} names a wheel role twice")
        if self.home not in self.surfaces:
            raise ManifestError(f"{where}: no wheel belongs to the {self.home} surface")
        if self.track and self.surfaces != (self.track,):
            raise ManifestError(
                f"{where}: every wheel of an own-axis family's major is of its surface "
                f"({self.track}), not {', '.join(s for s in self.surfaces if s != self.track)}"
            )
        for surface in self.surfaces:
            members = self.surface_wheels(surface)
            carriers = [w.role for w in members if w.library_name is not None]
            named = "" if surface == DEFAULT_SURFACE else f" of the {surface} surface"
            if len(carriers) != 1:
                raise ManifestError(
                    f"{where}: exactly one wheel{named} must name the library, "
                    f"not {len(carriers)} ({', '.join(carriers) or 'none'})"
                )
            if not any(w.headers for w in members):
                raise ManifestError(f"{where}: no wheel{named} names a surface header")

    @property
    def roles(self) -> tuple[str, ...]:
        return tuple(w.role for w in self.wheels)

    @property
    def surfaces(self) -> tuple[str, ...]:
        """The header families of this CUDA major, in the order their wheels come:
        the runtime's, then each other one (nvrtc)."""
        return tuple(dict.fromkeys(w.surface for w in self.wheels))

    def surface_wheels(self, surface: str) -> tuple[WheelKind, ...]:
        """The wheels of one surface, in role order (their include folders, in order)."""
        return tuple(w for w in self.wheels if w.surface == surface)

    def library_wheel(self, surface: str) -> WheelKind:
        """The wheel that holds a surface's library (or names its system soname)."""
        return next(w for w in self.surface_wheels(surface) if w.library_name is not None)

    @property
    def runtime(self) -> WheelKind:
        """The wheel that holds libcudart (its releases are the CUDA versions)."""
        return self.library_wheel(DEFAULT_SURFACE)

    @property
    def library(self) -> str:
        return self.runtime.library or ""

    def wheel(self, role: str) -> WheelKind:
        for w in self.wheels:
            if w.role == role:
                return w
        raise ManifestError(f"{self.where} has no {role!r} wheel")

    def to_toml(self) -> dict[str, Any]:
        return {w.role: w.to_toml(self.home) for w in self.wheels}

    @classmethod
    def from_toml(cls, name: str, data: Any, track: str = "") -> Major:
        # The name and the roles are checked before they are part of a message's place.
        _check_word(_MAJOR_RE, name, f"{_track_prefix(track)}majors", _MAJOR_WHAT)
        where = f"{_track_prefix(track)}majors.{name}"
        if not isinstance(data, dict) or not data:
            raise ManifestError(f"{where} must be a table of wheel roles")
        for role in data:
            _check_word(_ROLE_RE, role, where, "a wheel role is a lowercase word")
        return cls(
            name=name,
            wheels=tuple(
                WheelKind.from_toml(role, body, f"{where}.{role}", track or DEFAULT_SURFACE)
                for role, body in data.items()
            ),
            track=track,
        )


def _check_word(pattern: re.Pattern[str], key: Any, table: str, what: str) -> None:
    """A table key of the manifest that must fit `pattern`; json quoting shows the key on
    one line whatever it holds."""
    if not isinstance(key, str) or not pattern.fullmatch(key):
        raise ManifestError(f"{table}.{json.dumps(key)}: {what}, not {key!r}")


@dataclass(frozen=True)
class VersionPin:
    key: str
    major: str
    wheels: Mapping[str, WheelPin]  # role -> pinned wheel, in the major's role order
    # An own-axis release's: its family ("" for a CUDA version), and the CUDA key whose
    # runtime headers its headers are parsed with.
    track: str = ""
    cuda: str | None = None

    def __post_init__(self) -> None:
        parse_version_key(self.key)
        if bool(self.track) != (self.cuda is not None):
            raise ManifestError(f"{self.where}: an own-axis release, and only one, names `cuda`")

    @property
    def where(self) -> str:
        return _track_prefix(self.track) + _key_field(self.key)

    @property
    def number(self) -> int:
        """CUDART_VERSION-style number: "12.5" -> 12050."""
        if self.track:
            # Its family's descriptor numbers it (generator.families Family.number).
            raise ManifestError(f"{self.where}: an own-axis release has no CUDA number")
        major, minor = parse_version_key(self.key)
        return major * CUDA_SCALE[0] + minor * CUDA_SCALE[1]

    @property
    def module_name(self) -> str:
        return f"sys_{self.number}"

    def wheel(self, role: str) -> WheelPin:
        try:
            return self.wheels[role]
        except KeyError:
            raise ManifestError(f"{self.where} pins no {role!r} wheel") from None

    def to_toml(self) -> dict[str, Any]:
        head: dict[str, Any] = {"major": self.major}
        if self.cuda is not None:
            head["cuda"] = self.cuda
        return head | {role: w.to_toml() for role, w in self.wheels.items()}

    @classmethod
    def from_toml(cls, key: str, data: Any, track: str = "") -> VersionPin:
        where = _track_prefix(track) + _key_field(key)
        if not isinstance(data, dict):
            raise ManifestError(f"{where} must be a table")
        major = data.get("major")
        if not isinstance(major, str):
            raise ManifestError(f"{where}.major must be a string")
        cuda = data.get("cuda")
        if track:
            if not isinstance(cuda, str):
                raise ManifestError(
                    f"{where}.cuda must be a string: the CUDA key whose headers it parses with"
                )
            try:
                parse_version_key(cuda)
            except ManifestError as e:
                raise ManifestError(f"{where}.cuda: {e}") from None
        elif cuda is not None:
            raise ManifestError(f"{where}.cuda: only an own-axis release names a CUDA key")
        return cls(
            key=key,
            major=major,
            wheels={
                role: WheelPin.from_toml(body, f"{where}.{role}")
                for role, body in data.items()
                if role not in ("major", "cuda")
            },
            track=track,
            cuda=cuda,
        )


def release_unit(family: str, key: str) -> str:
    """An own-axis release as a unit of generation: "toyown 1.3" (a CUDA key, "12.5", is
    its own)."""
    return f"{family} {key}"


def split_unit(unit: str) -> tuple[str, str]:
    """("", "12.5") for a CUDA key, ("toyown", "1.3") for an own-axis release's unit."""
    family, _, key = unit.rpartition(" ")
    return family, key


def unit_label(unit: str) -> str:
    """What progress lines call a unit: "CUDA 12.5", "toyown 1.3"."""
    family, key = split_unit(unit)
    return f"{family or 'CUDA'} {key}"


def _parse_key_field(key: Any, track: str = "") -> None:
    """A version table's key, checked before anything is read under it."""
    try:
        parse_version_key(key)
    except ManifestError as e:
        raise ManifestError(f"{_track_prefix(track)}{_key_field(key)}: {e}") from None


def _string_list(data: Any, where: str) -> tuple[str, ...]:
    if not isinstance(data, list) or not all(isinstance(x, str) and x for x in data):
        raise ManifestError(f"{where} must be a list of non-empty strings")
    if len(set(data)) != len(data):
        raise ManifestError(f"{where} names an entry twice")
    return tuple(data)


def _require_table(data: Any, where: str, keys: tuple[str, ...]) -> dict[str, str]:
    if not isinstance(data, dict):
        raise ManifestError(f"{where} must be a table")
    out: dict[str, str] = {}
    for k in keys:
        v = data.get(k)
        if not isinstance(v, str) or not v:
            raise ManifestError(f"{where}.{k} must be a non-empty string")
        out[k] = v
    extra = sorted(set(data) - set(keys))
    if extra:
        raise ManifestError(f"{where} has unknown keys: {', '.join(extra)}")
    return out


def _sorted_keys(keys: Any) -> list[str]:
    return sorted(keys, key=parse_version_key)


def _sorted_majors(names: Any) -> list[str]:
    return sorted(names, key=lambda n: (len(n), n))


class _Track:
    """What the CUDA track (the manifest's [majors] and [versions]) and an own-axis
    family's ([releases.<family>]) have alike: major tables, pins checked against them,
    and the lookups by key. `track` is "" for CUDA's, the family's name for its own."""

    majors: Mapping[str, Major]
    versions: Mapping[str, VersionPin]

    @property
    def track(self) -> str:
        raise NotImplementedError

    def label(self, key: str) -> str:
        """A key as messages name it: "CUDA 12.5", "toyown 1.3"."""
        return unit_label(release_unit(self.track, key) if self.track else key)

    def add_command(self, key: str) -> str:
        family = f"--family {self.track} " if self.track else ""
        return f"cudart-bindgen add {family}{key}"

    def _check_pins(self) -> None:
        prefix = _track_prefix(self.track)
        for key, pin in self.versions.items():
            _parse_key_field(key, self.track)
            if pin.key != key or pin.track != self.track:
                raise ManifestError(f"version pin {pin.where} is filed under {prefix}{key!r}")
            if pin.major not in self.majors:
                raise ManifestError(
                    f"{pin.where}.major is {pin.major!r}, "
                    f"which has no [{prefix}majors.{pin.major}] table"
                )
            major = self.majors[pin.major]
            if tuple(pin.wheels) != major.roles:
                raise ManifestError(
                    f"{pin.where} pins the wheels {', '.join(pin.wheels) or 'none'}; "
                    f"{major.where} has {', '.join(major.roles)}, in that order"
                )
            for kind in major.wheels:
                where = f"{pin.where}.{kind.role}"
                wheel = pin.wheels[kind.role]
                wheel.validate(where)
                if normalize_package(wheel.package) != normalize_package(kind.package):
                    raise ManifestError(
                        f"{where}.package is {wheel.package!r}, but "
                        f"{major.where}.{kind.role}.package is {kind.package!r}"
                    )

    def _tables(self) -> dict[str, Any]:
        return {
            "majors": {name: self.majors[name].to_toml() for name in _sorted_majors(self.majors)},
            "versions": {key: self.versions[key].to_toml() for key in self.keys()},
        }

    def keys(self) -> list[str]:
        """Pinned version keys, oldest first (numeric: 12.10 after 12.9)."""
        return _sorted_keys(self.versions)

    def get(self, key: str) -> VersionPin:
        parse_version_key(key)
        try:
            return self.versions[key]
        except KeyError:
            known = ", ".join(self.keys()) or "none"
            raise UnknownVersionError(
                f"{self.label(key)} is not in the manifest (known: {known}); "
                f"run `{self.add_command(key)}` to pin it"
            ) from None

    def major_for(self, key: str) -> Major:
        """The major table a version key belongs to, by its major number."""
        number, _ = parse_version_key(key)
        found = self.majors.get(str(number))
        if found is None:
            known = ", ".join(_sorted_majors(self.majors)) or "none"
            raise ManifestError(
                f"no [{_track_prefix(self.track)}majors.{number}] table for "
                f"{self.label(key)} (known majors: {known})"
            )
        return found

    def _versions_with(self, pin: VersionPin) -> dict[str, VersionPin]:
        versions = dict(self.versions)
        versions[pin.key] = pin
        return {k: versions[k] for k in _sorted_keys(versions)}


@dataclass(frozen=True)
class Releases(_Track):
    """An own-axis family's tables: [releases.<family>.majors] and .versions."""

    family: str
    majors: Mapping[str, Major] = field(default_factory=dict)
    versions: Mapping[str, VersionPin] = field(default_factory=dict)

    @property
    def track(self) -> str:
        return self.family

    def __post_init__(self) -> None:
        _check_word(_FAMILY_RE, self.family, "releases", "a family's name (families/<name>.toml)")
        for name, major in self.majors.items():
            if major.track != self.family or major.name != name:
                raise ManifestError(f"{major.where} is filed under releases.{self.family}.{name}")
        self._check_pins()
        for key, pin in self.versions.items():
            if pin.major != str(parse_version_key(key)[0]):
                raise ManifestError(
                    f"{pin.where}.major is {pin.major!r}: a release is of its key's major"
                )

    @classmethod
    def from_toml(cls, family: str, data: Any) -> Releases:
        _check_word(_FAMILY_RE, family, "releases", "a family's name (families/<name>.toml)")
        where = f"releases.{family}"
        if not isinstance(data, dict):
            raise ManifestError(f"{where} must be a table of majors and versions")
        extra = sorted(set(data) - {"majors", "versions"})
        if extra:
            raise ManifestError(f"{where} has unknown keys: {', '.join(extra)}")
        majors, vers = data.get("majors", {}), data.get("versions", {})
        if not isinstance(majors, dict) or not isinstance(vers, dict):
            raise ManifestError(f"{where}: 'majors' and 'versions' must be tables")
        for key in vers:
            _parse_key_field(key, family)
        return cls(
            family=family,
            majors={name: Major.from_toml(name, body, family) for name, body in majors.items()},
            versions={key: VersionPin.from_toml(key, body, family) for key, body in vers.items()},
        )

    def with_version(self, pin: VersionPin) -> Releases:
        return replace(self, versions=self._versions_with(pin))


@dataclass(frozen=True)
class Manifest(_Track):
    majors: Mapping[str, Major] = field(default_factory=dict)
    versions: Mapping[str, VersionPin] = field(default_factory=dict)
    # The own-axis families' tables, by family.
    releases: Mapping[str, Releases] = field(default_factory=dict)

    @property
    def track(self) -> str:
        return ""

    def __post_init__(self) -> None:
        self._check_pins()
        for family, track in self.releases.items():
            if track.family != family:
                raise ManifestError(f"releases.{track.family} is filed under releases.{family}")
            for pin in track.versions.values():
                if pin.cuda not in self.versions:
                    raise ManifestError(
                        f"{pin.where}.cuda is {pin.cuda!r}, which [versions] does not pin "
                        f"(pinned: {', '.join(self.keys()) or 'none'})"
                    )

    @classmethod
    def loads(cls, text: str, source: str = "<string>") -> Manifest:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise ManifestError(f"{source}: invalid TOML: {e}") from None
        if "families" in data:
            raise ManifestError(
                f"{source}: [families.<major>] tables are [majors.<major>] now, and a "
                'version\'s `family` its `major` ("family" names a header family, '
                "families/<name>.toml)"
            )
        majors_data = data.get("majors", {})
        vers = data.get("versions", {})
        releases = data.get("releases", {})
        if not all(isinstance(t, dict) for t in (majors_data, vers, releases)):
            raise ManifestError(f"{source}: 'majors', 'versions' and 'releases' must be tables")
        extra = sorted(set(data) - {"majors", "versions", "releases"})
        if extra:
            raise ManifestError(f"{source}: unknown top-level keys: {', '.join(extra)}")
        majors = {name: Major.from_toml(name, body) for name, body in majors_data.items()}
        for key in vers:
            _parse_key_field(key)
        versions = {key: VersionPin.from_toml(key, body) for key, body in vers.items()}
        return cls(
            majors=majors,
            versions=versions,
            releases={f: Releases.from_toml(f, body) for f, body in releases.items()},
        )

    @classmethod
    def load(cls, path: str | os.PathLike[str] = DEFAULT_MANIFEST_PATH) -> Manifest:
        path = Path(path)
        try:
            text = _read_manifest(path).decode("utf-8")
        except OSError as e:
            raise ManifestError(f"cannot read manifest {path}: {e.strerror or e}") from None
        except UnicodeDecodeError as e:
            raise ManifestError(f"manifest {path} is not UTF-8 text (byte {e.start})") from None
        return cls.loads(text, source=str(path))

    def dumps(self) -> str:
        data = self._tables()
        if self.releases:
            data["releases"] = {f: self.releases[f]._tables() for f in sorted(self.releases)}
        # Imported here: reading the manifest (tests, the GPU machine) needs only tomllib.
        import tomli_w

        return HEADER + "\n" + tomli_w.dumps(data)

    def save(self, path: str | os.PathLike[str] = DEFAULT_MANIFEST_PATH) -> None:
        write_atomically(Path(path), self.dumps(), durable=True)

    def with_version(self, pin: VersionPin) -> Manifest:
        return replace(self, versions=self._versions_with(pin))

    def units(self) -> list[str]:
        """What the generator renders one at a time: every CUDA key ("12.5", each with all
        its surfaces), then every own-axis release ("toyown 1.3", release_unit), by
        family and key."""
        return self.keys() + [
            release_unit(f, key) for f in sorted(self.releases) for key in self.releases[f].keys()
        ]

    def unit_track(self, unit: str) -> _Track:
        family, _ = split_unit(unit)
        return self.track_of(family) if family else self

    def unit_pin(self, unit: str) -> VersionPin:
        return self.unit_track(unit).get(split_unit(unit)[1])

    def unit_major(self, unit: str) -> Major:
        pin = self.unit_pin(unit)
        return self.unit_track(unit).majors[pin.major]

    def track_of(self, family: str) -> Releases:
        """An own-axis family's tables (empty where the manifest has none yet)."""
        return self.releases.get(family) or Releases(family)

    def release(self, family: str, key: str) -> VersionPin:
        """One pinned release of an own-axis family."""
        return self.track_of(family).get(key)

    def with_release(self, pin: VersionPin) -> Manifest:
        releases = dict(self.releases)
        releases[pin.track] = self.track_of(pin.track).with_version(pin)
        return replace(self, releases={f: releases[f] for f in sorted(releases)})
