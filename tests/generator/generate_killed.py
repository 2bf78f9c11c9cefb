"""Test-only entry point of tests/generator/test_generate_kill.py: `cudart-bindgen ARGS` whose
tree write kills its own process with SIGKILL at write step STEP (each file, then each
rename: generator.tree.write_tree's checkpoints), the way a kill -9 or a power cut
would stop it there. The production command has no such hook.

    python tests/generator/generate_killed.py STEP ARGS...

With STEP `replace:N` it dies instead at the Nth rename of a whole temporary file over a
file of the --output folder (generator.files.write_atomically's, the one step of a
single-version run's write): the temporary is written, and left behind.
"""

from __future__ import annotations

import functools
import os
import signal
import sys
from collections.abc import Callable

from generator import cli, files, tree


def kill_at(step: int) -> Callable[[], None]:
    count = 0

    def checkpoint() -> None:
        nonlocal count
        count += 1
        if count == step:
            os.kill(os.getpid(), signal.SIGKILL)

    return checkpoint


def kill_at_replace(step: int, output: str) -> None:
    """os.replace as write_atomically calls it, dying before the `step`th rename into
    `output`."""
    replace = os.replace
    folder = os.path.realpath(output)
    die = kill_at(step)

    def killing_replace(src, dst, *args, **kwargs):
        if os.path.dirname(os.path.realpath(dst)) == folder:
            die()
        return replace(src, dst, *args, **kwargs)

    files.os.replace = killing_replace  # files.os is the os module: this process only


if __name__ == "__main__":
    step, args = sys.argv[1], sys.argv[2:]
    if step.startswith("replace:"):
        kill_at_replace(int(step.removeprefix("replace:")), args[args.index("--output") + 1])
    else:
        cli.write_tree = functools.partial(tree.write_tree, checkpoint=kill_at(int(step)))
    sys.exit(cli.main(args))
