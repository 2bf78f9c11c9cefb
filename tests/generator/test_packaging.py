"""What a user installs: the cudart wheel and sdist, built as pip builds them, installed
into fresh virtual environments without any of the checkout's tools, and each
generated module under exactly one import name.

The build needs setuptools from the registry (pip's isolated build), so these tests are
marked `network`; the install itself is offline, from the wheel just built and the
pinned runtime wheel in the generator's cache.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import abi_support
import pytest
from freethreaded_support import FREETHREADED_ENV, freethreaded_python
from suite import GENERATED, REPO, run_python

from cudart._views import GENERATED_FOLDER, versions
from generator.fetch import cache_root
from generator.tree import LINK_BUDGET, linked_by_name, package_links

pytestmark = pytest.mark.network

# What the checkout's cudart/ holds that is no build output (make build's .so files),
# by path below cudart/ (cudart/kernels/ is a package of its own).
HAND_WRITTEN = sorted(
    p.relative_to(REPO / "cudart").as_posix()
    for p in (REPO / "cudart").rglob("*")
    if p.is_file() and not p.is_symlink() and p.suffix not in (".so", ".pyc")
)
# Where each generated module and stub is in the package (below cudart/): the few linked
# by their own name in a checkout at the top (the table of views, the stubs), the rest
# (the merged modules, generated/__init__.py's guard) in cudart/_generated/.
GENERATED_NAMES = sorted(
    name if linked_by_name(name) else f"{GENERATED_FOLDER}/{name}"
    for name in (p.name for p in GENERATED.iterdir() if p.suffix in (".py", ".pyi"))
)
# The compiled backend: its generated C (the sdist's, in cudart/_generated/) and what each
# source builds (the wheel's, where a compiler is present, as here and in CI).
GENERATED_SOURCES = sorted(f"{GENERATED_FOLDER}/{p.name}" for p in GENERATED.glob("_fast_*.c"))
C_SOURCES = GENERATED_SOURCES + [n for n in HAND_WRITTEN if n.endswith((".c", ".h"))]
EXTENSIONS = sorted(
    Path(Path(n).name if n in GENERATED_SOURCES else n).with_suffix(".abi3.so").as_posix()
    for n in GENERATED_SOURCES + HAND_WRITTEN
    if n.endswith(".c")
)
PYTHON_FILES = sorted(n for n in HAND_WRITTEN if not n.endswith((".c", ".h"))) + GENERATED_NAMES
# The runtime the installed package is tried against: the dev extras' pin.
RUNTIME_KEY = "12.5"
# Issue 32's targets for every family and version of today: the wheel, and the package
# as pip installs it (cudart/ and its dist-info, with the bytecode pip compiles).
WHEEL_BUDGET = 4_000_000
INSTALL_BUDGET = 25_000_000

IN_THE_NEW_ENVIRONMENT = r"""
import importlib, json, sys
import cudart

report = {"found_by": cudart.load_runtime().found_by, "runtime": cudart.load_runtime().version}
report["selected"] = cudart.sys.__name__
report["versions"] = cudart.available_versions()
report["version_call"] = cudart.cudaRuntimeGetVersion()
report["backend"] = cudart.backend()
report["gil"] = getattr(sys, "_is_gil_enabled", lambda: True)()
problems = []
for v in report["versions"]:
    for kind in ("sys", "checked"):
        name = f"cudart.{kind}_{v}"
        module = importlib.import_module(name)
        ways = {
            "import_module": module,
            "sys.modules": sys.modules[name],
            "package attribute": getattr(cudart, f"{kind}_{v}"),
            "from-import": __import__("cudart", fromlist=[f"{kind}_{v}"]).__dict__[f"{kind}_{v}"],
        }
        if kind == "checked" and module._lib is not importlib.import_module(f"cudart.sys_{v}"):
            problems.append(f"{name}._lib is not cudart.sys_{v}")
        for how, other in ways.items():
            if other is not module:
                problems.append(f"{name} by {how} is another module")
        if module.__name__ != name or not module.__file__.startswith(cudart.__path__[0]):
            problems.append(f"{name} is {module.__name__} from {module.__file__}")
for other in ("cudart._generated", "generated", "generator"):
    try:
        importlib.import_module(other)
        problems.append(f"{other} imports")
    except ImportError:
        pass
