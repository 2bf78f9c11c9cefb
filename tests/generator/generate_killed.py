"""Test-only entry point of tests/generator/test_generate_kill.py: `cudart-bindgen ARGS` whose
tree write kills its own process with SIGKILL at write step STEP (each file, then each
rename: generator.tree.write_tree's checkpoints), the way a kill -9 or a power cut
would stop it there. The production command has no such hook.

    python tests/generator/generate_killed.py STEP ARGS...
"""

from __future__ import annotations

import functools
import os
import signal
import sys
from collections.abc import Callable

from generator import cli, tree


def kill_at(step: int) -> Callable[[], None]:
    count = 0

    def checkpoint() -> None:
        nonlocal count
        count += 1
        if count == step:
            os.kill(os.getpid(), signal.SIGKILL)

    return checkpoint


if __name__ == "__main__":
    cli.write_tree = functools.partial(tree.write_tree, checkpoint=kill_at(int(sys.argv[1])))
    sys.exit(cli.main(sys.argv[2:]))
