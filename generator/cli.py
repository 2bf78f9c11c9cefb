"""cudart-bindgen: generate, check and add CUDA versions' bindings.

Every failure the user can cause or meet (unknown version, network, checksum, parse
diagnostics) ends in one line on stderr and exit status 2; `check` finding stale
files exits 1.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from . import model_cache
from .ctypes_map import RenderError
from .families import FAMILIES_ENV, family
from .fetch import FetchError, new_minors, resolve_newest, resolve_release
from .generate import (
    SNAPSHOTS,
    render_all,
    tree_files,
    version_files,
    write_snapshot,
)
from .manifest import (
    DEFAULT_MANIFEST_PATH,
    DEFAULT_SURFACE,
    Manifest,
    ManifestError,
    parse_version_key,
    release_unit,
)
from .parse import ParseError
from .tree import GENERATED, REPO, compare_links, compare_tree, link_package, write_tree


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def cmd_generate(args) -> int:
    manifest = Manifest.load(args.manifest)
    started = time.perf_counter()
    if args.all or args.version is None:
        if args.family:
            raise ValueError("--family generates one release: give its key (`--family X 2.21`)")
        keys = manifest.units()
        rendered = render_all(manifest, keys, _progress, args.jobs)
        _writing(args)
        write_tree(tree_files(rendered, manifest), args.output, replace_all=True)
    else:
        keys = [_unit(args.family, args.version)]
        _, files = version_files(manifest, keys[0], _progress, args.output)
        _writing(args)
        write_tree(files, args.output)
    link_package(args.output)
    elapsed = time.perf_counter() - started
    _progress(f"generated {len(keys)} version(s) into {args.output} in {elapsed:.1f} s")
    return 0


def _own_axis(name: str) -> None:
    """Refuse --family for a family that is not on its own axis, before any work."""
    found = family(name)
    if found.axis != "own":
        raise ValueError(
            f"--family {name}: {name} is on the CUDA axis (its versions are the CUDA "
            "minors: `cudart-bindgen add 12.6`)"
        )


def _unit(name: str | None, key: str) -> str:
    """What a command line names: a CUDA key, or an own-axis family's release."""
    if name is None:
        return key
    _own_axis(name)
    return release_unit(name, key)


def cmd_docs(args) -> int:
    # Imported here: the reference's pipeline reads the tests' model cache, which the
    # other commands never need.
    from .docs import build_reference

    started = time.perf_counter()
    build_reference(Manifest.load(args.manifest), _progress, args.docs)
    _progress(f"reference rendered in {time.perf_counter() - started:.1f} s")
    return 0


def _writing(args) -> None:
    """From here on the command changes the output folder (and cudart/'s links): an
    interrupt can no longer say that nothing changed (see `main`)."""
    args.writing = True


def cmd_check(args) -> int:
    manifest = Manifest.load(args.manifest)
    started = time.perf_counter()
    rendered = render_all(manifest, manifest.units(), _progress, args.jobs)
    files = tree_files(rendered, manifest)
    problems = compare_tree(files, args.output) + compare_links(sorted(files), args.output)
    elapsed = time.perf_counter() - started
    if problems:
        print(f"{args.output} does not match the generator ({len(problems)} file(s)):")
        for line in problems:
            print(f"  {line}")
        print("run `cudart-bindgen generate --all` and commit the result")
        return 1
    releases = "".join(
        f", {name} {', '.join(track.keys())}" for name, track in sorted(manifest.releases.items())
    )
    print(
        f"{args.output} matches the generator for CUDA {', '.join(manifest.keys())}"
        f"{releases} ({elapsed:.1f} s)"
    )
    return 0


def cmd_views(args) -> int:
    from .views import write_package

    tree = write_package(args.package, args.output)
    print(f"wrote {tree}: the package with each version's module as a file of its own")
    return 0


def cmd_outputs(args) -> int:
    """Print each function's checked form; `*` marks what the exceptions table decided."""
    from .attributes import listing
    from .fetch import fetch_version
    from .jit_options import listing as option_listing
    from .parse import parse_version
    from .resolve import describe, resolve, table_uses

    manifest = Manifest.load(args.manifest)
    for key in manifest.keys() if args.version is None else [args.version]:
        model = parse_version(fetch_version(manifest, key, _progress, args.surface))
        typed = {
            "attributes": (listing, "attribute", "attributes"),
            "options": (option_listing, "option", "jit_options"),
        }
        chosen = [typed[flag] for flag in typed if getattr(args, flag)]
        if chosen:
            lister, what, module = chosen[0]
            lines = lister(model)
            print(f"# CUDA {key}: {len(lines)} {what} value type(s) (generator/{module}.py)")
            for line in lines:
                print(f"  {line}")
            continue
        plans = resolve(model)
        if args.sizes:
            _print_sizes(key, plans)
            continue
        if not args.table:
            print(f"# CUDA {key}")
            for plan in plans:
                print(describe(plan))
        uses = table_uses(plans)
        print(f"# CUDA {key}: {len(uses)} parameter(s) classified by the exceptions table")
        for line in uses:
            print(f"  {line}")
    return 0


