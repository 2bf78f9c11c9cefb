"""One Python module per (header family, CUDA major) from its minors' modules.

Each minor's raw and checked modules are rendered as before (generator/render/); this
phase puts the minors of one major into one file, statement by statement: a statement
that every minor renders alike is written once, and one that some minors lack or render
otherwise is written under a gate on the version the module is imported as
(`if _VERSION >= 12050:`). The big literal tables of the raw modules (`_FUNCTIONS`,
`_DOCS`, `__all__`, ...) are merged entry by entry in the same way, inside the literal
(`**({...} if _VERSION >= 12050 else {})`), so that one added function does not copy a
table.

The invariant, which `merge` checks before it returns: for every minor, reading the
merged text back (`project`: gates evaluated, indentation given back) gives that minor's
rendered module, byte for byte. cudart._views executes the merged file once per version
imported (cudart.sys_12050), `_VERSION` taken from the module's name.

Nothing here knows C, a model or libclang: it reads rendered Python only.
"""

from __future__ import annotations

import ast
import bisect
import difflib
import functools
import io
import re
import tokenize
from dataclasses import dataclass, field

VERSION_NAME = "_VERSION"
FUTURE = "from __future__ import annotations\n"
# How every generated module follows its docstring (templates/*.py.j2).
FUTURE_PIECE = "\n" + FUTURE
_DOC = "__doc__ = "
_NAMES_VERSION = re.compile(rf"\b{VERSION_NAME}\b")
_BRACKETS = {"dict": ("{", "}"), "tuple": ("(", ")"), "list": ("[", "]")}
_KINDS = {ast.Dict: "dict", ast.Tuple: "tuple", ast.List: "list"}


class MergeError(ValueError):
    """The minors' modules cannot be merged, or the merge does not give them back."""


@dataclass(frozen=True)
class Text:
    """Source lines and which of them (1-based) continue a string begun on an earlier
    line: those are never indented, or the string's value would change."""

    text: str
    inside: frozenset[int] = frozenset()

    def __add__(self, other: Text) -> Text:
        shift = self.text.count("\n")
        return Text(self.text + other.text, self.inside | {n + shift for n in other.inside})

    def indented(self, prefix: str) -> Text:
        out = []
        for number, line in enumerate(self.text.splitlines(keepends=True), 1):
            out.append(line if number in self.inside or not line.strip() else prefix + line)
        return Text("".join(out), self.inside)


def _join(parts: list[Text]) -> Text:
    total = Text("")
    for part in parts:
        total = total + part
    return total


@dataclass
class _Piece:
    """A statement (with the comments and blank lines before it), or a container: a
    literal table or a block (`class`, `if`) whose entries or statements are merged one
    by one. A container's `text` is its opening lines; `children` its parts, per version."""

    text: Text
    versions: set[int] = field(default_factory=set)
    kind: str = ""  # "dict", "tuple" or "list" for a table, "block", "" for a statement
    tail: Text = Text("")
    children: dict[int, list[_Piece]] = field(default_factory=dict)

    @property
    def key(self) -> str:
        if self.kind:
            return f"\0{self.kind}\0{self.text.text}\0{self.tail.text}"
        return self.text.text


