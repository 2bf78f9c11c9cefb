"""The family descriptors (families/<name>.toml, generator/families.py): each family's
facts are declared there once, checked key by key, rendered into the table the runtime
reads (cudart._versions FAMILIES), and written nowhere else in the product."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

import cudart._contract
import cudart._versions
from generator.families import FAMILIES_DIR, FamilyError, families, load, runtime_table
from generator.manifest import Manifest

REPO = Path(__file__).resolve().parents[2]


def test_the_generated_table_is_the_descriptors_with_the_contracts_keys():
    table = runtime_table()
    assert cudart._versions.FAMILIES == table
    assert sorted(table) == ["driver", "nvjitlink", "nvrtc", "runtime"]
    for name, row in table.items():
        assert tuple(row) == cudart._contract.FAMILY_KEYS, name


def test_every_manifest_surface_has_a_descriptor_and_every_major_every_family():
    manifest = Manifest.load()
    names = {f.name for f in families()}
    for major in manifest.majors.values():
        assert set(major.surfaces) == names, major.name


def _product_files() -> list[Path]:
    found = [p for p in (REPO / "cudart").rglob("*.py") if not p.is_symlink()]
    found += sorted((REPO / "generator").rglob("*.py"))
    return [*found, REPO / "setup.py"]


def _code_strings(path: Path) -> list[tuple[int, str]]:
    """The string constants of a module that are not docstrings (f-strings' parts too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = body[0] if body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    ]


def test_no_product_code_spells_a_fact_of_a_descriptor():
    """How each library is found and asked its version is its descriptor's alone: no
    module of cudart/ or generator/ has one of those names in its code (comments and
    docstrings may mention them)."""
    facts = set()
    for f in families():
        lookup = f.lookup
        facts |= {lookup.env, lookup.dist_prefix, *lookup.sonames, *lookup.dlls}
        facts |= {folder for folder, _ in lookup.wheel_libraries}
        facts |= {file for _, file in lookup.wheel_libraries}
        facts |= {f.probe.function, f.probe.symbols}
    facts.discard("")
    # The manifest's own rules (a system_library is a soname) and the driver's
    # stand-in's comment name libcuda.so.1 as an example, not as a lookup.
    examples = {
        ("generator/manifest.py", "libcuda.so.1"),
        ("generator/render/stub.py", "libcuda.so.1"),
    }
    found = []
    for path in _product_files():
        where = str(path.relative_to(REPO))
        for line, text in _code_strings(path):
            for fact in sorted(facts):
                if fact in text and (where, fact) not in examples:
                    found.append(f"{where}:{line}: {fact!r}")
    assert not found, "\n".join(found)


VALID = """\
name = "toy"
api = "toy"
provider = "toy library"
library = "libtoy"
compiled = false
axis = "cuda"
serve = "own"

[lookup]
env = "CUDART_TOY_LIBRARY"
sonames = ["libtoy.so.1"]
install = "Set ${env} to libtoy's path"
missing_error = "ToyNotFoundError"

[probe]
function = "toyGetVersion"
form = "version"
failure = "raise"
"""


def _write(folder: Path, text: str, name: str = "toy") -> Path:
    path = folder / f"{name}.toml"
    path.write_text(text)
    return path


def test_a_minimal_descriptor_takes_every_default(tmp_path):
    f = load(_write(tmp_path, VALID))
    assert (f.raw, f.checked, f.compiled_module) == ("toy", "toy_checked", "_fast_toy")
    assert f.module_name(12050) == "toy_12050"
    assert f.checked_module_name(13000) == "toy_checked_13000"
    assert f.lookup.wheel_libraries == () and not f.lookup.toolkit
    assert (f.error_base, f.gil, f.probe.symbols) == ("", (), "")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (('name = "toy"', 'name = "other"'), "toy.toml: name is 'other': a descriptor is named"),
        (('serve = "own"', 'serve = "mine"'), "toy.toml: serve is 'mine': one of runtime, own"),
        (('axis = "cuda"', 'axis = "nccl"'), "toy.toml: axis is 'nccl': one of cuda"),
        (("compiled = false", "compiled = 0"), "toy.toml: compiled must be a bool, not 0"),
        (('form = "version"', 'form = "triple"'), "toy.toml: probe.form is 'triple'"),
        (('env = "CUDART_TOY_LIBRARY"', 'env = "lower"'), "toy.toml: lookup.env: 'lower'"),
        (('sonames = ["libtoy.so.1"]', "sonames = []"), "toy.toml: lookup.sonames is missing"),
        (('sonames = ["libtoy.so.1"]', 'sonames = ["../x.so"]'), "lookup.sonames: '../x.so'"),
        (("${env} to", "{path} to"), "toy.toml: lookup.install: only {env} may be filled in"),
        (('api = "toy"\n', 'api = "toy"\ncolour = 1\n'), "toy.toml: unknown keys colour"),
        (('failure = "raise"', 'failure = "raise"\nextra = 1'), "toy.toml: probe: unknown keys"),
        (('library = "libtoy"\n', ""), "toy.toml: library is missing"),
        (("[probe]", '[status]\nerror_base = "ToyError"\n\n[probe]'), "error_base and result go"),
        (("[probe]", '[gil]\ntoyGetVersion = "a constant"\n\n[probe]'), "only a compiled family"),
        (("[lookup]", '[lookup]\nwheel_libraries = [["lib", "libtoy.so.1"]]'), "needs `wheel`"),
    ],
)
def test_a_malformed_descriptor_names_its_file_and_key(tmp_path, change, message):
    old, new = change
    assert old in VALID
    with pytest.raises(FamilyError) as caught:
        load(_write(tmp_path, VALID.replace(old, new, 1)))
    assert message in str(caught.value)


def test_not_toml_is_a_family_error(tmp_path):
    with pytest.raises(FamilyError, match="toy.toml: not a readable TOML descriptor"):
        load(_write(tmp_path, "name = "))


def test_a_folder_of_descriptors_needs_one_runtime_family_and_distinct_modules(tmp_path):
    for path in FAMILIES_DIR.glob("*.toml"):
        shutil.copy(path, tmp_path)
    _write(tmp_path, VALID)
    assert [f.name for f in families(tmp_path)] == [
        "driver",
        "nvjitlink",
        "nvrtc",
        "runtime",
        "toy",
    ]
    clash = tmp_path / "clash"
    shutil.copytree(tmp_path, clash)
    _write(clash, VALID.replace("[lookup]", '[modules]\nraw = "nvrtc"\n\n[lookup]'))
    with pytest.raises(FamilyError, match="toy.toml: module prefix 'nvrtc' is nvrtc's already"):
        families(clash)
    alone = tmp_path / "alone"
    alone.mkdir()
    _write(alone, VALID)
    with pytest.raises(FamilyError, match="exactly one family is served by the runtime's rule"):
        families(alone)
    with pytest.raises(FamilyError, match="no family descriptors in"):
        families(tmp_path / "empty")
