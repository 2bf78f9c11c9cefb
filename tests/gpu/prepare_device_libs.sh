#!/usr/bin/env bash
# Copy each pinned version's libcudart (fetched and verified by the generator's cache)
# into .device/libs/<version>/, an ignored folder to carry to the GPU machine.
set -eu
cd "$(dirname "$0")/../.."
.venv/bin/python - <<'PY'
import shutil
from pathlib import Path
from generator.fetch import fetch_version
from generator.manifest import Manifest

m = Manifest.load()
for key in m.keys():
    lib = fetch_version(m, key, lambda s: None).library
    dest = Path(".device/libs") / key
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(lib, dest / lib.name)
    print(dest / lib.name)
PY
