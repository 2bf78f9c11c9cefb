"""Size relations: how much memory a pointer input must hold, from the other inputs.

C trusts the caller: `cudaMemcpy(dst, src, count, kind)` reads `count` bytes at `src`
whatever `src` is. Where the Python caller passes a buffer (bytes, bytearray,
memoryview, NumPy, array.array, a ctypes object, a cudart.HostMemory) or a list, the
checked layer knows its size and refuses a request larger than it (ValueError) before
the call; a bare int is the caller's promise, as in C (cudart/_convert.py: `pointer`,
`ref`).

One table, decided here and applied to the plans (`apply`), in these measures
(plan.Measure):

* BYTES: a `void *` sized by a scalar whose \\param text says "Size ... bytes"
  (cudaMemcpy's count, cudaHostRegister's size): derived from the docs.
* ROWS: a `void *` of a 2D call, where `width` says "(columns in bytes)", `height`
  "(rows)" and the pointer's pitch (`dpitch` for dst, `spitch` for src, `pitch`)
  "Pitch ...": (height - 1) * pitch + width bytes. Derived from the docs.
* ELEMENTS: an array (`const T *`, or a `void **` of pointers) counted by a scalar
  whose \\param text says "Number of X" / "Size of the X array" / "Count of X", where
  that text names the array, the array's text names the count, or X is what the
  array's text or name is about ("Number of dependencies": pDependencies). Derived.
* RECORD: any other `const T *` input holds one T (a `const cudaDeviceProp *` is not
  handed a 1-byte buffer): derived from the type.

* QUERIED: the buffer a getter fills with as much as its partner function says it
  holds (nvrtcGetPTX with nvrtcGetPTXSize): derived from the names (`queried_partner`).
  C writes that much whatever the buffer is, so the checked function calls the
  partner and refuses a smaller buffer; given no buffer, it returns what C wrote.

* REGIONS: an array of one element per region of a range, ceil(size / granularity)
  (cuMemGetLocationInfo's location_out): reviewed, from the description.

* EXACT: an array of a length C fixes and no input says (cuTexRefSetBorderColor's
  RGBA, 4 floats): reviewed; a list of another length is refused.

REVIEWED adds what the docs do not state (symbols: count + offset; the range
functions), each with its reason. The pairs that look like a (pointer, size) pair but
are not one (a struct pointer beside a width) are in LEFT_OUT with the reason; a pair
with neither fails tests/generator/test_sizes.py, and `cudart-bindgen outputs --sizes` prints
it as UNDECIDED. An entry for a function a version lacks is skipped; one naming a
parameter the function lacks is a RenderError, so a header change cannot go unnoticed.

Not in the table, deliberately: the addresses inside records (cudaMemcpy3DParms'
srcPtr/dstPtr, cudaMemcpyBatchAsync's dsts[i]). A record's `void *` member takes memory
(cudart._layout.memory_fields) but the record does not say how much of it C touches;
only a record builder whose own arguments state a size is checked (BUILDER_SIZES).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from .ctypes_map import RenderError
from .model import Builtin, Pointer
from .plan import FunctionPlan, Measure, ParamKind, ParamPlan, Role

_B, _R, _E = Measure.BYTES, Measure.ROWS, Measure.ELEMENTS

_SYMBOL_REASON = "the copy touches symbol's bytes [offset, offset + count)"

# (function as declared, parameter) -> (measure, the inputs it reads, why). What the
# docs do not state, or state ambiguously; it replaces a derived relation.
REVIEWED: dict[tuple[str, str], tuple[Measure, tuple[str, ...], str]] = {
    **{
        (f, "location_out"): (
            Measure.REGIONS,
            ("size", "summaryGranularity"),
            '"The total number of locations returned will be ceil(size/summaryGranularity)"',
        )
        for f in ("cudaMemGetLocationInfo", "cuMemGetLocationInfo")
    },
    **{
        (f, "symbol"): (_B, ("count", "offset"), _SYMBOL_REASON)
        for f in (
            "cudaMemcpyToSymbol",
            "cudaMemcpyToSymbolAsync",
            "cudaMemcpyFromSymbol",
            "cudaMemcpyFromSymbolAsync",
            "cudaGraphAddMemcpyNodeToSymbol",
            "cudaGraphAddMemcpyNodeFromSymbol",
            "cudaGraphMemcpyNodeSetParamsToSymbol",
            "cudaGraphMemcpyNodeSetParamsFromSymbol",
            "cudaGraphExecMemcpyNodeSetParamsToSymbol",
            "cudaGraphExecMemcpyNodeSetParamsFromSymbol",
        )
    },
    ("cudaMemRangeGetAttribute", "devPtr"): (
        _B,
        ("count",),
        '"Size of the range to query": the range starts at devPtr',
    ),
    ("cudaMemRangeGetAttributes", "devPtr"): (
        _B,
        ("count",),
        '"Size of the range to query": the range starts at devPtr',
    ),
    ("cudaMemRangeGetAttributes", "dataSizes"): (
        _E,
        ("numAttributes",),
        '"the sizes of each result": one per attribute',
    ),
    ("cudaMemPrefetchAsync_v2", "devPtr"): (
        _B,
        ("count",),
        "no \\param text: cudaMemPrefetchAsync's count, 'Size in bytes'",
    ),
    ("cudaStreamUpdateCaptureDependencies", "dependencies"): (
        _E,
        ("numDependencies",),
        "no \\param text in 12.0; later headers: 'The size of the dependencies array'",
    ),
    ("cudaLogsDumpToMemory", "buffer"): (
        _B,
        ("size",),
        "the description: size is the buffer's capacity in bytes (updated to what was written)",
    ),
    ("cudaStreamAttachMemAsync", "devPtr"): (
        _B,
        ("length",),
        '"Length of memory": bytes from devPtr (0 attaches the whole allocation)',
    ),
    ("nvJitLinkAddData", "data"): (
        _B,
        ("size",),
        '"size of the data": the bytes of the image at data (nvJitLink reads them all)',
    ),
    **{
        (f, array): (_E, (count,), reason)
        for f in ("cudaLibraryLoadData", "cudaLibraryLoadFromFile")
        for array, count, reason in (
            ("jitOptions", "numJitOptions", '"Number of options" (for JIT)'),
            ("jitOptionsValues", "numJitOptions", "one value per JIT option"),
            ("libraryOptions", "numLibraryOptions", '"Number of options for loading"'),
            ("libraryOptionValues", "numLibraryOptions", "one value per library option"),
        )
    },
    # cuda.h (the driver API)
    ("cuLogsDumpToMemory", "buffer"): (
        _B,
        ("size",),
        "the description: size is the buffer's capacity in bytes (updated to what was written)",
    ),
    ("cuMemRangeGetAttributes", "dataSizes"): (
        _E,
        ("numAttributes",),
        '"the sizes of each result": one per attribute',
    ),
    ("cuStreamUpdateCaptureDependencies", "dependencies"): (
        _E,
        ("numDependencies",),
        "no \\param text in 12.0-12.2; later headers: 'The size of the dependencies array'",
    ),
    ("cuModuleLoadDataEx", "optionValues"): (
        _E,
        ("numOptions",),
        "one value per JIT option; 12.0-12.3's docs do not tie it to numOptions",
    ),
    ("cuLinkAddData_v2", "data"): (_B, ("size",), '"The length of the input data"'),
    ("cuTexRefSetBorderColor", "pBorderColor"): (
        Measure.EXACT,
        ("4",),
        "\"pBorderColor[0] holds 'R' component\" ... [3] 'A': four floats",
    ),
    # "Size of the allocation requested" / "Number of mipmap levels" size what is made:
    # the record is one (the docs' words led derive() to count records by them).
    ("cuMemCreate", "prop"): (Measure.RECORD, (), "one CUmemAllocationProp"),
    ("cuMipmappedArrayCreate", "pMipmappedArrayDesc"): (
        Measure.RECORD,
        (),
        "one CUDA_ARRAY3D_DESCRIPTOR",
    ),
    **{
        (f, array): (_E, (count,), reason)
        for f in ("cuLibraryLoadData", "cuLibraryLoadFromFile")
        for array, count, reason in (
            ("jitOptions", "numJitOptions", '"Number of options" (for JIT)'),
            ("jitOptionsValues", "numJitOptions", "one value per JIT option"),
            ("libraryOptions", "numLibraryOptions", '"Number of options for loading"'),
            ("libraryOptionValues", "numLibraryOptions", "one value per library option"),
        )
    },
    # A tensor map's per-dimension arrays: "along each of the tensorRank dimensions".
    # globalStrides has tensorRank - 1 (no measure says so): one record, as derived.
    **{
        (f, array): (_E, ("tensorRank",), '"along each of the tensorRank dimensions"')
        for f in (
            "cuTensorMapEncodeTiled",
            "cuTensorMapEncodeIm2col",
            "cuTensorMapEncodeIm2colWide",
        )
        for array in ("globalDim", "elementStrides")
    },
    ("cuTensorMapEncodeTiled", "boxDim"): (
        _E,
        ("tensorRank",),
        '"along each of the tensorRank dimensions"',
    ),
}

# (record builder, `void *` parameter) -> (the parameters whose product is the bytes the
# record says that memory spans, why). Given memory Python can measure (a buffer, a
# ctypes object, a HostMemory), the checked builder refuses less than that.
BUILDER_SIZES: dict[tuple[str, str], tuple[tuple[str, ...], str]] = {
    ("make_cudaPitchedPtr", "d"): (
        ("p", "ysz"),
        "a pitched allocation is ysz rows of p bytes (the pitch)",
    ),
}

# (function as declared, pointer, size-looking input) -> why it is no size relation.
LEFT_OUT: dict[tuple[str, str, str], str] = {
    ("cudaMallocArray", "desc", "width"): "width sizes the new array, desc is one record",
    ("cudaMallocArray", "desc", "height"): "height sizes the new array, desc is one record",
    ("cudaMallocMipmappedArray", "desc", "numLevels"): "levels of the new array, not of desc",
    ("cudaDevSmResourceSplitByCount", "input", "minCount"): "SMs per group, not records",
    # cuda.h (the driver API)
    ("cuMemCreate", "prop", "size"): "size is the new allocation's bytes, prop one record",
    ("cuMipmappedArrayCreate", "pMipmappedArrayDesc", "numMipmapLevels"): (
        "levels of the new array, not of the descriptor"
    ),
    ("cuDevSmResourceSplitByCount", "input", "minCount"): "SMs per group, not records",
    ("cuLaunchCooperativeKernel", "kernelParams", "sharedMemBytes"): (
        "the launch's dynamic shared memory, not the argument array's size"
    ),
    ("cuLaunchKernel", "kernelParams", "sharedMemBytes"): (
        "the launch's dynamic shared memory, not the argument array's size"
    ),
    ("cuLaunchKernel", "extra", "sharedMemBytes"): (
        "the launch's dynamic shared memory, not the extra options' size"
    ),
    ("cuMemcpyWithAttributesAsync", "attr", "size"): "one attributes record; size is the copy's",
    ("cuTexRefSetAddress2D_v3", "desc", "Pitch"): "one array descriptor; Pitch is the memory's",
    ("cuUserObjectCreate", "ptr", "initialRefcount"): (
        "ptr is the destroy callback's argument, not memory C reads"
    ),
    ("cuLogicalEndpointBindAddr", "ptr", "size"): (
        "ptr is the virtual address of an allocation C binds (device memory), not bytes it reads"
    ),
    **{
        ("cuTensorMapEncodeIm2colWide", pointer, width): (
            "a corner's width offset in elements, not an array length"
        )
        for pointer in ("globalAddress", "globalStrides")
        for width in ("pixelBoxLowerCornerWidth", "pixelBoxUpperCornerWidth")
    },
}

# A name that looks like a size or a count: the pairs the table must decide.
_SIZE_NAME = re.compile(r"count|size|len|num|width|height|pitch|bytes|depth", re.I)
_BYTES_DOC = re.compile(r"^(?:size\b.*\bbytes\b|number of bytes\b)", re.I)
_COUNT_DOC = re.compile(r"^(?:the )?(?:total )?(?:number|count|size) of (?:the )?(\w+)", re.I)
_ARRAY_DOC = re.compile(r"^(?:optional )?array of\b", re.I)
_POINTERS = (ParamKind.POINTER, ParamKind.REF)


# A getter's partner, by the getter's name: what it returns is how many elements of the
# buffer's type (bytes for a `void *`) C writes. NVRTC's and nvJitLink's "...Size" pairs
# (nvrtcGetPTX / nvrtcGetPTXSize, nvJitLinkGetErrorLog / nvJitLinkGetErrorLogSize) and
# nvrtcGetSupportedArchs / nvrtcGetNumSupportedArchs.
_PARTNER_NAMES = ((r"$", "Size"), (r"Get", "GetNum"))


def queried_partner(plan: FunctionPlan, plans: dict[str, FunctionPlan]) -> tuple[str, str] | None:
    """(buffer input, partner function) where `plan` fills a caller's buffer whose size its
    partner returns: the plan's one writable pointer input, and a partner (`_PARTNER_NAMES`)
    that takes the plan's other inputs, in order, and returns one integer and nothing else."""
    name = plan.function.name
    c_types = {c.name: c.type for c in plan.function.params}
    buffers = [
        p
        for p in plan.inputs
        if p.kind in _POINTERS
        and isinstance(t := c_types[p.name], Pointer)
        and not t.pointee_const
        and not isinstance(t.pointee, Pointer)
    ]
    if len(buffers) != 1 or plan.outputs:
        return None
    others = [p.name for p in plan.inputs if p is not buffers[0]]
    for pattern, replacement in _PARTNER_NAMES:
        partner = plans.get(re.sub(pattern, replacement, name, count=1))
        if partner is None or partner.function.name == name:
            continue
        outputs = partner.outputs
        if (
            [p.name for p in partner.inputs] == others
            and len(outputs) == 1
            and outputs[0].role is Role.OUT
            and outputs[0].kind is ParamKind.SCALAR
            and outputs[0].py_type == "int"
        ):
            return buffers[0].name, partner.name
    return None


