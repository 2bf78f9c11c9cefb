"""The pinned set of CUDA header wheels, read from and written to cuda_headers_manifest.toml.

A CUDA release is described in two layers so that supporting a new major
version is a data change: a *family* says where a major version's wheels keep
their headers and library, a *version pin* names the exact wheels of one
``major.minor`` release and their sha256.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .files import write_atomically

__all__ = [
    "DEFAULT_MANIFEST_PATH",
    "Family",
    "Manifest",
    "ManifestError",
    "UnknownVersionError",
    "VersionPin",
    "WheelPin",
    "parse_version_key",
]

DEFAULT_MANIFEST_PATH = Path(__file__).resolve().parent.parent / "cuda_headers_manifest.toml"

_KEY_RE = re.compile(r"^(\d+)\.(\d+)$")
_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")

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
# [families.<major>] says where a CUDA major version's wheels keep things:
#   runtime_package / runtime_include / library: the cudart wheel, its include
#     directory and the shared library, as paths inside the wheel;
#   crt_package / crt_include: the wheel holding crt/host_defines.h and
#     friends, which cuda_runtime_api.h includes but the runtime wheel lacks.
# [versions."<major>.<minor>"] pins the exact runtime and crt wheels.
"""


class ManifestError(Exception):
    """The manifest is malformed or does not hold what was asked for."""


class UnknownVersionError(ManifestError):
    """A CUDA version that the manifest does not pin."""


def parse_version_key(key: str) -> tuple[int, int]:
    """Split "12.5" into (12, 5); anything else is a ManifestError."""
    m = _KEY_RE.match(key) if isinstance(key, str) else None
    if m is None:
        raise ManifestError(f"malformed CUDA version {key!r}: expected MAJOR.MINOR such as '12.5'")
    return int(m.group(1)), int(m.group(2))


@dataclass(frozen=True)
class WheelPin:
    package: str
    version: str
    wheel: str
    sha256: str

    def to_toml(self) -> dict[str, str]:
        return {
            "package": self.package,
            "version": self.version,
            "wheel": self.wheel,
            "sha256": self.sha256,
        }

    @classmethod
    def from_toml(cls, data: Any, where: str) -> WheelPin:
        fields = _require_table(data, where, ("package", "version", "wheel", "sha256"))
        sha = fields["sha256"].lower()
        if not _SHA256_RE.match(sha):
            raise ManifestError(f"{where}.sha256 is not 64 hex digits: {fields['sha256']!r}")
        return cls(fields["package"], fields["version"], fields["wheel"], sha)


@dataclass(frozen=True)
class Family:
    name: str
    runtime_package: str
    runtime_include: str
    library: str
    crt_package: str
    crt_include: str

    def to_toml(self) -> dict[str, str]:
        return {
            "runtime_package": self.runtime_package,
            "runtime_include": self.runtime_include,
            "library": self.library,
            "crt_package": self.crt_package,
            "crt_include": self.crt_include,
        }

    @classmethod
    def from_toml(cls, name: str, data: Any) -> Family:
        keys = ("runtime_package", "runtime_include", "library", "crt_package", "crt_include")
        fields = _require_table(data, f"families.{name}", keys)
        return cls(name=name, **fields)


@dataclass(frozen=True)
class VersionPin:
    key: str
    family: str
    runtime: WheelPin
    crt: WheelPin

    def __post_init__(self) -> None:
        parse_version_key(self.key)

    @property
    def number(self) -> int:
        """CUDART_VERSION-style number: "12.5" -> 12050."""
        major, minor = parse_version_key(self.key)
        return major * 1000 + minor * 10

    @property
    def module_name(self) -> str:
        return f"sys_{self.number}"

    def to_toml(self) -> dict[str, Any]:
        return {"family": self.family, "runtime": self.runtime.to_toml(), "crt": self.crt.to_toml()}

    @classmethod
    def from_toml(cls, key: str, data: Any) -> VersionPin:
        where = f'versions."{key}"'
        if not isinstance(data, dict):
            raise ManifestError(f"{where} must be a table")
        family = data.get("family")
        if not isinstance(family, str):
            raise ManifestError(f"{where}.family must be a string")
        return cls(
            key=key,
            family=family,
            runtime=WheelPin.from_toml(data.get("runtime"), f"{where}.runtime"),
            crt=WheelPin.from_toml(data.get("crt"), f"{where}.crt"),
        )


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


@dataclass(frozen=True)
class Manifest:
    families: Mapping[str, Family] = field(default_factory=dict)
    versions: Mapping[str, VersionPin] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for key, pin in self.versions.items():
            parse_version_key(key)
            if pin.key != key:
                raise ManifestError(f"version pin {pin.key!r} is filed under {key!r}")
            if pin.family not in self.families:
                raise ManifestError(
                    f'versions."{key}".family is {pin.family!r}, '
                    f"which has no [families.{pin.family}] table"
                )

    @classmethod
    def loads(cls, text: str, source: str = "<string>") -> Manifest:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise ManifestError(f"{source}: invalid TOML: {e}") from None
        fams = data.get("families", {})
        vers = data.get("versions", {})
        if not isinstance(fams, dict) or not isinstance(vers, dict):
            raise ManifestError(f"{source}: 'families' and 'versions' must be tables")
        extra = sorted(set(data) - {"families", "versions"})
        if extra:
            raise ManifestError(f"{source}: unknown top-level keys: {', '.join(extra)}")
        families = {name: Family.from_toml(name, body) for name, body in fams.items()}
        for key in vers:
            parse_version_key(key)
        versions = {key: VersionPin.from_toml(key, body) for key, body in vers.items()}
        return cls(families=families, versions=versions)

    @classmethod
    def load(cls, path: str | os.PathLike[str] = DEFAULT_MANIFEST_PATH) -> Manifest:
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as e:
            raise ManifestError(f"cannot read manifest {path}: {e.strerror or e}") from None
        return cls.loads(text, source=str(path))

    def dumps(self) -> str:
        data = {
            "families": {
                name: self.families[name].to_toml()
                for name in sorted(self.families, key=lambda n: (len(n), n))
            },
            "versions": {key: self.versions[key].to_toml() for key in self.keys()},
        }
        # Imported here: reading the manifest (tests, the GPU machine) needs only tomllib.
        import tomli_w

        return HEADER + "\n" + tomli_w.dumps(data)

    def save(self, path: str | os.PathLike[str] = DEFAULT_MANIFEST_PATH) -> None:
        write_atomically(Path(path), self.dumps(), durable=True)

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
                f"CUDA {key} is not in the manifest (known: {known}); "
                f"run `cudart-bindgen add {key}` to pin it"
            ) from None

    def family_for(self, key: str) -> Family:
        """The family a version key belongs to, by its major number."""
        major, _ = parse_version_key(key)
        fam = self.families.get(str(major))
        if fam is None:
            known = ", ".join(sorted(self.families, key=lambda n: (len(n), n))) or "none"
            raise ManifestError(
                f"no [families.{major}] table for CUDA {key} (known families: {known})"
            )
        return fam

    def with_version(self, pin: VersionPin) -> Manifest:
        versions = dict(self.versions)
        versions[pin.key] = pin
        return replace(self, versions={k: versions[k] for k in _sorted_keys(versions)})
