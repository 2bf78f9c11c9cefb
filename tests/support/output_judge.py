"""An independent judge of the checked layer's plan: which C parameters of the runtime and
the driver are outputs, in-out values, or counted arrays, as two sources other than
generator/resolve.py's reading say it.

* The headers' own direction tags, `\\param[in]`, `\\param[out]`, `\\param[in,out]`
  (generator/doxygen.py keeps them; the plan reads only `[out]`, and only as one hint
  among several). Few parameters carry them (13.5: 60 of the runtime's, 193 of the
  driver's): where a header says nothing, it judges nothing.
* cuda-bindings' signatures (tests/support/bindings_signatures.py): NVIDIA's Python
  bindings, made from the same headers by other code, take some C parameters from the
  caller and return others. BINDINGS says which release judges which major's plans; a
  version whose parameter names differ from the release's is not judged for that function.

Each verdict is in one vocabulary, the plan's roles seen from C:
"in" (the call reads it), "out" (the call writes one value), "inout", "array" (the call
fills several), and "count" (an array's length, which the call writes back). A
disagreement is a (source, version, function, parameter, judge says, plan says) row;
tests/support/output_judge/disagreements.toml lists each reviewed one.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

import bindings_signatures

from generator.plan import ARRAY_KINDS, FunctionPlan, ParamPlan, Role

# Which cuda-bindings release judges which major's plans.
BINDINGS = {"12": "12.9.10", "13": "13.5.0"}

# What the judge's verdict may be for each of the plan's verdicts, and still agree.
# An array's count is in-out in C where the caller sizes the array (cuda-bindings takes it
# as the capacity, the plan asks C first) and out where C hands back its own array.
AGREES = {
    "in": {"in"},
    "out": {"out"},
    "inout": {"inout"},
    "array": {"array"},
    "count": {"count", "inout", "out"},
}
# The header tags say less than the plan: `[out]` covers one value and a filled array alike.
HEADER_TAG = {"in": "in", "out": "out", "in,out": "inout"}
HEADER_AGREES = {
    "in": {"in"},
    "out": {"out", "array", "count"},
    "inout": {"inout", "count"},
}


@dataclass(frozen=True, order=True)
class Verdict:
    source: str  # "header" or "cuda-bindings" (BINDINGS says which release)
    family: str  # "runtime" or "driver"
    version: str  # the pinned CUDA version whose plan was judged
    function: str  # the public name
    parameter: str  # the C name
    judge: str
    plan: str


def plan_says(p: ParamPlan) -> str:
    if p.role is Role.OUT:
        # A list of several values: an array kind, or the typed values of several
        # attributes at once (cudaMemRangeGetAttributes' data).
        return "array" if p.kind in ARRAY_KINDS or p.py_type.startswith("list[") else "out"
    return {Role.IN: "in", Role.INOUT: "inout", Role.COUNT: "count"}[p.role]


def header_tags(plan: FunctionPlan) -> dict[str, str]:
    """{C parameter: "in" | "out" | "inout"} as the function's \\param tags say.

    The runtime's tags sometimes name the documented parameter otherwise than the
    prototype: 12.x's cudaGraphKernelNodeCopyAttributes documents `dst, src` for
    `hSrc, hDst`, cudaMemPoolExportToShareableHandle `handle_out` for `shareableHandle`.
    An unknown name is the parameter it is with a handle's `h` or a pointer's `p` before
    it; failing that, where every parameter is documented, its position's."""
    doc = plan.function.doc
    if doc is None:
        return {}
    names = [p.name for p in plan.function.params]
    found = {}
    for i, d in enumerate(doc.params):
        name = _documented_name(names, d.name)
        if name is None and len(doc.params) == len(names) and doc.params[i].name not in names:
            name = names[i]
        if name is not None and d.direction in HEADER_TAG:
            found[name] = HEADER_TAG[d.direction]
    return found


def _documented_name(names: list[str], documented: str) -> str | None:
    if documented in names:
        return documented
    spelled = [
        n
        for n in names
        if n.lower() in (documented.lower(), "h" + documented.lower(), "p" + documented.lower())
    ]
    return spelled[0] if len(spelled) == 1 else None


# cuda-bindings' spelling of a C name that is a Python keyword or builtin.
_PYTHON_NAMES = {"typename": "type", "length": "len", "numbytes": "bytes", "pformat": "format"}
# (function, cuda-bindings' name) -> the C name, where cuda-bindings takes its name from
# the header's \param line and the \param line names the parameter otherwise than the
# prototype does.
DOC_NAMES = {
    ("cudaGraphAddEventRecordNode", "phGraphNode"): "pGraphNode",
    ("cudaGraphAddEventWaitNode", "phGraphNode"): "pGraphNode",
    ("cudaMemPoolExportPointer", "shareData_out"): "exportData",
    ("cudaMemPoolExportToShareableHandle", "handle_out"): "shareableHandle",
    ("cudaMemPoolImportFromShareableHandle", "pool_out"): "memPool",
    ("cudaMemPoolImportPointer", "ptr_out"): "ptr",
}