@dataclass(frozen=True)
class Relation:
    measure: Measure
    of: tuple[str, ...]
    source: str  # "docs: ...", "type: ..." or the reviewed reason


def _depth(p: ParamPlan, plan: FunctionPlan) -> int:
    """How many pointers deep a `void` parameter is (1: `void *`, 2: `void **`), else 0."""
    t = next(c.type for c in plan.function.params if c.name == p.name)
    depth = 0
    while isinstance(t, Pointer):
        t, depth = t.pointee, depth + 1
    return depth if isinstance(t, Builtin) and t.name == "void" else 0


def _quote(p: ParamPlan) -> str:
    return f'{p.name} "{p.doc.rstrip(".")}"'


def derive(plan: FunctionPlan) -> dict[str, Relation]:
    """The relations the header's docs and types state, by pointer input."""
    ins = {p.name: p for p in plan.inputs}
    scalars = [p for p in plan.inputs if p.kind is ParamKind.SCALAR]
    pointers = [p for p in plan.inputs if p.kind in _POINTERS]
    memory = [p for p in pointers if p.kind is ParamKind.POINTER and _depth(p, plan) == 1]
    out: dict[str, Relation] = {}
    for s in scalars:
        if _BYTES_DOC.match(s.doc):
            for p in memory:
                if "symbol" not in p.name.lower():
                    out[p.name] = Relation(_B, (s.name,), "docs: " + _quote(s))
    width, height = ins.get("width"), ins.get("height")
    if width and height and "columns in bytes" in width.doc and "(rows)" in height.doc:
        for p in memory:
            pitch = ins.get(p.name[0] + "pitch") or ins.get("pitch")
            if pitch is not None and pitch.doc.lower().startswith("pitch"):
                docs = ", ".join(_quote(q) for q in (pitch, width, height))
                out[p.name] = Relation(_R, (pitch.name, "width", "height"), "docs: " + docs)
    used = {n for r in out.values() for n in r.of}
    counts = {
        s.name: m.group(1)[:6].lower()
        for s in scalars
        if s.name not in used and (m := _COUNT_DOC.match(s.doc)) and "byte" not in s.doc.lower()
    }
    for p in pointers:
        if p.name in out or (p.kind is ParamKind.POINTER and _depth(p, plan) != 2):
            continue
        # The count's text names the array, else the array's text names the count.
        named = [c for c in counts if re.search(rf"\b{re.escape(p.name)}\b", ins[c].doc)]
        if not named:
            named = [c for c in counts if re.search(rf"\b{re.escape(c)}\b", p.doc)]
        if not named:
            named = [c for c, stem in counts.items() if stem in p.doc.lower() + p.name.lower()]
        if not named and _ARRAY_DOC.match(p.doc) and len(counts) == 1:
            named = list(counts)
        if len(named) == 1:
            docs = f"docs: {_quote(ins[named[0]])} / {_quote(p)}"
            out[p.name] = Relation(_E, (named[0],), docs)
    return out


