"""The base of every generated handle class (cudaStream_t, cudaEvent_t, ...).

A handle is a `c_void_p` subclass, so ctypes passes it as a `c_void_p` argument with no
conversion, and C's size and alignment hold. On top of that it is a value: `int(h)` is
its address (0 for NULL), `bool(h)` is false for NULL, `==` and `hash` go by kind and
address (so handles are dict keys), and the repr shows both (`<cudaStream_t 0x7b>`).
The kind (`_kind_`, set by the generator) is the struct C points the handle at, as in
argument conversion (cudart._convert.handle): the runtime's cudaStream_t and the
driver's CUstream are both `struct CUstream_st *`, one kind, so each API takes the
other's objects and a driver stream equals a runtime stream at the same address; one
version's module's cudaStream_t equals another's. A class generated before kinds were
(or made elsewhere) has its name as its kind.

ctypes gives a handle, not an int, for a struct field or array item of a handle type,
and that handle is a view of the field's memory: it reads what the field holds now.

Lifetimes: a checked destroy or free that succeeds (generator/lifetimes.py's DESTROYS
entries) moves the handle object it was given to a "destroyed" subclass of its class
(`mark_destroyed`), whose `_destroyed_by_` names the function. The checked functions'
fast path takes an argument as is only when its class IS the expected handle class, so
a destroyed object always falls through to cudart._convert.handle, which refuses it
(HandleDestroyedError): the live path pays nothing. The subclass keeps the name, the
address, `==`, `hash` and isinstance, so the object stays the value it was.

The mark is on the object, not on the address. C reuses addresses: a stream created
after another was destroyed may get its address, and objects made elsewhere (the raw
layer, cuda-bindings, `cudaStream_t(int(s))`, a struct field) may name a live handle at
a once-destroyed address. A registry of destroyed addresses would have to be cleared by
every create the process makes, including those it never sees, and would cost a lookup
on every call; the object mark costs nothing and is never wrong about a new handle.
Ints and other objects at the same address remain the caller's promise, as in C.

Children (generator/lifetimes.py's PARENTS): a handle a checked call made as another's
child (a graph's node, a module's function, a context's stream) is recorded under its
parent's kind and address (`add_child`, weakly: a dropped child is not kept). A checked
destroy of the parent marks each child recorded under it, and theirs (`parent_destroyed`),
with the same destroyed subclass a destroy gives: the use of a live handle pays nothing
more, and a child of a destroyed parent is refused before C. The parent's address is
forgotten then, so a new parent there starts with none. A parent destroyed otherwise
(the raw layer, cudaDeviceReset) leaves its children to the caller's promise.

Threads: the checked destroy marks the object BEFORE it calls C (`claim`, atomic under
one lock), and restores it if C fails (`unclaim`), so of several threads destroying one
object exactly one reaches C; the others get HandleDestroyedError, as does any use of
the object while its destroy is in C (using a handle during its destroy is a race in C
too). Checking the mark, then marking after C returns (with the GIL released in
between) would let every thread through to C: the double destroy the mark exists to
stop. The compiled checked functions make the same step in C (cudart/_fastchecked.h,
`cudart_c_claim`) under the same lock, so it holds with or without the GIL, and a C
destroy and a Python one (the reference, the ctypes backend) exclude each other.
"""

from __future__ import annotations

import threading
import weakref
from ctypes import c_void_p

from .errors import HandleDestroyedError

# Guards the made-once classes below (integer handle kinds, destroyed subclasses).
_destroyed_lock = threading.Lock()
# Makes checking an object's mark and marking it one step (`claim`); the compiled
# `cudart_c_claim` takes it too, through its acquire and release.
_mark_lock = threading.Lock()


