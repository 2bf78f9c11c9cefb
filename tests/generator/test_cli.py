"""The cudart-bindgen command line: check, generate, add, and its one-line errors."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from suite import GENERATED, REPO, bindgen, run_python

from generator.generate import merged_files
from generator.views import read_merged, view_source


def _scratch_manifest(tmp_path, keys: tuple[str, ...]) -> list[str]:
    """Options for the commands on a manifest of `keys` only, and an --output in tmp_path."""
    from generator.manifest import Manifest

    full = Manifest.load(REPO / "cuda_headers_manifest.toml")
    manifest = tmp_path / "manifest.toml"
    manifest.write_text(type(full)(full.majors, {k: full.get(k) for k in keys}).dumps())
    return ["--manifest", str(manifest), "--output", str(tmp_path / "generated")]


def test_check_passes_on_the_committed_tree():
    proc = bindgen("check")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "matches the generator" in proc.stdout


def test_check_names_every_stale_stray_and_missing_file_and_generate_mends_them(tmp_path):
    """A scratch tree of two versions (the whole committed tree is the test above's, once
    a run), with one of each defect planted at once, so one check names them all and one
    generate --all mends them:
    - a runtime module and the version-set stub changed: stale;
    - a stray module, and the compiled C of a version the manifest no longer has (issue
      19: generated/ holds the C too): not made by the generator, and removed;
    - the driver's raw module changed and its checked module deleted (cuda.h's modules
      are generator output like the runtime's): stale and missing."""
    options = _scratch_manifest(tmp_path, ("12.4", "12.5"))
    out = tmp_path / "generated"
    proc = bindgen(*options, "generate", "--all")
    assert proc.returncode == 0, proc.stderr
    assert "[12.5 driver] parsing cuda.h" in proc.stderr
    raw, checked = out / "_driver_12.py", out / "_driver_checked_12.py"
    for merged, view in ((raw, "driver_12050"), (checked, "driver_checked_12050")):
        found = read_merged(merged)
        assert found is not None and found.project(12050) == view_source(view)
    pristine = {p.name: p.read_bytes() for p in out.iterdir()}
    victim = out / "_sys_12.py"  # 12.4's and 12.5's sys modules, merged
    victim.write_text(victim.read_text().replace("cudaSuccess = 0", "cudaSuccess = 1", 1))
    (out / "_sys_99.py").write_text("# stray\n")
    stub = out / "_latest.pyi"
    stub.write_text(stub.read_text().replace("import *", "import cudaMalloc", 1))
    stale_c = out / "_fast_12040.c"
    stale_c.write_text("/* a removed version's */\n")
    raw.write_text(raw.read_text().replace("CUDA_SUCCESS = 0", "CUDA_SUCCESS = 1", 1))
    checked.unlink()
    proc = bindgen(*options, "check")
    assert proc.returncode == 1
    for line in (
        "_latest.pyi: stale",
        "_sys_12.py: stale",
        "_sys_99.py: not made by the generator",
        "_fast_12040.c: not made by the generator",
        "_driver_12.py: stale",
        "_driver_checked_12.py: missing",
    ):
        assert line in proc.stdout, (line, proc.stdout)
    assert "_checked_12.py" not in proc.stdout.replace("_driver_checked_12.py", "")
    proc = bindgen(*options, "generate", "--all")
    assert proc.returncode == 0, proc.stderr
    assert {p.name: p.read_bytes() for p in out.iterdir()} == pristine
    assert bindgen(*options, "check").returncode == 0


