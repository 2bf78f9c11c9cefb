"""An own-axis family's tables of the manifest ([releases.<family>], generator/manifest.py)
and its descriptor's numbering ([releases] of families/<name>.toml, generator/families.py):
read, checked with errors that name the place, written back as read, and the numbers a
release key and a probed version both map into."""

from __future__ import annotations

import dataclasses
import re

import pytest

from cudart._serving import fitting_version
from generator.families import FamilyError, load
from generator.manifest import Major, Manifest, ManifestError, UnknownVersionError, WheelPin

WHEEL = {
    "package": "toyown",
    "include": "nvidia/toyown/include",
    "headers": ["toyown.h"],
    "library": "nvidia/toyown/lib/libtoyown.so.1",
}


def _pin(version: str) -> dict[str, str]:
    return {
        "package": "toyown",
        "version": version,
        "wheel": f"toyown-{version}-py3-none-manylinux_2_17_x86_64.whl",
        "sha256": "a" * 64,
        "record_sha256": "b" * 64,
    }


def _with_releases(manifest: Manifest) -> str:
    """The checkout's manifest with a toyown major table and releases 1.2 and 1.10."""
    text = manifest.dumps()
    import tomli_w

    releases = {
        "releases": {
            "toyown": {
                "majors": {"1": {"toyown": WHEEL}},
                "versions": {
                    "1.10": {"major": "1", "cuda": "12.5", "toyown": _pin("1.10.0")},
                    "1.2": {"major": "1", "cuda": "12.5", "toyown": _pin("1.2.4")},
                },
            }
        }
    }
    return text + "\n" + tomli_w.dumps(releases)


def test_releases_round_trip_after_the_cuda_tables_which_stay_as_they_were(manifest):
    loaded = Manifest.loads(_with_releases(manifest))
    track = loaded.track_of("toyown")
    # Numeric order, as the CUDA keys are.
    assert track.keys() == ["1.2", "1.10"]
    pin = loaded.release("toyown", "1.10")
    assert (pin.track, pin.cuda, pin.major) == ("toyown", "12.5", "1")
    assert pin.wheel("toyown") == WheelPin(**_pin("1.10.0"))
    text = loaded.dumps()
    assert Manifest.loads(text).dumps() == text
    # Below the CUDA tables, which are byte for byte the checkout's.
    assert text.startswith(manifest.dumps().rstrip("\n") + "\n\n[releases.toyown.majors.1.toyown]")
    # Every wheel of an own major is the family's: no `surface` is written for it.
    assert "surface" not in text[text.index("\n[releases") :]
    assert loaded.units()[-2:] == ["toyown 1.2", "toyown 1.10"]
    assert loaded.units()[:-2] == manifest.keys()
    # No releases: the manifest is written as before.
    assert dataclasses.replace(loaded, releases={}).dumps() == manifest.dumps()


