"""cudart.kernels._demangle: the demangler against c++filt, and finding C++ kernels by the
name their source gives them (no GPU: the names come from the committed images)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from kernel_support import module_of

from cudart.errors import NameNotFoundError
from cudart.kernels._demangle import (
    AmbiguousKernelNameError,
    demangle,
    normalize,
    resolve_kernel_name,
    unknown_kernel,
)
from cudart.kernels._images import inspect_image

HERE = Path(__file__).resolve().parents[1]
KERNELS = HERE / "kernels"
CORPUS = HERE / "demangle" / "corpus.cpp"
# Corpus names outside the subset (arrays, function pointers): None, never wrong text.
OUTSIDE = {"_Z3arrPA4_i", "_Z5fnptrPFviE"}


def _corpus_symbols(tmp_path):
    missing = [tool for tool in ("g++", "nm", "c++filt") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"the live comparison needs {', '.join(missing)} (binutils, g++)")
    obj = tmp_path / "corpus.o"
    subprocess.run(["g++", "-std=c++17", "-c", str(CORPUS), "-o", str(obj)], check=True)
    out = subprocess.run(
        ["nm", "--defined-only", str(obj)], check=True, capture_output=True, text=True
    ).stdout
    symbols = sorted({f[2] for f in map(str.split, out.splitlines()) if len(f) == 3})
    symbols = [s for s in symbols if s.startswith("_Z")]
    filtered = subprocess.run(
        ["c++filt"], input="\n".join(symbols) + "\n", check=True, capture_output=True, text=True
    ).stdout.splitlines()
    return dict(zip(symbols, filtered, strict=True))


def test_agrees_with_cxxfilt(tmp_path):
    expected = _corpus_symbols(tmp_path)
    assert len(expected) >= 50
    wrong = {}
    for mangled, text in expected.items():
        got = demangle(mangled)
        if mangled in OUTSIDE:
            assert got is None, mangled
        elif got != text:
            wrong[mangled] = (got, text)
    assert not wrong
    assert len(expected) - len(OUTSIDE) >= 50


def test_kernel_images_demangle_as_cxxfilt_does():
    names = inspect_image((KERNELS / "cxx_kernels.cubin").read_bytes()).functions
    assert names is not None
    mangled = [n for n in names if n.startswith("_Z")]
    if shutil.which("c++filt") is None:
        pytest.skip("c++filt (binutils) is not installed")
    out = subprocess.run(
        ["c++filt"], input="\n".join(mangled) + "\n", check=True, capture_output=True, text=True
    ).stdout.splitlines()
    assert [demangle(n) for n in mangled] == out


@pytest.mark.parametrize(
    "mangled, text",
    [
        ("_Z6squarePfi", "square(float*, int)"),
        ("_Z5scalePKfPffi", "scale(float const*, float*, float, int)"),
        ("_ZN3ops5shiftEPii", "ops::shift(int*, int)"),
        ("_ZN3ops4fillIiEEvPT_S1_i", "void ops::fill<int>(int*, int, int)"),
        ("_Z5timesILi3EEvPi", "void times<3>(int*)"),
        ("_Z5timesILin3EEvPi", "void times<-3>(int*)"),
        ("_Z1fv", "f()"),
        ("_ZN12_GLOBAL__N_14anonEPi", "(anonymous namespace)::anon(int*)"),
        ("_Z1fIJifEEvDpT_", "void f<int, float>(int, float)"),
        ("_Z1f3VecIS_IiEE", "f(Vec<Vec<int> >)"),
        ("_ZN2ns3varE", "ns::var"),
    ],
)
def test_known_names(mangled, text):
    assert demangle(mangled) == text


@pytest.mark.parametrize(
    "name",
    [
        "axpy",  # not mangled
        "_Z",
        "_Z6squ",  # truncated
        "_Z6squarePfiX",  # trailing junk
        "_Z1fPFviE",  # function pointer
        "_Z1fPA4_i",  # array
        "_ZNK1S1fEv",  # const member function
        "_Z1fS_",  # substitution past the table
        "_Z1fT_",  # template parameter outside a template
        "_Z1fILf3f800000EEvv",  # float literal
        "_Z1fSsi",  # std::string: outside the subset
    ],
)
def test_outside_the_subset_is_none(name):
    assert demangle(name) is None


def test_normalize():
    assert normalize("square( float * , int )") == "square(float*,int)"
    assert normalize("f(unsigned  int, const float *)") == "f(unsigned int,const float*)"
    assert normalize("Vec<Vec<int> >") == normalize("Vec<Vec<int>>")


@pytest.fixture(params=["cxx_kernels.fatbin", "cxx_kernels.cubin", "cxx_kernels.ptx"])
def names(request):
    found = inspect_image((KERNELS / request.param).read_bytes()).functions
    assert found is not None
    return found


@pytest.mark.parametrize(
    "request_, mangled",
    [
        ("_Z6squarePfi", "_Z6squarePfi"),
        ("plain", "plain"),
        ("square(float*, int)", "_Z6squarePfi"),
        ("square(double *,int)", "_Z6squarePdi"),
        ("scale", "_Z5scalePKfPffi"),
        ("scale(const float*, float*, float, int)", "_Z5scalePKfPffi"),
        ("scale(float const *, float*, float, int)", "_Z5scalePKfPffi"),
        ("ops::shift", "_ZN3ops5shiftEPii"),
        ("shift", "_ZN3ops5shiftEPii"),
        ("shift(int*, int)", "_ZN3ops5shiftEPii"),
        ("ops::fill<int>", "_ZN3ops4fillIiEEvPT_S1_i"),
        ("fill<float>", "_ZN3ops4fillIfEEvPT_S1_i"),
        ("ops::fill<float>(float*, float, int)", "_ZN3ops4fillIfEEvPT_S1_i"),
        ("void ops::fill<int>(int*, int, int)", "_ZN3ops4fillIiEEvPT_S1_i"),
        ("times<2>", "_Z5timesILi2EEvPi"),
        ("void times<3>(int*)", "_Z5timesILi3EEvPi"),
    ],
)
def test_resolves_source_names(names, request_, mangled):
    assert resolve_kernel_name(request_, names) == mangled


@pytest.mark.parametrize(
    "request_, listed",
    [
        (
            "square",
            ["'square(double*, int)' (_Z6squarePdi)", "'square(float*, int)' (_Z6squarePfi)"],
        ),
        ("ops::fill", ["'void ops::fill<float>(float*, float, int)'", "_ZN3ops4fillIiEEvPT_S1_i"]),
        ("fill", ["'void ops::fill<int>(int*, int, int)'", "_ZN3ops4fillIfEEvPT_S1_i"]),
        ("times", ["'void times<2>(int*)' (_Z5timesILi2EEvPi)", "_Z5timesILi3EEvPi"]),
    ],
)
def test_ambiguous_names_list_the_overloads(names, request_, listed):
    with pytest.raises(AmbiguousKernelNameError) as err:
        resolve_kernel_name(request_, names)
    message = str(err.value)
    for item in listed:
        assert item in message
    assert "mangled name or its signature" in message
    assert isinstance(err.value, NameNotFoundError)  # caught as before


def test_unknown_names_list_the_kernels(names):
    for wrong in ("nope", "square(int*, int)", "ops::nope", "other::shift"):
        with pytest.raises(NameNotFoundError) as err:
            resolve_kernel_name(wrong, names)
        assert not isinstance(err.value, AmbiguousKernelNameError)
        message = str(err.value)
        assert f"no kernel {wrong!r} in the image; it has: " in message
        assert "'square(float*, int)' (_Z6squarePfi)" in message
        assert "'plain'" in message


def test_both_routes_say_the_same():
    # The registration route's loader and the library route's use this one message.
    message = str(unknown_kernel("x", ["b", "_Z1av"]))
    assert message == "no kernel 'x' in the image; it has: 'a()' (_Z1av), 'b'"
    assert str(unknown_kernel("x", [])) == "no kernel 'x' in the image; it has: no kernels"


def test_exact_names_are_looked_up_without_listing(names):
    module = module_of(b"", names)
    loader = module._loader
    fn = module.get_function("_Z6squarePfi")
    assert (fn.name, fn.handle) == ("_Z6squarePfi", loader.registration.functions[fn.name])
    assert module.get_function("plain").name == "plain"
    assert loader.listings == 0  # issue 21: every kernel was listed for an exact name
    # A C++ source name or signature is found in the listing, once.
    assert module.get_function("square(float*, int)") is fn
    assert loader.listings == 1
    with pytest.raises(NameNotFoundError, match=r"no kernel 'nope' in the image; it has: "):
        module.get_function("nope")
    with pytest.raises(AmbiguousKernelNameError):
        module.get_function("square")
    assert loader.listings == 1  # the listing is kept
