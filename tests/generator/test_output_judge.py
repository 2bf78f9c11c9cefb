"""The checked layer's plan against an independent judge of its outputs (issue 33 item 7).

The compiled-checked differential compares C with a reference made from the same plan, so
a plan that calls an output an input is wrong on both sides alike. Here each runtime and
driver parameter of every pinned version is judged by the headers' own direction tags and
by cuda-bindings' signatures (tests/support/output_judge.py), and every disagreement must
be a reviewed row of tests/support/output_judge/disagreements.toml, where each says who is
wrong. A new disagreement fails, and so does a row that no longer occurs.
"""

from __future__ import annotations

import dataclasses
import tomllib

import bindings_signatures
import output_judge
import pytest
from suite import version_keys

from generator.plan import ParamKind, Role


@pytest.fixture(scope="module")
def driver_plans(manifest):
    """Every version's driver (cuda.h) plans."""
    from models import models_for

    from generator.fetch import fetch_version
    from generator.resolve import resolve

    sets = {key: fetch_version(manifest, key, lambda *_: None, "driver") for key in version_keys()}
    return {key: resolve(model) for key, model in models_for(sets).items()}


@pytest.fixture(scope="module")
def found(plans, driver_plans):
    return output_judge.disagreements("runtime", plans) + output_judge.disagreements(
        "driver", driver_plans
    )


def _listing(verdicts) -> str:
    return "\n".join(
        f"  {v.source} {v.family} {v.version} {v.function}.{v.parameter}: "
        f"judge {v.judge}, plan {v.plan}"
        for v in sorted(verdicts)
    )


def test_every_disagreement_is_reviewed(found):
    table = output_judge.reviewed(version_keys())
    new = set(found) - set(table)
    gone = set(table) - set(found)
    assert not new, (
        "disagreements with the judge that tests/support/output_judge/disagreements.toml "
        "does not list (review each: who is wrong?):\n" + _listing(new)
    )
    assert not gone, "rows of the table that no longer occur:\n" + _listing(gone)


def test_every_row_says_who_is_wrong_and_why():
    rows = tomllib.loads(output_judge.TABLE.read_text())["disagreement"]
    says = set(output_judge.AGREES)
    for row in rows:
        where = f"{row['function']}.{row['parameter']}"
        assert row["verdict"] in output_judge.VERDICTS, where
        assert row["source"] in ("header", "cuda-bindings"), where
        assert row["family"] in ("runtime", "driver"), where
        assert {row["judge"], row["plan"]} <= says, where
        assert row["reason"].strip(), where


# What cuda-bindings binds from headers the checked layer's driver does not parse (it
# parses cuda.h alone): cudaEGL.h, cudaGL.h, cudaVDPAU.h and cudaProfiler.h.
NOT_PLANNED = {
    "cuEGLStreamConsumerAcquireFrame",
    "cuEGLStreamConsumerConnect",
    "cuEGLStreamConsumerConnectWithFlags",
    "cuEGLStreamConsumerDisconnect",
    "cuEGLStreamConsumerReleaseFrame",
    "cuEGLStreamProducerConnect",
    "cuEGLStreamProducerDisconnect",
    "cuEGLStreamProducerPresentFrame",
    "cuEGLStreamProducerReturnFrame",
    "cuEventCreateFromEGLSync",
    "cuGLGetDevices",
    "cuGraphicsEGLRegisterImage",
    "cuGraphicsGLRegisterBuffer",
    "cuGraphicsGLRegisterImage",
    "cuGraphicsResourceGetMappedEglFrame",
    "cuGraphicsVDPAURegisterOutputSurface",
    "cuGraphicsVDPAURegisterVideoSurface",
    "cuProfilerStart",
    "cuProfilerStop",
    "cuVDPAUCtxCreate",
    "cuVDPAUGetDevice",
}


@pytest.mark.parametrize("key", ["12.9", "13.5"])
def test_each_release_judges_its_own_version_whole(plans, driver_plans, key):
    """In the CUDA version a release was made from, every function it binds is planned and
    every name it uses is a C parameter: a judge that silently judged less would pass."""
    signatures = bindings_signatures.load(output_judge.BINDINGS[key.split(".")[0]])
    by_family = {"runtime": plans[key], "driver": driver_plans[key]}
    unplanned, unnamed = set(), set()
    for family, family_plans in by_family.items():
        named = {p.name: p for p in family_plans}
        for (module, name), s in signatures.items():
            if module != family:
                continue
            if name not in named:
                unplanned.add(name)
            elif not output_judge.names_match(s, named[name]):
                unnamed.add(name)
    assert unplanned == NOT_PLANNED
    assert not unnamed
    judged = sum(
        len(output_judge.bindings_verdicts(s, p))
        for family, family_plans in by_family.items()
        for p in family_plans
        if (s := output_judge.signature_for(signatures, family, p)) is not None
    )
    assert judged > 2000, judged