def test_with_release_adds_in_order_and_an_unknown_release_names_the_add_command(manifest):
    loaded = Manifest.loads(_with_releases(manifest))
    pin = dataclasses.replace(loaded.release("toyown", "1.2"), key="1.3")
    added = loaded.with_release(pin)
    assert added.track_of("toyown").keys() == ["1.2", "1.3", "1.10"]
    assert "1.3" not in loaded.track_of("toyown").versions
    with pytest.raises(UnknownVersionError) as caught:
        loaded.release("toyown", "1.4")
    assert str(caught.value) == (
        "toyown 1.4 is not in the manifest (known: 1.2, 1.10); run "
        "`cudart-bindgen add --family toyown 1.4` to pin it"
    )
    with pytest.raises(
        ManifestError, match=r"no \[releases.toyown.majors.2\] table for toyown 2.0"
    ):
        loaded.track_of("toyown").major_for("2.0")


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            'cuda = "12.5"',
            'cuda = "11.8"',
            "releases.toyown.versions.\"1.10\".cuda is '11.8', which [versions] does not pin",
        ),
        (
            'cuda = "12.5"',
            'cuda = "12.05"',
            "releases.toyown.versions.\"1.10\".cuda: malformed CUDA version '12.05'",
        ),
        ('cuda = "12.5"\n', "", 'releases.toyown.versions."1.10".cuda must be a string'),
        (
            'major = "1"\ncuda',
            'major = "2"\ncuda',
            "releases.toyown.versions.\"1.10\".major is '2', which has no "
            "[releases.toyown.majors.2]",
        ),
        (
            'package = "toyown"\nversion = "1.10.0"\nwheel = "toyown-',
            'package = "other"\nversion = "1.10.0"\nwheel = "other-',
            "releases.toyown.versions.\"1.10\".toyown.package is 'other', but "
            "releases.toyown.majors.1.toyown.package",
        ),
        (
            'sha256 = "aaaa',
            'sha256 = "zaaa',
            'releases.toyown.versions."1.10".toyown.sha256 is not 64 hex digits',
        ),
        (
            "[releases.toyown.majors.1.toyown]",
            '[releases.toyown.majors.1.toyown]\nsurface = "nvrtc"',
            "releases.toyown.majors.1: no wheel belongs to the toyown surface",
        ),
        (
            "[releases.toyown.majors.1.toyown]",
            "[releases.toyown.majors.01.toyown]",
            'releases.toyown.majors."01": a major is a major version number',
        ),
        (
            "[releases.toyown.majors.1.toyown]",
            "[releases.Toy.majors.1.toyown]",
            'releases."Toy": a family\'s name',
        ),
        (
            '[releases.toyown.versions."1.10"]',
            '[releases.toyown.versions."1.010"]',
            'releases.toyown.versions."1.010": malformed CUDA version',
        ),
        (
            '[releases.toyown.versions."1.10"]\n',
            '[releases.toyown.versions."1.10"]\ncolour = 1\n',
            'releases.toyown.versions."1.10".colour must be a table',
        ),
    ],
)
def test_a_malformed_release_table_names_its_place(manifest, old, new, message):
    text = _with_releases(manifest)
    assert old in text, old
    with pytest.raises(ManifestError) as caught:
        Manifest.loads(text.replace(old, new, 1))
    assert message in str(caught.value)


def test_a_cuda_version_naming_cuda_is_refused(manifest):
    text = manifest.dumps().replace(
        '[versions."12.5"]\nmajor = "12"', '[versions."12.5"]\nmajor = "12"\ncuda = "12.5"'
    )
    with pytest.raises(ManifestError, match=r'versions."12.5".cuda: only an own-axis release'):
        Manifest.loads(text)


def test_an_own_major_needs_its_own_wheels_only():
    from generator.manifest import WheelKind

    own = WheelKind.from_toml("toyown", WHEEL, "w", "toyown")
    other = dataclasses.replace(own, role="extra", surface="nvrtc", library=None)
    with pytest.raises(
        ManifestError, match="every wheel of an own-axis family's major is of its surface"
    ):
        Major("1", (own, other), "toyown")


OWN = """\
name = "toyown"
api = "toyown"
provider = "toyown library"
library = "libtoyown"
compiled = false
axis = "own"
serve = "own"

[releases]
major_scale = 10000
minor_scale = 100
cuda = "12"

[lookup]
env = "CUDART_TOYOWN_LIBRARY"
sonames = ["libtoyown.so.1"]
install = "Set ${env} to libtoyown's path"
missing_error = "ToyownNotFoundError"

[probe]
function = "toyownGetVersion"
form = "version"
failure = "raise"
"""


def _load(tmp_path, text: str):
    path = tmp_path / "toyown.toml"
    path.write_text(text)
    return load(path)