def relations(
    plan: FunctionPlan, plans: dict[str, FunctionPlan] | None = None
) -> dict[str, Relation]:
    """Every relation of the function: derived, reviewed, queried from a partner among
    `plans` (by name: the function's family), and one record per other `const T *` input."""
    name = plan.function.name
    ins = {p.name: p for p in plan.inputs}
    out = derive(plan)
    queried = queried_partner(plan, plans or {})
    if queried is not None:
        buffer, partner = queried
        if plan.inputs[-1].name != buffer:
            raise RenderError(f"sizes: {name}.{buffer}, queried from {partner}, is not last")
        out[buffer] = Relation(
            Measure.QUERIED, (partner,), f"rule: {partner} returns what C writes"
        )
    for (function, param), (measure, of, reason) in REVIEWED.items():
        if function != name:
            continue
        p = ins.get(param)
        if p is None or p.kind not in _POINTERS:
            raise RenderError(f"sizes.REVIEWED: {name}.{param} is no pointer input")
        out[param] = Relation(measure, of, reason)
    for p in plan.inputs:
        if p.kind is ParamKind.REF and p.name not in out:
            out[p.name] = Relation(Measure.RECORD, (), f"type: one {p.ctype}")
    for param, r in out.items():
        if r.measure in (Measure.QUERIED, Measure.EXACT):
            continue  # sized by a function or a literal, not by an input
        for n in r.of:
            if n not in ins or ins[n].kind is not ParamKind.SCALAR:
                raise RenderError(f"sizes: {name}.{param} is sized by {n}, no scalar input")
    for function, pointer, size in LEFT_OUT:
        if function == name and (pointer not in ins or size not in ins):
            raise RenderError(f"sizes.LEFT_OUT: {name} has no {pointer} or {size}")
    return out


