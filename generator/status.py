"""The status enum of a header family: what its functions return to say they failed.

The CUDA runtime's functions return cudaError_t, NVRTC's nvrtcResult. Which enum that
is comes from the model alone: the enum (through its typedefs) that most functions
return and whose zero enumerator is named a success (cudaSuccess, NVRTC_SUCCESS,
CUBLAS_STATUS_SUCCESS: NVIDIA's libraries all say so). Any other enum a function
returns is a value, as C returns it. The checked layer raises on every
other value; resolve.py and render/checked.py read it from here, nowhere else.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from cudart._contract import status_class_name, status_prefix_class

from .families import families
from .model import ApiModel, EnumRef, TypedefRef

__all__ = ["StatusEnum", "status_enum"]


@dataclass(frozen=True)
class StatusEnum:
    result: str  # the spelling functions return: cudaError_t, nvrtcResult
    enum: str  # the enum's name in the model (and the raw module): cudaError, nvrtcResult
    success: str  # its zero enumerator: cudaSuccess, NVRTC_SUCCESS
    enumerators: tuple[tuple[str, int], ...]  # (name, value), in declaration order

    @property
    def base_class(self) -> str:
        """The exception base every failure raises (cudart.errors): the success's
        prefix as a word + "Error" (cudaSuccess -> CudaError, NVRTC_SUCCESS -> NvrtcError),
        or the one its family's descriptor names where two families would share one."""
        return _base_classes().get(self.result, self._prefix_class)

    @property
    def _prefix_class(self) -> str:
        return status_prefix_class(self.success)

    def class_name(self, enumerator: str) -> str:
        """The exception class of one code: the base's name + the code's words after the
        prefix (cudaErrorMemoryAllocation -> CudaErrorMemoryAllocation,
        NVRTC_ERROR_OUT_OF_MEMORY -> NvrtcErrorOutOfMemory, the driver's
        CUDA_ERROR_INVALID_VALUE -> CudaDriverErrorInvalidValue): cudart._contract's rule,
        by which cudart._checked names the classes it makes too."""
        return status_class_name(enumerator, self.success, self.base_class)

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.enumerators]

    def value_of(self, name: str) -> int | None:
        return next((v for n, v in self.enumerators if n == name), None)


def _base_classes() -> dict[str, str]:
    """Status enum spelling -> the exception base its family's descriptor names where
    the success's prefix would give another family's (the driver's CUDA_SUCCESS and the
    runtime's cudaSuccess would both make CudaError)."""
    return {f.status_result: f.error_base for f in families() if f.error_base}


def _success(enum) -> str | None:
    return next(
        (k.name for k in enum.enumerators if k.value == 0 and "success" in k.name.lower()), None
    )


def status_enum(model: ApiModel) -> StatusEnum | None:
    """The family's status enum, or None where no function returns an enum with a
    success (a header set without one has no failures to raise)."""
    typedefs = {t.name: t.target for t in model.typedefs}
    enums = {e.name: e for e in model.enums}

    def enum_of(t: object) -> str | None:
        seen = 0
        while isinstance(t, TypedefRef) and seen < 16:
            if t.name in enums:
                return t.name
            t = typedefs.get(t.name)
            seen += 1
        return t.name if isinstance(t, EnumRef) and t.name in enums else None

    counts: Counter[tuple[str, str]] = Counter()
    for f in model.functions:
        enum = enum_of(f.result)
        if enum is not None and _success(enums[enum]) is not None:
            spelling = f.result.name if isinstance(f.result, TypedefRef | EnumRef) else enum
            counts[(spelling, enum)] += 1
    if not counts:
        return None
    # Most functions, then the name, so a tie never depends on declaration order.
    (result, enum), _ = max(counts.items(), key=lambda item: (item[1], item[0]))
    members = enums[enum].enumerators
    success = _success(enums[enum]) or ""
    return StatusEnum(result, enum, success, tuple((k.name, k.value) for k in members))