def test_generate_one_version_writes_the_same_bytes(tmp_path):
    """From a parse made now (--no-model-cache): the other commands of this file render
    from the model cache (generator/model_cache.py), and this one proves that a clean
    parse makes the committed bytes too: the version's compiled C, and each of its
    modules as the committed merged modules give it back (a scratch manifest of the
    version alone, so its merged modules hold it alone)."""
    options = _scratch_manifest(tmp_path, ("12.2",))
    out = tmp_path / "generated"
    proc = bindgen(*options, "generate", "12.2", "--no-model-cache")
    assert proc.returncode == 0, proc.stderr
    # A version is the raw and checked module of each surface (the runtime's, NVRTC's,
    # nvJitLink's, the driver's), merged per major, and the compiled backend of the
    # runtime and the driver; the version-set files come along, and the newest
    # version's runtime modules as the type checkers' stubs.
    layers = [f"{f}_12" for f in ("_checked", "_driver", "_driver_checked", "_nvjitlink")]
    layers += ["_nvjitlink_checked_12", "_nvrtc_12", "_nvrtc_checked_12", "_sys_12"]
    names = sorted(
        ["__init__.py", "_fast_12.c", "_fast_driver_12.c", "_latest.pyi", "_versions.py"]
        + [f"{layer}.py" for layer in layers]
        + ["checked_12020.pyi", "sys_12020.pyi"]
    )
    assert sorted(p.name for p in out.iterdir()) == names
    assert (out / "__init__.py").read_bytes() == (GENERATED / "__init__.py").read_bytes()
    # The compiled C of a manifest of 12.2 alone holds 12.2's view alone (the committed
    # file merges every 12.x view, so the bytes differ; the judge compiles each view).
    for name in ("_fast_12.c", "_fast_driver_12.c"):
        text = (out / name).read_text()
        assert "static cudart_view cudart_view_12020 = {" in text
        assert "cudart_view_12050" not in text
    for layer in layers:
        view = f"{layer[1:-3]}_12020"
        merged = read_merged(out / f"{layer}.py")
        assert merged is not None and merged.versions == (12020,)
        assert merged.project(12020) == view_source(view), view
    assert (out / "sys_12020.pyi").read_text() == view_source("sys_12020")
    assert "[12.2] parsing cuda_runtime_api.h" in proc.stderr  # progress is shown
    assert "[12.2 nvrtc] parsing nvrtc.h" in proc.stderr
    assert "model cache" not in proc.stderr


def test_generate_one_version_keeps_the_others_of_its_major(tmp_path):
    """`generate 12.5` into a tree that has 12.x's merged modules merges 12.5 with the
    others (the compiled C from every 12.x version's pieces, which no file keeps, so
    those are rendered too): the committed tree comes back."""
    out = tmp_path / "generated"
    shutil.copytree(GENERATED, out, ignore=shutil.ignore_patterns("__pycache__"))
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    (out / "_sys_12.py").write_text(
        (out / "_sys_12.py").read_text().replace("12.5 runtime API", "12.5 RUNTIME API")
    )
    proc = bindgen("--output", str(out), "generate", "12.5")
    assert proc.returncode == 0, proc.stderr
    assert "[12.5] rendering" in proc.stderr and "[13.0]" not in proc.stderr
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_unknown_version_is_one_line(tmp_path):
    out = tmp_path / "generated"
    proc = bindgen("--output", str(out), "generate", "11.0")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "11.0" in lines[0] and "12.5" in lines[0]
    assert not out.exists()


def test_network_failure_is_one_line_and_writes_nothing(tmp_path):
    manifest = tmp_path / "manifest.toml"
    shutil.copy(REPO / "cuda_headers_manifest.toml", manifest)
    out = tmp_path / "generated"
    env = {
        "CUDART_BINDGEN_CACHE": str(tmp_path / "cache"),
        "PIP_INDEX_URL": "http://127.0.0.1:9/simple",
        "PIP_RETRIES": "0",
        "PIP_TIMEOUT": "2",
    }
    proc = bindgen("--manifest", str(manifest), "--output", str(out), "generate", "12.5", env=env)
    assert proc.returncode == 2
    errors = [e for e in proc.stderr.splitlines() if e.startswith("cudart-bindgen: error")]
    assert len(errors) == 1 and "could not download" in errors[0], proc.stderr
    assert not out.exists()
    assert manifest.read_bytes() == (REPO / "cuda_headers_manifest.toml").read_bytes()


def _repo_copy(tmp_path, drop: str):
    """A manifest, generated/ and snapshots folder like the checkout's, without `drop`."""
    from generator.manifest import Manifest

    m = Manifest.load(REPO / "cuda_headers_manifest.toml")
    m = type(m)(m.majors, {k: v for k, v in m.versions.items() if k != drop})
    manifest = tmp_path / "manifest.toml"
    manifest.write_text(m.dumps())
    number = Manifest.load(REPO / "cuda_headers_manifest.toml").get(drop).number
    out = tmp_path / "generated"
    shutil.copytree(GENERATED, out, ignore=shutil.ignore_patterns(f"*_{number}.pyi", "__pycache__"))
    # The merged modules of its major, without it (what they were before it was added).
    without = {}
    for path in out.glob(f"_*_{number // 1000}.py"):
        merged = read_merged(path)
        assert merged is not None, path
        without[path.stem] = {v: merged.project(v) for v in merged.versions if v != number}
    for name, text in merged_files(without).items():
        (out / name).write_text(text)
    snapshots = tmp_path / "snapshots"
    shutil.copytree(
        REPO / "tests" / "snapshots",
        snapshots,
        ignore=shutil.ignore_patterns(f"*outputs_{drop}.txt"),  # nvrtc_outputs_ too
    )
    return manifest, out, snapshots


