"""A family on its own version axis (issue 32): tests/families/toyown/ ships a small C
library, its header of two releases (1.2; 1.3 adds toyownMultiply and changes
toyownRecord's layout), each including the CUDA runtime's header as nccl.h does, and its
descriptor (toyown.toml: axis = "own", numbered as NCCL is, major * 10000 + minor * 100).

Here gcc builds each release's library against the manifest's CUDA 12.5 headers, wheels
laid out as NVIDIA's are hold them (1.2.4, 1.3.0 and 1.3.2) in a folder pip reads as its
only index, and a scratch manifest holds the checkout's CUDA 12.5 runtime pins and the
family's own major table. `cudart-bindgen add --family toyown 1.2 1.3` resolves each
release's newest patch from that folder, pins it (parsed with CUDA 12.5, the newest 12.x
the manifest pins) and generates. Nothing of the product is touched; the rest runs
against an install of what the generator wrote:

- the gcc judge (tests/support/abi_support.py) holds every fact of each release's header;
- the runtime finds libtoyown by the descriptor's variable and by its wheel, asks its
  version, serves the exact release (1.3.2's library: toyown_10300), a newer minor of
  the same major by the newest older release with a warning (1.4: 1.3), and refuses a
  newer major (2.0); each release's view has that release's API alone.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import tomllib
import zipfile
from pathlib import Path

import pytest
from suite import bindgen
from toy_families import REFUSED, build_wheel, checkout_state, child, families_folder, install

from generator.fetch import fetch_version
from generator.manifest import Major, Manifest, Releases, WheelKind

TOYOWN = Path(__file__).resolve().parent / "toyown"
CUDA = "12.5"
PACKAGE = "toyown"
# (release header, wheel version, library version): two patches of 1.3, so that `add`
# is seen to pin the newest.
WHEELS = (("1.2", "1.2.4", 10204), ("1.3", "1.3.0", 10300), ("1.3", "1.3.2", 10302))
RUNTIME_ROLES = ("runtime", "crt", "profiler")


def _wheel_name(version: str) -> str:
    return f"toyown-{version}-py3-none-manylinux_2_17_x86_64.whl"


def _build_library(folder: Path, release: str, version: int, cuda_dirs) -> Path:
    lib = folder / f"v{version}" / "libtoyown.so.1"
    lib.parent.mkdir(parents=True)
    includes = [arg for d in cuda_dirs for arg in ("-I", str(d))]
    subprocess.run(
        ["gcc", "-shared", "-fPIC", "-O1", "-Wall", "-Werror", f"-DTOYOWN_VERSION={version}"]
        + ["-I", str(TOYOWN / release), *includes, str(TOYOWN / "toyown.c"), "-o", str(lib)]
        + ["-Wl,-soname,libtoyown.so.1"],
        check=True,
    )
    return lib


def _manifest(manifest: Manifest) -> str:
    """The checkout's CUDA 12.5 pins of the runtime's roles, and the family's own major
    table with no release pinned yet (`add` pins them)."""
    pin = manifest.get(CUDA)
    major = manifest.majors[pin.major]
    kinds = tuple(w for w in major.wheels if w.role in RUNTIME_ROLES)
    wheels = {role: pin.wheels[role] for role in RUNTIME_ROLES}
    toyown = WheelKind.from_toml(
        "toyown",
        {
            "package": PACKAGE,
            "include": "nvidia/toyown/include",
            "headers": ["toyown.h"],
            "library": "nvidia/toyown/lib/libtoyown.so.1",
        },
        "releases.toyown.majors.1.toyown",
        "toyown",
    )
    scratch = type(manifest)(
        {major.name: Major(major.name, kinds)},
        {CUDA: type(pin)(CUDA, pin.major, wheels)},
        {"toyown": Releases("toyown", {"1": Major("1", (toyown,), "toyown")})},
    )
    return scratch.dumps()


@pytest.fixture(scope="module")
def toyown(tmp_path_factory, manifest):
    root = tmp_path_factory.mktemp("toyown")
    cuda_dirs = fetch_version(manifest, CUDA, lambda _m: None).include_dirs
    index = root / "index"
    index.mkdir()
    libs = {}
    for release, version, number in WHEELS:
        libs[version] = _build_library(root, release, number, cuda_dirs)
        files = {
            "nvidia/toyown/include/toyown.h": (TOYOWN / release / "toyown.h").read_bytes(),
            "nvidia/toyown/lib/libtoyown.so.1": libs[version].read_bytes(),
        }
        build_wheel(index / _wheel_name(version), PACKAGE, version, files)
    # A newer minor and a newer major than any release pinned (1.3's header: their ABI).
    libs["1.4.0"] = _build_library(root, "1.3", 10400, cuda_dirs)
    libs["2.0.0"] = _build_library(root, "1.3", 20000, cuda_dirs)
    manifest_path = root / "manifest.toml"
    manifest_path.write_text(_manifest(manifest))
    families = families_folder(root, TOYOWN / "toyown.toml")
    out = root / "generated"
    before = checkout_state()
    common = ("--manifest", str(manifest_path), "--output", str(out), "--families", str(families))
    # pip's only index is the folder of wheels: the registry is never asked.
    env = {"CUDART_BINDGEN_JOBS": "1", "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(index)}
    generated = bindgen(*common, "generate", CUDA, env=env)
    assert generated.returncode == 0, generated.stderr[-3000:]
    snapshots = root / "snapshots"
    added = bindgen(
        *common, "add", "--family", "toyown", "1.2", "1.3", "--snapshots", str(snapshots), env=env
    )
    assert added.returncode == 0, added.stderr[-3000:]
    after = checkout_state()
    wheel_site = root / "wheel-site"
    with zipfile.ZipFile(index / _wheel_name("1.3.2")) as zf:
        zf.extractall(wheel_site)
    return {
        "root": root,
        "site": install(out, root),
        "manifest": manifest_path,
        "out": out,
        "index": index,
        "libs": libs,
        "snapshots": snapshots,
        "wheel_site": wheel_site,
        "add_log": added.stderr,
        "checkout_before": before,
        "checkout_after": after,
    }


def test_add_pinned_each_releases_newest_patch_with_the_cuda_headers(toyown):
    data = tomllib.loads(toyown["manifest"].read_text())
    releases = data["releases"]["toyown"]["versions"]
    assert sorted(releases) == ["1.2", "1.3"]
    for key, version in (("1.2", "1.2.4"), ("1.3", "1.3.2")):
        pin = releases[key]
        assert (pin["major"], pin["cuda"]) == ("1", CUDA), pin
        wheel = toyown["index"] / _wheel_name(version)
        assert pin["toyown"]["version"] == version and pin["toyown"]["wheel"] == wheel.name
        assert pin["toyown"]["sha256"] == hashlib.sha256(wheel.read_bytes()).hexdigest()
    # The CUDA pins are as they were, and the file reads back as it was written.
    loaded = Manifest.load(toyown["manifest"])
    assert loaded.keys() == [CUDA] and loaded.dumps() == toyown["manifest"].read_text()
    assert sorted(p.name for p in toyown["snapshots"].iterdir()) == [
        "toyown_outputs_1.2.txt",
        "toyown_outputs_1.3.txt",
    ]
    assert toyown["checkout_before"] == toyown["checkout_after"]


def test_the_generator_wrote_one_merged_module_per_own_major(toyown):
    out = toyown["out"]
    names = sorted(p.name for p in out.iterdir())
    assert "_toyown_1.py" in names and "_toyown_checked_1.py" in names, names
    assert not [n for n in names if n.startswith("_toyown") and n[-4:-3] != "1"], names
    table = (out / "_versions.py").read_text()
    assert '"toyown": (10200, 10300,)' in table and '"toyown_checked": (10200, 10300,)' in table
    assert '"axis": "own"' in table and '"scale": (10000, 100,)' in table
    merged = (out / "_toyown_1.py").read_text()
    assert "modules of toyown library 1, merged" in merged
    # Bound without the CUDA headers it includes: none of their declarations is its.
    assert "cudaMalloc" not in merged and "cudaError_t" not in merged
    assert "generate --family toyown 1.3`" in merged


def test_generate_and_check_take_the_releases_too(toyown):
    """`check` renders the own-axis releases with the CUDA versions and finds the tree the
    add wrote; `generate --family` of a CUDA-axis family is refused before any work."""
    common = ("--manifest", str(toyown["manifest"]), "--output", str(toyown["out"]))
    common += ("--families", str(toyown["root"] / "families"))
    env = {"CUDART_BINDGEN_JOBS": "1"}
    proc = bindgen(*common, "check", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]
    assert f"for CUDA {CUDA}, toyown 1.2, 1.3" in proc.stdout
    refused = bindgen(*common, "generate", "--family", "nvrtc", "12.5", env=env)
    assert refused.returncode == 2 and "nvrtc is on the CUDA axis" in refused.stderr


GCC_JUDGE = """
import json, sys
import abi_support
from generator.fetch import fetch_release
from generator.manifest import Manifest
import cudart
assert cudart.__file__.startswith(SITE), cudart.__file__
out = {}
for key, number in (("1.2", 10200), ("1.3", 10300)):
    headers = fetch_release(Manifest.load(MANIFEST), "toyown", key, lambda m: None)
    report = abi_support.report_for(headers, "toyown_", number)
    problems = [f"{k}: {m}" for k, m in report.c.errors.items()]
    for category in ("records", "fields", "enums", "enumerators", "typedefs", "macros",
                     "symbols", "exports"):
        problems += report.mismatches(category)
    out[key] = {"problems": problems, "counts": abi_support.counts(report),
                "functions": sorted(f.name for f in report.model.functions)}
