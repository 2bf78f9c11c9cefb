"""A family added by its descriptor alone (issue 32): tests/families/toy/ ships a small C
library (toy.h, toy.c) and its descriptor (toy.toml). Here gcc builds the library, a
wheel laid out as NVIDIA's are holds it with its header, a manifest pins that wheel for
CUDA 12.5 as one more role with `surface = "toy"`, and `cudart-bindgen --families`
generates from the checkout's descriptors plus toy.toml. Nothing of the product is
touched: what the generator writes is installed beside a copy of the checkout's
hand-written cudart/ (as a wheel installs it), and the rest runs against that:

- the gcc judge (tests/support/abi_support.py) holds every fact of toy.h (records,
  fields, enums, enumerators, macros, symbols) and the library's exports;
- the runtime finds libtoy by the descriptor's variable and by its wheel, asks its
  version, serves cudart.toy_12050 / toy_checked_12050, and its checked layer converts
  and range-checks what it hands C and raises the family's own errors.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
from suite import bindgen
from toy_families import REFUSED, build_wheel, checkout_state, child, families_folder, install

from generator.fetch import cache_root, record_sha256
from generator.manifest import Manifest, WheelKind, WheelPin

TOY = Path(__file__).resolve().parent / "toy"
KEY = "12.5"
NUMBER = 12050
PACKAGE = "toy-cu12"
VERSION = "12.5.0"
WHEEL = f"toy_cu12-{VERSION}-py3-none-manylinux_2_17_x86_64.whl"
# The runtime wheel's roles the generator needs beside it (the runtime surface is every
# version's); the driver's, NVRTC's and nvJitLink's are left out of this manifest.
RUNTIME_ROLES = ("runtime", "crt", "profiler")


def _build_library(folder: Path, version: int) -> Path:
    lib = folder / f"v{version}" / "libtoy.so.1"
    lib.parent.mkdir(parents=True)
    subprocess.run(
        ["gcc", "-shared", "-fPIC", "-O1", "-Wall", "-Werror", f"-DTOY_VERSION={version}"]
        + ["-I", str(TOY / "include"), str(TOY / "toy.c"), "-o", str(lib)]
        + ["-Wl,-soname,libtoy.so.1", "-lm"],
        check=True,
    )
    return lib


def _build_wheel(path: Path, lib: Path) -> None:
    """A wheel as NVIDIA lays its out: nvidia/<lib>/include and nvidia/<lib>/lib."""
    files = {
        "nvidia/toy/include/toy.h": (TOY / "include" / "toy.h").read_bytes(),
        "nvidia/toy/lib/libtoy.so.1": lib.read_bytes(),
    }
    build_wheel(path, PACKAGE, VERSION, files)


def _manifest(manifest: Manifest, wheel: Path) -> str:
    """The checkout's pins of KEY for the runtime's roles, plus the toy wheel's role."""
    pin = manifest.get(KEY)
    major = manifest.majors[pin.major]
    toy = WheelKind.from_toml(
        "toy",
        {
            "package": PACKAGE,
            "include": "nvidia/toy/include",
            "headers": ["toy.h"],
            "library": "nvidia/toy/lib/libtoy.so.1",
            "surface": "toy",
        },
        f"families.{major.name}.toy",
    )
    kinds = tuple(w for w in major.wheels if w.role in RUNTIME_ROLES) + (toy,)
    wheels = {role: pin.wheels[role] for role in RUNTIME_ROLES}
    wheels["toy"] = WheelPin(
        package=PACKAGE,
        version=VERSION,
        wheel=WHEEL,
        sha256=hashlib.sha256(wheel.read_bytes()).hexdigest(),
        record_sha256=record_sha256(wheel),
    )
    scratch = type(manifest)(
        {major.name: dataclasses.replace(major, wheels=kinds)},
        {KEY: dataclasses.replace(pin, wheels=wheels)},
    )
    return scratch.dumps()


