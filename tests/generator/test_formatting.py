"""generator/formatting.py formats a module piece by piece (cut before each top-level
definition) so pieces shared across versions are formatted once; the result must be
byte for byte what black makes of the whole file."""

from __future__ import annotations

import black
import pytest

from generator import formatting
from generator.formatting import BLACK_MODE, format_python, split_top_level

TRICKY = '''\
"""Module docstring.
def not_a_definition(): a line of a string at column 0
@not_a_decorator
"""
import os
x = {
'class': 1,
}
# a comment that belongs to f
def f( a,b ):
    def nested(): return 1
    return nested()
y=1

# a comment separated from g by a blank line

@staticmethod
@property
class C( object ):
    z = """
def inside_a_string(): pass
"""
    def method(self): pass
if os.name:
    def g(): pass
else:
    class D: pass
async def h(): pass
TABLE = [
    1,
]
'''


def test_pieces_start_at_top_level_definitions():
    pieces = split_top_level(TRICKY)
    firsts = [piece.splitlines()[0] for piece in pieces]
    assert firsts == [
        '"""Module docstring.',
        "# a comment that belongs to f",
        "@staticmethod",
        "async def h(): pass",
    ]
    assert "".join(pieces) == TRICKY


@pytest.fixture
def empty_cache(tmp_path, monkeypatch):
    """A cold format cache, and only that: the headers (and their models) stay the run's,
    not fetched and parsed again into a new $CUDART_BINDGEN_CACHE."""
    monkeypatch.setattr(formatting, "cache_root", lambda: tmp_path)
    monkeypatch.delenv(formatting.CACHE_ENV, raising=False)
    return tmp_path


def test_pieces_format_as_the_whole_file_does(empty_cache):
    expected = black.format_str(TRICKY, mode=BLACK_MODE)
    assert format_python(TRICKY) == expected
    entries = list((empty_cache / "black").rglob("*.py"))
    assert len(entries) == 4 + 1  # each piece, and the whole result
    assert format_python(TRICKY) == expected  # from the cache


def test_a_real_module_formats_as_the_whole_file_does(empty_cache, manifest, header_sets):
    """Every module of one version, from a cold cache: the pieces joined are what black
    makes of the whole text (all 15 versions were compared when this was written)."""
    import generator.render.checked as render_checked
    import generator.render.raw as render_raw
    from generator.generate import render_version

    sources: list[str] = []

    def capture(source: str) -> str:
        sources.append(source)
        return format_python(source)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(render_raw, "format_python", capture)
        patch.setattr(render_checked, "format_python", capture)
        rendered = render_version(manifest, "12.5", lambda _message: None)
    # Raw and checked of each surface: the runtime's (large), then NVRTC's, nvJitLink's
    # and the driver's.
    surfaces = manifest.majors["12"].surfaces
    assert surfaces == ("runtime", "nvrtc", "nvjitlink", "driver")
    assert len(sources) == 2 * len(surfaces)
    assert all(len(split_top_level(source)) > 100 for source in sources[:2])
    python = [text for name, text in rendered.files.items() if name.endswith(".py")]
    assert sorted(black.format_str(s, mode=BLACK_MODE) for s in sources) == sorted(python)
