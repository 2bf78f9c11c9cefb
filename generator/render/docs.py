"""The API reference: reStructuredText for the Sphinx site (docs/), from every version's
model at once.

The bindings are one module per version; the reference is one entry per name, over all
the versions the manifest pins: each function with its checked signature, what it
returns and raises, its C prototype, the header's docs and an availability line (added,
changed, deprecated, removed in); each record with its fields' C types, offsets and
sizes; each enum with its members' values and the versions that have them; and a page
of the differences between consecutive versions. Every header family (manifest surface)
is rendered by the same code: a new family needs none of its own.

What it shows is what the generated modules are made of, read from the same
GenerationContext (generator/context.py): the checked signature is the one
render/checked.py writes, the layout the model's (gcc-judged in tests/generator/
test_abi.py), field sizes TypeMapper's. Nothing here imports a generated module.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from ..context import GenerationContext
from ..manifest import DEFAULT_SURFACE
from ..model import Enum, Function, Record
from ..plan import FunctionPlan, Role
from .base import c_prototype, checked_module_name, new_environment
from .checked import CheckedView
from .rst import blocks, text

# The folder of docs/ the reference is written to (gitignored: made at build time).
FOLDER = "reference"
CHANGES_PAGE = "changes"
# A family with at most this many functions gets one page of them; a larger one a page
# per leading name word (cudaGraph*, cudaStream*, ...), words with fewer than
# SMALL_GROUP functions together on one page.
ONE_PAGE = 60
SMALL_GROUP = 5
OTHER_GROUP = "Other"
# A layout change lists at most this many moved fields by name.
MOVED_LISTED = 4


# ---------------------------------------------------------------- availability


@dataclass(frozen=True)
class Availability:
    """Where a name exists over the versions (keys in manifest order)."""

    keys: tuple[str, ...]  # every version of the family
    present: tuple[str, ...]
    changed: tuple[str, ...] = ()  # present, and its shape differs from the version before
    deprecated: str | None = None  # the first version that marks it deprecated

    @property
    def added(self) -> str | None:
        """The first version with it; None where that is the oldest covered (it may be older)."""
        first = self.present[0]
        return None if first == self.keys[0] else first

    @property
    def removed(self) -> str | None:
        """The version after the last one with it, where that is not the newest."""
        last = self.keys.index(self.present[-1])
        return self.keys[last + 1] if last + 1 < len(self.keys) else None

    @property
    def span(self) -> str:
        return version_ranges(self.present, self.keys)

    @property
    def line(self) -> str:
        """One line: "12.3 – 13.5; added in 12.3; changed in 13.0; deprecated in 13.1"."""
        parts = [self.span]
        parts.append(
            f"added in {self.added}" if self.added else f"since {self.keys[0]}, the oldest covered"
        )
        if self.changed:
            parts.append("changed in " + ", ".join(self.changed))
        if self.deprecated:
            parts.append(f"deprecated in {self.deprecated}")
        if self.removed:
            parts.append(f"removed in {self.removed}")
        return "; ".join(parts)


def availability(
    keys: Sequence[str], shapes: dict[str, object], deprecated: Iterable[str] = ()
) -> Availability:
    """From a name's shape in each version that has it (a signature, a layout)."""
    present = tuple(k for k in keys if k in shapes)
    changed = tuple(b for a, b in pairwise(present) if shapes[a] != shapes[b])
    marked = set(deprecated)
    return Availability(
        keys=tuple(keys),
        present=present,
        changed=changed,
        deprecated=next((k for k in present if k in marked), None),
    )


def version_ranges(present: Sequence[str], keys: Sequence[str]) -> str:
    """Versions as runs of consecutive keys: "12.0 – 12.9, 13.2"."""
    runs: list[list[str]] = []
    previous = -2
    for key in present:
        index = keys.index(key)
        if index == previous + 1:
            runs[-1].append(key)
        else:
            runs.append([key])
        previous = index
    return ", ".join(r[0] if len(r) == 1 else f"{r[0]} – {r[-1]}" for r in runs)


# ---------------------------------------------------------------- one version's facts


@dataclass(frozen=True)
class FunctionVersion:
    plan: FunctionPlan
    signature: str  # the checked `def`'s parameters
    returns: str  # its return annotation
    prototype: str  # C's
    error_base: str  # the cudart.errors class its failures derive from

    @property
    def shape(self) -> tuple[str, str, str]:
        return self.prototype, self.signature, self.returns