@pytest.fixture(scope="module")
def toy(tmp_path_factory, manifest):
    """(the scratch package folder, the manifest, the library, the wheel's site folder,
    the library of another minor) of one generation of the toy family."""
    root = tmp_path_factory.mktemp("toy")
    lib = _build_library(root, NUMBER)
    newer = _build_library(root, 12090)
    wheel = root / WHEEL
    _build_wheel(wheel, lib)
    # Into the generator's cache, where the fetcher verifies a pinned wheel by its
    # sha256 instead of downloading it (the index has no such project).
    wheels = cache_root() / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    shutil.copy(wheel, wheels / f".{WHEEL}.{os.getpid()}")
    os.replace(wheels / f".{WHEEL}.{os.getpid()}", wheels / WHEEL)
    manifest_path = root / "manifest.toml"
    manifest_path.write_text(_manifest(manifest, wheel))
    families = families_folder(root, TOY / "toy.toml")
    out = root / "generated"
    before = checkout_state()
    proc = bindgen(
        "--manifest",
        str(manifest_path),
        "--output",
        str(out),
        "--families",
        str(families),
        "generate",
        KEY,
        env={"CUDART_BINDGEN_JOBS": "1"},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    after = checkout_state()
    installed = install(out, root)
    site = root / "wheel-site"
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(site)
    return {
        "site": installed,
        "manifest": manifest_path,
        "out": out,
        "lib": lib,
        "newer": newer,
        "wheel_site": site,
        "checkout_before": before,
        "checkout_after": after,
    }


def _child(toy, code: str, env: dict[str, str] | None = None, extra_path: str = ""):
    """Run `code` against the installed toy package, its JSON output."""
    return child(toy["site"], code, env, extra_path)


def test_the_generator_wrote_the_toy_family_and_changed_nothing_of_the_checkout(toy):
    names = sorted(p.name for p in toy["out"].iterdir())
    assert "_toy_12.py" in names and "_toy_checked_12.py" in names, names
    table = (toy["out"] / "_versions.py").read_text()
    assert '"toy": {' in table and '"env": "CUDART_TOY_LIBRARY"' in table
    assert '"toy": (12050,)' in table and '"toy_checked": (12050,)' in table
    assert toy["checkout_before"] == toy["checkout_after"]


GCC_JUDGE = """
import json, sys
import abi_support
from generator.fetch import fetch_version
from generator.manifest import Manifest, WheelKind, WheelPin
import cudart
assert cudart.__file__.startswith(sys.argv[1]), cudart.__file__
headers = fetch_version(Manifest.load(sys.argv[2]), "12.5", lambda m: None, "toy")
report = abi_support.report_for(headers, "toy_", 12050)
problems = [f"{k}: {m}" for k, m in report.c.errors.items()]
for category in ("records", "fields", "enums", "enumerators", "typedefs", "macros",
                 "symbols", "exports"):
    problems += report.mismatches(category)
print(json.dumps({"problems": problems, "counts": abi_support.counts(report),
                  "functions": sorted(f.name for f in report.model.functions)}))
"""


def test_gcc_judges_every_fact_of_the_toy_header(toy):
    found = _child(
        toy,
        GCC_JUDGE.replace("sys.argv[1]", repr(str(toy["site"]))).replace(
            "sys.argv[2]", repr(str(toy["manifest"]))
        ),
    )
    assert not found["problems"], "\n".join(found["problems"][:30])
    assert found["functions"] == [
        "toyAdd",
        "toyGetErrorString",
        "toyGetVersion",
        "toyMakePair",
        "toyScale",
    ]
    counts = {column: tuple(pair) for column, pair in found["counts"].items()}
    # Not vacuous: the record's four members, both enums' five enumerators, the macros.
    for column, least in (("records", 1), ("fields", 4), ("enumerators", 5), ("macros", 2)):
        checked, matched = counts[column]
        assert checked >= least and matched == checked, (column, counts[column])


CALLS = """
import json, warnings
import cudart, cudart.errors
from cudart import _loader, _serving
raw, checked = _serving.served("toy")()
lib = _loader.load_library("toy")
out = {"raw": raw.__name__, "checked": checked.__name__, "version": lib.version,
       "found_by": lib.found_by, "library": raw.LIBRARY}
out["add"] = checked.toyAdd(2, 3)
out["scale"] = checked.toyScale(3, 1.5, raw.TOY_ROUND_UP)
pair = checked.toyMakePair(ord("t"), 2.5)
out["pair"] = repr([pair.tag, pair.value, pair.name, pair.count, type(pair).__name__])
out["typedef"] = type(pair) is raw.toyPair
out["overflow"] = refused(checked.toyAdd, 2**31 - 1, 1)
out["unsigned"] = refused(checked.toyScale, -1, 1.0, 0)
out["too_wide"] = refused(checked.toyAdd, 2**31, 0)
out["scaled_overflow"] = refused(checked.toyScale, 65535, 2.0, 0)
out["bad_rounding"] = refused(checked.toyScale, 1, 1.0, 7)
out["not_an_int"] = refused(checked.toyAdd, "2", 3)
out["base"] = cudart.errors.ToyError.__mro__[1].__name__
print(json.dumps(out))
"""


def test_the_runtime_serves_the_toy_family_through_its_descriptor(toy):
    found = _child(toy, REFUSED + CALLS, env={"CUDART_TOY_LIBRARY": str(toy["lib"])})
    assert found["raw"] == "cudart.toy_12050" and found["checked"] == "cudart.toy_checked_12050"
    assert (found["version"], found["found_by"], found["library"]) == (
        NUMBER,
        "$CUDART_TOY_LIBRARY",
        "toy",
    )
    assert found["add"] == 5
    assert found["scale"] == 5  # ceil(4.5)
    # The record C filled, as the struct's class (its typedef names the same class).
    assert found["pair"] == repr([b"t", 2.5, b"toy pair", 7, "toyPair_st"])
    assert found["typedef"] is True
    # C's failures raise the family's own classes, named by the status naming rule,
    # with the message its ...String function gives.
    assert found["base"] == "StatusError"
    assert found["overflow"] == [
        "ToyErrorOverflow",
        ["ToyError", "StatusError"],
        "TOY_ERROR_OVERFLOW (2): the result does not fit its type",
    ]
    assert found["scaled_overflow"][0] == "ToyErrorOverflow"
    # An enum argument is one of its enumerators before C sees it.
    assert found["bad_rounding"][0] == "ValueError", found["bad_rounding"]
    assert "toyRounding" in found["bad_rounding"][2], found["bad_rounding"]
    # What does not fit C's type never reaches C.
    for key, kind in (("unsigned", "OverflowError"), ("too_wide", "OverflowError")):
        assert found[key] is not None and found[key][0] == kind, (key, found[key])
    assert found["not_an_int"] is not None and found["not_an_int"][0] == "TypeError"


FIND = """
import json, warnings
import cudart
from cudart import _loader, _serving
try:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        raw, _ = _serving.served("toy")()
        lib = _loader.load_library("toy")
    print(json.dumps({"found_by": lib.found_by, "path": lib.path, "raw": raw.__name__,
                      "version": lib.version, "warnings": [str(w.message) for w in caught]}))
except cudart.LibraryNotFoundError as exc:
    print(json.dumps({"error": type(exc).__name__, "bases": type(exc).__mro__[1].__name__,
                      "message": str(exc)}))
"""


def test_the_toy_wheel_is_found_by_its_descriptor_folder_and_dist_prefix(toy):
    found = _child(toy, FIND, extra_path=str(toy["wheel_site"]))
    assert found["found_by"] == "the toy wheel", found
    assert found["path"] == str(toy["wheel_site"] / "nvidia" / "toy" / "lib" / "libtoy.so.1")
    assert found["raw"] == "cudart.toy_12050" and not found["warnings"]


def test_a_missing_toy_library_is_the_descriptors_error_and_install_hint(toy):
    found = _child(toy, FIND, env={"CUDART_TOY_LIBRARY": str(toy["lib"]) + ".gone"})
    assert found["error"] == "ToyNotFoundError" and found["bases"] == "LibraryNotFoundError"
    assert found["message"].startswith(
        "libtoy.so.1 not found. Install the toy wheel, or set $CUDART_TOY_LIBRARY to "
        "libtoy's path. Tried: "
    ), found["message"]


def test_a_newer_toy_library_is_served_by_the_newest_older_bindings_with_a_warning(toy):
    found = _child(toy, FIND, env={"CUDART_TOY_LIBRARY": str(toy["newer"])})
    assert (found["version"], found["raw"]) == (12090, "cudart.toy_12050")
    assert len(found["warnings"]) == 1 and found["warnings"][0].startswith(
        "toy library: no bindings for CUDA runtime 12.9; using the CUDA 12.5 bindings"
    ), found["warnings"]
