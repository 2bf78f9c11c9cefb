"""Attribute values: the C type of the `void *` (or union) value that an attribute
setter or getter reads or writes, per member of its attribute enum.

`cudaMemPoolSetAttribute(pool, attr, value)` declares `void *value`; what it points
to depends on `attr` (an int for the reuse flags, a cuuint64_t for the thresholds).
The checked layer takes and returns the Python value of that type, so it needs, per
enumerator, the C type. That is decided here, once:

* from the header's documentation where it says the type: the enumerator's
  "(value type = cuuint64_t)", the launch attribute union's member documented as
  "Value of launch attribute cudaLaunchAttributePriority" (or named by the
  enumerator: "See cudaLaunchAttributeValue::priority"), and cudaMemRangeGetAttribute's
  list ("data will be interpreted as a 32-bit integer");
* from REVIEWED where the docs say nothing, each entry with its reason;
* or REFUSED, with its reason, where the value is of no type the conversion takes (a
  record outside the union: cuPointerGetAttribute's P2P tokens): refused at run time.

An enumerator that neither decides is undecided: generation reports it, the checked
function refuses it at run time (ValueError), `cudart-bindgen outputs --attributes`
lists it and tests/generator/test_attributes.py fails until it has a decision.

Parsing never reads this; render/checked.py and resolve.py do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from .ctypes_map import TypeKind, TypeMapper
from .model import ApiModel, Builtin, CType, EnumRef, RecordRef, TypedefRef
from .plan import ParamKind, ParamPlan, Role, Source


@dataclass(frozen=True)
class AttributeFunction:
    """A function whose `value` parameter is typed by its `attr` parameter."""

    value: str  # the `void *` / union pointer parameter
    attr: str  # the attribute enum parameter
    size: str | None = None  # a byte-size input that sizes an array value (dataSize)
    # Several attributes at once (cudaMemRangeGetAttributes): `attr` is an array of them,
    # `size` an array of byte sizes, `count` their number, `value` a `void **` of results.
    count: str | None = None
    docs_from: str | None = None  # the function whose docs list the attributes' types
    # A `size_t *` the checked function fills for the caller, in and out (cuCoredump*'s
    # size): C is told the byte size of the value's storage (a setter's value itself, a
    # string's with its NUL; a getter's buffer of the attribute's type), and what C writes
    # back there is not returned.
    size_inout: str | None = None


# Every checked function with a value typed by an attribute enum argument. The getters'
# value becomes an output, the setters' an input taking the Python value.
FUNCTIONS: dict[str, AttributeFunction] = {
    "cudaMemPoolSetAttribute": AttributeFunction("value", "attr"),
    "cudaMemPoolGetAttribute": AttributeFunction("value", "attr"),
    "cudaDeviceSetGraphMemAttribute": AttributeFunction("value", "attr"),
    "cudaDeviceGetGraphMemAttribute": AttributeFunction("value", "attr"),
    "cudaStreamSetAttribute": AttributeFunction("value", "attr"),
    "cudaStreamGetAttribute": AttributeFunction("value_out", "attr"),
    "cudaGraphKernelNodeSetAttribute": AttributeFunction("value", "attr"),
    "cudaGraphKernelNodeGetAttribute": AttributeFunction("value_out", "attr"),
    "cudaMemRangeGetAttribute": AttributeFunction("data", "attribute", size="dataSize"),
    "cudaMemRangeGetAttributes": AttributeFunction(
        "data",
        "attributes",
        size="dataSizes",
        count="numAttributes",
        docs_from="cudaMemRangeGetAttribute",
    ),
    # cuda.h (the driver API)
    "cuMemPoolSetAttribute": AttributeFunction("value", "attr"),
    "cuMemPoolGetAttribute": AttributeFunction("value", "attr"),
    "cuDeviceSetGraphMemAttribute": AttributeFunction("value", "attr"),
    "cuDeviceGetGraphMemAttribute": AttributeFunction("value", "attr"),
    "cuStreamSetAttribute": AttributeFunction("value", "attr"),
    "cuStreamGetAttribute": AttributeFunction("value_out", "attr"),
    "cuGraphKernelNodeSetAttribute": AttributeFunction("value", "attr"),
    "cuGraphKernelNodeGetAttribute": AttributeFunction("value_out", "attr"),
    "cuMemRangeGetAttribute": AttributeFunction("data", "attribute", size="dataSize"),
    "cuMemRangeGetAttributes": AttributeFunction(
        "data",
        "attributes",
        size="dataSizes",
        count="numAttributes",
        docs_from="cuMemRangeGetAttribute",
    ),
    "cuPointerGetAttribute": AttributeFunction("data", "attribute"),
    # C is told no sizes: each value's storage is its attribute's own type.
    "cuPointerGetAttributes": AttributeFunction(
        "data", "attributes", count="numAttributes", docs_from="cuPointerGetAttribute"
    ),
    "cuPointerSetAttribute": AttributeFunction("value", "attribute"),
    # 12.1+: "void* containing the requested data", "size - The size of the memory region
    # value points to" (a pointer: the getters write the attribute's size there).
    **{
        name: AttributeFunction("value", "attrib", size_inout="size")
        for name in (
            "cuCoredumpGetAttribute",
            "cuCoredumpGetAttributeGlobal",
            "cuCoredumpSetAttribute",
            "cuCoredumpSetAttributeGlobal",
        )
    },
}
GETTERS = frozenset(
    {
        "cudaMemPoolGetAttribute",
        "cudaDeviceGetGraphMemAttribute",
        "cudaStreamGetAttribute",
        "cudaGraphKernelNodeGetAttribute",
        "cudaMemRangeGetAttribute",
        "cudaMemRangeGetAttributes",
        # cuda.h (the driver API)
        "cuMemPoolGetAttribute",
        "cuDeviceGetGraphMemAttribute",
        "cuStreamGetAttribute",
        "cuGraphKernelNodeGetAttribute",
        "cuMemRangeGetAttribute",
        "cuMemRangeGetAttributes",
        "cuPointerGetAttribute",
        "cuPointerGetAttributes",
        "cuCoredumpGetAttribute",
        "cuCoredumpGetAttributeGlobal",
    }
)

# Functions with an attribute-like enum argument and a `void *` value that keep their
# plain pointer form, and why. tests/generator/test_attributes.py holds that every function of
# every version with such a pair is in FUNCTIONS or here.
LEFT: dict[str, str] = {
    "cudaMemPoolExportToShareableHandle": "the handle's type follows the OS handle type "
    "(int fd, HANDLE, D3DKMT_HANDLE, cudaMemFabricHandle_t); the caller passes its storage",
    "cudaMemPoolImportFromShareableHandle": "as cudaMemPoolExportToShareableHandle: an fd is "
    "passed by value cast to void *, the others by address",
}

# C type names the docs use that the runtime headers do not declare.
_DOC_TYPE_NAMES = {
    # The driver API's typedef (cuda.h) for a 64-bit unsigned integer.
    "cuuint64_t": "unsigned long long",
}


@dataclass(frozen=True)
class ValueType:
    """What one attribute's value is: a C type (`int`, `unsigned long long`, an enum's
    or a handle's name), an array of it, or a member of the union the function takes."""

    ctype: str | None = None  # a C builtin or enum name; None for a union member
    array: bool = False  # an array of ctype whose byte length the caller gives
    member: str | None = None  # the union member (stream / kernel node attributes)
    whole_union: bool = False  # no member: the union itself (cudaLaunchAttributeIgnore)
    # A NUL-terminated string in a char array of this many bytes (CU_COREDUMP_FILE:
    # "String of up to 1023 characters"): a str in and out.
    length: int | None = None

    def describe(self) -> str:
        if self.whole_union:
            return "the whole union"
        if self.member:
            return f"union member {self.member}"
        if self.length is not None:
            return f"{self.ctype}[{self.length}]"
        return f"{self.ctype}[]" if self.array else str(self.ctype)