def test_an_own_axis_descriptor_numbers_its_releases(tmp_path):
    f = _load(tmp_path, OWN)
    assert (f.axis, f.scale, f.releases.cuda) == ("own", (10000, 100), "12")
    # NCCL's rule: a release key and a probed version map into the same numbers.
    assert f.number("1.3") == 10300 and f.number("2.21") == 22100
    assert f.module_name(f.number("1.3")) == "toyown_10300"
    with pytest.raises(FamilyError, match="release 1.100 does not fit its numbering"):
        f.number("1.100")


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "major_scale = 10000",
            "major_scale = 150",
            "toyown.toml: releases: major_scale (150) is a multiple of minor_scale (100)",
        ),
        ("minor_scale = 100", "minor_scale = 0", "minor_scale at least 1"),
        (
            "minor_scale = 100",
            'minor_scale = "100"',
            "toyown.toml: releases.minor_scale must be a int",
        ),
        ("major_scale = 10000\n", "", "toyown.toml: releases.major_scale is missing"),
        (
            'cuda = "12"',
            'cuda = "twelve"',
            "toyown.toml: releases.cuda: 'twelve' is not a valid value",
        ),
        (
            'cuda = "12"',
            'cuda = "12.5"\npatch_scale = 1',
            "toyown.toml: releases: unknown keys patch_scale",
        ),
        (
            'serve = "own"',
            'serve = "runtime"',
            "toyown.toml: serve is 'runtime': an own-axis family is served by its own "
            "library's releases",
        ),
        (
            "compiled = false",
            "compiled = true",
            "toyown.toml: compiled: an own-axis family is served by ctypes",
        ),
        ('axis = "own"', 'axis = "cuda"', "toyown.toml: releases: only an own-axis family"),
    ],
)
def test_a_malformed_own_axis_descriptor_names_its_file_and_key(tmp_path, old, new, message):
    assert old in OWN
    with pytest.raises(FamilyError) as caught:
        _load(tmp_path, OWN.replace(old, new, 1))
    assert message in str(caught.value)


def test_an_own_axis_descriptor_needs_its_numbering(tmp_path):
    text = OWN[: OWN.index("[releases]")] + OWN[OWN.index("[lookup]") :]
    with pytest.raises(
        FamilyError, match=re.escape("toyown.toml: releases.major_scale is missing")
    ):
        _load(tmp_path, text)


@pytest.mark.parametrize(
    ("probed", "chosen"),
    [
        (10302, 10300),  # 1.3.2 is release 1.3: exact
        (10300, 10300),
        (10400, 10300),  # a newer minor: the newest older release of its major
        (10250, 10200),
        (10100, None),  # older than every release of its major
        (20000, None),  # a newer major
    ],
)
def test_the_serving_rule_on_an_own_scale(probed, chosen):
    assert fitting_version(probed, [10200, 10300], (10000, 100)) == chosen


def test_the_serving_rule_on_cudas_scale_is_the_runtimes():
    available = [12040, 12050, 13000]
    assert fitting_version(12050, available, (1000, 10)) == 12050
    assert fitting_version(12090, available, (1000, 10)) == 12050
    assert fitting_version(13010, available, (1000, 10)) == 13000
    assert fitting_version(12030, available, (1000, 10)) is None


PROBE_PARTS = "int parts(int *major, int *minor) { *major = 2; *minor = 21; return 0; }\n"


def test_a_major_minor_probe_is_numbered_on_the_familys_scale(tmp_path):
    """A probe that answers (major, minor) is numbered as its family's releases are: NCCL's
    scale makes (2, 21) 22100, CUDA's (12, 5) 12050."""
    import ctypes
    import subprocess

    from cudart._loader import library_version

    source = tmp_path / "parts.c"
    source.write_text(PROBE_PARTS)
    lib = tmp_path / "libparts.so"
    subprocess.run(["gcc", "-shared", "-fPIC", str(source), "-o", str(lib)], check=True)
    row = {
        "probe": "parts",
        "probe_form": "major_minor",
        "probe_unsigned": False,
        "probe_failure": "raise",
        "probe_symbols": "",
        "missing_error": "LibraryNotFoundError",
        "library": "libparts",
    }
    cdll = ctypes.CDLL(str(lib))
    assert library_version({**row, "scale": (10000, 100)}, cdll, str(lib)) == 22100
    assert library_version({**row, "scale": (1000, 10)}, cdll, str(lib)) == 2210
