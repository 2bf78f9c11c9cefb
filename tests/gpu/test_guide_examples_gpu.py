"""The guides' examples that need a GPU (``:class: gpu`` in docs/guides/*.rst), each in
a fresh interpreter against the same libcudart as this session; they assert what they
show. tests/docs/test_guide_examples.py runs the rest and counts them all."""

from __future__ import annotations

import ast
import importlib.util

import pytest
from guide_examples import all_examples, failure, run_on_gpu

GPU = [example for example in all_examples() if example.gpu]
# The other libraries an interop example shows cudart with: an interpreter without one
# (the free-threaded run has no CuPy) skips its examples, saying which.
PEERS = {"cupy", "torch", "cuda"}


def _missing_peers(code: str) -> list[str]:
    imported = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            imported.add(node.module.split(".")[0])
    return sorted(n for n in imported & PEERS if importlib.util.find_spec(n) is None)


@pytest.mark.parametrize("example", GPU, ids=[example.name for example in GPU])
def test_a_gpu_example_runs(example, tmp_path):
    missing = _missing_peers(example.code)
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed for this interpreter")
    proc = run_on_gpu(example, tmp_path)
    assert proc.returncode == 0, failure(example, proc)