# (enum, enumerator) -> (value type, why), where the header's docs do not say it.
REVIEWED: dict[tuple[str, str], tuple[ValueType, str]] = {
    ("cudaLaunchAttributeID", "cudaLaunchAttributeIgnore"): (
        ValueType(whole_union=True),
        "ignored entry: no member; the union passes through",
    ),
    # 12.0-12.2 document the union members without naming their attributes.
    ("cudaLaunchAttributeID", "cudaLaunchAttributeAccessPolicyWindow"): (
        ValueType(member="accessPolicyWindow"),
        '12.0-12.2: member doc "Attribute cudaAccessPolicyWindow."',
    ),
    ("cudaLaunchAttributeID", "cudaLaunchAttributeCooperative"): (
        ValueType(member="cooperative"),
        '12.0-12.2: member doc "Nonzero indicates a cooperative kernel"',
    ),
    ("cudaLaunchAttributeID", "cudaLaunchAttributeSynchronizationPolicy"): (
        ValueType(member="syncPolicy"),
        "12.0-12.2: member doc names the policy type only",
    ),
    ("cudaLaunchAttributeID", "cudaLaunchAttributeClusterDimension"): (
        ValueType(member="clusterDim"),
        '12.0-12.2: member doc "Cluster dimensions for the kernel node."',
    ),
    ("cudaLaunchAttributeID", "cudaLaunchAttributeClusterSchedulingPolicyPreference"): (
        ValueType(member="clusterSchedulingPolicyPreference"),
        "12.0-12.2: member doc names the policy type only",
    ),
    ("cudaLaunchAttributeID", "cudaLaunchAttributeProgrammaticStreamSerialization"): (
        ValueType(member="programmaticStreamSerializationAllowed"),
        "12.0-12.2: the enumerator names the member without its union's prefix",
    ),
    ("cudaLaunchAttributeID", "cudaLaunchAttributeProgrammaticEvent"): (
        ValueType(member="programmaticEvent"),
        "12.0-12.2: the enumerator describes the event without naming the member",
    ),
    ("cudaLaunchAttributeID", "cudaLaunchAttributePriority"): (
        ValueType(member="priority"),
        '12.0-12.2: member doc "Execution priority of the kernel."',
    ),
    ("cudaLaunchAttributeID", "cudaLaunchAttributeMemSyncDomainMap"): (
        ValueType(member="memSyncDomainMap"),
        "12.0-12.2: neither the enumerator nor the member is documented",
    ),
    ("cudaLaunchAttributeID", "cudaLaunchAttributeMemSyncDomain"): (
        ValueType(member="memSyncDomain"),
        "12.0-12.2: neither the enumerator nor the member is documented",
    ),
    # cuda.h (the driver API): CUlaunchAttributeValue members no doc names.
    ("CUlaunchAttributeID_enum", "CU_LAUNCH_ATTRIBUTE_IGNORE"): (
        ValueType(whole_union=True),
        "ignored entry: no member; the union passes through",
    ),
    ("CUlaunchAttributeID_enum", "CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION"): (
        ValueType(member="clusterDim"),
        "the member (an unnamed struct) is undocumented",
    ),
    ("CUlaunchAttributeID_enum", "CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT"): (
        ValueType(member="programmaticEvent"),
        "13.x leaves the member undocumented; 12.x names it",
    ),
    ("CUlaunchAttributeID_enum", "CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT"): (
        ValueType(member="launchCompletionEvent"),
        "13.x leaves the member undocumented; 12.x names it",
    ),
    ("CUlaunchAttributeID_enum", "CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION"): (
        ValueType(member="preferredClusterDim"),
        "the member (an unnamed struct) is undocumented",
    ),
    ("CUlaunchAttributeID_enum", "CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE"): (
        ValueType(member="deviceUpdatableKernelNode"),
        "13.x leaves the member undocumented; 12.x names it",
    ),
    ("CUlaunchAttributeID_enum", "CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING"): (
        ValueType(member="nvlinkUtilCentricScheduling"),
        "the member is undocumented; the enumerator names it",
    ),
    ("CUlaunchAttributeID_enum", "CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW"): (
        ValueType(member="accessPolicyWindow"),
        '12.0-12.2: member doc "Attribute CUaccessPolicyWindow."',
    ),
    ("CUlaunchAttributeID_enum", "CU_LAUNCH_ATTRIBUTE_COOPERATIVE"): (
        ValueType(member="cooperative"),
        '12.0-12.2: member doc "Nonzero indicates a cooperative kernel"',
    ),
    ("CUlaunchAttributeID_enum", "CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY"): (
        ValueType(member="syncPolicy"),
        "12.0-12.2: member doc names the policy type only",
    ),
    ("CUlaunchAttributeID_enum", "CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE"): (
        ValueType(member="clusterSchedulingPolicyPreference"),
        "12.0-12.2: member doc names the policy only",
    ),
    ("CUlaunchAttributeID_enum", "CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION"): (
        ValueType(member="programmaticStreamSerializationAllowed"),
        "12.0-12.2: the enumerator names the member",
    ),
    ("CUlaunchAttributeID_enum", "CU_LAUNCH_ATTRIBUTE_PRIORITY"): (
        ValueType(member="priority"),
        '12.0-12.2: member doc "Execution priority of the kernel."',
    ),
    ("CUlaunchAttributeID_enum", "CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP"): (
        ValueType(member="memSyncDomainMap"),
        "12.0-12.2: neither the enumerator nor the member is documented",
    ),
    ("CUlaunchAttributeID_enum", "CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN"): (
        ValueType(member="memSyncDomain"),
        "12.0-12.2: neither the enumerator nor the member is documented",
    ),
    # cuPointerGetAttribute's description gives each type in prose ("The type of data
    # must be unsigned int", "a boolean", "an integer"); cuda-bindings reads the same.
    # Handles come back as handle objects of their class, as every handle output does.
    ("CUpointer_attribute_enum", "CU_POINTER_ATTRIBUTE_CONTEXT"): (
        ValueType(ctype="CUcontext"),
        '"The type of data must be CUcontext *"',
    ),
    ("CUpointer_attribute_enum", "CU_POINTER_ATTRIBUTE_MEMORY_TYPE"): (
        ValueType(ctype="unsigned int"),
        '"The type of data must be unsigned int" (a CUmemorytype)',
    ),
    ("CUpointer_attribute_enum", "CU_POINTER_ATTRIBUTE_DEVICE_POINTER"): (
        ValueType(ctype="CUdeviceptr"),
        '"The type of data must be CUdeviceptr *"',
    ),
    ("CUpointer_attribute_enum", "CU_POINTER_ATTRIBUTE_HOST_POINTER"): (
        ValueType(ctype="unsigned long long"),
        '"The type of data must be void **": the address',
    ),
    ("CUpointer_attribute_enum", "CU_POINTER_ATTRIBUTE_SYNC_MEMOPS"): (
        ValueType(ctype="unsigned int"),
        'cuPointerSetAttribute: "a pointer to an unsigned integer"',
    ),
    ("CUpointer_attribute_enum", "CU_POINTER_ATTRIBUTE_BUFFER_ID"): (
        ValueType(ctype="unsigned long long"),
        '"data must point to an unsigned long long"',
    ),
    ("CUpointer_attribute_enum", "CU_POINTER_ATTRIBUTE_IS_MANAGED"): (
        ValueType(ctype="unsigned int"),
        "a boolean the driver writes as a 32-bit integer (cuda-bindings: bint)",
    ),
    ("CUpointer_attribute_enum", "CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL"): (
        ValueType(ctype="int"),
        '"an integer representing a device ordinal"',
    ),
    ("CUpointer_attribute_enum", "CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE"): (
        ValueType(ctype="unsigned int"),
        "a boolean, written as a 32-bit integer",
    ),
    ("CUpointer_attribute_enum", "CU_POINTER_ATTRIBUTE_RANGE_START_ADDR"): (
        ValueType(ctype="CUdeviceptr"),
        '"the starting address for the allocation"',
    ),
    ("CUpointer_attribute_enum", "CU_POINTER_ATTRIBUTE_RANGE_SIZE"): (
        ValueType(ctype="size_t"),
        '"the size for the allocation" (cuda-bindings: size_t)',
    ),
    ("CUpointer_attribute_enum", "CU_POINTER_ATTRIBUTE_MAPPED"): (
        ValueType(ctype="unsigned int"),
        "a boolean, written as a 32-bit integer",
    ),
    ("CUpointer_attribute_enum", "CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES"): (
        ValueType(ctype="unsigned int"),
        "a bitmask of CUmemAllocationHandleType (cuda-bindings: unsigned int)",
    ),
    ("CUpointer_attribute_enum", "CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE"): (
        ValueType(ctype="unsigned int"),
        "a boolean, written as a 32-bit integer",
    ),
    ("CUpointer_attribute_enum", "CU_POINTER_ATTRIBUTE_ACCESS_FLAGS"): (
        ValueType(ctype="unsigned int"),
        "CUmemAccess_flags bits (cuda-bindings: unsigned int)",
    ),
    ("CUpointer_attribute_enum", "CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE"): (
        ValueType(ctype="CUmemoryPool"),
        '"Returns in *data the handle to the mempool"',
    ),
    ("CUpointer_attribute_enum", "CU_POINTER_ATTRIBUTE_MAPPING_SIZE"): (
        ValueType(ctype="size_t"),
        '"Size of the actual underlying mapping"',
    ),
    ("CUpointer_attribute_enum", "CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR"): (
        ValueType(ctype="CUdeviceptr"),
        '"The start address of the mapping"',
    ),
    ("CUpointer_attribute_enum", "CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID"): (
        ValueType(ctype="unsigned long long"),
        '"A process-wide unique id" (as BUFFER_ID)',
    ),
    ("CUpointer_attribute_enum", "CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE"): (
        ValueType(ctype="unsigned int"),
        "a boolean, written as a 32-bit integer",
    ),
    ("CUpointer_attribute_enum", "CU_POINTER_ATTRIBUTE_LOCALITY_DOMAIN_ORDINAL"): (
        ValueType(ctype="int"),
        '"an integer ... or -1"',
    ),
    # cuCoredumpGetAttribute's and cuCoredumpSetAttribute's lists of the supported
    # attributes (12.1-13.5) give each type in prose; no enumerator documents its own.
    # The Bools are C's bool (one byte), as the header's ::true / ::false say.
    **{
        ("CUcoredumpSettings_enum", name): (
            ValueType(ctype="_Bool"),
            f'"{name}: Bool where ::true"',
        )
        for name in (
            "CU_COREDUMP_ENABLE_ON_EXCEPTION",
            "CU_COREDUMP_TRIGGER_HOST",
            "CU_COREDUMP_LIGHTWEIGHT",
            "CU_COREDUMP_ENABLE_USER_TRIGGER",
        )
    },
    **{
        ("CUcoredumpSettings_enum", name): (
            ValueType(ctype="char", length=1024),
            f'"{name}: String of up to 1023 characters": a char[1024] with its NUL',
        )
        for name in ("CU_COREDUMP_FILE", "CU_COREDUMP_PIPE")
    },
    ("CUcoredumpSettings_enum", "CU_COREDUMP_GENERATION_FLAGS"): (
        ValueType(ctype="unsigned int"),
        '12.5+: "An integer with values ... specified as a bitwise OR combination" of '
        "CUCoredumpGenerationFlags bits (an unsigned int: any OR of them)",
    ),
}