def continuation_lines(tree: ast.AST) -> set[int]:
    """Lines (1-based) inside a string literal that began on an earlier line."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Constant, ast.JoinedStr)) and isinstance(
            getattr(node, "value", ""), (str, bytes)
        ):
            end = node.end_lineno or node.lineno
            inside.update(range(node.lineno + 1, end + 1))
    return inside


def split(source: str, version: int) -> list[_Piece]:
    """A module's top-level statements, each with the comments and blank lines before
    it; multi-line literal tables split into their entries, and blocks into their
    statements."""
    tree = ast.parse(source)
    # Sorted, so that each piece finds its own lines by bisection: a scan of them all
    # per piece made the merge of a major's driver modules take seconds.
    inside = sorted(continuation_lines(tree))
    lines = source.splitlines(keepends=True)

    def text(a: int, b: int) -> Text:  # lines a+1 .. b (1-based)
        within = inside[bisect.bisect_right(inside, a) : bisect.bisect_right(inside, b)]
        return Text("".join(lines[a:b]), frozenset(n - a for n in within))

    def pieces(body: list[ast.stmt], start: int) -> list[_Piece]:
        out = []
        for node in body:
            end = node.end_lineno or node.lineno
            out.append(piece(node, start, end))
            start = end
        return out

    def piece(node: ast.stmt, start: int, end: int) -> _Piece:
        table = _table_bounds(node, lines)
        if table is not None:
            kind, opening, entry_bounds, closing_from = table
            entries = [_Piece(text(a, b)) for a, b in entry_bounds]
            return _Piece(
                text(start, opening),
                kind=kind,
                tail=text(closing_from, end),
                children={version: entries},
            )
        header_end = _block_header_end(node)
        if header_end is not None:
            body = node.body  # type: ignore[attr-defined]
            body_end = body[-1].end_lineno or body[-1].lineno
            return _Piece(
                text(start, header_end),
                kind="block",
                tail=text(body_end, end),  # an `else:` and its statements, kept whole
                children={version: pieces(body, header_end)},
            )
        return _Piece(text(start, end))

    out = pieces(tree.body, 0)
    last = (tree.body[-1].end_lineno or 0) if tree.body else 0
    if last < len(lines):
        out.append(_Piece(text(last, len(lines))))
    return out


def _block_header_end(node: ast.stmt) -> int | None:
    """The line of a block's colon, for a `class` or an `if` whose statements begin on
    later lines; else None."""
    if isinstance(node, ast.ClassDef):
        parts: list[ast.AST] = [*node.bases, *node.keywords]
        last = max([node.lineno, *(p.end_lineno or 0 for p in parts)])  # type: ignore[attr-defined]
    elif isinstance(node, ast.If):
        last = node.test.end_lineno or node.lineno
    else:
        return None
    if len(node.body) < 2 or node.body[0].lineno <= last:
        return None
    return last


def _table_bounds(
    node: ast.stmt, lines: list[str]
) -> tuple[str, int, list[tuple[int, int]], int] | None:
    """For a `NAME = {...}` (or tuple, list; or a call whose last argument is one) whose
    entries each begin a line of their own and end theirs with a comma: (kind, the
    opening bracket's line, each entry's (first line - 1, last line), the line after the
    last entry - 1); else None."""
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        value = node.value
    elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and node.value.args:
        value = node.value.args[-1]
    else:
        return None
    kind = _KINDS.get(type(value)) if value is not None else None
    if kind is None or value is None or value.lineno == value.end_lineno:
        return None
    if isinstance(value, ast.Dict):
        if any(k is None for k in value.keys):  # a ** entry: such a table stays whole
            return None
        spans = [
            (k.lineno, v.end_lineno or v.lineno)
            for k, v in zip(value.keys, value.values, strict=True)
            if k is not None
        ]
    else:
        spans = [(e.lineno, e.end_lineno or e.lineno) for e in value.elts]  # type: ignore[attr-defined]
    if len(spans) < 2:
        return None
    opening, closing = value.lineno, value.end_lineno or value.lineno
    bounds = []
    previous = opening
    for first, last in spans:
        if first <= previous or not lines[last - 1].rstrip().endswith(","):
            return None
        bounds.append((previous, last))
        previous = last
    if previous >= closing or "".join(lines[previous : closing - 1]).strip():
        return None  # a comment before the closing bracket: the table stays whole
    return kind, opening, bounds, previous


def _align(merged: list[_Piece], new: list[_Piece], version: int) -> list[_Piece]:
    """`merged` with one version's pieces aligned into it: a piece that matches gains
    `version` (a container also its parts); the others are inserted where they fall."""
    matcher = difflib.SequenceMatcher(
        None, [p.key for p in merged], [p.key for p in new], autojunk=False
    )
    out: list[_Piece] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for old, piece in zip(merged[i1:i2], new[j1:j2], strict=True):
                old.versions.add(version)
                old.children.update(piece.children)
                out.append(old)
            continue
        out.extend(merged[i1:i2])
        for piece in new[j1:j2]:
            piece.versions = {version}
            out.append(piece)
    return out


@dataclass(frozen=True)
class Merged:
    text: str
    versions: tuple[int, ...]


def merge(sources: dict[int, str], header: str, docstring: str, preamble: str) -> Merged:
    """The minors' modules `sources` (version -> text) as one module.

    `header` (comment lines) and `docstring` open the merged file; each minor's own
    docstring (and the comments above it) becomes that view's `__doc__` assignment.
    `preamble` follows the future import and defines `_VERSION`."""
    versions = tuple(sorted(sources))
    if not versions:
        raise MergeError("nothing to merge")
    docs: list[tuple[_Piece, set[int]]] = []
    merged: list[_Piece] = []
    for version in versions:
        source = sources[version]
        if _NAMES_VERSION.search(source):
            raise MergeError(f"version {version}'s module names {VERSION_NAME} itself")
        pieces = split(source, version)
        if len(pieces) < 2 or pieces[1].text.text != FUTURE_PIECE:
            raise MergeError(
                f"version {version}: a generated module opens with its docstring, then "
                f"{FUTURE!r}"
            )
        docs.append((_doc_assignment(pieces[0]), {version}))
        merged = _align(merged, pieces[2:], version)
    body = [(p, set(p.versions)) for p in merged]
    text = (
        header
        + _string_literal(docstring)
        + FUTURE_PIECE
        + "\n"
        + preamble
        + _gated_runs(docs, versions).text
        + _gated_runs(body, versions).text
    )
    # The proof is read back from the text written, not from the pieces that made it.
    skip = len(ast.parse(preamble).body) + 2  # the merged docstring, the future import
    reader = Reader(text, skip)
    for version in versions:
        if reader.project(version) != sources[version]:
            raise MergeError(f"the merged module does not give back version {version}")
    return Merged(text, versions)


def _doc_assignment(piece: _Piece) -> _Piece:
    """A minor's leading comments and docstring as an assignment to `__doc__`."""
    tree = ast.parse(piece.text.text)
    node = tree.body[0] if tree.body else None
    if not isinstance(node, ast.Expr) or not isinstance(node.value, ast.Constant):
        raise MergeError("a generated module's first statement is its docstring")
    lines = piece.text.text.splitlines(keepends=True)
    at = node.lineno - 1
    lines[at] = _DOC + lines[at]
    return _Piece(Text("".join(lines), piece.text.inside))