class Handle(c_void_p):
    """An opaque CUDA handle: a value made of its kind (the class name) and address."""

    # The names of the handle kinds that C converts to this one implicitly: for a
    # `const T` handle, its `T` twin (cudaArray_const_t accepts cudaArray_t). The
    # generator sets it from the model; cudart._convert.handle reads it.
    _accepts_: tuple[str, ...] = ()

    # The function that destroyed the object: set on the destroyed subclasses only
    # (mark_destroyed); cudart._convert.handle refuses an object whose class has one.
    _destroyed_by_: str | None = None

    # What the handle points at: the C struct tag ("CUstream_st"), "const " before it
    # for a pointer to const. The generator sets it; a class without one gets its name.
    _kind_: str = ""

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "_kind_" not in vars(cls) and not cls._kind_:
            cls._kind_ = cls.__name__

    def __int__(self) -> int:
        return self.value or 0

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Handle):
            return NotImplemented
        return self._kind_ == other._kind_ and (self.value or 0) == (other.value or 0)

    def __hash__(self) -> int:
        return hash((self._kind_, self.value or 0))

    def __repr__(self) -> str:
        dead = f" destroyed by {self._destroyed_by_}" if self._destroyed_by_ else ""
        return f"<{type(self).__name__} {self.value or 0:#x}{dead}>"

    # bool(h): c_void_p's own, false when the address is NULL.

    def __reduce__(self) -> tuple:
        # A destroyed subclass has its live class's name, by which pickle finds a
        # class: the mark travels as the destroying function, set again on load.
        return _restore, (_live_class(type(self)), self.value, self._destroyed_by_)


class IntegerHandle(int):
    """A handle C declares as an integer (cudaTextureObject_t, cudaSurfaceObject_t):
    an int, so it passes wherever one does (kernel arguments, ctypes), of a subclass
    named after its typedef (`integer_handle_class`), so that a checked destroy can
    mark it like any handle object (generator/lifetimes.py's INTEGER_HANDLES)."""

    __slots__ = ()
    _destroyed_by_: str | None = None

    def __repr__(self) -> str:
        dead = f" destroyed by {self._destroyed_by_}" if self._destroyed_by_ else ""
        return f"<{type(self).__name__} {int(self):#x}{dead}>"

    def __reduce__(self) -> tuple:
        # Its class is made at run time (integer_handle_class): found again by name.
        kind = _live_class(type(self)).__name__
        return _restore_integer, (kind, int(self), self._destroyed_by_)


_integer_classes: dict[str, type[IntegerHandle]] = {}


def integer_handle_class(kind: str) -> type[IntegerHandle]:
    """The one IntegerHandle subclass of a typedef name, for every version's module."""
    with _destroyed_lock:
        cls = _integer_classes.get(kind)
        if cls is None:
            namespace = {"__module__": __name__, "__slots__": (), "__doc__": f"A {kind}."}
            cls = _integer_classes[kind] = type(kind, (IntegerHandle,), namespace)
        return cls


class StreamHandle(Handle):
    """A cudaStream_t or CUstream: also the CUDA stream protocol, which PyTorch, CuPy
    and cuda-bindings accept for a stream."""

    _kind_ = ""  # its subclasses' own

    def __cuda_stream__(self) -> tuple[int, int]:
        return (0, self.value or 0)


# (live class, function) -> its destroyed subclass; made once each, on first use.
_destroyed_classes: dict[tuple[type, str], type] = {}
# The same classes, for the conversion's check: a set lookup by identity costs a live
# handle less than reading `_destroyed_by_` through its class's MRO.
DESTROYED_CLASSES: set[type] = set()


def _destroyed_class(cls: type, function: str) -> type:
    # Made once: later calls read the dict without the lock (a dict's get is atomic, with
    # or without the GIL), so a destroy pays no lock for it.
    dead = _destroyed_classes.get((cls, function))
    if dead is not None:
        return dead
    with _destroyed_lock:
        dead = _destroyed_classes.get((cls, function))
        if dead is None:
            namespace: dict[str, object] = {
                "__module__": cls.__module__,
                "__qualname__": cls.__qualname__,
                "__doc__": f"A {cls.__name__} that {function} destroyed.",
                "_destroyed_by_": function,
            }
            if issubclass(cls, IntegerHandle):
                namespace["__slots__"] = ()
            dead = _destroyed_classes[cls, function] = type(cls.__name__, (cls,), namespace)
            DESTROYED_CLASSES.add(dead)
        return dead


