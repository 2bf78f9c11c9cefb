"""black, applied per top-level definition, with each result remembered by content.

black takes three quarters of the time to make a version (about 5 of 7 s), and the 15
versions' modules repeat each other: most functions, records and enums read the same
in every version. So a module is cut before each top-level `def`, `class` or decorator
(with the comment lines right above it), each piece is formatted on its own, and the
pieces are joined with the two blank lines black puts before a top-level definition.
A piece is formatted once and kept in the cache under the sha256 of (black's version,
the mode, its text): any change to the headers, the parser, the templates or black
changes the key, so a stale entry is never served, and a piece shared by 15 versions is
formatted once. The whole module's result is kept too, so an unchanged module is one
read. The result is byte for byte what black makes of the whole file; the tests hold
that (tests/generator/test_formatting.py), and `CUDART_BINDGEN_FORMAT_CACHE=0` formats the whole
file in one piece, uncached.
"""

from __future__ import annotations

import hashlib
import io
import os
import tokenize
from pathlib import Path

import black

from .fetch import cache_root
from .files import write_atomically

BLACK_MODE = black.Mode(target_versions={black.TargetVersion.PY311}, line_length=100)
CACHE_ENV = "CUDART_BINDGEN_FORMAT_CACHE"
# What black puts between a top-level statement and the next top-level definition.
_BEFORE_DEFINITION = "\n\n"


def format_python(source: str) -> str:
    """black.format_str(source) in our mode."""
    if os.environ.get(CACHE_ENV, "1") == "0":
        return black.format_str(source, mode=BLACK_MODE)
    # The whole text first: an unchanged module needs neither tokenizing nor pieces.
    whole = _cache_path(source)
    cached = _read(whole)
    if cached is not None:
        return cached
    pieces = [_format_piece(piece) for piece in split_top_level(source)]
    formatted = _BEFORE_DEFINITION.join(piece for piece in pieces if piece)
    _store(whole, formatted)
    return formatted


def split_top_level(source: str) -> list[str]:
    """The source cut before each top-level definition: a `def`, `class` or decorator at
    column 0 (a decorated definition stays whole), together with the comment lines right
    above it, which black keeps attached to it."""
    lines = source.splitlines(keepends=True)
    cuts = [0]
    for line_no in _definition_starts(source):
        start = line_no - 1
        while start > 0 and lines[start - 1].startswith("#"):
            start -= 1
        if start > cuts[-1]:
            cuts.append(start)
    cuts.append(len(lines))
    return ["".join(lines[a:b]) for a, b in zip(cuts, cuts[1:], strict=False)]


def _definition_starts(source: str) -> list[int]:
    """1-based line numbers where a top-level definition starts, found by the tokenizer
    (so a line inside a string or a bracket never counts)."""
    starts = []
    depth = 0  # indentation
    nesting = 0  # brackets
    at_line_start = True
    previous_was_decorator = False
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        kind, text = token.type, token.string
        if kind == tokenize.INDENT:
            depth += 1
            continue
        if kind == tokenize.DEDENT:
            depth -= 1
            continue
        if kind in (tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT):
            at_line_start = kind != tokenize.COMMENT or at_line_start
            continue
        if at_line_start and depth == 0 and nesting == 0:
            is_definition = (kind == tokenize.NAME and text in ("def", "class", "async")) or (
                kind == tokenize.OP and text == "@"
            )
            if is_definition and not previous_was_decorator:
                starts.append(token.start[0])
            previous_was_decorator = kind == tokenize.OP and text == "@"
        if kind == tokenize.OP and text in "([{":
            nesting += 1
        elif kind == tokenize.OP and text in ")]}":
            nesting -= 1
        at_line_start = False
    return starts


def _format_piece(piece: str) -> str:
    if not piece.strip():
        return ""
    path = _cache_path(piece)
    cached = _read(path)
    if cached is not None:
        return cached
    formatted = black.format_str(piece, mode=BLACK_MODE)
    _store(path, formatted)
    return formatted


def _cache_path(text: str) -> Path:
    key = hashlib.sha256(
        f"black {black.__version__}\0{BLACK_MODE!r}\0".encode() + text.encode()
    ).hexdigest()
    return cache_root() / "black" / key[:2] / f"{key}.py"


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return None


def _store(path: Path, text: str) -> None:
    # Atomically: a second process formatting the same text sees no torn entry.
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, text)
    except OSError:
        pass  # an unwritable cache only costs time