def _string_literal(text: str) -> str:
    return '"""' + text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"') + '\n"""\n'


def _gated_runs(pieces: list[tuple[_Piece, set[int]]], versions: tuple[int, ...]) -> Text:
    """The pieces in order, each run of pieces of one version set under one gate."""
    out: list[Text] = []
    run: list[_Piece] = []
    run_versions: set[int] = set()

    def flush() -> None:
        if not run:
            return
        text = _join([_render_piece(p, versions) for p in run])
        if run_versions == set(versions):
            out.append(text)
        else:
            out.append(
                Text(f"if {condition_text(run_versions, versions)}:\n") + text.indented("    ")
            )

    for piece, these in pieces:
        if these != run_versions:
            flush()
            run, run_versions = [], these
        run.append(piece)
    flush()
    return _join(out)


def _render_piece(piece: _Piece, versions: tuple[int, ...]) -> Text:
    if not piece.kind:
        return piece.text
    parts: list[_Piece] = []
    for version in sorted(piece.children):
        parts = _align(parts, piece.children[version], version)
    groups: list[tuple[list[Text], set[int]]] = []
    for part in parts:
        rendered = _render_piece(part, versions)
        if groups and groups[-1][1] == part.versions:
            groups[-1][0].append(rendered)
        else:
            groups.append(([rendered], part.versions))
    body: list[Text] = []
    for texts, these in groups:
        inner = _join(texts)
        if these == piece.versions:
            body.append(inner)
            continue
        indent = _indent_of(_first_code_line(inner.text))
        condition = condition_text(these, versions)
        if piece.kind == "block":
            body.append(Text(f"{indent}if {condition}:\n") + inner.indented("    "))
            continue
        opening, closing = _BRACKETS[piece.kind]
        star = "**" if piece.kind == "dict" else "*"
        body.append(
            Text(f"{indent}{star}(\n{indent}    {opening}\n")
            + inner.indented("        ")
            + Text(f"{indent}    {closing}\n{indent}    if {condition}\n")
            + Text(f"{indent}    else {opening}{closing}\n{indent}),\n")
        )
    return piece.text + _join(body) + piece.tail


def _first_code_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line
    return ""


def _indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def condition_text(these: set[int], versions: tuple[int, ...]) -> str:
    """The shortest test of `_VERSION` that holds for exactly `these` of `versions`."""
    chosen = [v for v in versions if v in these]
    if len(chosen) == 1:
        return f"{VERSION_NAME} == {chosen[0]}"
    first, last = versions.index(chosen[0]), versions.index(chosen[-1])
    if versions[first : last + 1] == tuple(chosen):
        if first == 0:
            return f"{VERSION_NAME} <= {chosen[-1]}"
        if last == len(versions) - 1:
            return f"{VERSION_NAME} >= {chosen[0]}"
        return f"{chosen[0]} <= {VERSION_NAME} <= {chosen[-1]}"
    return f"{VERSION_NAME} in ({', '.join(map(str, chosen))})"


# ---------------------------------------------------------------- reading a merged module


