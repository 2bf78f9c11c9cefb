"""The guides' examples that need a GPU (``:class: gpu`` in docs/guides/*.rst), each in
a fresh interpreter against the same libcudart as this session; they assert what they
show. tests/docs/test_guide_examples.py runs the rest and counts them all."""

from __future__ import annotations

import pytest
from guide_examples import all_examples, failure, run_on_gpu

GPU = [example for example in all_examples() if example.gpu]


@pytest.mark.parametrize("example", GPU, ids=[example.name for example in GPU])
def test_a_gpu_example_runs(example, tmp_path):
    proc = run_on_gpu(example, tmp_path)
    assert proc.returncode == 0, failure(example, proc)
