"""The header families, each declared once: families/<name>.toml.

A family is one C library's API (the runtime, the driver API, NVRTC, nvJitLink): the
headers the manifest's wheels of that family hold (their `surface`), the modules it is
rendered into, how a process finds and loads its library, how it asks the library's
version and which bindings then serve it, its status enum's exception base where the
naming rule (generator/status.py) would collide, and the raw functions the compiled
backend calls with the GIL held. The generator reads the descriptors here and nowhere
else; the runtime package reads the table `runtime_table` renders from them
(cudart._versions FAMILIES, standard library only), never the TOML.

Keys of a descriptor (optional ones say their default):
  name: the family's name, the file's stem and the manifest's `surface` of its wheels.
  api: what the modules' docs call the API ("the CUDA 12.5 NVRTC API").
  provider: what a message says a missing function needs a newer one of ("NVRTC").
  library: the library's name in messages ("libnvrtc").
  modules: optional {raw, checked, compiled}: the module names' prefixes
    (cudart.<raw>_<ver>, cudart.<checked>_<ver>; the compiled extension
    cudart.<compiled>_<major>); default <name>, <name>_checked, _fast_<name>.
  compiled: whether the compiled backend serves it (its raw and checked calls in C).
  axis: its version axis: "cuda", the CUDA minors the manifest pins
    ([versions."12.5"]), its modules named by CUDA's number (12050); or "own", the
    library's own releases ([releases.<name>.versions."2.21"], NCCL's 2.21), each
    parsed against a pinned CUDA version's headers, which its own include.
  [releases]: an own-axis family's, and only its (a CUDA-axis family's numbers are
    CUDA's: major * 1000 + minor * 10):
    major_scale, minor_scale: a release "M.m" is numbered M * major_scale + m *
      minor_scale, the number its modules are named by (cudart.<raw>_<number>) and the
      probe's answer is compared with; a probed version maps to the release it is of
      by dropping what is below minor_scale (NCCL's 22105, 2.21.5, is release 2.21,
      22100: 10000 and 100), and its major is the number // major_scale.
    cuda: the CUDA headers a release added by `cudart-bindgen add --family` parses
      with, which its pin records: a CUDA key of the manifest ("12.5"), or a CUDA
      major ("12"): its newest pinned minor when the release is added.
  serve: how a loaded library picks the bindings version: "runtime" (the one family
    that $CUDART_BINDINGS_VERSION forces: exact, else the newest older minor of the
    same major), "own" (the same rule on the family's own library, never forced),
    "driver" (the runtime's version where a libcudart loads, else the newest not newer
    than the library's).
  [status] error_base, result: optional, the exception base of the failures of the
    status enum spelled `result` where the rule of generator/status.py would give
    another family's (the driver's CUDA_SUCCESS).
  [lookup]: how a process finds the library, in order: $<env> (the only place tried
    when set), the installed wheels (wheel_libraries: (folder inside the `nvidia`
    namespace, file), newest major first; wheel: how the search calls them;
    dist_prefix: their dist-info's prefix), the toolkit ($CUDA_HOME, $CUDA_PATH) where
    `toolkit`, then the system loader (sonames; dlls on Windows). install: the
    sentence the not-found error ends with ({env} is the variable's name);
    missing_error: the cudart.errors class it raises.
  [probe]: how the loaded library says its version: function, form ("version": one
    int written, 12050; "major_minor": two, 12 and 5), unsigned (optional: the two are
    unsigned int), failure ("raise", or "zero": an unknown version, 0), symbols
    (optional: where the function is missing, the newest {major}_{minor} for which
    this symbol exists).
  [gil]: optional, function -> why the compiled backend may call it with the GIL held
    (generator/gil.py: the reviewed rule).
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from cudart._contract import CUDA_SCALE

__all__ = [
    "FAMILIES_DIR",
    "FAMILIES_ENV",
    "Family",
    "FamilyError",
    "compiled_families",
    "families",
    "family",
    "runtime_table",
]

FAMILIES_DIR = Path(__file__).resolve().parent.parent / "families"
# Another folder of descriptors (cudart-bindgen --families): in the environment, so that
# the render pool's workers read the same.
FAMILIES_ENV = "CUDART_BINDGEN_FAMILIES"
AXES = ("cuda", "own")
SERVE_RULES = ("runtime", "own", "driver")
PROBE_FORMS = ("version", "major_minor")
PROBE_FAILURES = ("raise", "zero")
_NAME_RE = re.compile(r"[a-z][a-z0-9]*", re.ASCII)
_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*", re.ASCII)
_ENV_RE = re.compile(r"[A-Z][A-Z0-9_]*", re.ASCII)
_FILE_RE = re.compile(r"[A-Za-z0-9_+.-]+", re.ASCII)
_FOLDER_RE = re.compile(r"[A-Za-z0-9_+.-]+(?:/[A-Za-z0-9_+.-]+)*", re.ASCII)
# A CUDA key of the manifest ("12.5") or a CUDA major ("12"), canonical as the manifest
# spells them (no leading zero).
_CUDA_RE = re.compile(r"(?:0|[1-9][0-9]*)(?:\.(?:0|[1-9][0-9]*))?", re.ASCII)


class FamilyError(ValueError):
    """A descriptor is malformed: the message names its file and key."""


@dataclass(frozen=True)
class Lookup:
    env: str
    wheel: str
    wheel_libraries: tuple[tuple[str, str], ...]
    dist_prefix: str
    sonames: tuple[str, ...]
    dlls: tuple[str, ...]
    toolkit: bool
    install: str
    missing_error: str


@dataclass(frozen=True)
class Probe:
    function: str
    form: str
    unsigned: bool
    failure: str
    symbols: str


@dataclass(frozen=True)
class Releases:
    """How an own-axis family numbers its releases (see the module's docstring)."""

    major_scale: int
    minor_scale: int
    cuda: str


@dataclass(frozen=True)
class Family:
    name: str
    api: str
    provider: str
    library: str
    raw: str
    checked: str
    compiled_module: str
    compiled: bool
    axis: str
    serve: str
    error_base: str
    status_result: str
    lookup: Lookup
    probe: Probe
    gil: tuple[tuple[str, str], ...]
    # An own-axis family's numbering; None on the CUDA axis.
    releases: Releases | None = None

    @property
    def scale(self) -> tuple[int, int]:
        """(major_scale, minor_scale) of its version numbers: CUDA's, or its own."""
        if self.releases is None:
            return CUDA_SCALE
        return self.releases.major_scale, self.releases.minor_scale

    def number(self, key: str) -> int:
        """The version number of a key of its axis: "12.5" -> 12050 on CUDA's, "2.21" ->
        22100 on NCCL's own (the key checked by the caller: parse_version_key)."""
        major, _, minor = key.partition(".")
        major_scale, minor_scale = self.scale
        if int(minor) * minor_scale >= major_scale:
            raise FamilyError(
                f"{self.name}: release {key} does not fit its numbering (minor_scale "
                f"{minor_scale}, major_scale {major_scale}): its minor is below "
                f"{major_scale // minor_scale}"
            )
        return int(major) * major_scale + int(minor) * minor_scale

    def module_name(self, version: int) -> str:
        return f"{self.raw}_{version}"

    def checked_module_name(self, version: int) -> str:
        return f"{self.checked}_{version}"


def _where(path: Path, key: str) -> str:
    return f"{path.name}: {key}"


class _Reader:
    """Takes a descriptor's keys one by one, each checked; `done` refuses the rest."""

    def __init__(self, data: dict[str, Any], path: Path, table: str = "") -> None:
        self.data = dict(data)
        self.path = path
        self.table = table

    def _key(self, key: str) -> str:
        return _where(self.path, f"{self.table}.{key}" if self.table else key)

    def take(self, key: str, kind: type, default: Any = None) -> Any:
        if key not in self.data:
            if default is None:
                raise FamilyError(f"{self._key(key)} is missing")
            return default
        value = self.data.pop(key)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise FamilyError(f"{self._key(key)} must be a {kind.__name__}, not {value!r}")
        return value

    def word(self, key: str, pattern: re.Pattern[str], default: str | None = None) -> str:
        value = self.take(key, str, default)
        if value == default == "":
            return value
        if not pattern.fullmatch(value):
            raise FamilyError(f"{self._key(key)}: {value!r} is not a valid value here")
        return value

    def choice(self, key: str, allowed: tuple[str, ...]) -> str:
        value = self.take(key, str)
        if value not in allowed:
            raise FamilyError(f"{self._key(key)} is {value!r}: one of {', '.join(allowed)}")
        return value

    def words(self, key: str, pattern: re.Pattern[str]) -> tuple[str, ...]:
        value = self.take(key, list, [])
        for item in value:
            if not isinstance(item, str) or not pattern.fullmatch(item):
                raise FamilyError(f"{self._key(key)}: {item!r} is not a valid entry")
        return tuple(value)

    def table_of(self, key: str) -> _Reader:
        return _Reader(self.take(key, dict, {}), self.path, key)

    def done(self) -> None:
        if self.data:
            unknown = ", ".join(sorted(self.data))
            where = f"{self.path.name}: {self.table}" if self.table else self.path.name
            raise FamilyError(f"{where}: unknown keys {unknown}")


def _lookup(r: _Reader) -> Lookup:
    env = r.word("env", _ENV_RE)
    pairs = r.take("wheel_libraries", list, [])
    wheel_libraries = []
    for pair in pairs:
        ok = isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) for p in pair)
        if not ok or not _FOLDER_RE.fullmatch(pair[0]) or not _FILE_RE.fullmatch(pair[1]):
            raise FamilyError(
                f"{r._key('wheel_libraries')}: {pair!r} is not [folder, file] of a wheel"
            )
        wheel_libraries.append((pair[0], pair[1]))
    wheel = r.take("wheel", str, "")
    dist_prefix = r.word("dist_prefix", _IDENT_RE, "")
    if wheel_libraries and not (wheel and dist_prefix):
        raise FamilyError(f"{r._key('wheel_libraries')} needs `wheel` and `dist_prefix`")
    sonames = r.words("sonames", _FILE_RE)
    if not sonames:
        raise FamilyError(f"{r._key('sonames')} is missing: the system loader's names")
    install = r.take("install", str)
    try:
        install.format(env=env)
    except (KeyError, IndexError, ValueError) as exc:
        raise FamilyError(f"{r._key('install')}: only {{env}} may be filled in ({exc})") from None
    lookup = Lookup(
        env=env,
        wheel=wheel,
        wheel_libraries=tuple(wheel_libraries),
        dist_prefix=dist_prefix,
        sonames=sonames,
        dlls=r.words("dlls", _FILE_RE),
        toolkit=r.take("toolkit", bool, False),
        install=install,
        missing_error=r.word("missing_error", _IDENT_RE),
    )
    r.done()
    return lookup