report["problems"] = problems
print(json.dumps(report))
"""


@pytest.fixture(scope="module")
def sdist(tmp_path_factory) -> Path:
    """The sdist, as pip's `python -m build` makes it before the wheel."""
    out = tmp_path_factory.mktemp("sdist")
    _build("--sdist", REPO, out, _environ_without_cudart())
    (found,) = out.glob("*.tar.gz")
    return found


@pytest.fixture(scope="module")
def built(sdist, tmp_path_factory) -> dict:
    """The sdist, and the wheel pip builds from it. The generated extensions come from
    the checkout's in-place build where it is up to date with the same sources
    (setup.py's $CUDART_PREBUILT): the same compiler, flags and bytes of C, compiled once
    per run instead of twice (about two minutes); the hand-written one compiles here."""
    out = tmp_path_factory.mktemp("dist")
    env = {**_environ_without_cudart(), "CUDART_PREBUILT": str(REPO)}
    proc = _build("--wheel", sdist, out, env)
    wheels = sorted(out.glob("*.whl"))
    assert len(wheels) == 1, sorted(p.name for p in out.iterdir())
    taken = re.findall(r"^cudart: cudart\.(\S+) taken from ", proc.stderr, re.MULTILINE)
    return {"wheel": wheels[0], "sdist": sdist, "taken": taken}


def _build(what: str, source: Path, out: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, "-m", "build", what, "--outdir", str(out), str(source)],
        capture_output=True,
        text=True,
        cwd=out,
        env=env,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


def test_the_wheel_compiles_what_the_checkout_has_not_built(built):
    """The in-place build is taken only for the generated extensions, and only as it is:
    the hand-written launcher compiles in pip's isolated build every time."""
    assert "kernels._fastlaunch" not in built["taken"]
    assert set(built["taken"]) <= {Path(n).name.split(".")[0] for n in EXTENSIONS}
    with zipfile.ZipFile(built["wheel"]) as zf:
        for name in built["taken"]:
            so = f"cudart/{name}.abi3.so"
            assert zf.read(so) == (REPO / so).read_bytes(), so


def test_the_wheel_holds_the_package_and_nothing_else(built):
    with zipfile.ZipFile(built["wheel"]) as zf:
        names = zf.namelist()
    top = {n.split("/")[0] for n in names}
    assert top == {"cudart", "cudart-0.1.0.dist-info"}, top
    package = sorted(n.removeprefix("cudart/") for n in names if n.startswith("cudart/"))
    assert package == sorted(PYTHON_FILES + EXTENSIONS)
    # One wheel for every Python from 3.11: the extensions use the limited API.
    assert built["wheel"].name.startswith("cudart-0.1.0-cp311-abi3-"), built["wheel"].name
    assert "py.typed" in package and "_latest.pyi" in package and "__init__.pyi" in package
    with zipfile.ZipFile(built["wheel"]) as zf:
        metadata = zf.read("cudart-0.1.0.dist-info/METADATA").decode()
        # The generated modules are the files themselves, not links.
        merged = f"cudart/{GENERATED_FOLDER}/_sys_12.py"
        assert zf.read(merged) == (GENERATED / "_sys_12.py").read_bytes()
        assert zf.read("cudart/_versions.py") == (GENERATED / "_versions.py").read_bytes()
    requires = sorted(line for line in metadata.splitlines() if line.startswith("Requires-Dist:"))
    assert requires == [
        'Requires-Dist: nvidia-cuda-nvrtc-cu12; extra == "cu12"',
        'Requires-Dist: nvidia-cuda-nvrtc; extra == "cu13"',
        'Requires-Dist: nvidia-cuda-runtime-cu12; extra == "cu12"',
        'Requires-Dist: nvidia-cuda-runtime; extra == "cu13"',
        'Requires-Dist: nvidia-nvjitlink-cu12; extra == "cu12"',
        'Requires-Dist: nvidia-nvjitlink; extra == "cu13"',
    ]
    assert "entry_points.txt" not in {n.split("/")[-1] for n in names}  # no console script
    assert built["wheel"].stat().st_size <= WHEEL_BUDGET, built["wheel"].stat().st_size