@dataclass(frozen=True)
class FieldRow:
    name: str
    ctype: str  # C's declaration of the field's type
    offset: int
    size: int
    anonymous: bool
    doc: str


@dataclass(frozen=True)
class RecordVersion:
    record: Record
    fields: tuple[FieldRow, ...]

    @property
    def layout(self) -> tuple[object, ...]:
        return (
            self.record.size,
            self.record.align,
            tuple((f.name, f.ctype, f.offset, f.size) for f in self.fields),
        )


@dataclass(frozen=True)
class EnumVersion:
    enum: Enum

    @property
    def members(self) -> dict[str, int]:
        return {k.name: k.value for k in self.enum.enumerators}


def _function_versions(context: GenerationContext) -> dict[str, FunctionVersion]:
    view = CheckedView(context)
    checked = {f.name: f for f in view.functions}
    return {
        plan.name: FunctionVersion(
            plan=plan,
            signature=checked[plan.name].signature,
            returns=checked[plan.name].annotation,
            prototype=c_prototype(context.types, plan.function),
            error_base=view.error_base,
        )
        for plan in context.plans
    }


def _record_versions(context: GenerationContext) -> dict[str, RecordVersion]:
    types = context.types
    return {
        r.name: RecordVersion(
            record=r,
            fields=tuple(
                FieldRow(
                    name=f.name,
                    ctype=types.c_declaration(f.type),
                    offset=f.offset,
                    size=types.size_align(f.type)[0],
                    anonymous=f.anonymous,
                    doc=f.doc,
                )
                for f in r.fields
            ),
        )
        for r in context.model.records
        if not r.opaque
    }


# ---------------------------------------------------------------- a family over versions


@dataclass
class Entry:
    """One name of a family: its facts in each version that has it."""

    name: str
    # key -> FunctionVersion, RecordVersion or EnumVersion (one kind per table)
    versions: dict[str, Any] = field(default_factory=dict)
    availability: Availability | None = None

    @property
    def newest(self) -> Any:
        """The facts the entry shows first: the newest version's."""
        assert self.availability is not None
        return self.versions[self.availability.present[-1]]

    def spans(self, shape: Callable[[Any], object]) -> list[tuple[str, Any]]:
        """(versions, facts) for each run of versions sharing one shape, newest first."""
        assert self.availability is not None
        present = self.availability.present
        runs: list[list[str]] = []
        for key in present:
            if runs and shape(self.versions[runs[-1][-1]]) == shape(self.versions[key]):
                runs[-1].append(key)
            else:
                runs.append([key])
        return [
            (version_ranges(run, self.availability.keys), self.versions[run[-1]])
            for run in reversed(runs)
        ]


@dataclass
class FamilyReference:
    """Everything the reference says about one header family (a manifest surface)."""

    surface: str
    api: str  # what the modules' docs call it (RenderContext.api: "runtime", "NVRTC")
    keys: tuple[str, ...]  # the versions that have the family, in manifest order
    numbers: dict[str, int]  # key -> CUDA version number (12050)
    functions: dict[str, Entry] = field(default_factory=dict)
    records: dict[str, Entry] = field(default_factory=dict)
    enums: dict[str, Entry] = field(default_factory=dict)

    @property
    def title(self) -> str:
        return f"{self.api[0].upper()}{self.api[1:]} API"

    @property
    def module(self) -> str:
        """The Python module the reference files the family's names under."""
        return python_module(self.surface)

    def checked_module(self, key: str) -> str:
        return "cudart." + checked_module_name(self.numbers[key], self.surface)


def python_module(surface: str) -> str:
    """`cudart` serves the runtime's names; another family's are `cudart.<surface>.<name>`
    in the reference (each version's module is named on the family's page)."""
    return "cudart" if surface == DEFAULT_SURFACE else f"cudart.{surface}"


