"""Every code example of the guides (docs/guides/*.rst) runs: the CPU ones here, in a
fresh interpreter each, and must exit cleanly (they assert what they show); the ones
marked ``:class: gpu`` in tests/gpu/test_guide_examples_gpu.py. None is left out: the
two kinds together are every python code block of every guide."""

from __future__ import annotations

import pytest
from guide_examples import (
    OTHER_PYTHON_FORMS,
    README,
    all_examples,
    examples_in,
    failure,
    guides,
    python_blocks_in,
    run_on_cpu,
)

EXAMPLES = all_examples()
CPU = [example for example in EXAMPLES if not example.gpu]
GPU = [example for example in EXAMPLES if example.gpu]


@pytest.mark.backend
@pytest.mark.parametrize("example", CPU, ids=[example.name for example in CPU])
def test_a_cpu_example_runs(example, tmp_path):
    proc = run_on_cpu(example, tmp_path)
    assert proc.returncode == 0, failure(example, proc)


def test_every_python_block_is_a_cpu_or_a_gpu_example():
    assert guides(), "no guides in docs/guides"
    blocks = sum(python_blocks_in(guide.read_text()) for guide in guides())
    readme = README.read_text().count("```python")
    assert readme, "README.md has no first example"
    assert len(CPU) + len(GPU) == blocks + readme
    for guide in guides():
        assert len(examples_in(guide)) == python_blocks_in(guide.read_text()), guide.name
    assert CPU and GPU


def test_no_python_is_written_outside_a_counted_block():
    for guide in guides():
        other = OTHER_PYTHON_FORMS.search(guide.read_text())
        assert other is None, f"{guide.name}: {other.group(0).strip()!r} escapes the count"


@pytest.mark.parametrize("example", GPU, ids=[example.name for example in GPU])
def test_a_gpu_example_is_valid_python(example):
    """What the CPU can say about a GPU example before the GPU run: it parses."""
    compile(example.code, f"{example.guide}:{example.line}", "exec")
