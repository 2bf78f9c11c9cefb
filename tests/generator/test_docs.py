"""The API reference (generator/render/docs.py): rendered from every version's model, it
documents every checked function of every version with an availability line that the
models bear out, links only what it documents, and lists each pair of consecutive
versions' differences. `make docs` (CI) builds the whole site with warnings as errors;
these tests render the reference's text for the runtime (and NVRTC) families, and one
builds a small site for the headless search check where Chromium is installed.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from itertools import pairwise

import pytest
from models import models_for
from suite import REPO, quiet

from generator.docs import write_reference
from generator.doxygen import parse_comment
from generator.fetch import fetch_version
from generator.generate import surface_context
from generator.render import rst
from generator.render.docs import (
    CHANGES_PAGE,
    FOLDER,
    availability,
    family_reference,
    render_reference,
)

RUNTIME = "runtime"
_FUNCTION = re.compile(r"^\.\. py:function:: (\w+)\(", re.M)
_CLASS = re.compile(r"^\.\. py:class:: (\w+)$", re.M)
_MODULE = re.compile(r"^\.\. py:currentmodule:: (\S+)$", re.M)
_LINK = re.compile(r":py:(func|obj):`~([\w.]+)`")


def _reference(manifest, surface: str, models: dict):
    return family_reference(
        surface, {key: surface_context(manifest, key, surface, m) for key, m in models.items()}
    )


@pytest.fixture(scope="module")
def runtime(manifest, models):
    return _reference(manifest, RUNTIME, models)


@pytest.fixture(scope="module")
def nvrtc_models(manifest):
    sets = {key: fetch_version(manifest, key, quiet, "nvrtc") for key in manifest.keys()}
    return models_for(sets)


@pytest.fixture(scope="module")
def pages(manifest, runtime, nvrtc_models):
    """The reference of two families: the runtime's and NVRTC's, by the same code."""
    return render_reference([runtime, _reference(manifest, "nvrtc", nvrtc_models)])


def _entries(pages: dict[str, str], surface: str) -> dict[str, str]:
    """Function name -> its entry's text, over the family's function pages."""
    out: dict[str, str] = {}
    for path, text in pages.items():
        if not path.startswith(f"{FOLDER}/{surface}/functions"):
            continue
        starts = list(_FUNCTION.finditer(text))
        for m, end in zip(starts, [*(s.start() for s in starts[1:]), len(text)], strict=True):
            assert m.group(1) not in out, f"{m.group(1)} documented twice"
            out[m.group(1)] = text[m.start() : end]
    return out


def _availability(entry: str) -> str:
    line = next((ln for ln in entry.splitlines() if "**Availability:**" in ln), None)
    assert line is not None, entry
    return line.split("**Availability:**", 1)[1].strip()


def test_every_checked_function_of_every_version_has_an_entry_with_its_availability(
    manifest, plans, pages
):
    names = {key: {p.name for p in plans[key]} for key in manifest.keys()}
    _assert_entries_with_availability(manifest.keys(), names, _entries(pages, RUNTIME))


@pytest.mark.parametrize("surface", ["driver", "nvjitlink"])
def test_every_family_is_covered_by_the_same_code(manifest, surface):
    """The families added after the reference (cuda.h, nvJitLink.h): no code of their own,
    every checked function of every version with its availability line."""
    from generator.resolve import resolve

    sets = {key: fetch_version(manifest, key, quiet, surface) for key in manifest.keys()}
    models = models_for(sets)
    pages = render_reference([_reference(manifest, surface, models)])
    names = {key: {p.name for p in resolve(m)} for key, m in models.items()}
    _assert_entries_with_availability(manifest.keys(), names, _entries(pages, surface))


def _assert_entries_with_availability(keys, names: dict, entries: dict[str, str]) -> None:
    assert entries and set(entries) == set().union(*names.values())
    for name, entry in entries.items():
        present = [k for k in keys if name in names[k]]
        line = _availability(entry)
        first, last = keys.index(present[0]), keys.index(present[-1])
        assert ("added in " + present[0] in line) == (first > 0), (name, line)
        if last + 1 < len(keys):
            assert f"removed in {keys[last + 1]}" in line, (name, line)
        else:
            assert "removed in" not in line, (name, line)


def test_nvrtc_is_rendered_by_the_same_code(manifest, pages, nvrtc_models):
    from generator.resolve import resolve

    names = set().union(*({p.name for p in resolve(m)} for m in nvrtc_models.values()))
    assert names and set(_entries(pages, "nvrtc")) == names
    assert f"{FOLDER}/nvrtc/index.rst" in pages and f"{FOLDER}/nvrtc/enums.rst" in pages


def _has(models, key: str, name: str) -> bool:
    return any(f.name == name for f in models[key].functions)


def test_availability_says_when_a_function_came_and_went(manifest, models, pages):
    # The facts, from the models first.
    assert not _has(models, "12.2", "cudaGraphConditionalHandleCreate")
    assert all(
        _has(models, k, "cudaGraphConditionalHandleCreate")
        for k in manifest.keys()[manifest.keys().index("12.3") :]
    )
    assert _has(models, "12.9", "cudaThreadSynchronize")
    assert not _has(models, "13.0", "cudaThreadSynchronize")
    entries = _entries(pages, RUNTIME)
    created = _availability(entries["cudaGraphConditionalHandleCreate"])
    assert "added in 12.3" in created and "removed" not in created
    assert "removed in 13.0" in _availability(entries["cudaThreadSynchronize"])
    assert "added in" not in _availability(entries["cudaThreadSynchronize"])


def _pair(pages: dict[str, str], title: str, old: str, new: str) -> str:
    """The changes page's section of one family's pair of versions."""
    text = pages[f"{FOLDER}/{CHANGES_PAGE}.rst"]
    head = f"{title}: {old} → {new}\n"
    start = text.index(head)
    following = re.search(r"^.*: [\d.]+ → [\d.]+\n\^+$", text[start + len(head) :], re.M)
    return text[start : start + len(head) + following.start()] if following else text[start:]


def _listed(section: str, what: str) -> str:
    line = next((ln for ln in section.splitlines() if ln.startswith(f"**{what}**")), "")
    return line


def test_the_changes_page_lists_added_removed_and_changed(models, pages, runtime):
    added = _listed(_pair(pages, runtime.title, "12.2", "12.3"), "Functions added")
    assert "cudart.cudaGraphConditionalHandleCreate`" in added
    removed = _listed(_pair(pages, runtime.title, "12.9", "13.0"), "Functions removed")
    assert "cudart.cudaThreadSynchronize`" in removed
    # A record whose size the models say changed between two consecutive versions is
    # among that pair's changed layouts.
    keys = list(models)
    moved = [
        (a, b, r.name, old.size, r.size)
        for a, b in pairwise(keys)
        for r in models[b].records
        if not r.opaque
        for old in [models[a].by_name("records").get(r.name)]
        if old is not None and not old.opaque and old.size != r.size
    ]
    assert moved, "no record changed size across the pinned versions"
    for a, b, name, old_size, new_size in moved:
        section = _pair(pages, runtime.title, a, b)
        line = rf"^\* :py:obj:`~cudart\.{name}`: size {old_size} → {new_size} bytes"
        assert re.search(line, section, re.M), (a, b, name)


def test_links_resolve_to_documented_names(pages):
    documented = set()
    for text in pages.values():
        module = _MODULE.search(text)
        if module:
            names = _FUNCTION.findall(text) + _CLASS.findall(text)
            documented |= {f"{module.group(1)}.{n}" for n in names}
    links = [(path, m.group(2)) for path, text in pages.items() for m in _LINK.finditer(text)]
    assert len(links) > 1000
    assert [(p, t) for p, t in links if t not in documented] == []
    # A \sa name of another family, not rendered here, is a literal, not a link.
    device_sync = _entries(pages, RUNTIME)["cudaDeviceSynchronize"]
    assert "``cuCtxSynchronize``" in device_sync
    assert ":py:func:`~cudart.cudaDeviceReset`" in device_sync


# ------------------------------------------------- the headers' HTML as reStructuredText

# A tag of the headers' HTML subset, as text() would have escaped it.
_ESCAPED_TAG = re.compile(r"\\</?(?:table|tr|th|td|ul|li|b|i|tt|small|br)\\>", re.I)


def test_no_page_shows_a_header_tag_as_text(pages):
    shown = sorted({m.group(0) for t in pages.values() for m in _ESCAPED_TAG.finditer(t)})
    assert not shown, shown


def test_the_allowed_changes_table_is_a_list_table(pages):
    # cudaGraphExecNodeSetParams' "<table> <tr><th>Node type<th>Allowed changes ...".
    entry = _entries(pages, RUNTIME)["cudaGraphExecNodeSetParams"]
    table = entry[entry.index(".. list-table::") :]
    assert table.startswith(".. list-table::\n      :header-rows: 1\n\n      * - Node type\n")
    assert "      * - kernel\n        - See cudaGraphExecKernelNodeSetParams\n" in table


def test_inline_tags_become_markup_and_other_angles_stay_text():
    assert rst.text("from <tt>args[0]</tt> to <b>N</b>.") == "from ``args[0]`` to **N**."
    assert rst.text("a<i>b</i>c") == "a\\ *b*\\ c"  # markup inside a word: escaped spaces
    assert rst.text("<major number> and <reinterpret_cast>") == (
        "\\<major number\\> and \\<reinterpret\\_cast\\>"
    )
    assert rst.text("one<br>two <small>three</small>") == "one two three"


def test_a_table_with_ragged_rows_and_no_header():
    got = rst.blocks("Before <table><tr><td>a<td>b</tr><tr><td>c</table> after")
    assert got == ("Before\n\n.. list-table::\n\n   * - a\n     - b\n   * - c\n     -\n\nafter")
    assert rst.blocks("L: <ul><li>x</li><li><b>y</b></ul>") == "L\\:\n\n* x\n* **y**"


@pytest.mark.parametrize("surface", ["runtime", "driver"])
def test_every_paragraph_with_tags_is_valid_restructuredtext(manifest, surface):
    """docutils parses each header paragraph that holds a tag, as blocks() renders it,
    with no warning: markup that does not close, a table whose rows differ, a bullet
    list that runs into text."""
    import docutils.core
    import docutils.utils

    sets = {key: fetch_version(manifest, key, quiet, surface) for key in ("12.0", "13.5")}
    paragraphs = {
        p
        for model in models_for(sets).values()
        for f in model.functions
        if f.doc
        for p in f.doc.description
        if "<" in p
    }
    assert len(paragraphs) >= 5
    for paragraph in sorted(paragraphs):
        rendered = rst.blocks(paragraph)
        doctree = docutils.core.publish_doctree(
            rendered,
            settings_overrides={
                "report_level": docutils.utils.Reporter.INFO_LEVEL + 1,
                "halt_level": 5,
                "warning_stream": False,
            },
        )
        problems = [m.asrst.text() for m in doctree.findall(docutils.nodes.system_message)]
        assert not problems, (paragraph, rendered, problems)


def test_see_also_names_come_from_the_header_section():
    doc = parse_comment(
        "/**\n * \\brief Sync\n *\n * \\sa ::cudaDeviceReset,\n"
        ' * \\ref ::cudaFuncSetCacheConfig(const void*, enum cudaFuncCache) "a (C API)",\n'
        " * ::cuCtxSynchronize\n *\n * More text.\n */"
    )
    assert doc.see_also == ("cudaDeviceReset", "cudaFuncSetCacheConfig", "cuCtxSynchronize")
    assert doc.description == ("More text.",)


def test_availability_of_a_shape_over_versions():
    keys = ("12.0", "12.1", "12.2", "12.3")
    a = availability(keys, {"12.1": 1, "12.2": 2}, deprecated=["12.2"])
    assert (a.added, a.changed, a.deprecated, a.removed) == ("12.1", ("12.2",), "12.2", "12.3")
    assert (
        a.line == "12.1 – 12.2; added in 12.1; changed in 12.2; deprecated in 12.2; removed in 12.3"
    )
    whole = availability(keys, dict.fromkeys(keys, 0))
    assert (whole.added, whole.changed, whole.removed) == (None, (), None)


def test_only_changed_pages_are_written_and_stale_ones_go(tmp_path):
    """Sphinx rebuilds what changed: an unchanged page keeps its file (and time)."""
    files = {f"{FOLDER}/index.rst": "a\n", f"{FOLDER}/runtime/enums.rst": "b\n"}
    assert write_reference(files, tmp_path) == 2
    assert write_reference(files, tmp_path) == 0
    (tmp_path / FOLDER / "stale.rst").write_text("gone\n")
    files[f"{FOLDER}/index.rst"] = "c\n"
    assert write_reference(files, tmp_path) == 2
    assert not (tmp_path / FOLDER / "stale.rst").exists()
    assert (tmp_path / FOLDER / "index.rst").read_text() == "c\n"


# ---------------------------------------------------------------- offline search


def _sphinx_available() -> bool:
    try:
        import sphinx  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.skipif(
    shutil.which("chromium") is None,
    reason="Debian's chromium is not installed: the headless search check needs a browser",
)
@pytest.mark.skipif(not _sphinx_available(), reason="Sphinx is not installed (make setup)")
def test_search_finds_a_function_offline(pages, tmp_path):
    """The built site's own search (searchindex.js, in the browser, from file://) finds
    cudaMallocAsync's page. A site of the runtime and NVRTC references, built like
    make docs builds the whole one."""
    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copy(REPO / "docs" / "conf.py", docs / "conf.py")
    (docs / "index.rst").write_text("Site\n====\n\n.. toctree::\n\n   reference/index\n")
    for relative, text in pages.items():
        (docs / relative).parent.mkdir(parents=True, exist_ok=True)
        (docs / relative).write_text(text, encoding="utf-8")
    html = tmp_path / "html"
    subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html", str(docs), str(html)],
        check=True,
    )
    page = next(
        p for p, t in pages.items() if ".. py:function:: cudaMallocAsync(" in t
    ).removesuffix(".rst")
    dom = subprocess.run(
        [
            "chromium",
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--virtual-time-budget=20000",
            "--dump-dom",
            (html / "search.html").as_uri() + "?q=cudaMallocAsync",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    results = re.findall(r'<a[^>]+href="([^"]+)"', dom.split('id="search-results"', 1)[-1])
    assert any(f"{page}.html#" in href for href in results), results[:20]
