"""Each header set's parsed model, kept on disk, keyed by everything the parse reads.

Parsing is most of the time `generate --all` and `check` take (libclang reads some
hundred thousand lines of headers per version and family), and the model of a header
set never changes while its inputs do not: so a model is parsed once and kept in
<cache>/models/, and any later run (`generate`, `check`, the test suite's
tests/support/models.py) loads it.

The key is everything the model is a function of:
- the header set: its folders are named by the sha256 of the verified wheels they were
  unpacked from, and fetch_version checks each tree against its wheel (and extracts an
  edited one again) before any model is looked up (generator/fetch.py), so their paths
  name their bytes; and which headers the parse starts from;
- the parser: the modules generator/parse.py imports from this package, followed
  import by import (`parser_files`), the shims, and this module (the entry's format);
  a change to any of them is a miss, and a change to the rest of the generator (the
  plan, the renderers: what reads the model) is not;
- the C compiler's standard headers: their folders, the compiler's version and the C
  library's, which say what those folders hold;
- libclang's version, and Python's.
A cached model is therefore the parse of the same inputs by the same code: `check`
answering from the cache is the same proof as `check` parsing, and a changed input can
only miss, never be served a stale model. So CI's regeneration check keeps the cache
(a fresh machine starts without one anyway), and `--no-model-cache` (or
CUDART_BINDGEN_MODEL_CACHE=0) parses regardless, for whoever wants to watch the parser
run; tests/generator/test_cli.py's `generate 12.2` does, and matches the committed
bytes.

Nothing in the cache is trusted by its name, nor is anything in it ever run. An entry is
JSON of the model's dataclasses (a format that cannot run code when read, unlike the
pickle it replaces: a planted pickle ran its code on load), written by `store` with an
HMAC-SHA256 of its format, its key (its file name) and its payload, under a secret key
of this user's (<cache>/models/hmac-key, 32 random bytes, mode 0600). `read` checks the
MAC before it decodes a byte of the payload: an edited entry (`cudaMemcpyDeviceToHost =
5`), one copied under another header set's name, a torn one, or one written by anyone
without the key is refused, said in one line, and parsed again. A key that is not a
regular file of this user's, private to them, is not used: the cache then only costs
time.

A process that has run an NVRTC compile parses differently (libnvrtc brings its own
LLVM; see tests/conftest.py): the generator never loads NVRTC, and the test suite parses
its misses in fresh interpreters (tests/support/models.py) before storing them here.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import hmac
import json
import os
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from importlib.util import resolve_name
from pathlib import Path
from typing import Any

from . import model as model_module
from .fetch import HeaderSet, cache_root
from .files import TEMPORARY_SUFFIX, remove_stale_temporaries, write_atomically
from .model import ApiModel

CACHE_ENV = "CUDART_BINDGEN_MODEL_CACHE"
_PACKAGE = Path(__file__).resolve().parent
# Models of other generator states are kept this long after they were written: another
# checkout sharing the cache (a second worktree) may be using them right now.
KEEP_OTHERS_S = 24 * 3600
SUFFIX = ".json"
# The suffix of the pickled entries this cache kept before: never read, only dropped.
OLD_SUFFIX = ".pickle"
# An entry's first line; any other is not this format's (an older cache's, or no entry).
FORMAT = b"cudart-bindgen model cache entry, format 2\n"
# Far above any model (hundreds of KiB to a few MiB): a larger file is not an entry of
# ours, and reading it whole could exhaust memory.
MAX_ENTRY = 64 << 20
SECRET_NAME = "hmac-key"
SECRET_BYTES = 32
# No link followed, no wait for a FIFO's writer (where the OS has the flags).
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


class Unverifiable(Exception):
    """The cache has no key this process can trust (the message says why)."""


def enabled() -> bool:
    return os.environ.get(CACHE_ENV, "1") != "0"


def _say_refused(why: str) -> None:
    print(why, file=sys.stderr, flush=True)


def model_for(
    headers: HeaderSet,
    parse: Callable[[HeaderSet], ApiModel],
    announce: Callable[[bool], None] = lambda _cached: None,
    refused: Callable[[str], None] = _say_refused,
) -> ApiModel:
    """The kept model of `headers`, else parse(headers), kept. `announce(cached)` is
    called once, before a parse starts or when the kept model is taken; `refused(why)`
    once before it, when a kept entry was there and is not used (see `read`)."""
    if not enabled():
        announce(False)
        return parse(headers)
    path = cache_file(headers)
    model, _ = read(path)
    if model is None:
        with parsing(path):
            model, why = read(path)  # parsed by another process while this one waited
            if model is None:
                if why is not None:
                    refused(f"the model cache's {path.name} is not used ({why}): parsing again")
                announce(False)
                model = parse(headers)
                store(path, model)
                return model
    announce(True)
    return model


@contextmanager
def parsing(path: Path) -> Iterator[None]:
    """Held while the header set of the model file `path` is parsed: processes of one
    run (the test suite's workers, `check`'s) that miss the same model wait for the
    first one's parse instead of parsing it too. The lock is the header set's, whatever
    the generator's state, so its files stay one per header set."""
    try:
        import fcntl
    except ImportError:  # no flock (Windows): each process parses its misses
        yield
        return
    key, which, _ = path.stem.split("-")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        lock = open(path.parent / f"{key}-{which}.lock", "a+b")
    except OSError:  # an unwritable cache only costs time
        yield
        return
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, or the process ends
        yield