def _with_param(plans, function, parameter, **change):
    def edit(plan):
        if plan.name != function:
            return plan
        params = tuple(
            dataclasses.replace(p, **change) if p.name == parameter else p for p in plan.params
        )
        return dataclasses.replace(plan, params=params)

    return [edit(plan) for plan in plans]


def test_a_wrong_plan_is_seen(plans, driver_plans):
    """Each judge sees a plan made wrong in the way item 7 fears: an output taken as an
    input, a filled array as one value, a tagged output as an input."""
    runtime = plans["13.5"]
    assert not [
        v
        for v in output_judge.disagreements("runtime", {"13.5": runtime})
        if v.function in ("cudaMalloc", "cudaGraphGetNodes")
    ]
    wrong = _with_param(runtime, "cudaMalloc", "devPtr", role=Role.IN, kind=ParamKind.POINTER)
    wrong = _with_param(wrong, "cudaGraphGetNodes", "nodes", kind=ParamKind.HANDLE, py_type="x")
    seen = set(output_judge.disagreements("runtime", {"13.5": wrong}))
    assert {
        output_judge.Verdict(
            "cuda-bindings", "runtime", "13.5", "cudaMalloc", "devPtr", "out", "in"
        ),
        output_judge.Verdict(
            "cuda-bindings", "runtime", "13.5", "cudaGraphGetNodes", "nodes", "array", "out"
        ),
    } <= seen
    # cuDeviceGetCliqueCount's count is `\param[out]` in 13.5's cuda.h.
    driver = _with_param(driver_plans["13.5"], "cuDeviceGetCliqueCount", "count", role=Role.IN)
    seen = set(output_judge.disagreements("driver", {"13.5": driver}))
    assert (
        output_judge.Verdict(
            "header", "driver", "13.5", "cuDeviceGetCliqueCount", "count", "out", "in"
        )
        in seen
    )
    # A `\param[out]` parameter planned as an array (the fix the table asks of cliqueInfo)
    # agrees with the tag.
    fixed = _with_param(
        driver_plans["13.5"], "cuDeviceGetCliqueInfo", "cliqueInfo", kind=ParamKind.COUNTED_ARRAY
    )
    seen = output_judge.disagreements("driver", {"13.5": fixed})
    assert not [v for v in seen if v.parameter == "cliqueInfo" and v.source == "header"]


# cuda-bindings 13.5.0's docstring of cudaGraphGetNodes, as `cuda.bindings.runtime` has it
# (cython's embedded signature first), cut to the sections the reader uses.
_GET_NODES = """cudaGraphGetNodes(graph, size_t numNodes=0)

Returns a graph's nodes.

Parameters
----------
graph : :py:obj:`~.CUgraph` or :py:obj:`~.cudaGraph_t`
    Graph to query
numNodes : int
    See description

Returns
-------
cudaError_t
    :py:obj:`~.cudaSuccess`, :py:obj:`~.cudaErrorInvalidValue`
nodes : list[:py:obj:`~.cudaGraphNode_t`]
    Pointer to return the nodes
numNodes : int
    See description

See Also
--------
:py:obj:`~.cudaGraphCreate`
"""


def test_a_docstring_reads_as_its_inputs_and_outputs():
    s = bindings_signatures.parse_docstring("runtime", "cudaGraphGetNodes", _GET_NODES)
    assert s == bindings_signatures.Signature(
        "runtime",
        "cudaGraphGetNodes",
        ("graph", "numNodes"),
        ("nodes", "numNodes"),
        frozenset({"nodes"}),
    )
    line = bindings_signatures.format_line(s)
    assert line == "runtime cudaGraphGetNodes(graph, numNodes) -> nodes[], numNodes"
    assert bindings_signatures.parse_line(line) == s
    assert bindings_signatures.parse_docstring("runtime", "cudaMalloc", _GET_NODES) is None


def test_every_filled_input_names_a_planned_ref(plans, driver_plans):
    """Each FILLED_INPUTS row marks an input of some pinned version: a row that names
    nothing (a renamed parameter, a removed function) fails here."""
    from generator.resolve import FILLED_INPUTS

    marked = {
        (plan.name.split("_v")[0], p.name)
        for family in (plans, driver_plans)
        for version_plans in family.values()
        for plan in version_plans
        for p in plan.params
        if p.filled
    }
    assert set(FILLED_INPUTS) <= marked, set(FILLED_INPUTS) - marked