def _live_class(cls: type) -> type:
    return cls.__bases__[0] if cls in DESTROYED_CLASSES else cls


def _restore(cls: type, value: int | None, destroyed_by: str | None) -> Handle:
    """A pickled Handle: of its live class, marked again if it was destroyed."""
    handle = cls(value)
    if destroyed_by is not None:
        mark_destroyed(handle, destroyed_by)
    return handle


def _restore_integer(kind: str, value: int, destroyed_by: str | None) -> IntegerHandle:
    """A pickled IntegerHandle, as `_restore`."""
    handle = integer_handle_class(kind)(value)
    if destroyed_by is not None:
        mark_destroyed(handle, destroyed_by)
    return handle


def mark_destroyed(value: object, function: str) -> bool:
    """After `function` destroyed the handle `value`: mark the object destroyed (see the
    module's docstring). Only live handle objects of ours with an address are marked:
    ints, None, foreign objects and NULL (the default stream) are left as they are.
    Returns whether it marked."""
    if destroyed_by(value) is not None:
        return False  # marked already (by the destroy's claim): no exception to pay for
    try:
        return claim(value, function, "")
    except HandleDestroyedError:
        return False  # already marked (the checked layer refuses it before any call)


def claim(value: object, function: str, parameter: str) -> bool:
    """Before `function` destroys `value` (passed as `parameter`): mark the object, in one
    step with checking that no other thread has, so that only one destroy reaches C.
    HandleDestroyedError if it is marked already. Returns whether it marked (what
    `mark_destroyed` marks); `unclaim` undoes it when C refuses the destroy."""
    if isinstance(value, Handle):
        address = value.value or 0
    elif isinstance(value, IntegerHandle):
        address = int(value)
    else:
        return False
    if not address:
        return False
    cls = type(value)
    dead = _destroyed_class(cls, function) if cls._destroyed_by_ is None else None
    with _mark_lock:
        by = type(value)._destroyed_by_
        if by is None and dead is not None:
            value.__class__ = dead
            return True
    raise HandleDestroyedError(cls.__name__, address, by or function, parameter)


def unclaim(value: object) -> None:
    """C refused the destroy `claim` marked `value` for: the object lives on."""
    with _mark_lock:
        cls = type(value)
        if cls in DESTROYED_CLASSES:
            value.__class__ = cls.__bases__[0]


def destroyed_by(value: object) -> str | None:
    """The function that destroyed the handle object `value`, or None while it lives."""
    return value._destroyed_by_ if isinstance(value, (Handle, IntegerHandle)) else None


# (parent kind, parent address) -> weak references to the children made under it.
# Under _mark_lock; a list pruned of dead references as it grows (see `add_child`).
_children: dict[tuple[str, int], list[weakref.ref]] = {}
_PRUNE_AT = 64


def add_child(child: object, kind: str, address: int) -> None:
    """A checked call made the handle object `child` as a child of the handle of `kind`
    at `address`: destroying that (checked) marks `child` destroyed too."""
    if not address or not isinstance(child, Handle) or not child.value:
        return
    ref = weakref.ref(child)
    with _mark_lock:
        children = _children.setdefault((kind, address), [])
        children.append(ref)
        if len(children) % _PRUNE_AT == 0:
            children[:] = [r for r in children if r() is not None]


def parent_destroyed(kind: str, address: int, function: str) -> None:
    """`function` destroyed the handle of `kind` at `address`: mark every child recorded
    under it (and their children), and forget the address."""
    pending = [(kind, address)]
    while pending:
        with _mark_lock:
            refs = _children.pop(pending.pop(), [])
        for ref in refs:
            child = ref()
            if child is not None and child.value:
                mark_destroyed(child, function)
                pending.append((type(child)._kind_, child.value))