print(json.dumps(out))
"""


def test_gcc_judges_every_fact_of_each_release(toyown):
    code = GCC_JUDGE.replace("SITE", repr(str(toyown["site"]))).replace(
        "MANIFEST", repr(str(toyown["manifest"]))
    )
    found = child(
        toyown["site"], code, env={"CUDART_BINDGEN_FAMILIES": str(toyown["root"] / "families")}
    )
    common = ["toyownAdd", "toyownFill", "toyownGetErrorString", "toyownGetVersion"]
    assert found["1.2"]["functions"] == common
    assert found["1.3"]["functions"] == sorted([*common, "toyownMultiply"])
    for key in ("1.2", "1.3"):
        assert not found[key]["problems"], "\n".join(found[key]["problems"][:30])
        counts = {column: tuple(pair) for column, pair in found[key]["counts"].items()}
        # Not vacuous: the record's members, the enum's three enumerators, the macros.
        fields = 2 if key == "1.2" else 3
        for column, least in (("records", 1), ("fields", fields), ("enumerators", 3)):
            checked, matched = counts[column]
            assert checked >= least and matched == checked, (key, column, counts[column])
    print({key: found[key]["counts"] for key in found})


SERVE = """
import ctypes, json, warnings
import cudart, cudart.errors
from cudart import _loader, _serving
out = {}
try:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        raw, checked = _serving.served("toyown")()
except cudart.errors.BindingsVersionError as exc:
    print(json.dumps({"refused": str(exc)}))
    raise SystemExit