class Reader:
    """A merged module read back, one version at a time (`project`)."""

    def __init__(self, text: str, skip: int) -> None:
        tree = ast.parse(text)
        self.lines = text.splitlines(keepends=True)
        self.inside = continuation_lines(tree)
        self.start = (tree.body[skip - 1].end_lineno or 0) if skip else 0

    def project(self, version: int) -> str:
        """The module `version` sees, as its minor's render wrote it."""
        numbered = list(enumerate(self.lines[self.start :], self.start + 1))
        kept = self._kept(numbered, version)
        return self._restore_doc(kept)

    def _kept(self, numbered: list[tuple[int, str]], version: int) -> list[str]:
        out: list[str] = []
        i = 0
        while i < len(numbered):
            number, line = numbered[i]
            if number in self.inside:
                out.append(line)
                i += 1
            elif _is_gate(line):
                indent = _indent_of(line)
                end = self._block_end(numbered, i + 1, len(indent))
                if _holds(line.strip()[len("if ") : -1], version):
                    out += self._kept(self._dedent(numbered[i + 1 : end], "    "), version)
                i = end
            elif line.strip() in ("**(", "*("):
                i = self._table_group(numbered, i, version, out)
            else:
                out.append(line)
                i += 1
        return out

    def _block_end(self, numbered: list[tuple[int, str]], first: int, indent: int) -> int:
        """The index after a gated block's last line: before the next line of code
        indented no deeper than its gate, less the blank lines before it."""
        end = first
        for i in range(first, len(numbered)):
            number, line = numbered[i]
            if number not in self.inside and line.strip() and len(_indent_of(line)) <= indent:
                break
            if line.strip():
                end = i + 1
        return end

    def _table_group(
        self, numbered: list[tuple[int, str]], i: int, version: int, out: list[str]
    ) -> int:
        indent = _indent_of(numbered[i][1])
        closers = {f"{indent}    {c}\n" for _, c in _BRACKETS.values()}
        j = i + 2
        while j + 1 < len(numbered) and not (
            numbered[j][0] not in self.inside
            and numbered[j][1] in closers
            and numbered[j + 1][1].startswith(f"{indent}    if ")
        ):
            j += 1
        if j + 3 >= len(numbered):
            raise MergeError("a gated group of table entries is not closed")
        condition = numbered[j + 1][1].strip()[len("if ") :]
        if _holds(condition, version):
            out += self._kept(self._dedent(numbered[i + 2 : j], "        "), version)
        return j + 4  # past the closing bracket, `if`, `else` and `),` lines

    def _dedent(self, block: list[tuple[int, str]], prefix: str) -> list[tuple[int, str]]:
        out = []
        for number, line in block:
            if number in self.inside or not line.strip():
                out.append((number, line))
            elif line.startswith(prefix):
                out.append((number, line[len(prefix) :]))
            else:
                raise MergeError(f"line {number}: a gated line is not indented: {line!r}")
        return out

    @staticmethod
    def _restore_doc(kept: list[str]) -> str:
        """The view's `__doc__ = ...` as the module docstring, the future import after
        it: the minor's module opens so."""
        at = next((i for i, line in enumerate(kept) if line.startswith(_DOC)), None)
        if at is None:
            raise MergeError("a merged module's view has no __doc__")
        line = kept[at]
        head = "".join(kept[:at]) + line[len(_DOC) :]
        rest = "".join(kept[at + 1 :])
        end = _docstring_end(head + rest)
        if end is None:
            raise MergeError("a merged module's view does not open with its docstring")
        lines = (head + rest).splitlines(keepends=True)
        return "".join(lines[:end]) + FUTURE_PIECE + "".join(lines[end:])


def _docstring_end(text: str) -> int | None:
    """The last line (1-based) of the docstring `text` opens with, or None where it opens
    with anything else. Tokenized only as far as the docstring: parsing the whole module
    for its first statement was a tenth of a regeneration."""
    end = None
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if end is None and token.type in (tokenize.COMMENT, tokenize.NL):
                continue
            if token.type == tokenize.STRING:
                end = token.end[0]
                continue
            if end is not None and token.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
                return end
            return None
    except tokenize.TokenError:
        return None
    return end


def _is_gate(line: str) -> bool:
    code = line.lstrip()
    return code.startswith("if ") and code.endswith(":\n") and bool(_NAMES_VERSION.search(code))


@functools.lru_cache(maxsize=4096)  # a major's few gates, read once per version and line
def _holds(condition: str, version: int) -> bool:
    """A gate written by condition_text (only its forms), evaluated for `version`."""
    expr = ast.parse(condition, mode="eval").body
    if not isinstance(expr, ast.Compare):
        raise MergeError(f"not a version gate: {condition}")
    if len(expr.ops) == 1 and isinstance(expr.ops[0], ast.In):
        container = expr.comparators[0]
        if not _is_version(expr.left) or not isinstance(container, ast.Tuple):
            raise MergeError(f"not a version gate: {condition}")
        return version in [_number(e) for e in container.elts]
    values = [version if _is_version(v) else _number(v) for v in [expr.left, *expr.comparators]]
    ok = True
    for op, a, b in zip(expr.ops, values, values[1:], strict=False):
        if isinstance(op, ast.Eq):
            ok = ok and a == b
        elif isinstance(op, ast.LtE):
            ok = ok and a <= b
        elif isinstance(op, ast.GtE):
            ok = ok and a >= b
        else:
            raise MergeError(f"not a version gate: {condition}")
    return ok


def _is_version(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == VERSION_NAME


def _number(node: ast.expr) -> int:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    raise MergeError(f"not a version number: {ast.dump(node)}")