def test_the_sdist_builds_the_same_package(built):
    with tarfile.open(built["sdist"]) as tf:
        members = tf.getmembers()
    root = members[0].name.split("/")[0]
    package = sorted(
        m.name.removeprefix(f"{root}/cudart/")
        for m in members
        if m.name.startswith(f"{root}/cudart/") and m.isfile()
    )
    assert package == sorted(PYTHON_FILES + C_SOURCES)
    assert not [m.name for m in members if m.issym() or m.islnk()]
    tops = {m.name.split("/")[1] for m in members if m.name.count("/") >= 1}
    assert {"generator", "generated", "tests", "bench", "templates"}.isdisjoint(tops), tops
    assert {"pyproject.toml", "README.md", "cudart"} <= tops


def _fresh_environment(
    python: str, where: Path, package: Path, env: dict[str, str] | None = None
) -> Path:
    """A venv with only cudart and the pinned runtime wheel. From a wheel it installs
    offline; from an sdist pip's isolated build takes setuptools from the index."""
    subprocess.run([python, "-m", "venv", "--without-pip", str(where)], check=True)
    target = where / "bin" / "python"
    runtime_wheel = cache_root() / "wheels"
    # pip runs itself on the target: a $PYTHONPATH naming the checkout (its cudart.egg-info)
    # would show it cudart as installed already, and it would install nothing.
    env = {k: v for k, v in (os.environ if env is None else env).items() if k != "PYTHONPATH"}
    offline = ["--no-index"] if package.suffix == ".whl" else []
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(target), "install", "--quiet", *offline]
        + ["--find-links", str(runtime_wheel), str(package), "nvidia-cuda-runtime-cu12==12.5.82"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return target


def _sysconfig(python: Path, expression: str) -> str:
    """What `sysconfig.<expression>` is in the interpreter `python`."""
    code = f"import sysconfig; print(sysconfig.{expression})"
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def _installed(python: Path, tmp_path: Path) -> tuple[list[str], dict]:
    """What the venv of `python` holds beside pip's own files, and what the installed
    package reports in it (IN_THE_NEW_ENVIRONMENT), run outside the checkout."""
    site = _sysconfig(python, "get_paths()['purelib']")
    installed = sorted(p.name for p in Path(site).iterdir() if not p.name.startswith(("_", "__")))
    assert [n for n in installed if not n.startswith("nvidia")] == [
        "cudart",
        "cudart-0.1.0.dist-info",
    ], installed
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    proc = subprocess.run(
        [str(python), "-c", IN_THE_NEW_ENVIRONMENT],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    package = Path(site) / "cudart"
    extensions = sorted(p.relative_to(package).as_posix() for p in package.rglob("*.so"))
    return extensions, json.loads(proc.stdout)


def _check_report(report: dict) -> None:
    assert report["problems"] == []
    assert report["found_by"] == "the nvidia runtime wheel"
    assert report["runtime"] == report["version_call"] == 12050
    assert report["selected"] == "cudart.sys_12050"
    assert report["backend"] == "compiled"
    assert report["versions"] == versions("sys")  # every view of the table, installed


@pytest.mark.parametrize("python_name", ["python3.11", "python3.13"])
def test_the_wheel_works_in_a_fresh_environment(built, header_sets, tmp_path, python_name):
    """Installed without the checkout's tools: cudart finds the runtime wheel by itself,
    serves the matching module, and every generated version imports under one name."""
    interpreter, why = abi_support.find_interpreter(python_name)
    if interpreter is None:
        pytest.skip(f"{python_name} unusable: {why}")
    assert header_sets[RUNTIME_KEY].library.is_file()  # the pinned runtime wheel is cached
    python = _fresh_environment(interpreter, tmp_path / "venv", built["wheel"])
    extensions, report = _installed(python, tmp_path)
    assert extensions == EXTENSIONS
    _check_report(report)
    site = Path(_sysconfig(python, "get_paths()['purelib']"))
    installed = sum(
        f.stat().st_size for top in site.glob("cudart*") for f in top.rglob("*") if f.is_file()
    )
    assert installed <= INSTALL_BUDGET, f"{installed:,} bytes installed, with pip's bytecode"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    # The generator is a checkout's tool: without its tools it says how to get them, in one line.
    proc = subprocess.run(
        [str(python), "-m", "generator", "check"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env | {"PYTHONPATH": str(REPO)},
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "make setup" in lines[0] and "libclang" in lines[0], proc.stderr


def test_the_sdist_installs_on_free_threaded_python(sdist, header_sets, tmp_path):
    """pip install from the sdist into a fresh free-threaded 3.13 venv (issue 25): every
    extension builds for that interpreter's own ABI (3.13t cannot load abi3), and the
    installed package serves its compiled backend with the GIL off. The generated
    extensions come from the checkout's in-place 3.13t build where it has the same
    sources (make test-freethreaded makes it), as the wheel's do from the GIL build.
    That target runs it, naming the interpreter: `make test` would run it a second time,
    and, before that target's in-place build, compile every extension for it."""
    if not os.environ.get(FREETHREADED_ENV):
        pytest.skip(f"run by make test-freethreaded (it sets ${FREETHREADED_ENV})")
    interpreter = freethreaded_python()
    assert header_sets[RUNTIME_KEY].library.is_file()  # the pinned runtime wheel is cached
    env = {**_environ_without_cudart(), "CUDART_PREBUILT": str(REPO)}
    python = _fresh_environment(interpreter, tmp_path / "venv", sdist, env)
    suffix = _sysconfig(python, "get_config_var('EXT_SUFFIX')")
    extensions, report = _installed(python, tmp_path)
    assert suffix.startswith(".cpython-313t-"), suffix
    assert extensions == sorted(n.removesuffix(".abi3.so") + suffix for n in EXTENSIONS)
    _check_report(report)
    assert report["gil"] is False


def test_one_name_per_module_in_the_checkout(header_sets):
    """In a checkout each generated module is reached through cudart/'s links (the folder
    as cudart/_generated/, the table and the stubs by name), at most LINK_BUDGET of them,
    and generated/ refuses to import as a package of its own, under either name."""
    package = REPO / "cudart"
    for name in GENERATED_NAMES:
        assert (package / name).resolve() == (GENERATED / Path(name).name).resolve(), name
    links = sorted(p.name for p in package.iterdir() if p.is_symlink())
    assert links == sorted(package_links([p.name for p in GENERATED.iterdir()]))
    assert len(links) <= LINK_BUDGET
    code = IN_THE_NEW_ENVIRONMENT.replace('"generator"', '"generator_is_importable_here"')
    out = run_python(code, env={"CUDART_LIBRARY": str(header_sets[RUNTIME_KEY].library)})
    report = json.loads(out.stdout)
    assert report["problems"] == []
    assert report["selected"] == "cudart.sys_12050"


def test_without_a_compiler_the_sdist_installs_on_ctypes(built, header_sets, tmp_path):
    """pip install from the sdist where no C compiler works: the build says so in one
    line, succeeds, and the installed package is served by the ctypes backend."""
    out = tmp_path / "dist"
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(built["sdist"])],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**_environ_without_cudart(), "CC": "/bin/false"},
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    notices = [line for line in proc.stderr.splitlines() if line.startswith("cudart: no compiled")]
    assert notices and all("the ctypes backend serves" in line for line in notices), proc.stderr
    (wheel,) = out.glob("*.whl")
    with zipfile.ZipFile(wheel) as zf:
        assert not [n for n in zf.namelist() if n.endswith(".so")]
    python = _fresh_environment(sys.executable, tmp_path / "venv", wheel)
    code = "import cudart; print(cudart.backend(), cudart.cudaRuntimeGetVersion())"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    ran = subprocess.run(
        [str(python), "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split() == ["ctypes", "12050"]


def _environ_without_cudart() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("CUDART_")}


def test_a_stale_build_folder_does_not_reach_the_wheel(tmp_path):
    """build/lib keeps what an earlier build put there, and a wheel takes all of it (a
    checkout's wheel once held 30 per-version modules and extensions of an older layout):
    setup.py's build_py starts the package there afresh."""
    lib = tmp_path / "lib"
    (lib / "cudart").mkdir(parents=True)
    stale = lib / "cudart" / "_fast_driver_13050.abi3.so"
    stale.write_bytes(b"stale")
    proc = subprocess.run(
        [sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(lib)],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert not stale.exists()
    assert (lib / "cudart" / GENERATED_FOLDER / "_sys_12.py").is_file()
    assert (lib / "cudart" / "_versions.py").is_file()