def load(path: Path) -> ApiModel | None:
    """The model kept at `path`; None when there is none or it is not used (see `read`)."""
    return read(path)[0]


def read(path: Path) -> tuple[ApiModel | None, str | None]:
    """(the model kept at `path`, None); (None, None) when there is no entry; (None, why)
    when there is one that is not used: not a regular file, too large, not of this
    format, or its MAC is not this user's key's for its name and payload (edited, torn,
    copied from another name, or not written by `store`). The payload is decoded only
    once its MAC is right, and decoding it builds only the model's own dataclasses."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        return None, None
    except OSError as e:
        return None, f"it cannot be opened: {e.strerror or e}"  # a link: ELOOP
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None, "it is not a regular file"
        if info.st_size > MAX_ENTRY:
            return None, f"it is larger than {MAX_ENTRY >> 20} MiB"
        with open(fd, "rb", closefd=False) as f:
            data = f.read(info.st_size + 1)  # one more: a file that grew is not whole
    except OSError as e:
        return None, f"it cannot be read: {e.strerror or e}"
    finally:
        os.close(fd)
    if len(data) != info.st_size:
        return None, "it changed while it was read"
    if not data.startswith(FORMAT):
        return None, "it is not an entry of this format"
    mac, newline, payload = data[len(FORMAT) :].partition(b"\n")
    if not newline:
        return None, "it is torn"
    try:
        secret = _secret(path.parent, create=False)
    except Unverifiable as e:
        return None, str(e)
    if not hmac.compare_digest(mac, _mac(secret, path, payload).encode("ascii")):
        return None, "its MAC does not match its name and payload: edited, or not ours"
    try:
        model = json.loads(payload, object_hook=_decode_object)
    except (ValueError, TypeError, RecursionError):
        return None, "its payload does not decode to a model"  # a format bug of our own
    if type(model) is not ApiModel:
        return None, "its payload is not a model"
    return model, None


def store(path: Path, model: ApiModel) -> None:
    """Kept whole or not at all (a concurrent reader sees the old state or the new file);
    an unwritable cache, or one without a key of ours, only costs time."""
    payload = json.dumps(
        _encode(model), ensure_ascii=True, separators=(",", ":"), check_circular=False
    ).encode("ascii")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_temporaries(path.parent, _ours)
        secret = _secret(path.parent, create=True)
        mac = _mac(secret, path, payload).encode("ascii")
        write_atomically(path, FORMAT + mac + b"\n" + payload)
    except (OSError, Unverifiable):
        return
    drop_older(path)


def _ours(name: str) -> bool:
    """Whether a file name of the models folder is one `store` writes."""
    return name.endswith(SUFFIX) or name == SECRET_NAME


def _mac(secret: bytes, path: Path, payload: bytes) -> str:
    """The MAC of an entry: of the format, the entry's name (what it is the model of),
    and the payload."""
    return hmac.new(
        secret, FORMAT + path.name.encode("utf-8") + b"\n" + payload, hashlib.sha256
    ).hexdigest()


# ---------------------------------------------------------------- the key


def _secret(folder: Path, create: bool) -> bytes:
    """The key of the models in `folder`: read, or (with `create`) made when it is missing
    or unfit; Unverifiable when there is none this process can trust."""
    path = folder / SECRET_NAME
    for _ in range(3):
        try:
            return _read_secret(path)
        except FileNotFoundError:
            if not create:
                raise Unverifiable("the cache has no key to check it with") from None
        except _UnfitSecret as e:
            if not create or e.foreign:
                raise Unverifiable(str(e)) from None
            try:
                path.unlink()  # ours, but not private or not whole: a new one
            except FileNotFoundError:
                pass
            except OSError as e2:
                raise Unverifiable(f"cannot replace the cache's key: {e2.strerror}") from None
        _make_secret(path)
    raise Unverifiable("the cache's key keeps changing")


class _UnfitSecret(Exception):
    def __init__(self, why: str, foreign: bool = False):
        super().__init__(why)
        self.foreign = foreign


def _read_secret(path: Path) -> bytes:
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        raise  # none yet: the caller makes one
    except OSError as e:
        raise _UnfitSecret(f"the cache's key {path} cannot be opened: {e.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _UnfitSecret(f"the cache's key {path} is not a regular file")
        uid = getattr(os, "getuid", lambda: info.st_uid)()
        if info.st_uid != uid:
            # Another user's: not ours to trust, nor to remove.
            raise _UnfitSecret(f"the cache's key {path} belongs to another user", foreign=True)
        if info.st_mode & 0o077:
            raise _UnfitSecret(f"the cache's key {path} is readable by others")
        data = os.read(fd, SECRET_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) != SECRET_BYTES:
        raise _UnfitSecret(f"the cache's key {path} is not {SECRET_BYTES} bytes")
    return data


def _make_secret(path: Path) -> None:
    """A new key at `path`, unless another process made one first: written whole under a
    temporary name (mkstemp's 0600), then linked in place, which fails where a file is."""
    # Named as write_atomically names its temporaries, so that `store` removes a killed
    # process's.
    fd, tmp = tempfile.mkstemp(
        dir=path.parent, prefix=f".{path.name}.{os.getpid()}.", suffix=TEMPORARY_SUFFIX
    )
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(os.urandom(SECRET_BYTES))
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass  # another process's key: read on the next turn
        except OSError as e:  # a file system without hard links
            raise Unverifiable(f"cannot make the cache's key: {e.strerror}") from None
    finally:
        Path(tmp).unlink(missing_ok=True)


# ---------------------------------------------------------------- the payload

# How each field of the model's dataclasses is kept, from its declared type: a plain
# value (str, int, bool, None, or a dataclass), a tuple (a JSON array, tuples inside it
# too), or a list (ApiModel's; its items as a tuple's).
_PLAIN, _TUPLE, _LIST = 0, 1, 2


def _kind(declared: object) -> int:
    text = str(declared)
    return _LIST if text.startswith("list[") else _TUPLE if "tuple[" in text else _PLAIN


# Every dataclass of generator/model.py, by name: (class, field names, their kinds, the
# (name, kind) of those that are not plain).
_CLASSES: dict[str, tuple[type, tuple[str, ...], tuple[int, ...], tuple[tuple[str, int], ...]]]
_CLASSES = {}
for _cls in vars(model_module).values():
    if isinstance(_cls, type) and dataclasses.is_dataclass(_cls):
        if _cls.__module__ == model_module.__name__:
            _fields = dataclasses.fields(_cls)
            _CLASSES[_cls.__name__] = (
                _cls,
                tuple(f.name for f in _fields),
                tuple(_kind(f.type) for f in _fields),
                tuple((f.name, _kind(f.type)) for f in _fields if _kind(f.type) != _PLAIN),
            )
_BY_TYPE = {spec[0]: (name, spec[1], spec[2]) for name, spec in _CLASSES.items()}


def _encode(value: Any) -> Any:
    """`value` as JSON data: a dataclass as {its name: [its field values]}. Anything the
    decoder would not give back equal (a sequence of another kind than its field
    declares, a float, a subclass) is a TypeError: the cache keeps exactly the parse."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is tuple:
        return [_encode(item) for item in value]
    spec = _BY_TYPE.get(kind)
    if spec is None:
        raise TypeError(f"the model cache cannot keep a {kind.__name__}: {value!r:.80}")
    name, names, kinds = spec
    values = []
    for field_name, field_kind in zip(names, kinds, strict=True):
        item = getattr(value, field_name)
        held = type(item)
        if (held is list) != (field_kind == _LIST) or (held is tuple and field_kind != _TUPLE):
            raise TypeError(f"{name}.{field_name} holds a {held.__name__}, against its type")
        values.append([_encode(x) for x in item] if held is list else _encode(item))
    return {name: values}


def _tuples(items: list[Any]) -> tuple[Any, ...]:
    return tuple([_tuples(x) if type(x) is list else x for x in items])


def _decode_object(obj: dict[str, Any]) -> Any:
    """json's hook for each object: the dataclass it names, built from its field values
    (not through __init__: a frozen class's setattr per field would be most of the
    load's time, and the values are the encoder's own, checked by the MAC)."""
    if len(obj) != 1:
        raise ValueError("not a model object")
    ((name, values),) = obj.items()
    spec = _CLASSES.get(name)
    if spec is None or type(values) is not list:
        raise ValueError(f"not a model object: {name!r:.40}")
    cls, names, _, sequences = spec
    fields = dict(zip(names, values, strict=True))
    for field_name, kind in sequences:
        item = fields[field_name]
        if type(item) is list:
            fields[field_name] = (
                [_tuples(x) if type(x) is list else x for x in item]
                if kind == _LIST
                else _tuples(item)
            )
        elif kind == _LIST:
            raise ValueError(f"{name}.{field_name} is not a list")
    instance: Any = object.__new__(cls)
    instance.__dict__.update(fields)
    return instance


def cache_file(headers: HeaderSet) -> Path:
    """<key>-<the header set's digest>-<the environment's digest>.json"""
    # The bound folders only where they are not all of include_dirs (an own-axis
    # release's): the CUDA versions' entries keep their names.
    own = ("own", *map(str, headers.own_dirs)) if headers.own_dirs else ()
    which = _digest(headers.key, *map(str, headers.include_dirs), *map(str, headers.headers), *own)
    return cache_root() / "models" / f"{headers.key}-{which}-{_digest(*environment())}{SUFFIX}"


def _digest(*parts: str) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode() + b"\0")
    return h.hexdigest()[:24]


def drop_older(path: Path) -> None:
    """The same header set's models of other generator states, once they are a day old;
    and of the older, pickled format (never read)."""
    key, which, _ = path.stem.split("-")
    now = time.time()
    others = [*path.parent.glob(f"{key}-{which}-*{SUFFIX}")]
    others += path.parent.glob(f"{key}-{which}-*{OLD_SUFFIX}")
    for other in others:
        try:
            if other != path and now - other.stat().st_mtime > KEEP_OTHERS_S:
                other.unlink()
        except FileNotFoundError:
            pass


@cache
def environment() -> tuple[str, ...]:
    """What a model depends on beyond its headers (see the module's docstring)."""
    from importlib.metadata import version

    from .parse import system_include_dirs

    h = hashlib.sha256()
    for path in parser_files(_PACKAGE):
        h.update(str(path.relative_to(_PACKAGE.parent)).encode() + b"\0" + path.read_bytes())
    return (
        h.hexdigest(),
        *map(str, system_include_dirs()),
        _compiler_version(),
        _libc_version(),
        version("libclang"),
        sys.version,
    )


def parser_files(package: Path) -> list[Path]:
    """The files of `package` a parse runs or reads: parse.py and the package's modules it
    imports, import by import (absolute or relative, at any depth of the module: a
    TYPE_CHECKING import counts too, which only costs a miss), every file under shims/,
    and this module. Sorted, so the digest does not depend on the walk."""
    seen: set[Path] = set()
    todo = [package / "parse.py", package / "model_cache.py"]
    while todo:
        path = todo.pop()
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        for node in ast.walk(ast.parse(path.read_bytes(), str(path))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = resolve_name("." * node.level + base, package.name)
                # `from .x import y`: y is x's name or its submodule.
                names = [base, *(f"{base}.{a.name}" for a in node.names)]
            else:
                continue
            for name in names:
                head, _, rest = name.partition(".")
                if head == package.name and rest:
                    parts = rest.split(".")
                    todo += [
                        package.joinpath(*parts).with_suffix(".py"),
                        package.joinpath(*parts, "__init__.py"),
                    ]
    shims = [
        p for p in (package / "shims").rglob("*") if p.is_file() and "__pycache__" not in p.parts
    ]
    return sorted(seen | set(shims))


def _compiler_version() -> str:
    """What `cc --version` says: an upgraded compiler may keep its headers' folders."""
    try:
        proc = subprocess.run(["cc", "--version"], capture_output=True, text=True, check=False)
    except FileNotFoundError:
        return ""
    return proc.stdout


def _libc_version() -> str:
    """The C library's version ("glibc 2.36"): an update may keep its headers' folders."""
    try:
        return os.confstr("CS_GNU_LIBC_VERSION") or ""
    except (AttributeError, ValueError, OSError):  # no confstr, or not glibc
        return ""