def _probe(r: _Reader) -> Probe:
    probe = Probe(
        function=r.word("function", _IDENT_RE),
        form=r.choice("form", PROBE_FORMS),
        unsigned=r.take("unsigned", bool, False),
        failure=r.choice("failure", PROBE_FAILURES),
        symbols=r.take("symbols", str, ""),
    )
    if probe.symbols and not _IDENT_RE.fullmatch(
        probe.symbols.replace("{major}", "1").replace("{minor}", "0")
    ):
        raise FamilyError(f"{r._key('symbols')}: {probe.symbols!r} is not a symbol pattern")
    r.done()
    return probe


def _releases(r: _Reader, axis: str, serve: str) -> Releases | None:
    if axis != "own":
        if r.data:
            raise FamilyError(
                f"{_where(r.path, 'releases')}: only an own-axis family (axis = \"own\") "
                "numbers releases of its own"
            )
        return None
    if serve != "own":
        raise FamilyError(
            f"{_where(r.path, 'serve')} is {serve!r}: an own-axis family is served by its "
            'own library\'s releases (serve = "own")'
        )
    major_scale = r.take("major_scale", int)
    minor_scale = r.take("minor_scale", int)
    if minor_scale < 1 or major_scale <= minor_scale or major_scale % minor_scale:
        raise FamilyError(
            f"{_where(r.path, 'releases')}: major_scale ({major_scale}) is a multiple of "
            f"minor_scale ({minor_scale}) above it, and minor_scale at least 1"
        )
    releases = Releases(major_scale, minor_scale, r.word("cuda", _CUDA_RE))
    r.done()
    return releases


