"""Demangling C++ kernel names, and finding a kernel by the name its source gives it.

A `__global__` function that is not `extern "C"` has an Itanium-mangled name in the
image (`_Z6squarePfi` for `square(float*, int)`), and that is the name both loading
routes know it by. This module carries a small demangler for the part of the Itanium
ABI that kernel names use: names in namespaces (`N...E`), builtin types, pointers,
references, const/volatile/restrict, template arguments (`I...E`) that are types,
integer literals (`L...E`) or packs (`J...E`), substitutions (`S_`, `S0_`, ...,
`St`, `Sa`, `Sb`) and template parameters (`T_`, `T0_`, ...). The text it gives is
GNU c++filt's (`float const*`, `void fill<int>(int*, int, int)`). A name outside that
subset demangles to None; it is still found by its mangled name.

`resolve_kernel_name` answers which of an image's (mangled) names a request means: the
name itself, the source name (`square`, `ops::fill<int>`, `ops::fill`, `fill`) when one
kernel has it, or the signature (`square(float*, int)`, `const float*` and `float
const*` alike). Standard library only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import NameNotFoundError


class AmbiguousKernelNameError(NameNotFoundError):
    """A source name that more than one kernel of the image has (overloads, template
    instances); the message lists them with their mangled names."""


# -- the tree a mangled name parses into


@dataclass(frozen=True)
class _Builtin:
    text: str


@dataclass(frozen=True)
class _Name:
    prefix: object | None  # a _Name, _Template, or a type node for a substitution
    ident: str


@dataclass(frozen=True)
class _Template:
    name: object
    args: tuple


@dataclass(frozen=True)
class _Qualified:
    inner: object
    quals: tuple[str, ...]


@dataclass(frozen=True)
class _Pointer:
    inner: object
    op: str  # "*", "&" or "&&"


@dataclass(frozen=True)
class _Literal:
    type: object
    value: str  # digits, "-" first where negative


@dataclass(frozen=True)
class _Pack:
    args: tuple


_BUILTINS = {
    "v": "void",
    "w": "wchar_t",
    "b": "bool",
    "c": "char",
    "a": "signed char",
    "h": "unsigned char",
    "s": "short",
    "t": "unsigned short",
    "i": "int",
    "j": "unsigned int",
    "l": "long",
    "m": "unsigned long",
    "x": "long long",
    "y": "unsigned long long",
    "n": "__int128",
    "o": "unsigned __int128",
    "f": "float",
    "d": "double",
    "e": "long double",
    "g": "__float128",
    "z": "...",
}
_D_BUILTINS = {"i": "char32_t", "s": "char16_t", "u": "char8_t", "n": "decltype(nullptr)"}
# How c++filt writes an integer literal of each builtin type: a suffix, or a cast.
_LITERAL_SUFFIX = {"int": "", "unsigned int": "u", "long": "l", "unsigned long": "ul"}
_LITERAL_SUFFIX.update({"long long": "ll", "unsigned long long": "ull"})
_QUALIFIERS = {"r": "restrict", "V": "volatile", "K": "const"}
_QUALIFIER_TEXT = {"restrict": "__restrict", "volatile": "volatile", "const": "const"}


class _Unsupported(Exception):
    """Outside the subset (or malformed): demangle() answers None."""


class _Parser:
    def __init__(self, text: str):
        self.s = text
        self.i = 0
        self.subs: list[object] = []
        self.template_args: tuple | None = None  # the function template's, for T_

    # -- reading
    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.s[j] if j < len(self.s) else ""

    def take(self, expected: str | None = None) -> str:
        if self.i >= len(self.s):
            raise _Unsupported("truncated")
        c = self.s[self.i]
        if expected is not None and c != expected:
            raise _Unsupported(f"expected {expected!r}")
        self.i += 1
        return c

    def number(self) -> int:
        m = re.compile(r"\d+").match(self.s, self.i)
        if not m:
            raise _Unsupported("expected a number")
        self.i = m.end()
        return int(m.group())

    # -- grammar
    def encoding(self) -> tuple[object | None, object, tuple | None]:
        name, is_template = self.name()
        if self.i == len(self.s):
            return None, name, None  # a data name (a namespaced global)
        ret = self.type() if is_template else None
        params = []
        while self.i < len(self.s):
            params.append(self.type())
        if len(params) == 1 and params[0] == _Builtin("void"):
            params = []
        return ret, name, tuple(params)

    def name(self) -> tuple[object, bool]:
        c = self.peek()
        if c == "N":
            return self.nested()
        if c == "S" and self.peek(1) == "t":
            self.i += 2
            node: object = _Name(_Name(None, "std"), self.source_name())
        elif c == "S":
            node = self.substitution()
            if self.peek() != "I":
                raise _Unsupported("a substitution as a whole name")
        else:
            node = _Name(None, self.unqualified())
        if self.peek() == "I":
            self.subs.append(node)
            args = self.template_args_()
            self.template_args = args
            return _Template(node, args), True
        return node, False

    def nested(self) -> tuple[object, bool]:
        self.take("N")
        if self.peek() in ("r", "V", "K", "R", "O"):
            raise _Unsupported("a member function")
        node: object | None = None
        is_template = False
        while self.peek() != "E":
            c = self.peek()
            if c == "S" and self.peek(1) == "t" and node is None:
                self.i += 2
                node = _Name(None, "std")
                continue  # std:: itself is never a substitution candidate
            if c == "S" and node is None:
                node = self.substitution()
                is_template = False
                continue
            if c == "I":
                if node is None:
                    raise _Unsupported("template arguments without a name")
                args = self.template_args_()
                node = _Template(node, args)
                self.template_args = args
                is_template = True
            else:
                node = _Name(node, self.unqualified())
                is_template = False
            if self.peek() != "E":
                self.subs.append(node)
        self.take("E")
        if node is None:
            raise _Unsupported("an empty nested name")
        return node, is_template

    def unqualified(self) -> str:
        if self.peek() == "L":  # internal linkage: printed the same
            self.i += 1
        if not self.peek().isdigit():
            raise _Unsupported("an operator, constructor or other special name")
        return self.source_name()

    def source_name(self) -> str:
        n = self.number()
        ident = self.s[self.i : self.i + n]
        if len(ident) != n or not n:
            raise _Unsupported("a name longer than the rest")
        self.i += n
        if re.fullmatch(r"_GLOBAL_[._$]N.*", ident):
            return "(anonymous namespace)"
        return ident

    def substitution(self) -> object:
        self.take("S")
        c = self.take()
        if c == "a":
            return _Name(_Name(None, "std"), "allocator")
        if c == "b":
            return _Name(_Name(None, "std"), "basic_string")
        if c == "_":
            index = 0
        else:
            m = re.compile(r"[0-9A-Z]+_").match(self.s, self.i - 1)
            if not m:
                raise _Unsupported("a standard substitution outside the subset")
            index = int(m.group()[:-1], 36) + 1
            self.i = m.end()
        if index >= len(self.subs):
            raise _Unsupported("a substitution past the table")
        return self.subs[index]

    def template_args_(self) -> tuple:
        self.take("I")
        args = []
        while self.peek() != "E":
            args.append(self.template_arg())
        self.take("E")
        return tuple(args)

    def template_arg(self) -> object:
        c = self.peek()
        if c == "L":
            return self.literal()
        if c == "J":
            self.i += 1
            args = []
            while self.peek() != "E":
                args.append(self.template_arg())
            self.take("E")
            return _Pack(tuple(args))
        if c == "X":
            raise _Unsupported("an expression")
        return self.type()

    def literal(self) -> object:
        self.take("L")
        if self.peek() == "_" or self.peek() == "Z":
            raise _Unsupported("an external name as a template argument")
        type_ = self.type()
        negative = self.peek() == "n"
        if negative:
            self.i += 1
        m = re.compile(r"\d+").match(self.s, self.i)
        if not m or self.s[m.end() : m.end() + 1] != "E":
            raise _Unsupported("a literal that is not an integer")
        self.i = m.end() + 1
        return _Literal(type_, ("-" if negative else "") + m.group())

    def type(self) -> object:
        c = self.peek()
        node: object
        if c in _BUILTINS:
            self.i += 1
            return _Builtin(_BUILTINS[c])
        if c == "D" and self.peek(1) == "p":  # a pack expansion: the pack's types
            self.i += 2
            node = self.type()
            if not isinstance(node, _Pack):
                raise _Unsupported("a pack expansion of a non-pack")
            self.subs.append(node)
            return node
        if c == "D":
            d = self.peek(1)
            if d in _D_BUILTINS:
                self.i += 2
                return _Builtin(_D_BUILTINS[d])
            raise _Unsupported("a D-type outside the subset")
        if c in _QUALIFIERS:
            quals = []
            while self.peek() in _QUALIFIERS:
                quals.append(_QUALIFIERS[self.take()])
            node = _Qualified(self.type(), tuple(quals))
        elif c in ("P", "R", "O"):
            self.i += 1
            node = _Pointer(self.type(), {"P": "*", "R": "&", "O": "&&"}[c])
        elif c == "T":
            self.i += 1
            index = 0 if self.peek() == "_" else self.number() + 1
            self.take("_")
            if self.template_args is None or index >= len(self.template_args):
                raise _Unsupported("a template parameter with no argument")
            node = self.template_args[index]
            if self.peek() == "I":
                raise _Unsupported("a template template parameter")
        elif c == "S" and self.peek(1) == "t":
            self.i += 2
            node = _Name(_Name(None, "std"), self.source_name())
            if self.peek() == "I":
                self.subs.append(node)
                node = _Template(node, self.template_args_())
        elif c == "S":
            node = self.substitution()
            if self.peek() != "I":
                return node  # a substitution is not a new candidate
            node = _Template(node, self.template_args_())
        elif c == "N":
            node, _ = self.nested_type()
        elif c.isdigit():
            node = _Name(None, self.source_name())
            if self.peek() == "I":
                self.subs.append(node)
                node = _Template(node, self.template_args_())
        else:
            raise _Unsupported(f"type code {c!r}")
        self.subs.append(node)
        return node

    def nested_type(self) -> tuple[object, bool]:
        saved = self.template_args
        node, is_template = self.nested()
        self.template_args = saved  # a class's arguments are not the function's
        return node, is_template


# -- rendering


def _text(node, west: bool = False) -> str:
    if isinstance(node, _Builtin):
        return node.text
    if isinstance(node, _Name):
        if node.prefix is None:
            return node.ident
        return f"{_text(node.prefix, west)}::{node.ident}"
    if isinstance(node, _Template):
        args = _list(node.args, west)
        close = " >" if args.endswith(">") else ">"
        return f"{_text(node.name, west)}<{args}{close}"
    if isinstance(node, _Qualified):
        quals = " ".join(_QUALIFIER_TEXT[q] for q in reversed(node.quals))
        if west and isinstance(node.inner, (_Builtin, _Name, _Template)):
            return f"{quals} {_text(node.inner, west)}"
        return f"{_text(node.inner, west)} {quals}"
    if isinstance(node, _Pointer):
        return _text(node.inner, west) + node.op
    if isinstance(node, _Literal):
        if isinstance(node.type, _Builtin):
            if node.type.text == "bool" and node.value in ("0", "1"):
                return "true" if node.value == "1" else "false"
            if node.type.text in _LITERAL_SUFFIX:
                return node.value + _LITERAL_SUFFIX[node.type.text]
        return f"({_text(node.type, west)}){node.value}"
    if isinstance(node, _Pack):
        return _list(node.args, west)
    raise _Unsupported(type(node).__name__)


def _list(nodes, west: bool = False) -> str:
    return ", ".join(a for a in (_text(x, west) for x in nodes) if a)  # an empty pack: nothing


@dataclass(frozen=True)
class Demangled:
    """A demangled kernel name: `text` is what c++filt prints."""

    mangled: str
    text: str
    _ret: object | None
    _name: object
    _params: tuple | None

    def _forms(self, west: bool):
        """(qualified name, qualified without template args, last component, last
        component without template args, parameter list or None, return type or None)."""
        name = self._name
        bare = name.name if isinstance(name, _Template) else name
        if isinstance(bare, _Name):
            last_bare = bare.ident
        else:
            last_bare = _text(bare, west)
        last = last_bare
        if isinstance(name, _Template):
            last = _text(_Template(_Name(None, last_bare), name.args), west)
        params = None
        if self._params is not None:
            params = "(" + _list(self._params, west) + ")"
        ret = None if self._ret is None else _text(self._ret, west)
        return _text(name, west), _text(bare, west), last, last_bare, params, ret

    def keys(self) -> tuple[set[str], set[str]]:
        """The normalized requests that mean this kernel: (qualified, unqualified)."""
        qualified: set[str] = set()
        unqualified: set[str] = set()
        for west in (False, True):
            name, bare, last, last_bare, params, ret = self._forms(west)
            qualified.update((name, bare))
            unqualified.update((last, last_bare))
            if params is not None:
                for target, names in ((qualified, (name,)), (unqualified, (last,))):
                    for n in names:
                        target.add(n + params)
                        if ret is not None:
                            target.add(f"{ret} {n}{params}")
        return {normalize(k) for k in qualified}, {normalize(k) for k in unqualified}


def parse(mangled: str) -> Demangled | None:
    """The demangled form of an Itanium-mangled name in the subset, else None."""
    if not mangled.startswith("_Z"):
        return None
    p = _Parser(mangled)
    p.i = 2
    try:
        ret, name, params = p.encoding()
        text = _text(name)
        if params is not None:
            text += "(" + _list(params) + ")"
        if ret is not None:
            text = f"{_text(ret)} {text}"
    except (_Unsupported, RecursionError):
        return None
    return Demangled(mangled, text, ret, name, params)


def demangle(mangled: str) -> str | None:
    """c++filt's text for a mangled name in the kernel subset; None otherwise (a name
    that is not mangled, or uses a part of the ABI this module does not carry)."""
    d = parse(mangled)
    return None if d is None else d.text


# -- finding a kernel by the name its source gives it

_TOKEN = re.compile(r"[A-Za-z_$][\w$]*|\d+|::|&&|\.\.\.|\S")


def normalize(text: str) -> str:
    """A signature with its spacing made canonical: one space between two words
    (`unsigned int`, `float const`), none elsewhere (`float*,int`)."""
    out: list[str] = []
    for token in _TOKEN.findall(text):
        if (
            out
            and (token[0].isalnum() or token[0] in "_$")
            and (out[-1][-1].isalnum() or out[-1][-1] in "_$")
        ):
            out.append(" ")
        out.append(token)
    return "".join(out)


def describe(name: str) -> str:
    """A kernel name for a message: `'square(float*, int)' (_Z6squarePfi)`, or the
    name alone where it is not mangled or not demangled."""
    text = demangle(name)
    return repr(name) if text is None else f"{text!r} ({name})"


def resolve_kernel_name(request: str, names) -> str:
    """The name in `names` (an image's kernel names, as in the image) that `request`
    means: itself; else the one kernel whose qualified source name or signature it is;
    else the one whose unqualified name or signature it is. NameNotFoundError lists the
    kernels when none matches; AmbiguousKernelNameError lists the candidates when more
    than one does."""
    names = list(names)
    if request in names:
        return request
    wanted = normalize(request)
    parsed = [d for d in map(parse, names) if d is not None]
    keyed = [(d, d.keys()) for d in parsed]
    for tier in (0, 1):
        if tier == 1 and "::" in wanted:
            break
        found = sorted((d for d, keys in keyed if wanted in keys[tier]), key=lambda d: d.mangled)
        if len(found) == 1:
            return found[0].mangled
        if found:
            listing = "; ".join(f"{d.text!r} ({d.mangled})" for d in found)
            raise AmbiguousKernelNameError(
                f"{request!r} names {len(found)} kernels of the image: {listing}. Pick one by "
                "its mangled name or its signature, e.g. get_function("
                f"{found[0].mangled!r}) or get_function({_signature(found[0])!r})"
            )
    raise unknown_kernel(request, names)


def _signature(d: Demangled) -> str:
    name, _, _, _, params, _ = d._forms(False)
    return name + (params or "")


def unknown_kernel(request: str, names) -> NameNotFoundError:
    """The error for a kernel name the image lacks, listing what it has (both routes)."""
    listing = ", ".join(describe(n) for n in sorted(names)) or "no kernels"
    return NameNotFoundError(f"no kernel {request!r} in the image; it has: {listing}")


def parameter_types(mangled: str) -> tuple[str, ...] | None:
    """Each parameter's C type of a mangled kernel name, as c++filt would write it with
    qualifiers first (`const float*`), packs expanded; None where the name is not
    mangled or uses a part of the ABI outside the subset."""
    d = parse(mangled)
    if d is None or d._params is None:
        return None
    nodes = [n for p in d._params for n in (p.args if isinstance(p, _Pack) else (p,))]
    try:
        return tuple(_text(n, west=True) for n in nodes)
    except _Unsupported:
        return None