def _print_sizes(key: str, plans) -> None:
    from .sizes import listing, summary

    counts = summary(plans)
    print(
        f"# CUDA {key}: {counts['pairs']} (pointer, size) pair(s), {counts['checked']} checked, "
        f"{counts['undecided']} UNDECIDED; {counts['relations']} sized pointer(s), "
        f"{counts['records']} record pointer(s) (generator/sizes.py)"
    )
    for line in listing(plans):
        print(f"  {line}")


def cmd_add(args) -> int:
    manifest = Manifest.load(args.manifest)
    if args.family is not None:
        _own_axis(args.family)
        if args.new or not args.versions:
            raise ValueError(
                f"give the {args.family} releases to add (e.g. `add --family {args.family} "
                "2.21`); --new lists CUDA minors"
            )
        # Each numbered before any is resolved: a key its numbering cannot hold (1.100
        # where minor_scale is 100) must not leave the ones before it added.
        for key in args.versions:
            parse_version_key(key)
            family(args.family).number(key)
    if args.new:
        if args.versions:
            raise ValueError("give versions or --new, not both")
        keys = new_minors(manifest, _progress)
        if not keys:
            _progress(
                f"the manifest has every released minor of CUDA {', '.join(manifest.majors)}.x"
            )
            return 0
        _progress(f"new on the registry: CUDA {', '.join(keys)}")
    elif args.versions:
        # All of them before any is added: a bad third key must not leave two added.
        for key in args.versions:
            parse_version_key(key)
        keys = args.versions
    else:
        raise ValueError("give one or more versions (e.g. `add 12.6`) or --new")
    for key in keys:
        manifest = _add_one(manifest, key, args)
    return 0


def _add_one(manifest: Manifest, key: str, args) -> Manifest:
    """Pin, generate and write one version (or one release of --family), and everything
    that depends on the set.

    Nothing is written until the version has been generated in memory: a version whose
    headers do not parse leaves the manifest, generated/ and the snapshots as they were.
    """
    if args.family is None:
        pin = resolve_newest(manifest, key, _progress)
        candidate = manifest.with_version(pin)
    else:
        pin = resolve_release(
            manifest, args.family, key, _release_cuda(manifest, args.family), _progress
        )
        candidate = manifest.with_release(pin)
    rendered, files = version_files(candidate, _unit(args.family, key), _progress, args.output)
    _writing(args)
    write_tree(files, args.output)
    link_package(args.output)
    snapshot, old = write_snapshot(rendered, args.snapshots)
    candidate.save(args.manifest)
    _progress(
        "pinned "
        + ", ".join(f"{w.package}=={w.version}" for w in pin.wheels.values())
        + "; wrote "
        + ", ".join(str(args.output / name) for name in sorted(files))
    )
    _show_snapshot(snapshot, rendered.snapshot, old)
    return candidate


def _release_cuda(manifest: Manifest, name: str) -> str:
    """The CUDA key a new release of an own-axis family parses with, by its descriptor's
    `releases.cuda`: that key, or the newest pinned minor of that major."""
    releases = family(name).releases
    assert releases is not None  # an own-axis family's (_own_axis)
    if "." in releases.cuda:
        return manifest.get(releases.cuda).key
    pinned = [k for k in manifest.keys() if k.partition(".")[0] == releases.cuda]
    if not pinned:
        raise ManifestError(
            f"{name}.toml: releases.cuda is {releases.cuda!r}, and the manifest pins no CUDA "
            f"{releases.cuda}.x version (pinned: {', '.join(manifest.keys()) or 'none'}): "
            f"`cudart-bindgen add {releases.cuda}.<minor>` first"
        )
    return pinned[-1]