# (enum, enumerator) -> why no Python value is converted for it: the checked function
# refuses it (ValueError) before C, as it does an undecided one, but it is decided.
REFUSED: dict[tuple[str, str], str] = {
    ("CUpointer_attribute_enum", "CU_POINTER_ATTRIBUTE_P2P_TOKENS"): (
        "a CUDA_POINTER_ATTRIBUTE_P2P_TOKENS record: attribute values are numbers and union "
        "members; the raw module's cuPointerGetAttribute takes the record's address"
    ),
    ("CUcoredumpSettings_enum", "CU_COREDUMP_MAX"): (
        "the enum's end marker, no attribute: the docs list no value for it"
    ),
}

_VALUE_TYPE = re.compile(r"\(value type = (\w+)\)")
_LAUNCH_MEMBER_DOC = re.compile(r"Value of launch attribute (\w+)")
_LAUNCH_MEMBER_NAMED = re.compile(r"cudaLaunchAttributeValue:*(\w+)")
_RANGE_ITEM = re.compile(
    r"- (\w+): If this attribute is specified, data will be interpreted as "
    r"(a 32-bit integer|an array of 32-bit integers|an? (\w+))"
)


@dataclass(frozen=True)
class Decision:
    enumerator: str
    value: int
    type: ValueType | None  # None: undecided
    source: str  # "docs", "table: <reason>" or "undecided"