def family_reference(surface: str, contexts: dict[str, GenerationContext]) -> FamilyReference:
    """One family's reference from its contexts, by version key in manifest order."""
    keys = tuple(contexts)
    family = FamilyReference(
        surface,
        contexts[keys[-1]].render.api,
        keys,
        {k: contexts[k].cuda_version for k in keys},
    )
    for key, context in contexts.items():
        for name, fv in _function_versions(context).items():
            family.functions.setdefault(name, Entry(name)).versions[key] = fv
        for name, rv in _record_versions(context).items():
            family.records.setdefault(name, Entry(name)).versions[key] = rv
        for enum in context.model.enums:
            if enum.enumerators:
                family.enums.setdefault(enum.name, Entry(enum.name)).versions[key] = EnumVersion(
                    enum
                )
    for e in family.functions.values():
        e.availability = availability(
            keys,
            {k: v.shape for k, v in e.versions.items()},
            (k for k, v in e.versions.items() if v.plan.function.deprecated),
        )
    for e in family.records.values():
        e.availability = availability(keys, {k: v.layout for k, v in e.versions.items()})
    for e in family.enums.values():
        e.availability = availability(keys, {k: v.members for k, v in e.versions.items()})
    for table in (family.functions, family.records, family.enums):
        ordered = sorted(table.items(), key=lambda item: item[0].lower())
        table.clear()
        table.update(ordered)
    return family


# ---------------------------------------------------------------- differences


@dataclass(frozen=True)
class Change:
    name: str
    lines: tuple[str, ...]  # what changed, one fact a line (rst-ready)


@dataclass(frozen=True)
class VersionDiff:
    old: str
    new: str
    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[Change, ...]
    records_added: tuple[str, ...]
    records_removed: tuple[str, ...]
    layouts: tuple[Change, ...]  # records whose size, alignment or fields changed


def version_diffs(family: FamilyReference) -> list[VersionDiff]:
    """The differences between each pair of consecutive versions of the family."""
    return [_diff(family, a, b) for a, b in pairwise(family.keys)]


def _in(entries: dict[str, Entry], key: str) -> set[str]:
    return {name for name, e in entries.items() if key in e.versions}


def _diff(family: FamilyReference, a: str, b: str) -> VersionDiff:
    fa, fb = _in(family.functions, a), _in(family.functions, b)
    ra, rb = _in(family.records, a), _in(family.records, b)
    changed = []
    for name in sorted(fa & fb, key=str.lower):
        old, new = family.functions[name].versions[a], family.functions[name].versions[b]
        lines = function_change(old, new)
        if lines:
            changed.append(Change(name, lines))
    layouts = []
    for name in sorted(ra & rb, key=str.lower):
        old, new = family.records[name].versions[a], family.records[name].versions[b]
        lines = layout_change(old, new)
        if lines:
            layouts.append(Change(name, lines))
    return VersionDiff(
        old=a,
        new=b,
        added=tuple(sorted(fb - fa, key=str.lower)),
        removed=tuple(sorted(fa - fb, key=str.lower)),
        changed=tuple(changed),
        records_added=tuple(sorted(rb - ra, key=str.lower)),
        records_removed=tuple(sorted(ra - rb, key=str.lower)),
        layouts=tuple(layouts),
    )


def function_change(old: FunctionVersion, new: FunctionVersion) -> tuple[str, ...]:
    lines = []
    if old.prototype != new.prototype:
        lines.append(f"C: {literal(old.prototype)} → {literal(new.prototype)}")
    if (old.signature, old.returns) != (new.signature, new.returns):
        name = new.plan.name
        lines.append(
            f"Python: {literal(f'{name}({old.signature}) -> {old.returns}')} → "
            f"{literal(f'{name}({new.signature}) -> {new.returns}')}"
        )
    return tuple(lines)


def layout_change(old: RecordVersion, new: RecordVersion) -> tuple[str, ...]:
    lines = []
    if old.record.size != new.record.size:
        lines.append(f"size {old.record.size} → {new.record.size} bytes")
    if old.record.align != new.record.align:
        lines.append(f"alignment {old.record.align} → {new.record.align}")
    before = {f.name: f for f in old.fields}
    after = {f.name: f for f in new.fields}
    moved = []
    for f in new.fields:
        was = before.get(f.name)
        if was is None:
            lines.append(f"{literal(f.name)} added at offset {f.offset} ({literal(f.ctype)})")
        elif was.ctype != f.ctype or was.size != f.size:
            what = f"type {literal(was.ctype)} → {literal(f.ctype)}"
            if was.offset != f.offset:
                what += f", offset {was.offset} → {f.offset}"
            lines.append(f"{literal(f.name)}: {what}")
        elif was.offset != f.offset:
            moved.append(f"{literal(f.name)} {was.offset} → {f.offset}")
    lines += [f"{literal(name)} removed" for name in before if name not in after]
    if len(moved) > MOVED_LISTED:
        # A field added or removed early moves every later one: the count says it.
        shown = "; ".join(moved[:MOVED_LISTED])
        lines.append(f"{len(moved)} fields moved: {shown}; ...")
    elif moved:
        lines.append("moved: " + "; ".join(moved))
    return tuple(lines)


