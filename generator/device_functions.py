"""Which parameters and record members hold a device function or a kernel's arguments.

C spells a device function `const void *func` (cudaLaunchKernel, cudaFuncGetAttributes,
cudaOccupancy*, ...) or a `void *func` member (cudaKernelNodeParams, cudaLaunchParams),
and a kernel's arguments `void **args` / `void **kernelParams` beside it. The C type alone
cannot tell them from memory, so the generator decides here, once, for both layers:

* a device function: a pointer to void named `func`, or whose documentation says it is a
  device, kernel or entry function ("Device function symbol", "Pointer to device entry
  function to search for", "Kernel to launch");
* kernel arguments: a `void **` named `args` or `kernelParams` in a function or record
  that has a device function.

The driver's launches (cuLaunchKernel, ...) take a `CUfunction f` handle: `REVIEWED`
names them; the checked layer converts them with cudart._convert.driver_function.

`REVIEWED` holds the decisions those rules do not make, each with its reason; it wins
over the rules. The checked layer converts such parameters with
cudart._convert.device_function / kernel_args, and the raw records' members go through
cudart._layout.kernel_fields.
"""

from __future__ import annotations

import re

from .model import Builtin, CType, Pointer

_DOC = re.compile(r"\b(?:device|kernel|entry) function\b|\bkernel to launch\b", re.I)
_FUNCTION_NAMES = frozenset({"func"})
_ARGUMENT_NAMES = frozenset({"args", "kernelParams"})

DEVICE_FUNCTION = "device_function"
KERNEL_ARGUMENTS = "kernel_arguments"

# (function or record, parameter or member) -> (what it is, or None for neither; why).
REVIEWED: dict[tuple[str, str], tuple[str | None, str]] = {
    ("cudaKernelNodeParams", "extra"): (
        None,
        "the driver's 'extra' format (CU_LAUNCH_PARAM_BUFFER_POINTER, size, END) is one "
        "buffer with markers, not a pointer per argument: packed arguments do not fit it",
    ),
    ("cudaKernelNodeParamsV2", "extra"): (
        None,
        "the driver's 'extra' format, as cudaKernelNodeParams.extra",
    ),
    ("cudaGetSymbolAddress", "symbol"): (
        None,
        "a __device__ variable's symbol, not a function, though both are host addresses "
        "the registration route hands out",
    ),
    # The driver's launches (cuda.h) take the kernel as a CUfunction handle, which the
    # rules (a `void *`) do not see; their `void **kernelParams` then follows the rules.
    # Their `extra` is the buffer-with-markers format (see cudaKernelNodeParams.extra).
    ("cuLaunchKernel", "f"): (
        DEVICE_FUNCTION,
        "'Function CUfunction or Kernel CUkernel to launch': a Function packs kernelParams",
    ),
    ("cuLaunchCooperativeKernel", "f"): (
        DEVICE_FUNCTION,
        "'Function CUfunction or Kernel CUkernel to launch', as cuLaunchKernel's",
    ),
    ("cuLaunchKernelEx", "f"): (
        DEVICE_FUNCTION,
        "'Function CUfunction or Kernel CUkernel to launch', as cuLaunchKernel's",
    ),
    # The driver's kernel node records, as cudaKernelNodeParams: `func` a CUfunction,
    # `kern` a CUkernel ("only referenced if func is NULL"); kernelParams follows.
    ("CUDA_KERNEL_NODE_PARAMS_st", "func"): (DEVICE_FUNCTION, "'Kernel to launch' (CUfunction)"),
    ("CUDA_KERNEL_NODE_PARAMS_v2_st", "func"): (
        DEVICE_FUNCTION,
        "'Kernel to launch' (CUfunction)",
    ),
    ("CUDA_KERNEL_NODE_PARAMS_v2_st", "kern"): (
        DEVICE_FUNCTION,
        "'Kernel to launch, will only be referenced if func is NULL' (CUkernel)",
    ),
    ("CUDA_KERNEL_NODE_PARAMS_v3_st", "func"): (
        DEVICE_FUNCTION,
        "'Kernel to launch' (CUfunction)",
    ),
    ("CUDA_KERNEL_NODE_PARAMS_v3_st", "kern"): (
        DEVICE_FUNCTION,
        "'Kernel to launch, will only be referenced if func is NULL' (CUkernel)",
    ),
}


def _points_to_void(t: CType, depth: int) -> bool:
    for _ in range(depth):
        if not isinstance(t, Pointer):
            return False
        t = t.pointee
    return isinstance(t, Builtin) and t.name == "void"


def is_void_pointer_array(t: CType) -> bool:
    """`void **`: what kernel arguments (and the driver's launch `extra`) are in C."""
    return _points_to_void(t, 2)


def is_device_function(owner: str, name: str, t: CType, doc: str) -> bool:
    if (owner, name) in REVIEWED:
        return REVIEWED[owner, name][0] == DEVICE_FUNCTION
    return _points_to_void(t, 1) and (name in _FUNCTION_NAMES or bool(_DOC.search(doc or "")))


def classify(owner: str, members: list[tuple[str, CType, str]]) -> dict[str, str]:
    """{member name: DEVICE_FUNCTION or KERNEL_ARGUMENTS} for the (name, type, doc) of a
    function's parameters or a record's members, in order."""
    found = {
        name: DEVICE_FUNCTION for name, t, doc in members if is_device_function(owner, name, t, doc)
    }
    for name, t, _ in members:
        reviewed = REVIEWED.get((owner, name))
        if reviewed is not None:
            if reviewed[0] is not None:
                found[name] = reviewed[0]
            continue
        if found and name in _ARGUMENT_NAMES and _points_to_void(t, 2):
            found[name] = KERNEL_ARGUMENTS
    return found
