"""The guides' code examples (docs/guides/*.rst), as tests run them.

Every ``.. code-block:: python`` of a guide is an example. One that needs a GPU says so
with the directive's ``:class: gpu`` option (it also styles the block on the site); the
rest run on the CPU. tests/docs/test_guide_examples.py runs the CPU ones and counts every
block, tests/gpu/test_guide_examples_gpu.py runs the GPU ones.

README.md's ```python blocks are examples too, all of them GPU ones (its first example
allocates device memory): the GPU suite runs them with the guides'.

An example runs in a fresh interpreter from a file padded so that its lines are the
guide's own: a traceback names the .rst file and line a reader can open.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

from suite import REPO, run_python

GUIDES = REPO / "docs" / "guides"
GPU_CLASS = "gpu"
_DIRECTIVE = re.compile(r"^(\s*)\.\. code-block::\s*(\S+)\s*$")
_OPTION = re.compile(r"^\s+:([\w-]+):\s*(.*)$")
# Python written any other way would escape the count: refused by the tests.
OTHER_PYTHON_FORMS = re.compile(
    r"^\s*\.\. (code|sourcecode|highlight|literalinclude)::|"
    r"^\s*\.\. code-block::\s*(py|pycon|python3|ipython)\s*$",
    re.MULTILINE,
)


@dataclass(frozen=True)
class Example:
    guide: Path
    line: int  # the first line of code, 1-based, in the guide
    code: str
    gpu: bool

    @property
    def name(self) -> str:
        return f"{self.guide.stem}:{self.line}"


def guides() -> list[Path]:
    return sorted(GUIDES.glob("*.rst"))


def python_blocks_in(text: str) -> int:
    """How many python code blocks a guide has, counted apart from the parse below."""
    return len(re.findall(r"^\s*\.\. code-block:: python\s*$", text, re.MULTILINE))


def examples_in(guide: Path) -> list[Example]:
    lines = guide.read_text().splitlines()
    found, i = [], 0
    while i < len(lines):
        match = _DIRECTIVE.match(lines[i])
        i += 1
        if not match or match.group(2) != "python":
            continue
        indent, options = len(match.group(1)), {}
        while i < len(lines) and (option := _OPTION.match(lines[i])):
            options[option.group(1)] = option.group(2).split()
            i += 1
        start, body = i, []
        while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > indent):
            body.append(lines[i])
            i += 1
        code = textwrap.dedent("\n".join(body)).strip("\n")
        first = start + next(n for n, text in enumerate(body) if text.strip())
        gpu = GPU_CLASS in options.get("class", [])
        found.append(Example(guide, first + 1, code, gpu))
    return found


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


README = REPO / "README.md"
_FENCE = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def readme_examples() -> list[Example]:
    text = README.read_text()
    return [
        Example(README, text.count("\n", 0, match.start(1)) + 1, match.group(1), gpu=True)
        for match in _FENCE.finditer(text)
    ]


def all_examples() -> list[Example]:
    found = [example for guide in guides() for example in examples_in(guide)]
    return found + readme_examples()


def script(example: Example, folder: Path) -> Path:
    """The example as a file whose line numbers are the guide's."""
    path = folder / f"{example.guide.stem}_{example.line}.py"
    path.write_text("\n" * (example.line - 1) + example.code + "\n")
    return path


def _runner(path: Path, example: Example) -> str:
    label = str(example.guide.relative_to(REPO))
    return (
        f"import sys; sys.argv = [{label!r}]\n"
        f"exec(compile(open({str(path)!r}).read(), {label!r}, 'exec'), {{'__name__': '__main__'}})"
    )


def run_on_cpu(example: Example, folder: Path) -> subprocess.CompletedProcess:
    """In a fresh interpreter as the suite runs its others (tests/support/suite.py: no
    CUDART_ setting of the caller's but the backend), with a kernel cache of its own."""
    code = _runner(script(example, folder), example)
    return run_python(code, env={"CUDART_KERNEL_CACHE": str(folder / "kernels")}, check=False)


def run_on_gpu(example: Example, folder: Path) -> subprocess.CompletedProcess:
    """In a fresh interpreter that keeps this process's environment: the GPU run picks
    the runtime with $CUDART_LIBRARY, and the example must load the same one."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env["CUDART_KERNEL_CACHE"] = str(folder / "kernels")
    code = _runner(script(example, folder), example)
    return subprocess.run(
        [sys.executable, "-X", "faulthandler", "-c", code],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=300,
    )


def failure(example: Example, proc: subprocess.CompletedProcess) -> str:
    return (
        f"the example at {example.guide.relative_to(REPO)}:{example.line} exited "
        f"{proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    )