def load(path: Path) -> Family:
    """The descriptor in `path`, checked key by key."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise FamilyError(f"{path.name}: not a readable TOML descriptor ({exc})") from None
    r = _Reader(data, path)
    name = r.word("name", _NAME_RE)
    if name != path.stem:
        raise FamilyError(f"{_where(path, 'name')} is {name!r}: a descriptor is named by its file")
    modules = r.table_of("modules")
    raw = modules.word("raw", _NAME_RE, name)
    checked = modules.word("checked", _IDENT_RE, f"{name}_checked")
    compiled_module = modules.word("compiled", _IDENT_RE, f"_fast_{name}")
    modules.done()
    status = r.table_of("status")
    error_base = status.word("error_base", _IDENT_RE, "")
    status_result = status.word("result", _IDENT_RE, "")
    if bool(error_base) != bool(status_result):
        raise FamilyError(f"{_where(path, 'status')}: error_base and result go together")
    status.done()
    gil = r.take("gil", dict, {})
    for function, why in gil.items():
        if not _IDENT_RE.fullmatch(function) or not isinstance(why, str) or not why:
            raise FamilyError(f"{_where(path, 'gil.' + function)}: a function and why it may")
    axis = r.choice("axis", AXES)
    serve = r.choice("serve", SERVE_RULES)
    releases = _releases(r.table_of("releases"), axis, serve)
    family = Family(
        name=name,
        api=r.take("api", str),
        provider=r.take("provider", str),
        library=r.word("library", _IDENT_RE),
        raw=raw,
        checked=checked,
        compiled_module=compiled_module,
        compiled=r.take("compiled", bool),
        axis=axis,
        serve=serve,
        error_base=error_base,
        status_result=status_result,
        lookup=_lookup(r.table_of("lookup")),
        probe=_probe(r.table_of("probe")),
        gil=tuple(sorted(gil.items())),
        releases=releases,
    )
    r.done()
    if family.gil and not family.compiled:
        raise FamilyError(f"{_where(path, 'gil')}: only a compiled family calls with the GIL held")
    if releases is not None and family.compiled:
        # The compiled backend is merged per CUDA major (generator/render/compiled.py).
        raise FamilyError(f"{_where(path, 'compiled')}: an own-axis family is served by ctypes")
    return family


def families(folder: Path | None = None) -> tuple[Family, ...]:
    """Every descriptor of `folder` (families/, or $CUDART_BINDGEN_FAMILIES), by name; the
    module names of no two collide, and exactly one family is served by the runtime's
    rule."""
    if folder is None:
        folder = Path(os.environ.get(FAMILIES_ENV) or FAMILIES_DIR)
    return _families(folder.resolve())


@cache
def _families(folder: Path) -> tuple[Family, ...]:
    found = tuple(load(p) for p in sorted(folder.glob("*.toml")))
    if not found:
        raise FamilyError(f"no family descriptors in {folder}")
    prefixes: dict[str, str] = {}
    for f in found:
        for prefix in (f.raw, f.checked, f.compiled_module):
            if prefix in prefixes:
                raise FamilyError(
                    f"{f.name}.toml: module prefix {prefix!r} is {prefixes[prefix]}'s already"
                )
            prefixes[prefix] = f.name
    runtime = [f.name for f in found if f.serve == "runtime"]
    if len(runtime) != 1:
        raise FamilyError(
            f'exactly one family is served by the runtime\'s rule (serve = "runtime"), '
            f"not {runtime or 'none'}"
        )
    return found


def family(name: str, folder: Path | None = None) -> Family:
    for f in families(folder):
        if f.name == name:
            return f
    known = ", ".join(f.name for f in families(folder))
    raise FamilyError(f"no family {name!r} (its descriptors: {known})")


def compiled_families(folder: Path | None = None) -> frozenset[str]:
    return frozenset(f.name for f in families(folder) if f.compiled)


def runtime_table(folder: Path | None = None) -> dict[str, dict[str, Any]]:
    """What the runtime package reads of each family (cudart._versions FAMILIES; the
    keys are cudart._contract.FAMILY_KEYS), by name."""
    table = {}
    for f in families(folder):
        table[f.name] = {
            "raw": f.raw,
            "checked": f.checked,
            "compiled": f.compiled_module if f.compiled else None,
            "serve": f.serve,
            "axis": f.axis,
            "scale": f.scale,
            "provider": f.provider,
            "library": f.library,
            "env": f.lookup.env,
            "wheel": f.lookup.wheel,
            "wheel_libraries": f.lookup.wheel_libraries,
            "dist_prefix": f.lookup.dist_prefix,
            "sonames": f.lookup.sonames,
            "dlls": f.lookup.dlls,
            "toolkit": f.lookup.toolkit,
            "install": f.lookup.install.format(env=f.lookup.env),
            "missing_error": f.lookup.missing_error,
            "probe": f.probe.function,
            "probe_form": f.probe.form,
            "probe_unsigned": f.probe.unsigned,
            "probe_failure": f.probe.failure,
            "probe_symbols": f.probe.symbols,
        }
    return table