lib = _loader.load_library("toyown")
out = {"raw": raw.__name__, "checked": checked.__name__, "version": lib.version,
       "found_by": lib.found_by, "path": lib.path,
       "warnings": [str(w.message) for w in caught]}
record = checked.toyownFill(3)
out["record"] = {name: getattr(record, name) for name, _ in type(record)._fields_}
out["size"] = ctypes.sizeof(record)
out["add"] = checked.toyownAdd(2, 3)
out["multiply"] = hasattr(checked, "toyownMultiply")
out["overflow"] = refused(checked.toyownAdd, 2**31 - 1, 1)
out["too_wide"] = refused(checked.toyownAdd, 2**31, 0)
if out["multiply"]:
    out["product"] = checked.toyownMultiply(300, 200)
    out["product_overflow"] = refused(checked.toyownMultiply, 300, 300)
    out["negative"] = refused(checked.toyownMultiply, -1, 2)
print(json.dumps(out))
"""


def _serve(toyown, lib: str | None = None, **kwargs):
    env = {"CUDART_TOYOWN_LIBRARY": str(toyown["libs"][lib])} if lib else None
    return child(toyown["site"], REFUSED + SERVE, env=env, **kwargs)


def test_the_exact_release_serves_with_its_layout_and_functions(toyown):
    found = _serve(toyown, "1.3.2")
    assert (found["raw"], found["checked"]) == (
        "cudart.toyown_10300",
        "cudart.toyown_checked_10300",
    )
    assert (found["version"], found["found_by"]) == (10302, "$CUDART_TOYOWN_LIBRARY")
    # 1.3.2 is release 1.3: its patch is dropped, and no warning is given.
    assert found["warnings"] == []
    assert found["record"] == {"id": 3, "weight": 1.5, "flags": 7} and found["size"] == 24
    assert found["add"] == 5 and found["multiply"] is True and found["product"] == 60000
    assert found["overflow"] == [
        "ToyownErrorOverflow",
        ["ToyownError", "StatusError"],
        "TOYOWN_ERROR_OVERFLOW (2): the result does not fit its type",
    ]
    assert found["product_overflow"][0] == "ToyownErrorOverflow"
    # What does not fit C's type never reaches C.
    assert found["too_wide"][0] == "OverflowError" and found["negative"][0] == "OverflowError"


def test_the_older_release_has_its_own_api(toyown):
    found = _serve(toyown, "1.2.4")
    assert (found["raw"], found["version"], found["warnings"]) == ("cudart.toyown_10200", 10204, [])
    # 1.2's record: an int and a float, no flags; and no toyownMultiply.
    assert found["record"] == {"id": 3, "weight": 1.5} and found["size"] == 8
    assert found["multiply"] is False and found["add"] == 5


def test_a_newer_minor_is_served_by_the_newest_older_release_with_a_warning(toyown):
    found = _serve(toyown, "1.4.0")
    assert (found["raw"], found["version"]) == ("cudart.toyown_10300", 10400)
    assert found["warnings"] == [
        "toyown library: no bindings for toyown library 1.4; using the toyown library 1.3 "
        "bindings"
    ]
    assert found["record"]["flags"] == 7


def test_a_newer_major_is_refused_naming_the_releases_and_the_add_command(toyown):
    found = _serve(toyown, "2.0.0")
    assert found == {
        "refused": "no bindings fit toyown library 2.0; available: 1.2, 1.3. Generate them "
        "with `cudart-bindgen add --family toyown 2.0`, or point $CUDART_TOYOWN_LIBRARY at "
        "a libtoyown of a release listed"
    }


def test_the_toyown_wheel_is_found_by_its_descriptor(toyown):
    found = _serve(toyown, extra_path=str(toyown["wheel_site"]))
    assert found["found_by"] == "the toyown wheel"
    assert found["path"] == str(
        toyown["wheel_site"] / "nvidia" / "toyown" / "lib" / "libtoyown.so.1"
    )
    assert (found["raw"], found["version"], found["warnings"]) == ("cudart.toyown_10300", 10302, [])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("--family", "toyown", "1.4", "1.100"),
            "toyown: release 1.100 does not fit its numbering",
        ),
        (("--family", "nvrtc", "12.6"), "--family nvrtc: nvrtc is on the CUDA axis"),
        (("--family", "toyown", "--new"), "give the toyown releases to add"),
        (("--family", "toyown", "2.0"), "no [releases.toyown.majors.2] table for toyown 2.0"),
    ],
)
def test_a_bad_add_is_one_line_and_writes_nothing(toyown, tmp_path, args, message):
    manifest = tmp_path / "manifest.toml"
    shutil.copy(toyown["manifest"], manifest)
    out = tmp_path / "generated"
    common = ("--manifest", str(manifest), "--output", str(out))
    common += ("--families", str(toyown["root"] / "families"))
    env = {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(toyown["index"])}
    proc = bindgen(*common, "add", *args, "--snapshots", str(tmp_path / "s"), env=env)
    errors = [line for line in proc.stderr.splitlines() if line.startswith("cudart-bindgen")]
    assert proc.returncode == 2 and len(errors) == 1, proc.stderr
    assert message in errors[0], errors[0]
    assert manifest.read_bytes() == toyown["manifest"].read_bytes()
    assert not out.exists() and not (tmp_path / "s").exists()