def c_name(function: str, c_names: list[str], name: str) -> str | None:
    """The C parameter of `function` that cuda-bindings calls `name`; None if none is."""
    if name in c_names:
        return name
    for candidate in (DOC_NAMES.get((function, name)), name.removesuffix("_")):
        if candidate in c_names:
            return candidate
    if _PYTHON_NAMES.get(name) in c_names:
        return _PYTHON_NAMES[name]
    folded = [c for c in c_names if c.lower() == name.lower()]  # graphId, graphID
    return folded[0] if len(folded) == 1 else None


def bindings_verdicts(s: bindings_signatures.Signature, plan: FunctionPlan) -> dict[str, str]:
    """{C parameter: cuda-bindings' verdict} for the parameters it takes or returns; one it
    neither takes nor returns (a count it takes from a list's length) is not judged.
    KeyError for a name that is no C parameter of the plan's function."""
    names = [p.name for p in plan.function.params]

    def c(name: str) -> str:
        found = c_name(plan.function.name, names, name) or c_name(plan.name, names, name)
        if found is None:
            raise KeyError(f"{plan.name}: cuda-bindings' {name} is no parameter of its C")
        return found

    inputs = {c(n) for n in s.inputs}
    outputs = {c(n) for n in s.outputs}
    lists = {c(n) for n in s.lists}
    verdicts = {n: "in" for n in inputs}
    verdicts.update({n: "array" if n in lists else "out" for n in outputs})
    verdicts.update({n: "inout" for n in inputs & outputs})
    return verdicts


def names_match(s: bindings_signatures.Signature, plan: FunctionPlan) -> bool:
    """Whether every name cuda-bindings uses is a C parameter of the plan's function: not
    so where a version before the release's own named them otherwise (12.x's useFlags)."""
    try:
        bindings_verdicts(s, plan)
    except KeyError:
        return False
    return True


def signature_for(
    signatures: dict[tuple[str, str], bindings_signatures.Signature],
    family: str,
    plan: FunctionPlan,
) -> bindings_signatures.Signature | None:
    """cuda-bindings' signature of the plan's function: its own, or for `cuMemAlloc_v2`
    (which cuda-bindings binds as `cuMemAlloc`, the name cuda.h defines to it) its twin's,
    where the twin's names are all this function's parameters."""
    found = signatures.get((family, plan.name))
    if found is not None:
        return found
    twin = re.match(r"^(\w+?)_v\d+$", plan.name)
    found = twin and signatures.get((family, twin.group(1)))
    if not found:
        return None
    names = [p.name for p in plan.function.params]
    every = (*found.inputs, *found.outputs)
    return found if all(c_name(plan.name, names, n) for n in every) else None


def disagreements(family: str, plans_by_version: dict[str, list[FunctionPlan]]) -> list[Verdict]:
    """Every verdict of either judge that the plan's does not agree with."""
    found = []
    bindings = {major: bindings_signatures.load(r) for major, r in BINDINGS.items()}
    for version, plans in plans_by_version.items():
        major = version.split(".")[0]
        for plan in plans:
            params = {p.name: p for p in plan.params}
            for name, tag in header_tags(plan).items():
                if name in params and plan_says(params[name]) not in HEADER_AGREES[tag]:
                    found.append(
                        Verdict(
                            "header", family, version, plan.name, name, tag, plan_says(params[name])
                        )
                    )
            s = signature_for(bindings[major], family, plan)
            if s is None or not names_match(s, plan):
                continue  # another version's parameter names: names_match says which
            for name, verdict in bindings_verdicts(s, plan).items():
                if verdict not in AGREES[plan_says(params[name])]:
                    found.append(
                        Verdict(
                            "cuda-bindings",
                            family,
                            version,
                            plan.name,
                            name,
                            verdict,
                            plan_says(params[name]),
                        )
                    )
    return found


TABLE = Path(__file__).resolve().parent / "output_judge" / "disagreements.toml"
VERDICTS = ("plan wrong", "open", "judge wrong", "header wrong")


def reviewed(versions: list[str], table: Path = TABLE) -> dict[Verdict, dict]:
    """{Verdict: its row} for every version each row of the reviewed table covers."""
    found: dict[Verdict, dict] = {}
    for row in tomllib.loads(table.read_text())["disagreement"]:
        for span in row["versions"]:
            first, _, last = span.partition("-")
            covered = versions[versions.index(first) : versions.index(last or first) + 1]
            if not covered:
                raise ValueError(f"{row['function']}.{row['parameter']}: {span} is no span")
            for version in covered:
                verdict = Verdict(
                    row["source"],
                    row["family"],
                    version,
                    row["function"],
                    row["parameter"],
                    row["judge"],
                    row["plan"],
                )
                if verdict in found:
                    raise ValueError(f"the table lists {verdict} twice")
                found[verdict] = row
    return found