def apply(plans: list[FunctionPlan]) -> list[FunctionPlan]:
    """The plans with each pointer input's size relation."""
    by_name = {plan.name: plan for plan in plans}
    return [_apply(plan, by_name) for plan in plans]


def _apply(plan: FunctionPlan, plans: dict[str, FunctionPlan]) -> FunctionPlan:
    found = relations(plan, plans)
    if not found:
        return plan
    params = tuple(
        (
            dataclasses.replace(
                p,
                measure=r.measure,
                measure_of=r.of,
                measure_source=r.source,
                # Omitted, the checked function makes the buffer and returns it.
                default="None" if r.measure is Measure.QUERIED else p.default,
            )
            if (r := found.get(p.name)) is not None
            else p
        )
        for p in plan.params
    )
    return dataclasses.replace(plan, params=params)


# ---------------------------------------------------------------- the reviewable table


@dataclass(frozen=True)
class Pair:
    """A (pointer, size-looking input) pair of one function, and what was decided."""

    function: str
    pointer: str
    size: str
    state: str  # "checked", "sized by ...", "sizes ...", "left out: ...", "UNDECIDED"

    @property
    def checked(self) -> bool:
        return self.state == "checked"


def pairs(plan: FunctionPlan) -> list[Pair]:
    """Each pointer input with each integer input whose name looks like a size."""
    name = plan.function.name
    ins = {p.name: p for p in plan.inputs}
    sizes = [
        p
        for p in plan.inputs
        if p.kind is ParamKind.SCALAR and p.py_type == "int" and _SIZE_NAME.search(p.name)
    ]
    out = []
    for p in plan.inputs:
        if p.kind not in _POINTERS:
            continue
        for s in sizes:
            measure = ins[p.name].measure
            counted = [
                q.name
                for q in plan.inputs
                if q.measure not in (None, Measure.RECORD) and s.name in q.measure_of
            ]
            if s.name in p.measure_of:
                state = "checked"
            elif measure is not None and measure is not Measure.RECORD:
                state = f"sized by {' '.join(p.measure_of)}"
            elif (name, p.name, s.name) in LEFT_OUT:
                state = "left out: " + LEFT_OUT[(name, p.name, s.name)]
            elif counted:
                state = f"sizes {' '.join(counted)}"
            else:
                state = "UNDECIDED"
            out.append(Pair(name, p.name, s.name, state))
    return out