# ---------------------------------------------------------------- reStructuredText


def literal(value: str) -> str:
    """Code as an inline literal."""
    return f"``{' '.join(value.split())}``" if value.strip() else ""


def heading(title: str, mark: str) -> str:
    return f"{title}\n{mark * len(title)}"


class Linker:
    """Links to what the reference documents, in any family: the `\\sa` names and the
    version-difference page's names. A name it does not document stays a literal, so
    every link it writes resolves (sphinx -W with nitpicky holds that)."""

    def __init__(self, families: Iterable[FamilyReference]) -> None:
        # name -> (surface, role, target) of each family documenting it
        self.targets: dict[str, list[tuple[str, str, str]]] = {}
        for family in families:
            for role, table in (
                ("func", family.functions),
                ("obj", family.records),
                ("obj", family.enums),
            ):
                for name in table:
                    where = (family.surface, role, f"{family.module}.{name}")
                    self.targets.setdefault(name, []).append(where)

    def within(self, surface: str) -> Callable[[str], str]:
        """link(name) for a page of one family: its own name first (CUuuid_st is in two)."""

        def link(name: str) -> str:
            targets = self.targets.get(name)
            if not targets:
                return literal(name)
            _, role, path = next((t for t in targets if t[0] == surface), targets[0])
            return f":py:{role}:`~{path}`"

        return link

    def links(self, surface: str) -> Callable[[Iterable[str]], str]:
        """links(names): each linked as `within` does, comma-separated."""
        link = self.within(surface)
        return lambda names: ", ".join(map(link, names))


@dataclass(frozen=True)
class Page:
    name: str  # file stem inside the family's folder
    title: str
    entries: tuple[Entry, ...]


def function_pages(family: FamilyReference) -> list[Page]:
    """The family's functions, one page or a page per leading name word."""
    entries = list(family.functions.values())
    if len(entries) <= ONE_PAGE:
        return [Page("functions", "Functions", tuple(entries))]
    prefix = _common_prefix(list(family.functions))
    groups: dict[str, list[Entry]] = {}
    for e in entries:
        groups.setdefault(_leading_word(e.name[len(prefix) :]), []).append(e)
    other = [e for word, members in groups.items() if len(members) < SMALL_GROUP for e in members]
    pages = [
        Page(f"functions-{word.lower()}", f"{prefix}{word}* functions", tuple(members))
        for word, members in sorted(groups.items())
        if len(members) >= SMALL_GROUP
    ]
    if other:
        other.sort(key=lambda e: e.name.lower())
        pages.append(Page("functions-other", "Other functions", tuple(other)))
    return pages


def _common_prefix(names: list[str]) -> str:
    """The family's name prefix up to a word boundary ("cuda", "cu", "nvJitLink")."""
    prefix = os.path.commonprefix(names)
    words = re.match(r"^[a-z_]*(?:[A-Z][a-z]*)*?(?=[A-Z]|$)", prefix)
    head = words.group(0) if words else ""
    # A prefix that is a whole name (nvJitLinkVersion's own) would leave nothing.
    return head if all(len(n) > len(head) for n in names) else ""


_WORD = re.compile(r"[A-Z]{2,}(?=[A-Z][a-z]|\d|_|$)|[A-Z]?[a-z]+|[A-Z]+|\d+")


def _leading_word(rest: str) -> str:
    match = _WORD.match(rest)
    return match.group(0).capitalize() if match and match.group(0)[0].isalpha() else OTHER_GROUP


