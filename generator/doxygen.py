"""The header's Doxygen comments -> FunctionDoc, as plain text.

Only the markup NVIDIA's runtime headers use is understood. Unknown commands are
dropped with the paragraph they open, so a new command costs text, never a wrong
section. parse.py finds the comment; this module only reads it.
"""

from __future__ import annotations

import re

from .model import FunctionDoc, ParamDoc

_INLINE = ("p", "e", "b", "c", "a", "em", "ref", "n")
# `\param *toolsNodeId` (13.x) names the parameter with C's star: the name is the word.
# `\param[out] x` and `\param [out] x` (nvrtc.h spells it with the space) give the
# direction the header declares: "in", "out", "in,out" (group 1).
_PARAM = re.compile(r"\\param\s*(?:\[([a-z, ]+)\])?\s+\*?(\w+)\s*(?:-\s*)?(.*)")
_COMMAND = re.compile(r"\\(\w+)\s*(.*)")


def comment_lines(raw: str) -> list[str]:
    """The text lines of a /** ... */ comment, without the comment's own markup."""
    body = raw.strip()
    if body.startswith(("/**", "/*!")):
        body = body[3:]
    elif body.startswith(("///", "//!")):
        body = "\n".join(line.strip()[3:] for line in body.splitlines())
    if body.endswith("*/"):
        body = body[:-2]
    # `/**< ... */` documents the member it follows (a field or an enumerator).
    body = body.removeprefix("<")
    lines = []
    for line in body.splitlines():
        line = line.strip()
        if line.startswith("*"):
            line = line[1:]
        lines.append(line.strip())
    return lines


def inline_text(text: str) -> str:
    """Inline markup to plain text: \\p x -> x, ::cudaFoo -> cudaFoo, \\ref a "b" -> b."""
    text = re.sub(r'\\ref\s+\S+\s+"([^"]*)"', r"\1", text)
    text = re.sub(r"\\(?:p|e|b|c|a|em|ref)\s+", "", text)
    text = text.replace("\\n", " ")
    text = re.sub(r"::(?=[A-Za-z_])", "", text)
    text = re.sub(r"\\[A-Za-z_]+", "", text)
    return " ".join(text.split())


def summary(raw: str) -> str:
    """A declaration's doc comment as one paragraph of plain text: what a record, enum,
    field or enumerator comment says (brief and description, and any deprecation)."""
    doc = parse_comment(raw)
    text = " ".join(t for t in (doc.brief, *doc.description) if t)
    if doc.deprecated is not None:
        text = " ".join(t for t in (text, "Deprecated.", doc.deprecated) if t)
    return text


def parse_comment(raw: str) -> FunctionDoc:
    brief: list[str] = []
    description: list[list[str]] = []
    params: list[tuple[str, list[str], str | None]] = []
    returns: list[str] = []
    deprecated: list[str] | None = None
    notes: list[list[str]] = []
    see_also: list[str] = []
    section: list[str] | None = None  # where continuation lines go; None: description
    in_code = False
    fresh_paragraph = True
    for line in comment_lines(raw):
        if in_code:
            in_code = not line.startswith("\\endcode")
            continue
        if not line:
            # A blank line ends brief, param and deprecated paragraphs; the \return list
            # ends there too. What follows is description until the next command.
            section = None
            fresh_paragraph = True
            continue
        param = _PARAM.match(line)
        command = _COMMAND.match(line) if not param else None
        if command and command.group(1) in _INLINE:
            command = None  # a line that starts with inline markup is text
        if param or command:
            fresh_paragraph = True
        if param:
            section = [param.group(3)]
            direction = param.group(1)
            params.append((param.group(2), section, direction and direction.replace(" ", "")))
        elif command and command.group(1) == "brief":
            section = brief
            brief.append(command.group(2))
        elif command and command.group(1) in ("return", "returns", "retval"):
            section = returns
            returns.append(command.group(2))
        elif command and command.group(1) == "deprecated":
            deprecated = [command.group(2)]
            section = deprecated
        elif command and command.group(1) == "note":
            section = [command.group(2)]
            notes.append(section)
        elif command and command.group(1) == "sa":
            see_also.append(command.group(2))
            section = see_also
        elif command and command.group(1) == "code":
            in_code = True
            section = None
        elif command:
            section = []  # \sa and unknown block commands: dropped with their paragraph
        elif section is not None:
            section.append(line)
        else:
            if fresh_paragraph:
                description.append([])
            description[-1].append(line)
            fresh_paragraph = False
    return FunctionDoc(
        brief=inline_text(" ".join(brief)),
        description=tuple(t for t in (inline_text(" ".join(p)) for p in description) if t),
        params=tuple(
            ParamDoc(name, inline_text(" ".join(text)), direction)
            for name, text, direction in params
        ),
        returns=inline_text(" ".join(returns)),
        deprecated=None if deprecated is None else inline_text(" ".join(deprecated)),
        notes=tuple(t for t in (inline_text(" ".join(n)) for n in notes) if t),
        see_also=see_also_names(" ".join(see_also)),
    )


# A \ref's argument list and its quoted label: `\ref ::f(const void*, int) "f (C API)"`.
_REF_DECORATION = re.compile(r'\([^)]*\)|"[^"]*"')
# A name as \sa lists it: `::cudaFree`, or a bare C identifier with a capital letter in it
# (`cuMemFree_v2`), not a word of a sentence ("see", "for").
_SEE_ALSO_NAME = re.compile(r"(::)?([A-Za-z_]\w*)")


def see_also_names(text: str) -> tuple[str, ...]:
    """The names a \\sa section lists, each once, in its order."""
    names: list[str] = []
    for qualified, name in _SEE_ALSO_NAME.findall(_REF_DECORATION.sub(" ", text)):
        if name == "ref" or not (qualified or name != name.lower()):
            continue
        if name not in names:
            names.append(name)
    return tuple(names)