def test_add_brings_a_version_back_exactly(tmp_path):
    """`add X.Y` is the whole job: on a tree without 12.6, it pins the same wheels, and
    writes the same modules, the same snapshot and the same version-set stub as the
    checkout has, so the result is the committed state byte for byte."""
    manifest, out, snapshots = _repo_copy(tmp_path, "12.6")
    proc = bindgen(
        "--manifest",
        str(manifest),
        "--output",
        str(out),
        "add",
        "12.6",
        "--snapshots",
        str(snapshots),
    )
    assert proc.returncode == 0, proc.stderr
    assert manifest.read_bytes() == (REPO / "cuda_headers_manifest.toml").read_bytes()
    # Every wheel of the family, each at its own newest patch of 12.6.
    assert "nvidia-cuda-profiler-api-cu12==12.6.77" in proc.stderr
    for path in sorted(GENERATED.glob("*.py*")):
        assert (out / path.name).read_bytes() == path.read_bytes(), path.name
    for path in sorted((REPO / "tests" / "snapshots").iterdir()):
        assert (snapshots / path.name).read_bytes() == path.read_bytes(), path.name
    # The new snapshot is printed for review, line by line.
    lines = (REPO / "tests" / "snapshots" / "outputs_12.6.txt").read_text().count("\n")
    assert f"outputs_12.6.txt: {lines} functions" in proc.stderr
    assert "  cudaMalloc(size:scalar) -> (devPtr:address)" in proc.stderr
    # The new module binds to the real 12.6 library it was generated for.
    from generator.fetch import fetch_version
    from generator.manifest import Manifest

    lib = fetch_version(Manifest.load(manifest), "12.6", lambda m: None).library
    code = (
        "import ctypes, importlib.util, cudart\n"
        "spec = importlib.util.spec_from_file_location("
        f"'cudart.sys_12060', {str(out / '_sys_12.py')!r})\n"
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
        "v = ctypes.c_int(); m.cudaRuntimeGetVersion(ctypes.byref(v))\n"
        "print(m.CUDA_VERSION, v.value)\n"
    )
    assert run_python(code, env={"CUDART_LIBRARY": str(lib)}).stdout.split() == ["12060", "12060"]


def test_add_new_finds_the_minors_the_manifest_lacks(tmp_path):
    """`add --new` asks the registry for every minor of the manifest's majors and adds
    those the manifest lacks: here the newest, removed first."""
    from generator.manifest import Manifest

    newest = Manifest.load(REPO / "cuda_headers_manifest.toml").keys()[-1]
    manifest, out, snapshots = _repo_copy(tmp_path, newest)
    proc = bindgen(
        "--manifest",
        str(manifest),
        "--output",
        str(out),
        "add",
        "--new",
        "--snapshots",
        str(snapshots),
    )
    assert proc.returncode == 0, proc.stderr
    assert f"new on the registry: CUDA {newest}\n" in proc.stderr
    assert manifest.read_bytes() == (REPO / "cuda_headers_manifest.toml").read_bytes()
    assert sorted(p.name for p in out.glob("*.py*")) == sorted(
        p.name for p in GENERATED.glob("*.py*")
    )
    assert (out / "_latest.pyi").read_bytes() == (GENERATED / "_latest.pyi").read_bytes()
    # Nothing is missing any more: a second run finds nothing and writes nothing.
    again = bindgen(
        "--manifest",
        str(manifest),
        "--output",
        str(out),
        "add",
        "--new",
        "--snapshots",
        str(snapshots),
    )
    assert again.returncode == 0 and "has every released minor" in again.stderr


def test_add_needs_versions_or_new(tmp_path):
    proc = bindgen("--output", str(tmp_path / "g"), "add")
    assert proc.returncode == 2 and "--new" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_add_of_a_minor_that_does_not_exist_changes_nothing(tmp_path):
    manifest = tmp_path / "manifest.toml"
    shutil.copy(REPO / "cuda_headers_manifest.toml", manifest)
    before = manifest.read_bytes()
    proc = bindgen("--manifest", str(manifest), "--output", str(tmp_path / "g"), "add", "12.99")
    assert proc.returncode == 2
    assert "no release" in proc.stderr and "12.99" in proc.stderr
    assert manifest.read_bytes() == before
    assert not (tmp_path / "g").exists()


