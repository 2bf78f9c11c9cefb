"""cuda-bindings' signatures as data: which C parameters NVIDIA's own Python bindings take
from the caller and which they return, for the runtime and the driver.

An independent judge of the checked layer's plan (tests/generator/test_output_judge.py):
cuda-bindings is written from the same headers by other people and other code, so where
it and the plan agree on a parameter's direction neither is likely to be wrong alone.

The extract is committed (tests/support/output_judge/cuda_bindings_<version>.txt), so the
test needs neither the wheel nor the network. To make it again from a release:

    pip download cuda-bindings==13.5.0 --no-deps -d WHEELS
    pip install --target SITE --no-deps cuda-pathfinder
    python tests/support/bindings_signatures.py WHEELS/cuda_bindings-13.5.0-*.whl SITE

It unpacks the wheel to a temporary folder and imports `cuda.bindings.runtime` and
`.driver` there (they import without a GPU or a driver; 13.x needs cuda-pathfinder on the
path), in a fresh interpreter, and reads each function's docstring: cython's embedded
signature line names the inputs, the numpydoc "Returns" section the outputs after the
status. The wheels of 13.x ship no .pyx, so the docstrings are the one text both majors
have.

One line per function: `name(in, ...) -> out, list[]`, where `[]` marks an output that
cuda-bindings returns as a list (an array the call fills).
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent / "output_judge"

# Runs in the unpacked wheel's interpreter: prints `module name` then the docstring,
# separated by form feeds, for every public function of the two modules.
_READ_DOCSTRINGS = r"""
import sys
import cuda.bindings.driver as driver
import cuda.bindings.runtime as runtime
for module in (runtime, driver):
    for name in sorted(dir(module)):
        f = getattr(module, name)
        if name.startswith(("cuda", "cu")) and callable(f) and not isinstance(f, type):
            sys.stdout.write(f"\f{module.__name__.rsplit('.', 1)[1]} {name}\n{f.__doc__ or ''}")
"""


@dataclass(frozen=True)
class Signature:
    module: str  # "runtime" or "driver"
    name: str
    inputs: tuple[str, ...]  # the C names the caller passes
    outputs: tuple[str, ...]  # the C names returned, after the status
    lists: frozenset[str]  # the outputs returned as a list


def _parameters(signature_line: str) -> tuple[str, ...]:
    """The names of `f(size_t size, graph, kind not None : cudaMemcpyKind, n=0)`."""
    inner = signature_line[signature_line.index("(") + 1 : signature_line.rindex(")")]
    names = []
    depth = 0
    piece = ""
    for ch in inner + ",":
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            if piece.strip():
                # `size_t size`, `graph`, `kind not None : T`, `n=0`: the name is the last
                # word before any annotation, default or `not None`.
                head = re.split(r"\s*(?::|=|\bnot None\b)", piece.strip())[0]
                names.append(head.split()[-1].lstrip("*"))
            piece = ""
        else:
            piece += ch
    return tuple(names)


_SECTION = re.compile(r"^(\w[\w ]*)\n-+\n", re.M)
_ENTRY = re.compile(r"^(\w+) : (.*)$", re.M)


def parse_docstring(module: str, name: str, doc: str) -> Signature | None:
    """A function's Signature from its docstring; None where it has no embedded signature."""
    first = doc.split("\n", 1)[0]
    if not first.startswith(name + "("):
        return None
    sections = {}
    marks = list(_SECTION.finditer(doc))
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(doc)
        sections[mark.group(1)] = doc[mark.end() : end]
    returned = _ENTRY.findall(sections.get("Returns", ""))
    return Signature(
        module,
        name,
        _parameters(first),
        tuple(n for n, _ in returned),
        frozenset(n for n, t in returned if t.startswith("list[")),
    )


def format_line(s: Signature) -> str:
    outs = ", ".join(n + ("[]" if n in s.lists else "") for n in s.outputs)
    return f"{s.module} {s.name}({', '.join(s.inputs)}) -> {outs}"


_LINE = re.compile(r"^(\w+) (\w+)\(([^)]*)\) -> (.*)$")


def parse_line(line: str) -> Signature:
    m = _LINE.match(line)
    if m is None:
        raise ValueError(f"not a signature line: {line!r}")
    split = lambda text: [t.strip() for t in text.split(",") if t.strip()]  # noqa: E731
    outs = split(m.group(4))
    return Signature(
        m.group(1),
        m.group(2),
        tuple(split(m.group(3))),
        tuple(o.removesuffix("[]") for o in outs),
        frozenset(o.removesuffix("[]") for o in outs if o.endswith("[]")),
    )


def load(version: str) -> dict[tuple[str, str], Signature]:
    """{(module, function): Signature} of cuda-bindings `version`, from the committed extract."""
    found = {}
    for line in (HERE / f"cuda_bindings_{version}.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            s = parse_line(line)
            found[s.module, s.name] = s
    return found


def extract(wheel: Path, site: Path) -> str:
    """The extract file's text for one cuda-bindings wheel."""
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    with tempfile.TemporaryDirectory() as tmp:
        zipfile.ZipFile(wheel).extractall(tmp)
        text = subprocess.run(
            [sys.executable, "-c", _READ_DOCSTRINGS],
            env={"PYTHONPATH": f"{tmp}:{site}", "PATH": "/usr/bin:/bin"},
            cwd=tmp,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    lines = [
        "# cuda-bindings' signatures, made by tests/support/bindings_signatures.py: not by hand.",
        f"# {wheel.name}",
        f"# sha256 {digest}",
    ]
    for block in text.split("\f")[1:]:
        head, _, doc = block.partition("\n")
        module, name = head.split()
        s = parse_docstring(module, name, doc)
        if s is not None:
            lines.append(format_line(s))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    wheel_path, site_path = Path(sys.argv[1]), Path(sys.argv[2])
    version = wheel_path.name.split("-")[1]
    HERE.mkdir(exist_ok=True)
    (HERE / f"cuda_bindings_{version}.txt").write_text(extract(wheel_path, site_path))
