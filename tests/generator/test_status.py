"""The status enums of the three header families and the exception classes named after
them: generator/status.py names the classes (the checked modules declare them for type
checkers) and cudart/_checked.py makes them at run time, each by its own copy of the
rule. Both are held against each other over every enumerator of the real headers.
"""

from __future__ import annotations

import importlib
import keyword

import pytest
from models import models_for

import cudart.errors
from cudart._checked import status_class_name
from generator.families import families
from generator.fetch import fetch_version
from generator.status import status_enum

KEY = "12.5"  # a version whose three families' modules are all generated
# family -> (raw module prefix, checked module prefix, status result type, base class,
# (a code, its class))
FAMILIES = {
    "runtime": (
        "sys_",
        "checked_",
        "cudaError_t",
        "CudaError",
        ("cudaErrorInvalidValue", "CudaErrorInvalidValue"),
    ),
    "nvrtc": (
        "nvrtc_",
        "nvrtc_checked_",
        "nvrtcResult",
        "NvrtcError",
        ("NVRTC_ERROR_COMPILATION", "NvrtcErrorCompilation"),
    ),
    "driver": (
        "driver_",
        "driver_checked_",
        "CUresult",
        "CudaDriverError",
        ("CUDA_ERROR_INVALID_VALUE", "CudaDriverErrorInvalidValue"),
    ),
}


@pytest.fixture(scope="module")
def statuses(manifest):
    """family -> (the model's StatusEnum, the raw module, the checked module)."""
    sets = {family: fetch_version(manifest, KEY, lambda _m: None, family) for family in FAMILIES}
    models = models_for({f"{family}": hs for family, hs in sets.items()})
    number = manifest.get(KEY).number
    out = {}
    for family, (raw, checked, *_rest) in FAMILIES.items():
        status = status_enum(models[family])
        assert status is not None, family
        out[family] = (
            status,
            importlib.import_module(f"cudart.{raw}{number}"),
            importlib.import_module(f"cudart.{checked}{number}"),
        )
    return out


@pytest.mark.parametrize("family", FAMILIES)
def test_status_enum_and_base_class_of_each_family(statuses, family):
    _raw, _checked, result, base, (code, cls) = FAMILIES[family]
    status, raw, checked = statuses[family]
    assert status.result == result
    assert status.base_class == base
    assert status.class_name(code) == cls
    # Only the driver's descriptor names its base; the others follow the prefix rule.
    named = {f.status_result: f.error_base for f in families() if f.error_base}
    assert named.get(result, base) == base
    error = getattr(checked, cls)
    assert error.__name__ == cls
    assert error.__mro__[1] is getattr(cudart.errors, base)
    assert int(getattr(raw, code)) == status.value_of(code) != 0


@pytest.mark.parametrize("family", FAMILIES)
def test_generator_and_runtime_name_every_code_alike(statuses, family):
    """Every enumerator but the success: the generator's name (what type checkers see)
    is the class the checked module gives at run time, whose name is the same."""
    status, raw, checked = statuses[family]
    base = getattr(cudart.errors, status.base_class)
    enum = vars(raw)[status.enum]
    failures = [(name, value) for name, value in status.enumerators if value != 0]
    assert len(failures) > (10 if family == "nvrtc" else 80)
    problems = []
    for name, value in failures:
        generated = status.class_name(name)
        at_run_time = status_class_name(enum(value).name, enum, base)
        cls = getattr(checked, generated, None)
        if not (generated.isidentifier() and not keyword.iskeyword(generated)):
            problems.append(f"{name}: {generated!r} is no class name")
        if enum(value).name == name and at_run_time != generated:
            problems.append(f"{name}: generator {generated}, cudart._checked {at_run_time}")
        if cls is None or cls.__name__ != generated or not issubclass(cls, base):
            problems.append(f"{name}: the checked module gives {cls!r} for {generated}")
    assert not problems, "\n".join(problems)


def test_no_two_families_share_a_class_name(statuses):
    names: dict[str, str] = {}
    clashes = []
    for family, (status, _raw, _checked) in statuses.items():
        for name, value in status.enumerators:
            if value == 0:
                continue
            other = names.setdefault(status.class_name(name), family)
            if other != family:
                clashes.append(f"{status.class_name(name)}: {other} and {family}")
    assert not clashes


@pytest.mark.parametrize("family", FAMILIES)
def test_the_raw_module_doc_names_the_status_its_functions_return(statuses, family):
    """The raw module's docstring says what its calls return: the family's own status
    type, from every function or from most, as the C prototypes (the raw docs) say."""
    status, raw, _checked = statuses[family]
    results = [doc.split("(", 1)[0].rsplit(None, 1)[0] for doc in vars(raw)["_DOCS"].values()]
    returning = results.count(status.result)
    assert returning > 0
    share = "every function" if returning == len(results) else "most"
    doc = " ".join(raw.__doc__.split())
    assert f"(an int `{status.result}` from {share})" in doc
    others = {result for _r, _c, result, *_rest in FAMILIES.values()} - {status.result}
    assert not [other for other in others if other in doc]