def render_reference(families: Sequence[FamilyReference]) -> dict[str, str]:
    """Every page of the reference: {path relative to docs/: reStructuredText}."""
    env = new_environment()
    env.filters.update(text=text, blocks=blocks, literal=literal, heading=heading)
    linker = Linker(families)
    files: dict[str, str] = {}
    pages_of = {f.surface: function_pages(f) for f in families}
    files[f"{FOLDER}/index.rst"] = env.get_template("docs/reference_index.rst.j2").render(
        families=families, changes=CHANGES_PAGE
    )
    for family in families:
        folder = f"{FOLDER}/{family.surface}"
        files[f"{folder}/index.rst"] = env.get_template("docs/family_index.rst.j2").render(
            family=family, pages=pages_of[family.surface]
        )
        for page in pages_of[family.surface]:
            files[f"{folder}/{page.name}.rst"] = env.get_template("docs/functions.rst.j2").render(
                family=family, page=page, links=linker.links(family.surface), view=FunctionEntryView
            )
        files[f"{folder}/records.rst"] = env.get_template("docs/records.rst.j2").render(
            family=family, view=RecordEntryView
        )
        files[f"{folder}/enums.rst"] = env.get_template("docs/enums.rst.j2").render(
            family=family, rows=enum_rows
        )
    files[f"{FOLDER}/{CHANGES_PAGE}.rst"] = env.get_template("docs/changes.rst.j2").render(
        families=[
            (f, version_diffs(f), linker.within(f.surface), linker.links(f.surface))
            for f in families
        ]
    )
    return files


class FunctionEntryView:
    """What templates/docs/functions.rst.j2 reads of one function."""

    def __init__(self, entry: Entry) -> None:
        self.entry = entry
        self.newest: FunctionVersion = entry.newest
        assert entry.availability is not None
        self.availability = entry.availability
        plan = self.newest.plan
        self.plan = plan
        self.function: Function = plan.function
        self.doc = plan.function.doc

    @property
    def earlier(self) -> list[tuple[str, FunctionVersion]]:
        """(versions, facts) of each older shape, where the signature changed."""
        return self.entry.spans(lambda v: v.shape)[1:]

    def c_doc(self, name: str) -> str:
        text = self.doc.param(name) if self.doc else None
        return text or ""

    @property
    def inputs(self) -> list[tuple[str, str]]:
        return [(p.py_name, self.c_doc(p.name)) for p in self.plan.inputs]

    @property
    def outputs(self) -> list[tuple[str, str, str]]:
        return [
            (p.py_name, p.py_type, self.c_doc(p.name))
            for p in self.plan.outputs
            if p.role is not Role.COUNT
        ]

    @property
    def handled(self) -> list[tuple[str, str]]:
        """C parameters the checked layer fills itself (an array's count)."""
        return [(p.name, self.c_doc(p.name)) for p in self.plan.params if p.role is Role.COUNT]

    @property
    def alias(self) -> str | None:
        """The C function a public name calls, where it is another (a macro's target)."""
        return None if self.function.name == self.plan.name else self.function.name


class RecordEntryView:
    """What templates/docs/records.rst.j2 reads of one record."""

    def __init__(self, entry: Entry) -> None:
        self.entry = entry
        assert entry.availability is not None
        self.availability = entry.availability
        self.newest: RecordVersion = entry.newest
        self.record = self.newest.record

    @property
    def changes(self) -> list[tuple[str, tuple[str, ...]]]:
        """(version, what changed) for each version whose layout differs from the one before."""
        present = self.availability.present
        out = []
        for key in self.availability.changed:
            before = present[present.index(key) - 1]
            out.append((key, layout_change(self.entry.versions[before], self.entry.versions[key])))
        return out


def enum_rows(entry: Entry) -> list[tuple[str, int, str, str]]:
    """(member, value, versions, doc) of every member any version has, newest order first."""
    assert entry.availability is not None
    keys = entry.availability.keys
    seen: dict[tuple[str, int], list[str]] = {}
    docs: dict[tuple[str, int], str] = {}
    for key in reversed(entry.availability.present):
        for k in entry.versions[key].enum.enumerators:
            seen.setdefault((k.name, k.value), []).append(key)
            docs.setdefault((k.name, k.value), k.doc)
    rows = []
    for (name, value), versions in seen.items():
        present = [k for k in keys if k in versions]
        every = present == list(entry.availability.present)
        rows.append(
            (name, value, "all" if every else version_ranges(present, keys), docs[(name, value)])
        )
    return sorted(rows, key=lambda r: (r[1], r[0]))
