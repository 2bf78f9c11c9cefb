"""`make setup`'s last step: make this checkout's generator and package usable from the
virtual environment, without installing the generator into it as a distribution.

It writes a .pth file naming the checkout (so `import cudart` and `python -m generator`
work from any folder) and the `cudart-bindgen` command beside the environment's python.
Run as `python -m generator.checkout` from the checkout's root.
"""

from __future__ import annotations

import os
import site
import stat
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PTH_NAME = "cudart-checkout.pth"
COMMAND = "cudart-bindgen"


def install(prefix: Path = Path(sys.prefix)) -> list[Path]:
    if prefix == Path(sys.base_prefix):
        raise SystemExit(
            "generator.checkout: run it with a virtual environment's python (make setup)"
        )
    site_packages = Path(site.getsitepackages([str(prefix)])[0])
    pth = site_packages / PTH_NAME
    pth.write_text(f"{REPO}\n")
    script = Path(sys.executable).parent / COMMAND
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m generator "$@"\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return [pth, script]


if __name__ == "__main__":
    for path in install():
        print(f"wrote {os.path.relpath(path)}")