def listing(plans: list[FunctionPlan]) -> list[str]:
    """Every relation (`function.param: measure(inputs) (source)`), then every pair not
    checked and why: the reviewable table `cudart-bindgen outputs --sizes` prints."""
    lines = []
    seen: set[str] = set()
    for plan in plans:
        if plan.function.name in seen:
            continue  # an alias: its target's relations
        seen.add(plan.function.name)
        for p in plan.inputs:
            if p.measure is not None:
                of = ", ".join(p.measure_of)
                lines.append(
                    f"{plan.function.name}.{p.name}: {p.measure}({of}) ({p.measure_source})"
                )
        for pair in pairs(plan):
            if not pair.checked:
                lines.append(f"{pair.function}: ({pair.pointer}, {pair.size}) {pair.state}")
    return lines


def summary(plans: list[FunctionPlan]) -> dict[str, int]:
    """Counts for the report: pairs, checked pairs, records, undecided."""
    unique = {p.function.name: p for p in plans}.values()
    every = [pair for plan in unique for pair in pairs(plan)]
    inputs = [p for plan in unique for p in plan.inputs if p.measure is not None]
    return {
        "pairs": len(every),
        "checked": sum(pair.checked for pair in every),
        "undecided": sum(pair.state == "UNDECIDED" for pair in every),
        "relations": sum(p.measure is not Measure.RECORD for p in inputs),
        "records": sum(p.measure is Measure.RECORD for p in inputs),
    }
