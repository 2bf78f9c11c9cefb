"""Header documentation as reStructuredText.

The headers' doxygen comments are plain text with a small HTML subset in them: inline
<b>, <i>, <em>, <tt>, <code>, <small> and <br>, and blocks of <ul>/<li> and
<table>/<tr>/<th>/<td> (cudaGraphExecNodeSetParams' table of allowed changes,
cuArray3DCreate's valid extents). Escaped as text, those read as markup soup; here the
inline tags become reStructuredText's emphasis, strong and literals, lists bullet lists
and tables list-tables. Only those tag names are tags: `<major number>`, `<reinterpret_cast>`
and `<installpath>` in the same comments are text. Everything else is escaped: no header
text is ever read as markup.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_SPECIAL = re.compile(r"([\\`*_|:\[\]<>])")
# What would open a block at a paragraph's start: a bullet, an enumerator ("1.", "A)",
# "(a)"), a comment or directive, a section adornment.
_BLOCK_START = re.compile(r"^(?:\W|\w{1,3}[.)](?:\s|$))")
_TAG = re.compile(r"<(/?)(table|tr|th|td|ul|li|b|strong|i|em|tt|code|small|br)\s*/?>", re.I)
# The inline tags, by the markup they become (None: the text stays plain).
_INLINE = {
    "b": "strong",
    "strong": "strong",
    "i": "emphasis",
    "em": "emphasis",
    "tt": "literal",
    "code": "literal",
    "small": None,
}
# What may stand right before inline markup's start, and right after its end, without an
# escaped space (the reStructuredText spec's inline markup recognition rules).
_OPENS = frozenset(" \t\n-:/'\"<([{")
_CLOSES = frozenset(" \t\n-.,:;!?\\/'\")]}>")
_MARKUP = {"strong": "**{}**", "emphasis": "*{}*", "literal": "``{}``"}
_BLOCK = re.compile(r"<(table|ul)\s*>(.*?)(?:</\1\s*>|$)", re.I | re.S)


def _escaped(value: str) -> str:
    return _SPECIAL.sub(r"\\\1", value)


def _spans(value: str) -> Iterator[tuple[str | None, str]]:
    """(markup, text) runs of an inline fragment: the outermost inline tag's markup
    (reStructuredText does not nest it), <br> and block tags as spaces."""
    styles: list[str | None] = []
    at = 0
    for m in _TAG.finditer(value):
        yield (styles[0] if styles else None), value[at : m.start()]
        at = m.end()
        closing, name = m.group(1), m.group(2).lower()
        if name not in _INLINE:
            yield (styles[0] if styles else None), " "
        elif closing:
            if styles:
                styles.pop()
        else:
            styles.append(_INLINE[name])
    yield (styles[0] if styles else None), value[at:]


def text(value: str) -> str:
    """Header text as one inline reStructuredText paragraph: its inline tags as markup,
    everything else escaped (a block tag reads as a space)."""
    runs: list[tuple[str | None, str]] = []
    for style, part in _spans(value):
        part = re.sub(r"\s+", " ", part)
        if runs and runs[-1][0] == style:
            runs[-1] = (style, runs[-1][1] + part)
        elif part:
            runs.append((style, part))
    out = ""
    for i, (style, part) in enumerate(runs):
        inner = part.strip()
        if style is None or not inner or (style == "literal" and "``" in inner):
            out += _escaped(part)
            continue
        lead, trail = part[: len(part) - len(part.lstrip())], part[len(part.rstrip()) :]
        body = _MARKUP[style].format(inner if style == "literal" else _escaped(inner))
        # Markup must stand apart from the words around it: an escaped space joins them.
        before = "\\ " if not lead and out and out[-1] not in _OPENS else lead
        following = runs[i + 1][1] if i + 1 < len(runs) else ""
        after = "\\ " if not trail and following and following[0] not in _CLOSES else trail
        out += before + body + after
    out = " ".join(out.split())
    # Markup made here opens no block; escaped text that starts like one ("1. ", "- ") does.
    plain = not runs or runs[0][0] is None or not runs[0][1].strip()
    return "\\" + out if plain and _BLOCK_START.match(out) and out[0] != "\\" else out


def blocks(value: str) -> str:
    """A header paragraph as reStructuredText blocks: its text as paragraphs, its <ul>
    as a bullet list, its <table> as a list-table (the template indents them)."""
    out: list[str] = []
    at = 0
    for m in _BLOCK.finditer(value):
        out.append(text(value[at : m.start()]))
        kind, body = m.group(1).lower(), m.group(2)
        out.append(_table(body) if kind == "table" else _bullets(body))
        at = m.end()
    out.append(text(value[at:]))
    return "\n\n".join(block for block in out if block)


def _items(body: str, tag: str) -> list[str]:
    """The contents of each <tag> of `body` (closing tags optional, as in HTML)."""
    parts = re.split(rf"<{tag}\s*>", body, flags=re.I)[1:]
    return [re.sub(rf"</{tag}\s*>", "", p, flags=re.I) for p in parts]


def _bullets(body: str) -> str:
    return "\n".join(f"* {text(item)}" for item in _items(body, "li") if text(item))


def _table(body: str) -> str:
    rows: list[tuple[bool, list[str]]] = []
    for row in _items(body, "tr"):
        cells = re.split(r"<(t[hd])\s*>", row, flags=re.I)[1:]
        kinds, contents = cells[0::2], [
            re.sub(r"</t[hd]\s*>", "", c, flags=re.I) for c in cells[1::2]
        ]
        if contents:
            rows.append((all(k.lower() == "th" for k in kinds), [text(c) for c in contents]))
    if not rows:
        return ""
    width = max(len(cells) for _, cells in rows)
    header = next((i for i, (head, _) in enumerate(rows) if not head), len(rows))
    lines = [".. list-table::"] + ([f"   :header-rows: {header}"] if header else []) + [""]
    for _, cells in rows:
        cells = cells + [""] * (width - len(cells))
        lines += [f"   {'*' if j == 0 else ' '} - {cell}".rstrip() for j, cell in enumerate(cells)]
    return "\n".join(lines)