def test_console_script_is_installed():
    script = shutil.which(
        "cudart-bindgen", path=str(__import__("pathlib").Path(sys.executable).parent)
    )
    assert script, "make setup installs the cudart-bindgen console script"
    proc = subprocess.run([script, "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "generate" in proc.stdout


# ------------------------------------------------------------- one-line errors

NO_INDEX = {"PIP_INDEX_URL": "http://127.0.0.1:9/simple", "PIP_RETRIES": "0", "PIP_TIMEOUT": "2"}


def _one_error(proc: subprocess.CompletedProcess) -> str:
    """The one error line a failed command printed last, with no traceback."""
    assert proc.returncode == 2, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("cudart-bindgen")]
    assert len(errors) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.endswith(errors[0] + "\n"), proc.stderr
    return errors[0]


@pytest.mark.parametrize("key", ["12.05", "012.5", "\uff11\uff12.\uff15", "12.5\n"])
def test_add_of_a_non_canonical_key_is_refused_before_anything(tmp_path, key):
    """`add 12.05` pinned ==12.05.*, which the index resolves to 12.5.82, and rendered
    sys_12050 a second time. Refused before the registry is asked (none is reachable
    here), and before the valid key given first is added."""
    manifest = tmp_path / "manifest.toml"
    shutil.copy(REPO / "cuda_headers_manifest.toml", manifest)
    out = tmp_path / "g"
    args = ("--manifest", str(manifest), "--output", str(out), "add", "12.99", key)
    error = _one_error(bindgen(*args, env=NO_INDEX))
    assert error.startswith(f"cudart-bindgen: error: malformed CUDA version {key!r}"), error
    assert manifest.read_bytes() == (REPO / "cuda_headers_manifest.toml").read_bytes()
    assert not out.exists()


def test_a_cache_that_is_a_file_is_one_line(tmp_path):
    cache = tmp_path / "cache"
    cache.write_text("not a folder\n")
    out = tmp_path / "generated"
    proc = bindgen(
        "--output", str(out), "generate", "12.5", env={"CUDART_BINDGEN_CACHE": str(cache)}
    )
    error = _one_error(proc)
    assert error == (
        f"cudart-bindgen: error: cannot use {cache} as the cache (it is not a folder); "
        "set $CUDART_BINDGEN_CACHE to a folder"
    )
    assert cache.read_text() == "not a folder\n" and not out.exists()
    # Below a file, too.
    proc = bindgen("outputs", "12.5", env={"CUDART_BINDGEN_CACHE": str(cache / "sub")})
    assert "Not a directory" in _one_error(proc)


@pytest.mark.parametrize(
    "command",
    [("generate", ""), ("generate", " "), ("generate", "--all", ""), ("outputs", "")],
)
def test_an_empty_version_is_one_line_and_writes_nothing(tmp_path, command):
    """`generate ""` (an unset shell variable) was `generate --all`: it replaced the whole
    tree. Here the manifest holds one version, so the old code's run was short, and
    wrote that version into --output."""
    options = _scratch_manifest(tmp_path, ("12.5",))
    error = _one_error(bindgen(*options, *command))
    if "--all" in command:
        assert error == "cudart-bindgen: error: give a version or --all, not both"
    else:
        assert error.startswith(f"cudart-bindgen: error: malformed CUDA version {command[1]!r}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manifest.toml"]


def _limited_memory() -> None:
    """The child's address space capped (at 2 GiB): a manifest read without bound fails
    there at once with MemoryError, instead of taking the machine's memory."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


@pytest.mark.parametrize("kind", ["fifo", "/dev/zero", "folder", "huge", "over the bound"])
def test_a_manifest_that_is_no_file_or_too_large_is_one_line(tmp_path, kind):
    """A FIFO hung the command, /dev/zero and a huge (sparse) file read until
    MemoryError; each is now refused by its type or its size, reading at most the bound."""
    import os

    from generator.manifest import MAX_MANIFEST_BYTES

    path = tmp_path / "manifest.toml"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "/dev/zero":
        path = Path("/dev/zero")
    elif kind == "folder":
        path.mkdir()
    else:
        with open(path, "wb") as f:
            f.truncate(64 << 30 if kind == "huge" else MAX_MANIFEST_BYTES + 1)
    out = tmp_path / "generated"
    proc = subprocess.run(
        [sys.executable, "-m", "generator", "--manifest", str(path), "--output", str(out)]
        + ["generate", "12.5"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=30,  # the FIFO hung the old code
        preexec_fn=_limited_memory,
    )
    error = _one_error(proc)
    what = {"fifo": "a FIFO", "/dev/zero": "a character device", "folder": "a folder"}
    if kind in what:
        assert error == (
            f"cudart-bindgen: error: manifest {path} is not a regular file ({what[kind]})"
        )
    else:
        assert error == (
            f"cudart-bindgen: error: manifest {path} is larger than "
            f"{MAX_MANIFEST_BYTES >> 20} MiB: not a manifest"
        )
    assert not out.exists()


@pytest.mark.parametrize("command", [("generate", "12.5"), ("generate", "--all"), ("check",)])
def test_an_output_that_is_a_file_is_one_line(tmp_path, command):
    """Found before any rendering: --all once exchanged the file with the new folder."""
    out = tmp_path / "generated"
    out.write_text("mine\n")
    error = _one_error(bindgen("--output", str(out), *command))
    assert error == f"cudart-bindgen: error: --output {out} exists and is not a folder"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["generated"]
    assert out.read_text() == "mine\n"


# Ctrl-C at a step of `generate`: the step replaced by one that raises KeyboardInterrupt.
INTERRUPTED = r"""
import sys
from generator import cli

def interrupt(*args, **kwargs):
    raise KeyboardInterrupt

cli.%s = interrupt
sys.exit(cli.main([*%r, "generate", "12.2"]))
"""


@pytest.mark.parametrize(
    "step, written",
    [("version_files", False), ("link_package", True)],
    ids=["before-writing", "after-the-swap"],
)
def test_an_interrupt_says_whether_the_output_changed(tmp_path, step, written):
    out = tmp_path / "generated"
    options = _scratch_manifest(tmp_path, ("12.2",))
    proc = run_python(INTERRUPTED % (step, options), check=False)
    assert proc.returncode == 130, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert (out / "_checked_12.py").is_file() == written
    if written:
        assert last.startswith(f"cudart-bindgen: interrupted while writing {out};"), last
        assert "cudart-bindgen check" in last and "unchanged" not in last
    else:
        assert last == "cudart-bindgen: interrupted; generated/ is unchanged"


def test_the_package_links_generated_as_a_folder(tmp_path, monkeypatch):
    """cudart/ reaches generated/ through few links (issue 32): the folder as
    cudart/_generated/ (the merged modules of every family, the C), and by name only the
    table of views and the stubs. The old layout's link per file is named by `check`, over
    the budget, and replaced by link_package; a stub that is gone loses its link."""
    import generator.tree as tree

    target, package = tmp_path / "generated", tmp_path / "cudart"
    target.mkdir()
    package.mkdir()
    names = ["_driver_12.py", "_driver_checked_12.py", "_fast_driver_12.c", "_sys_12.py"]
    names += [f"_nvrtc_{n}.py" for n in range(12, 20)]
    names += ["_versions.py", "_latest.pyi", "sys_13050.pyi", "__init__.py"]
    for name in names:
        (target / name).write_text("# generated\n")
    monkeypatch.setattr(tree, "GENERATED", target)
    for name in names:  # the layout before: a link per file
        (package / name).symlink_to(f"../generated/{name}")
    problems = tree.compare_links(names, target, package)
    assert "cudart/_generated: not a link to ../generated" in problems
    assert "cudart/_sys_12.py: a link into generated/ that the package does not read" in problems
    assert problems[-1] == (
        f"cudart/ holds {len(names)} links into generated/, more than 10 "
        "(generator/tree.py LINK_BUDGET)"
    )
    tree.link_package(target, package)
    assert tree.compare_links(names, target, package) == []
    links = {p.name: os.readlink(p) for p in package.iterdir()}
    assert links == {
        "_generated": "../generated",
        "_latest.pyi": "../generated/_latest.pyi",
        "_versions.py": "../generated/_versions.py",
        "sys_13050.pyi": "../generated/sys_13050.pyi",
    }
    assert (package / "_generated" / "_driver_12.py").read_text() == "# generated\n"
    (target / "sys_13050.pyi").unlink()
    assert tree.compare_links(names[:-2] + names[-1:], target, package) == [
        "cudart/sys_13050.pyi: a link into generated/ that the package does not read"
    ]
    tree.link_package(target, package)
    assert sorted(p.name for p in package.iterdir()) == [
        "_generated",
        "_latest.pyi",
        "_versions.py",
    ]


def test_the_checkouts_links_are_the_layouts_within_the_budget():
    """The checkout's cudart/ holds exactly the links the layout names (generator/tree.py
    package_links), at most LINK_BUDGET: 5 for today's four families, where a link per
    generated file was 24."""
    import generator.tree as tree

    names = sorted(p.name for p in tree.GENERATED.iterdir() if tree.is_generated(p))
    held = sorted(p.name for p in tree.PACKAGE.iterdir() if p.is_symlink())
    assert held == sorted(tree.package_links(names))
    assert len(held) <= tree.LINK_BUDGET
    assert tree.compare_links(names) == []