class AttributeTypes:
    """Per attribute enum of one version, each member's decision."""

    def __init__(self, model: ApiModel, types: TypeMapper | None = None) -> None:
        self.model = model
        self.types = types or TypeMapper(model)
        self.functions = {f.name: f for f in model.functions}

    def enum_of(self, function: str) -> str:
        """The attribute enum a function of FUNCTIONS takes."""
        f = self.functions[function]
        attr = next(p for p in f.params if p.name == FUNCTIONS[function].attr)
        t = attr.type
        if FUNCTIONS[function].count:
            t = self.types.pointee(t)  # an array of attributes
        r = self.types.resolve(t)
        assert isinstance(r, EnumRef), f"{function}.{attr.name} is no enum"
        return r.name

    def union_of(self, function: str) -> str | None:
        """The union a function's value points to (cudaLaunchAttributeValue), if any."""
        f = self.functions[function]
        value = next(p for p in f.params if p.name == FUNCTIONS[function].value)
        pointee = self.types.pointee(value.type)
        if self.types.classify(pointee) is TypeKind.RECORD:
            r = self.types.resolve(pointee)
            assert isinstance(r, RecordRef)
            return r.name
        return None

    def decisions(self, function: str) -> list[Decision]:
        enum = self.types.enums[self.enum_of(function)]
        union = self.union_of(function)
        documented = self._documented(function, enum.name, union)
        out = []
        for k in enum.enumerators:
            if k.name in documented:
                out.append(Decision(k.name, k.value, documented[k.name], "docs"))
            elif (enum.name, k.name) in REVIEWED:
                value_type, why = REVIEWED[(enum.name, k.name)]
                out.append(Decision(k.name, k.value, value_type, f"table: {why}"))
            elif (enum.name, k.name) in REFUSED:
                out.append(
                    Decision(k.name, k.value, None, f"refused: {REFUSED[enum.name, k.name]}")
                )
            else:
                out.append(Decision(k.name, k.value, None, "undecided"))
        return out

    def documented(self, function: str) -> dict[str, ValueType]:
        enum = self.enum_of(function)
        return self._documented(function, enum, self.union_of(function))

    def _documented(self, function: str, enum: str, union: str | None) -> dict[str, ValueType]:
        """What the docs say, enumerator -> value type."""
        enumerators = self.types.enums[enum].enumerators
        found: dict[str, ValueType] = {}
        if union is not None:
            fields = [f for f in self.types.records[union].fields if f.name != "pad"]
            names = {k.name for k in enumerators}
            for field in fields:
                m = _LAUNCH_MEMBER_DOC.search(field.doc)
                if m and m.group(1) in names:
                    found.setdefault(m.group(1), ValueType(member=field.name))
            # The enumerator names the member ("See cudaLaunchAttributeValue::priority",
            # which the docs' plain text runs together): the longest member it starts with.
            by_length = sorted((f.name for f in fields), key=len, reverse=True)
            for k in enumerators:
                for m in _LAUNCH_MEMBER_NAMED.finditer(k.doc):
                    member = next((n for n in by_length if m.group(1).startswith(n)), None)
                    if member and k.name not in found:
                        found[k.name] = ValueType(member=member)
            return found
        for k in enumerators:
            m = _VALUE_TYPE.search(k.doc)
            if m:
                found[k.name] = ValueType(ctype=_DOC_TYPE_NAMES.get(m.group(1), m.group(1)))
        doc = self.functions[FUNCTIONS[function].docs_from or function].doc
        for paragraph in doc.description if doc else ():
            for m in _RANGE_ITEM.finditer(paragraph):
                name, phrase, type_name = m.groups()
                if phrase == "a 32-bit integer":
                    found.setdefault(name, ValueType(ctype="int"))
                elif phrase == "an array of 32-bit integers":
                    found.setdefault(name, ValueType(ctype="int", array=True))
                else:
                    found.setdefault(name, ValueType(ctype=type_name))
        return found

    # ------------------------------------------------------------ what the plan says

    def c_type(self, name: str) -> CType:
        """A value type's C type name as a model type (a builtin or an enum)."""
        if name in self.types.enums:
            return EnumRef(name)
        if name in self.types.typedefs:
            return TypedefRef(name)
        return Builtin(name)

    def table_name(self, function: str) -> str:
        """The generated module's table for the function's attribute enum."""
        return f"_{self.enum_of(function)}_values"

    def annotation(self, function: str, t: ValueType) -> str:
        """The Python type of one attribute's value."""
        union = self.union_of(function)
        if t.whole_union or t.member:
            assert union is not None
            if t.whole_union:
                return union
            field = next(f for f in self.types.records[union].fields if f.name == t.member)
            return self.types.field_annotation(field.type)
        assert t.ctype is not None
        if t.length is not None:
            return "str"
        # A number's Python type, or a handle's class (CU_POINTER_ATTRIBUTE_CONTEXT).
        value = self.types.field_annotation(self.c_type(t.ctype))
        return f"list[{value}]" if t.array else value

    def doc_line(self, function: str, t: ValueType) -> str:
        """`int (unsigned long long)`, `cudaAccessPolicyWindow (member accessPolicyWindow)`."""
        py = self.annotation(function, t)
        if t.whole_union:
            return py
        if t.member:
            return f"{py} (member {t.member})"
        c = t.describe()
        return py if c == py else f"{py} ({c})"

    def py_type(self, function: str) -> str:
        """The Python type of the function's values: the union of every attribute's."""
        union = self.union_of(function)
        found = [self.annotation(function, d.type) for d in self.decisions(function) if d.type]
        # int first and the whole union last: what most attributes take, then the records.
        order = sorted(dict.fromkeys(found), key=lambda a: (a != "int", a == union))
        one = " | ".join(order) or "int"
        return f"list[{one}]" if FUNCTIONS[function].count else one

    def plan_param(self, function: str, p: ParamPlan) -> ParamPlan:
        """The value parameter's plan: the attribute's Python value, in or out."""
        spec = FUNCTIONS[function]
        role = Role.OUT if function in GETTERS else Role.IN
        return replace(
            p,
            role=role,
            kind=ParamKind.ATTRIBUTE,
            ctype=self.table_name(function),
            py_type=self.py_type(function),
            default=None,
            source=Source.ATTRIBUTES,
            partner=spec.attr,
        )

    def size_param(self, function: str, p: ParamPlan) -> ParamPlan:
        """The hidden in/out byte size of the value (AttributeFunction.size_inout): the
        checked function tells C its storage's size; the caller passes none."""
        return replace(
            p,
            role=Role.COUNT,
            kind=ParamKind.COUNT,
            ctype="c_size_t",
            py_type="int",
            default=None,
            source=Source.ATTRIBUTES,
            partner=FUNCTIONS[function].value,
        )


def listing(model: ApiModel) -> list[str]:
    """`function: enumerator = value type (source)` for every attribute of every
    function of FUNCTIONS this version declares: the reviewable table."""
    attributes = AttributeTypes(model)
    lines = []
    for function in sorted(FUNCTIONS):
        if function not in attributes.functions:
            continue
        for d in attributes.decisions(function):
            what = d.type.describe() if d.type else d.source.split(":")[0].upper()
            lines.append(f"{function}: {d.enumerator} = {what} ({d.source})")
    return lines


def undecided(model: ApiModel) -> list[str]:
    """The attributes of this version without a value type (refused at run time)."""
    return [line for line in listing(model) if line.endswith("(undecided)")]