def _show_snapshot(path: Path, text: str, old: str | None) -> None:
    """Print the output-shape snapshot for review: all of a new one, the changed lines
    of a replaced one."""
    lines = text.splitlines()
    decided = sum(1 for line in lines if "*" in line)
    _progress(
        f"review {path}: {len(lines)} functions, "
        f"{decided} with parameters from the exceptions table"
    )
    if old is None:
        shown = lines
    else:
        before = set(old.splitlines())
        after = set(lines)
        shown = [f"- {line}" for line in old.splitlines() if line not in after]
        shown += [f"+ {line}" for line in lines if line not in before]
        if not shown:
            _progress("  (unchanged)")
    for line in shown:
        _progress(f"  {line}")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cudart-bindgen", description=__doc__.splitlines()[0])
    parser.add_argument("--manifest", type=Path, default=DEFAULT_MANIFEST_PATH)
    parser.add_argument("--output", type=Path, default=GENERATED, help="the generated/ folder")
    parser.add_argument(
        "--families",
        type=Path,
        help="the folder of family descriptors (default: the checkout's families/)",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    gen = sub.add_parser("generate", help="(re)generate one version, or all of the manifest")
    gen.add_argument("version", nargs="?", help="a CUDA version of the manifest, e.g. 12.5")
    gen.add_argument("--all", action="store_true", help="every version of the manifest")
    gen.set_defaults(func=cmd_generate)
    check = sub.add_parser("check", help="regenerate in memory and compare with generated/")
    for rendering in (gen, check):
        rendering.add_argument(
            "--jobs", type=int, default=None, help="worker processes (default: one per CPU)"
        )
        rendering.add_argument(
            "--no-model-cache",
            action="store_true",
            help="parse every header set again rather than load its kept model "
            f"(as ${model_cache.CACHE_ENV}=0)",
        )
    check.set_defaults(func=cmd_check)
    view = sub.add_parser(
        "views",
        help="write the package with every version's module as its own file (for mypy)",
    )
    view.add_argument("--package", type=Path, required=True, help="the folder to write cudart/ in")
    view.set_defaults(func=cmd_views)
    outputs = sub.add_parser(
        "outputs", help="show each function's checked inputs and outputs (* = exceptions table)"
    )
    outputs.add_argument("version", nargs="?", help="a CUDA version of the manifest (default: all)")
    outputs.add_argument(
        "--table", action="store_true", help="only what the exceptions table decided"
    )
    outputs.add_argument(
        "--attributes",
        action="store_true",
        help="instead, each attribute's value type for the attribute setters and getters",
    )
    outputs.add_argument(
        "--options",
        action="store_true",
        help="instead, each JIT and library option's value type (cuModuleLoadDataEx, ...)",
    )
    outputs.add_argument(
        "--sizes",
        action="store_true",
        help="instead, each pointer input's size relation and the (pointer, size) pairs left out",
    )
    outputs.add_argument(
        "--surface",
        default=DEFAULT_SURFACE,
        help=f"the header family (its descriptor's name; default {DEFAULT_SURFACE})",
    )
    outputs.set_defaults(func=cmd_outputs)
    docs = sub.add_parser(
        "docs", help="render the API reference's pages into docs/reference/ (make docs)"
    )
    docs.add_argument("--docs", type=Path, default=REPO / "docs", help="the site's source folder")
    docs.set_defaults(func=cmd_docs)
    add = sub.add_parser(
        "add",
        help="pin the newest patch release of CUDA minors and generate them, with their "
        "snapshots and the version-set files",
    )
    add.add_argument("versions", nargs="*", metavar="version", help="a CUDA major.minor, e.g. 12.6")
    add.add_argument(
        "--new", action="store_true", help="every minor on the registry that the manifest lacks"
    )
    for adding in (gen, add):
        adding.add_argument(
            "--family",
            metavar="NAME",
            help='an own-axis family (axis = "own" in its descriptor): the versions are its '
            "own releases (e.g. `--family nccl 2.21`), not CUDA minors",
        )
    add.add_argument(
        "--snapshots", type=Path, default=SNAPSHOTS, help="where the output-shape snapshots live"
    )
    add.set_defaults(func=cmd_add)
    return parser


def _check_output(folder: Path) -> None:
    """Refuse an --output that cannot become the generated/ folder before any work (the
    tree writer would otherwise fail after minutes of rendering, or exchange a file)."""
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"--output {folder} exists and is not a folder")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    version = getattr(args, "version", None)
    if getattr(args, "all", False) and version is not None:
        print("cudart-bindgen: error: give a version or --all, not both", file=sys.stderr)
        return 2
    if args.families is not None:
        # In the environment: render_all's worker processes inherit it.
        os.environ[FAMILIES_ENV] = str(args.families.resolve())
    if getattr(args, "no_model_cache", False):
        # In the environment: render_all's worker processes inherit it.
        os.environ[model_cache.CACHE_ENV] = "0"
    try:
        if version is not None:
            # Before anything is read or written: `generate ""` (an unset shell variable)
            # once meant `generate --all`, and replaced the whole tree.
            parse_version_key(version)
        _check_output(args.output)
        return args.func(args)
    except ParseError as exc:
        # Diagnostics span lines; the first line says what failed.
        print(f"cudart-bindgen: error: {exc}", file=sys.stderr)
        return 2
    except (ManifestError, FetchError, RenderError, ValueError, OSError) as exc:
        # OSError: a file system that refuses (a folder that is a file, no space, no
        # permission), with the system's reason and the path it names.
        print(f"cudart-bindgen: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        if getattr(args, "writing", False):
            print(
                f"cudart-bindgen: interrupted while writing {args.output}; "
                "`cudart-bindgen check` says whether it matches the generator",
                file=sys.stderr,
            )
        else:
            print("cudart-bindgen: interrupted; generated/ is unchanged", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
