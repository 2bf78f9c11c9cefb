"""fetch -> parse -> render for one CUDA version, and writing whole trees safely."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from .fetch import HeaderSet, Progress, fetch_version, print_to_stderr
from .manifest import Manifest
from .model import ApiModel
from .parse import ParseInput, parse, system_include_dirs
from .render import RenderContext, checked_module_name, module_name, render_checked, render_module
from .resolve import resolve, table_uses

REPO = Path(__file__).resolve().parent.parent
GENERATED = REPO / "generated"


def parse_version(headers: HeaderSet) -> ApiModel:
    return parse(
        ParseInput(
            header=headers.runtime_header,
            include_dirs=headers.include_dirs,
            system_include_dirs=system_include_dirs(),
        )
    )


def render_version(manifest: Manifest, key: str, progress: Progress = print_to_stderr) -> dict[str, str]:
    """File name -> module source for one version of the manifest: the raw module
    (sys_<ver>.py) and the checked one (checked_<ver>.py)."""
    pin = manifest.get(key)
    headers = fetch_version(manifest, key, progress)
    progress(f"[{key}] parsing {headers.runtime_header.name}")
    model = parse_version(headers)
    if model.cuda_version != pin.number:
        raise ValueError(
            f"the {key} headers define CUDART_VERSION {model.cuda_version}, not {pin.number}"
        )
    progress(
        f"[{key}] rendering: {len(model.functions)} functions, {len(model.enums)} enums, "
        f"{len(model.records)} records, {len(model.macros)} macros"
    )
    context = RenderContext(
        version_key=key,
        sources=(
            f"{pin.runtime.package}=={pin.runtime.version}",
            f"{pin.crt.package}=={pin.crt.version} (crt/ headers)",
        ),
    )
    plans = resolve(model)
    # What the exceptions table decided rather than the header's docs, every time.
    for line in table_uses(plans):
        progress(f"[{key}] from the exceptions table: {line}")
    return {
        module_name(pin.number) + ".py": render_module(model, context),
        checked_module_name(pin.number) + ".py": render_checked(model, context, plans),
    }


def render_all(manifest: Manifest, keys: list[str], progress: Progress = print_to_stderr) -> dict[str, str]:
    files = {}
    for n, key in enumerate(keys, 1):
        progress(f"[{n}/{len(keys)}] CUDA {key}")
        files.update(render_version(manifest, key, progress))
    return files


def write_tree(files: dict[str, str], target: Path = GENERATED, replace_all: bool = False) -> None:
    """Write the files into `target` so that it is never seen half-written.

    With replace_all, the whole folder is built beside the old one and swapped in, so
    modules of versions no longer in the manifest go away; otherwise each file is
    written to a temporary name and renamed over its old self.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    if replace_all:
        staging = Path(tempfile.mkdtemp(prefix=".generated-", dir=target.parent))
        try:
            for name, text in files.items():
                (staging / name).write_text(text)
            old = None
            if target.exists():
                old = target.with_name(staging.name + "-old")
                os.rename(target, old)
            os.rename(staging, target)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        return
    target.mkdir(exist_ok=True)
    for name, text in files.items():
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", dir=target)
        try:
            with os.fdopen(fd, "w") as handle:
                handle.write(text)
            os.replace(tmp, target / name)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def compare_tree(files: dict[str, str], target: Path = GENERATED) -> list[str]:
    """Names of files in `target` that differ from `files`: stale, missing or extra."""
    problems = []
    existing = {p.name for p in target.glob("*.py")} if target.is_dir() else set()
    for name in sorted(files):
        path = target / name
        if not path.is_file():
            problems.append(f"{name}: missing")
        elif path.read_text() != files[name]:
            problems.append(f"{name}: stale (differs from what the generator makes)")
    for name in sorted(existing - set(files)):
        problems.append(f"{name}: not made by the generator from the manifest")
    return problems
