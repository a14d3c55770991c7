"""Compile, after the passes: generated module -> content-addressed file -> verified import -> numba.njit.

Two keys, two kinds of file in the cache folder (`$SOURCEAD_CACHE_DIR`, private to the user):

* `sourcead_<entry>_<hash>.py`: the generated module, named by a hash of its text, the runtime
  helpers and the tool versions. It is imported only after its bytes are read and found to match
  that hash, and it is executed from exactly those bytes (no second read), so neither a truncated
  file nor a damaged one is ever run. numba's disk cache sits beside it in `__pycache__` (always
  there, whatever NUMBA_CACHE_DIR says), each record 0600 and guarded by a checksum bound to its
  name: a damaged or swapped record is compiled again, never a crash.
* `keys/<key>.json`: what a prepared derivative needs to call a module without running the
  pipeline: its own key (a key file copied over another's reads as a miss), the module's name
  and hash, parameters, kinds, outputs. The key hashes everything the
  generated text depends on (`source_key`): the function's source, the globals it reads, mode,
  wrt, argument kinds, options and sourcead's own code. So a new process skips parse, transform
  and emit, and an edited function gets a new key.

Nothing is read from the folder unless it, its subfolder and the file itself belong to this user
and nobody else can write them (see "the cache folder" below); anything else is refused.

The module is registered in `sys.modules` under its real name before numba compiles it, which
numba needs to find its cache in the next process.
"""

from __future__ import annotations

import errno
import hashlib
import inspect
import json
import linecache
import os
import re
import stat
import sys
import threading
import types
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numba
import numpy as np
from numba.core.caching import CompileResultCacheImpl, FunctionCache, IndexDataCacheFile, _CacheLocator

from . import cache_writes
from .. import custom
from .._version import __version__
from ..errors import SourceADError
from ..functions import unwrap

_LOCK = threading.Lock()
_LOADED: dict[str, types.ModuleType] = {}  # module name -> module, for this process


class _UnbuiltModuleFinder:
    """The last finder on `sys.meta_path`: an import of a generated module's name that this process
    has not built is a stale numba cache of the user's own. numba caches an `@njit(cache=True)`
    function that calls `g.njit` with the name of the entry module it called, and does not notice
    when that module's content (the derivative) changes, since it keys a cache by the caller's file
    alone. Importing the old module would run an old derivative; this says what to do instead of a
    bare ModuleNotFoundError."""

    _NAME = re.compile(r"sourcead_\w+_[0-9a-f]{20}")

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if path is None and self._NAME.fullmatch(name) and name not in sys.modules:
            raise SourceADError(
                f"numba's disk cache of one of your functions refers to the generated module `{name}`, "
                "which is not the derivative this process built: the function (or sourcead) changed "
                "since numba cached your caller. numba keys its cache by the caller's file only. Delete "
                "the caller's numba cache (its `__pycache__/*.nbi` and `*.nbc` files), or touch the "
                "caller's source file, and run again."
            )
        return None


if not any(isinstance(f, _UnbuiltModuleFinder) for f in sys.meta_path):
    sys.meta_path.append(_UnbuiltModuleFinder())
_PACKAGE = Path(__file__).resolve().parent.parent  # sourcead/
_MODULE_NAME = re.compile(r"sourcead_\w+_([0-9a-f]{20})\Z")
_SPEC_FORMAT = 4  # 2: the key file records its own key; 3: parameter types with dtypes; 4: a shape contract
_ENTRY_SUFFIXES = ("_jvp", "_vjp", "_grad", "_primal", "_hvp")


@dataclass(frozen=True)
class Spec:
    """What calling a generated module needs to know; the pipeline's `Generated` minus the tree."""

    name: str  # the user function's name
    entry: str  # the generated function: f_jvp, f_vjp, f_grad, f_primal or f_hvp
    mode: str
    params: tuple[str, ...]
    wrt: tuple[str, ...]
    kinds: tuple[str, ...]  # the type of each parameter, spelled by `Type.spec` (`float`, `array:2`, `int_array:1`)
    free: tuple[str, ...]  # parameters whose kind comes from the call (see `Kinds.free`)
    n_outputs: int
    returns_array: bool
    mutated: tuple[str, ...]
    copied: tuple[str, ...]
    output_is_tuple: bool
    parallel: bool = False  # uses prange: compiled with parallel=True
    contract: str = ""  # the shape facts its indexing relies on, as JSON (`contract.py`, `callplan.py`)

    @classmethod
    def of(cls, gen: Any) -> Spec:
        return cls(
            name=gen.parsed.name,
            entry=gen.entry,
            mode=gen.mode,
            params=tuple(gen.params),
            wrt=tuple(gen.wrt),
            kinds=tuple(gen.param_types),
            free=tuple(gen.free),
            n_outputs=gen.n_outputs,
            returns_array=gen.returns_array,
            mutated=tuple(gen.mutated),
            copied=tuple(gen.copied),
            output_is_tuple=gen.output_is_tuple,
            parallel="prange(" in gen.source,
            contract=getattr(gen, "contract", ""),
        )

    @classmethod
    def from_json(cls, data: dict) -> Spec:
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in data.items()})


@dataclass(frozen=True)
class Compiled:
    """The generated derivative, as plain Python and (when asked) as a numba dispatcher."""

    spec: Spec
    source: str  # the module text
    python: Callable
    call: Callable  # what to call: the dispatcher, or `python` itself when jit=False
    path: Path


# --- the cache folder, and what may be read from it -----------------------------------------
#
# The trust model (docs/design.md, "Cache trust model"): whoever can write to a folder or file
# sourcead reads from can run code as this user, since modules are imported and numba's records
# unpickled. So every level read from (the folder, `keys/`, `__pycache__/`, each module, key file
# and numba record) must be this user's and writable by nobody else, checked on the open file
# itself. Anything else is refused, never repaired and then trusted: a folder that was ever open
# may already hold planted files. `sourcead cache clear` is the fix.

_UID = os.geteuid() if hasattr(os, "geteuid") else None  # None: no POSIX owners (Windows): no checks
_SUBFOLDERS = ("keys", "__pycache__")
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_CLEAR_HINT = (
    "Run `sourcead cache clear`: it makes the folder private again and deletes every file sourcead keeps "
    "there (nothing else), so the cache is rebuilt from your code. Or set SOURCEAD_CACHE_DIR to a new folder."
)


def cache_dir() -> Path:
    """`$SOURCEAD_CACHE_DIR`, else the user's cache folder: created private to the user (0700),
    and checked (it and its `keys/` and `__pycache__/`) at every call: a few stats.

    A folder owned by someone else, or that others may write to, is refused with a message that
    says how to fix it; it is never repaired and then trusted.
    """
    path = _root()
    if not _create(path):  # nothing there to read; every write will fail and fall back to memory
        return path
    problem = _folder_problem(path)
    if problem is not None:
        raise _refusal(*problem)
    return path


def _root() -> Path:
    root = os.environ.get("SOURCEAD_CACHE_DIR")
    if not root:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(base, "sourcead")
    return Path(root).absolute()


def _create(path: Path) -> bool:
    """Does the folder exist (made now if need be)? If not: a warning, and derivatives in memory."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        cache_writes.unwritable(path, OSError(exc.errno, "a file, not a folder") if path.exists() else exc)
        return False
    return True


def _why_untrusted(info: os.stat_result) -> str | None:
    """Why a file or folder with this status may hold someone else's code, or None."""
    if _UID is None:
        return None
    if info.st_uid != _UID:
        return f"belongs to another user (uid {info.st_uid}; you are uid {_UID})"
    if info.st_mode & 0o022:
        return f"is writable by other users (mode {stat.S_IMODE(info.st_mode):04o})"
    return None


def _folder_problem(path: Path) -> tuple[Path, str] | None:
    """The first level of the cache folder that must not be read from, and why."""
    try:
        info = os.stat(path)  # the root may be a symbolic link of the user's (~/.cache -> ...)
    except OSError as exc:
        return path, f"cannot be read: {exc.strerror}"
    if not stat.S_ISDIR(info.st_mode):
        return path, "is not a folder"
    why = _why_untrusted(info)
    if why is not None:
        return path, why
    for sub in _SUBFOLDERS:
        try:
            info = os.lstat(path / sub)
        except FileNotFoundError:
            continue
        except OSError as exc:
            return path / sub, f"cannot be read: {exc.strerror}"
        if not stat.S_ISDIR(info.st_mode):
            return path / sub, "is a symbolic link" if stat.S_ISLNK(info.st_mode) else "is not a folder"
        why = _why_untrusted(info)
        if why is not None:
            return path / sub, why
    return None


def _refusal(path: Path, why: str) -> SourceADError:
    """The error for a level of the cache that must not be read from, with how to fix it."""
    root = _root()
    what = "folder" if path == root or (path.parent == root and path.name in _SUBFOLDERS) else "file"
    if why.startswith(("belongs to another user", "is writable by other users", "is a symbolic link")):
        if path == root and why.startswith("belongs"):
            hint = "Set SOURCEAD_CACHE_DIR to a folder of your own."
        else:
            hint = _CLEAR_HINT
        why += ", so it may hold code planted by someone else: sourcead refuses to import from it"
    elif path == root:
        hint = "Set SOURCEAD_CACHE_DIR to a folder you can write to."
    else:
        hint = _CLEAR_HINT
    return SourceADError(f"the sourcead cache {what} {path} {why}", hint=hint)


def _read_private(path: Path) -> bytes | None:
    """The bytes of a file of this user's that nobody else can write, or None if it is missing.

    The file is opened without following a symbolic link and its owner and mode are checked on the
    open descriptor, so neither a link nor a swap between check and read gets another file read.
    Anything else is refused (a `SourceADError`).
    """
    try:
        fd = os.open(path, _READ_FLAGS)
    except (FileNotFoundError, NotADirectoryError):  # a folder that could not be made holds nothing
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _refusal(path, "is a symbolic link") from None
        raise _refusal(path, f"cannot be read: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _refusal(path, "is not a regular file")
        why = _why_untrusted(info)
        if why is not None:
            raise _refusal(path, why)
        chunks = []
        while chunk := os.read(fd, max(info.st_size, 1 << 16)):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


# --- keys -----------------------------------------------------------------------------------


_VERSIONS = f"sourcead {__version__} numba {numba.__version__} numpy {np.__version__} python {sys.version}"


def _package_fingerprint() -> str:
    """sourcead's own code (every module, so any change to a pass or rule counts) and versions."""
    digest = hashlib.sha256(_VERSIONS.encode())
    for path in sorted(_PACKAGE.rglob("*.py")):
        digest.update(path.relative_to(_PACKAGE).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


_FINGERPRINT = _package_fingerprint()
# what compiled code depends on beyond its own text: the helpers it calls (numba does not notice
# when a callee in another module changes) and the versions that compile it
_RUNTIME = hashlib.sha256(
    _VERSIONS.encode() + b"".join(path.read_bytes() for path in sorted((_PACKAGE / "runtime").glob("*.py")))
).hexdigest()


def source_key(func: Callable, mode: str, wrt: tuple, arg_kinds: dict[str, str] | None, options: dict) -> str | None:
    """A hash of everything the generated module depends on, or None when the source is unknown
    (then the pipeline runs and reports why)."""
    try:
        filename = inspect.getsourcefile(func)
        if filename is None:
            return None
        linecache.checkcache(filename)  # the file as it is now, which is what the pipeline parses
        source = inspect.getsource(func)
    except (OSError, TypeError):
        return None
    parts = {
        "fingerprint": _FINGERPRINT,
        "file": os.path.abspath(filename),
        "qualname": func.__qualname__,
        "source": source,
        "globals": _globals_read(func),
        "mode": mode,
        "wrt": repr(wrt),
        "kinds": sorted((arg_kinds or {}).items()),
        "options": sorted(options.items()),
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def _globals_read(func: Callable, seen: set[int] | None = None) -> list[tuple[str, str]]:
    """The globals (and closure cells) the function's code names, described by value: frozen
    constants by repr, modules by name (with the constant attributes the code may read)."""
    names: set[str] = set()
    codes = [func.__code__]
    while codes:
        code = codes.pop()
        names.update(code.co_names)
        codes.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    values = {n: func.__globals__[n] for n in names if n in func.__globals__}
    for name, cell in zip(func.__code__.co_freevars, func.__closure__ or (), strict=True):
        try:
            values[name] = cell.cell_contents
        except ValueError:  # an empty cell
            values[name] = None
    described = []
    for name, value in sorted(values.items()):
        described.append((name, _describe(value, seen if seen is not None else {id(func)})))
        if isinstance(value, types.ModuleType):  # `cfg.N` freezes N; `helpers.f` inlines f
            for attr in sorted(names):
                inner = getattr(value, attr, None)
                if isinstance(inner, (bool, int, float, np.ndarray)) or (callable(inner) and _is_user_code(inner)):
                    described.append((f"{name}.{attr}", _describe(inner, seen if seen is not None else {id(func)})))
    return described


def _describe(value: Any, seen: set[int]) -> str:
    if value is None or isinstance(value, (bool, int, float, complex, str)):
        return f"{type(value).__name__}:{value!r}"
    if isinstance(value, np.ndarray):  # frozen into the module: its contents are part of the key
        digest = hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()
        return f"array:{value.dtype.str}:{value.shape}:{digest}"
    if isinstance(value, types.ModuleType):
        return f"module:{value.__name__}"
    if callable(value):
        return _describe_callable(value, seen)
    return f"object:{type(value).__module__}.{type(value).__qualname__}"  # the fence rejects it anyway


def _is_user_code(value: Any) -> bool:
    return inspect.isfunction(unwrap(value)) and not getattr(value, "__module__", "").startswith(("numpy", "math"))


def _describe_callable(value: Any, seen: set[int]) -> str:
    """A user function by its source and what it reads, recursively: sourcead inlines callees, so
    editing one (in any module) must give its callers new keys. Custom rules add their partials."""
    name = f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', type(value).__name__)}"
    func = unwrap(value)
    if not inspect.isfunction(func) or id(func) in seen:
        return f"callable:{name}"
    seen.add(id(func))
    try:
        source = inspect.getsource(func)
    except (OSError, TypeError):
        source = ""
    parts = [source, json.dumps(_globals_read(func, seen))]
    rule = custom.lookup(value)
    if rule is not None:
        parts.append(_describe_callable(rule.partials, seen))
    return f"function:{name}:" + hashlib.sha256("\0".join(parts).encode()).hexdigest()


def module_name(entry: str, source: str) -> tuple[str, str]:
    """The module's name (entry + short hash) and its full hash."""
    digest = hashlib.sha256((_RUNTIME + source).encode()).hexdigest()
    return f"sourcead_{entry}_{digest[:20]}", digest


# --- load: key file -> verified module -> dispatcher ----------------------------------------


def load(key: str | None, generate: Callable[[], Any], jit: bool, check: Callable[[Spec], None]) -> Compiled:
    """The compiled module for `key`: from the cache when it holds a valid entry, else
    `generate()` (the pipeline) runs, `check` judges its spec, and the module is written."""
    folder = cache_dir()
    found = _cached(folder, key) if key is not None else None
    if found is None:
        gen = generate()
        spec = Spec.of(gen)
        check(spec)
        name, digest = module_name(spec.entry, gen.source)
        with _LOCK:
            module = _LOADED.get(name)
            if module is None:
                path = _write(folder / f"{name}.py", gen.source)
                module = _LOADED[name] = _execute(name, path, gen.source)
        if key is not None:
            _write_key(folder, key, name, digest, spec)
    else:
        spec, module = found
        check(spec)
    python = getattr(module, spec.entry)
    path = Path(module.__file__)  # type: ignore[arg-type]
    source = module.__sourcead_text__
    if not jit:
        plain = _plain_python(module, spec.entry)
        return Compiled(spec, source, plain, plain, path)
    jitted = jit_module(module, spec.entry, compiled_parallel(spec), bounds_checked(spec))
    return Compiled(spec, source, python, jitted, path)


# numba's parallel rewrites, as generated modules use them: prange loops, and whole-array
# expressions as parallel loops with outputs of their own (needed inside prange bodies); not the
# rewrites of assignments into slices and the fusion of loops, which together ran
# `y[:-1] = (y[1:] - y[:-1]) * a` as one parallel loop writing y while reading it (another thread's
# y[k + 1] already new: a wrong value, found by the fuzzer), nor parallel NumPy reductions.
PARALLEL_OPTIONS = {  # numba empties the dict it is given: pass a copy
    "prange": True,
    "numpy": True,
    "setitem": False,
    "fusion": False,
    "reduction": False,
    "comprehension": False,
    "inplace_binop": False,
    "stencil": False,
}


# With these options, numba's compiles of a parallel loop's body and of the NumPy calls in
# a parallel module report "no transformation for parallel execution was possible" about our
# module although its prange loops are parallel: noise, silenced for generated modules only.
warnings.filterwarnings(
    "ignore",
    message=r"(?s).*no transformation for parallel execution was possible.*sourcead_\w+\.py",
    category=numba.NumbaPerformanceWarning,
)
# A serial compile of a parallel module (bounds-checked: `compiled_parallel`) warns that np.dot is
# faster on contiguous arrays where the generated code takes a row or a tangent lane: nothing the
# user can change, so silenced for generated modules too (the warning names the module's file).
warnings.filterwarnings(
    "ignore",
    message=r"(?s).*np\.dot\(\) is faster on contiguous arrays",
    category=numba.NumbaPerformanceWarning,
    module=r".*[\\/]sourcead_\w+$",
)


def jit_module(module: types.ModuleType, entry: str, parallel: bool = False, boundscheck: bool = False) -> Any:
    """The numba dispatcher of a loaded module's function `entry`, made once per module (as
    `module._sourcead_jitted`, or `_sourcead_jitted_boundscheck` compiled with numba's bounds
    checks) and disk-cached in the private folder.

    Cached on disk, but not by numba's own FunctionCache (cache=True): its locators follow
    NUMBA_CACHE_DIR to folders others may write to, and it reads pickles as they are. NumPy's
    error model: 1.0 / 0.0 is inf and a singular derivative inf or nan, never an exception.
    numba's cache index keys on neither `boundscheck` nor the parallel options, so each build has
    records of its own. Parallel modules use PARALLEL_OPTIONS."""
    attribute = jitted_name(boundscheck)
    with _LOCK:
        jitted = getattr(module, attribute, None)
        if jitted is None:
            python = getattr(module, entry)
            options = {"boundscheck": True} if boundscheck else {}
            threads = dict(PARALLEL_OPTIONS) if parallel else False
            jitted = numba.njit(cache=False, nogil=True, parallel=threads, error_model="numpy", **options)(python)
            tag = "-".join((["parallel2"] if parallel else []) + (["boundscheck"] if boundscheck else []))
            jitted._cache = cache_writes.tolerant(_CheckedCache(python, cache_dir(), _module_hash(module), tag))
            setattr(module, attribute, jitted)
    return jitted


def jitted_name(boundscheck: bool) -> str:
    """The module attribute holding the dispatcher (with or without bounds checks)."""
    return "_sourcead_jitted_boundscheck" if boundscheck else "_sourcead_jitted"


def compiled_parallel(spec: Spec) -> bool:
    """Compile the module's prange loops as parallel loops? Not where it is bounds-checked: numba
    0.68 does not bounds-check an index that is a parallel loop's own variable (`y[i]` for `i in
    prange(n)` wrote past `y`'s end silently: fuzz seed 80, program 246), and an IndexError raised
    in another thread's share of a parallel loop may be lost (the call returned the sums of the
    other chunks). A serial compile checks every index and raises. The price: a variant whose
    contract is incomplete (an index read from data, as bundle adjustment's) runs on one thread."""
    return spec.parallel and not bounds_checked(spec)


def bounds_checked(spec: Spec) -> bool:
    """Compile with numba's bounds checks? When some index of the code escapes the shape contract
    (`contract.py`), or always with SOURCEAD_BOUNDSCHECK=1 (a debugging aid; its machine code is
    cached apart)."""
    if os.environ.get("SOURCEAD_BOUNDSCHECK", "") not in ("", "0"):
        return True
    from .callplan import needs_bounds_checks

    return needs_bounds_checks(spec)


def _cached(folder: Path, key: str) -> tuple[Spec, types.ModuleType] | None:
    """The spec and module recorded under `key`, if the key file is sound and the module's bytes
    match their hash; None (a miss) for anything missing, stale, truncated or corrupted. A key
    file or module that this user does not own, or that others could write, is refused."""
    data = _read_private(folder / "keys" / f"{key}.json")
    if data is None:
        return None
    try:
        record = json.loads(data.decode("utf-8"))
        if record["format"] != _SPEC_FORMAT or record["key"] != key:
            return None  # an old format, or a key file copied over another's: a miss, never its code
        name, digest = record["module"], record["sha256"]
        match = _MODULE_NAME.fullmatch(name)
        if match is None or not digest.startswith(match.group(1)):
            return None
        spec = Spec.from_json(record["spec"])
        if not any(spec.entry == spec.name + suffix for suffix in _ENTRY_SUFFIXES):
            return None  # the spec must name its own function's entry (the module's name holds it)
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    with _LOCK:
        module = _LOADED.get(name)
        if module is None:
            path = folder / f"{name}.py"
            raw = _read_private(path)
            if raw is None:
                return None
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                return None
            if module_name(spec.entry, text) != (name, digest) or not re.search(
                rf"^def {re.escape(spec.entry)}\(", text, re.M
            ):
                return None  # truncated, edited or damaged: rebuilt from the pipeline
            module = _LOADED[name] = _execute(name, path, text)
    return spec, module


def _write_key(folder: Path, key: str, name: str, digest: str, spec: Spec) -> None:
    record = {"format": _SPEC_FORMAT, "key": key, "module": name, "sha256": digest, "spec": asdict(spec)}
    try:
        (folder / "keys").mkdir(mode=0o700, exist_ok=True)
    except OSError as exc:
        cache_writes.unwritable(folder, exc)
        return
    _write(folder / "keys" / f"{key}.json", json.dumps(record, indent=1))


def _write(path: Path, text: str) -> Path:
    """Write `text` to `path` atomically (a fresh 0600 file), unless the file there already holds
    exactly `text`. A file there that is not this user's own is refused, not overwritten: it is a
    sign that the folder was open to others. A folder that cannot be written: a warning, and the
    caller runs the module from its text (`cache_writes.py`)."""
    data = text.encode("utf-8")
    if _read_private(path) == data:
        return path
    try:
        cache_writes.write_atomic(path, data, path.parent / f".tmp-{os.urandom(8).hex()}{path.suffix}")
    except OSError as exc:
        cache_writes.unwritable(path.parent, exc)
    return path


def _module_hash(module: types.ModuleType) -> str:
    """The full hash of a loaded module's verified text (its name holds the first 20 digits)."""
    return hashlib.sha256((_RUNTIME + module.__sourcead_text__).encode()).hexdigest()  # type: ignore[attr-defined]


def _execute(name: str, path: Path, text: str) -> types.ModuleType:
    """Run the module from `text`, the bytes already verified, not from a second read of `path`."""
    code = compile(text, str(path), "exec")
    module = types.ModuleType(name)
    module.__file__ = str(path)
    module.__sourcead_text__ = text  # type: ignore[attr-defined]
    cache_writes.remember(path, text)  # its lines, also where the file could not be written
    sys.modules[name] = module  # before numba sees it: numba's cache needs the real module name
    try:
        exec(code, module.__dict__)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def _plain_python(module: types.ModuleType, entry: str) -> Callable:
    """The generated function as plain Python with NumPy's error model, as numba runs it: the same
    text, run again with `math` bound to `sourcead.pymath` and `float` making NumPy floats (the
    callers pass NumPy floats), so 1.0 / 0.0 is inf and math.sqrt(-1.0) nan, not an exception."""
    with _LOCK:
        namespace = getattr(module, "_sourcead_plain", None)
        if namespace is None:
            namespace = {"__name__": module.__name__, "__file__": module.__file__, "__builtins__": _PLAIN_BUILTINS}
            exec(compile(module.__sourcead_text__, module.__file__, "exec"), namespace)  # type: ignore[arg-type]
            module._sourcead_plain = namespace  # type: ignore[attr-defined]
    return namespace[entry]


def _plain_import(name, globals=None, locals=None, fromlist=(), level=0):  # noqa: A002
    if name == "math" and not fromlist:
        from ..runtime import pymath

        return pymath
    return __import__(name, globals, locals, fromlist, level)


_PLAIN_BUILTINS = {**vars(__import__("builtins")), "__import__": _plain_import, "float": np.float64}


# --- numba's disk cache: in the private folder, 0600, checked --------------------------------


class _PrivateLocator(_CacheLocator):
    """Where numba keeps a generated module's records: the cache folder's own `__pycache__/`,
    whatever NUMBA_CACHE_DIR or NUMBA_CACHE_LOCATOR_CLASSES say (numba's locators would follow
    them to a folder others may write to). The source stamp is the module's verified hash, not a
    second read of its file."""

    def __init__(self, py_func: Callable, folder: Path, stamp: str):
        self._py_file = py_func.__code__.co_filename  # numba's warnings name it
        self._lineno = py_func.__code__.co_firstlineno
        self._folder = folder
        self._stamp = stamp

    def ensure_cache_path(self) -> None:
        path = self._folder / "__pycache__"
        path.mkdir(mode=0o700, exist_ok=True)
        problem = _folder_problem(self._folder)
        if problem is not None:
            raise _refusal(*problem)

    def get_cache_path(self) -> str:
        return str(self._folder / "__pycache__")

    def get_source_stamp(self) -> str:
        return self._stamp

    def get_disambiguator(self) -> str:
        return str(self._lineno)


class _CheckedImpl(CompileResultCacheImpl):
    """numba's cache implementation with its locator given, not searched for (numba's search
    also honours NUMBA_CACHE_LOCATOR_CLASSES). File names as numba's own."""

    def __init__(self, py_func: Callable, locator: _PrivateLocator, tag: str = ""):
        self._lineno = py_func.__code__.co_firstlineno
        self._locator = locator
        modname = os.path.splitext(os.path.basename(py_func.__code__.co_filename))[0]
        qualname = f"{py_func.__qualname__}.{tag}" if tag else py_func.__qualname__
        self._filename_base = self.get_filename_base(f"{modname}.{qualname}", getattr(sys, "abiflags", ""))


class _CheckedFile(IndexDataCacheFile):
    """numba's index and data files, each prefixed with a SHA-256 of its name, the module's hash
    and its payload; written as fresh 0600 files, read only if this user's and nobody else's.

    numba unpickles its cache files as they are: a truncated file raises from deep inside the
    first call, and whoever can write one runs code. Here a record is read like a module (owner
    and mode checked on the open descriptor, no symbolic link; anything else refused), and one
    whose checksum fails reads as absent, so the function is compiled again and the record
    rewritten. The checksum binds a record to its file name and module, so one copied over
    another's is compiled again too, never run as the other's code. The version tag differs from
    numba's, so files written by plain numba and by this class are never mistaken for each other.
    """

    def __init__(self, cache_path: str, filename_base: str, source_stamp: Any):
        super().__init__(cache_path, filename_base, source_stamp)
        self._version = f"{numba.__version__}+sourcead-sha256-2"

    def _load_index(self) -> dict:
        payload = self._read_checked(self._index_path)
        if payload is None:
            return {}
        try:
            version, stamp, overloads = self._loads(payload)
        except Exception:  # checksum right but unreadable (another format): start afresh
            return {}
        return overloads if version == self._version and stamp == self._source_stamp else {}

    def _save_index(self, overloads: dict) -> None:
        self._write_checked(self._index_path, self._dump((self._version, self._source_stamp, overloads)))

    def _load_data(self, name: str) -> Any:
        payload = self._read_checked(self._data_path(name))
        return None if payload is None else self._loads(payload)

    def _save_data(self, name: str, data: Any) -> None:
        self._write_checked(self._data_path(name), self._dump(data))

    @staticmethod
    def _loads(payload: bytes) -> Any:
        import pickle

        return pickle.loads(payload)  # a file only this user could write, bound to its name: ours

    def _digest(self, path: str, payload: bytes) -> bytes:
        label = f"{os.path.basename(path)}\0{self._source_stamp}\0".encode()
        return hashlib.sha256(label + payload).digest()

    def _read_checked(self, path: str) -> bytes | None:
        blob = _read_private(Path(path))
        if blob is None or len(blob) <= 32:
            return None
        head, payload = blob[:32], blob[32:]
        return payload if self._digest(path, payload) == head else None

    def _write_checked(self, path: str, payload: bytes) -> None:
        tmp = Path(f"{path}.tmp.{os.urandom(8).hex()}")  # numba's pattern, so `cache info` counts it
        cache_writes.write_atomic(Path(path), self._digest(path, payload) + payload, tmp)


class _CheckedCache(FunctionCache):
    """numba's per-function cache for a generated module: in the private folder, through
    `_CheckedFile`. (What numba's `Cache.__init__` does, with our locator and file class.)"""

    def __init__(self, py_func: Callable, folder: Path, stamp: str, tag: str = ""):
        self._name = repr(py_func)
        self._py_func = py_func
        self._impl = _CheckedImpl(py_func, _PrivateLocator(py_func, folder, stamp), tag)
        self._cache_path = self._impl.locator.get_cache_path()
        self._cache_file = _CheckedFile(self._cache_path, self._impl.filename_base, stamp)
        self.enable()


# --- sourcead cache info / clear --------------------------------------------------------------


def _cache_files(folder: Path) -> dict[str, list[Path]]:
    """sourcead's own files in the cache folder, by kind; nothing else is ever touched."""
    pycache = folder / "__pycache__"
    return {
        "modules": sorted(folder.glob("sourcead_*.py")),
        "keys": sorted((folder / "keys").glob("*.json")),
        "numba": sorted(p for p in pycache.glob("sourcead_*") if p.suffix in (".nbi", ".nbc")),
        "partial": sorted([*folder.glob(".tmp-*"), *(folder / "keys").glob(".tmp-*"), *pycache.glob("*.tmp.*")]),
    }


def _untrusted(folder: Path) -> list[tuple[Path, str]]:
    """Every level and every sourcead file of the cache folder that would be refused, and why."""
    problem = _folder_problem(folder)
    if problem is not None and problem[0] == folder:
        return [problem]
    found = [problem] if problem is not None else []
    for paths in _cache_files(folder).values():
        for path in paths:
            try:
                info = os.lstat(path)
            except OSError:
                continue
            why = "is a symbolic link" if stat.S_ISLNK(info.st_mode) else _why_untrusted(info)
            if why is not None:
                found.append((path, why))
    return found


def cache_info() -> dict[str, Any]:
    """The cache folder, the count and size of each kind of file in it, and what in it would be
    refused (`untrusted`: path and reason; `fix`: what to do). Creates nothing, refuses nothing."""
    folder = _root()
    info: dict[str, Any] = {"path": str(folder)}
    files = _cache_files(folder) if folder.is_dir() else {"modules": [], "keys": [], "numba": [], "partial": []}
    for kind, paths in files.items():
        info[kind] = len(paths)
    info["bytes"] = sum(p.lstat().st_size for paths in files.values() for p in paths)
    untrusted = _untrusted(folder) if folder.exists() else []
    info["untrusted"] = [(str(path), why) for path, why in untrusted]
    info["fix"] = _refusal(*untrusted[0]).hint if untrusted else None
    info["numba_cache_dir"] = os.environ.get("NUMBA_CACHE_DIR") or None
    return info


def clear_cache() -> int:
    """Delete sourcead's files from the cache folder (never anything else) and make it and its
    subfolders private (0700); the number of files deleted. After it, nothing in the folder is
    refused: this is the fix for a folder that was open to others.

    The folder is closed first, then emptied, so nothing planted before can survive and nothing
    can be planted after. A subfolder of sourcead's that belongs to someone else is moved aside
    (off every path sourcead reads) and deleted.
    """
    folder = _root()
    try:
        info = os.stat(folder)
    except FileNotFoundError:
        return 0
    except OSError as exc:
        raise _refusal(folder, f"cannot be read: {exc.strerror}") from None
    if not stat.S_ISDIR(info.st_mode):
        raise _refusal(folder, "is not a folder")
    if _UID is not None and info.st_uid != _UID:
        raise _refusal(folder, _why_untrusted(info) or "")
    count = 0
    os.chmod(folder, 0o700)  # first: from now on nobody else can add anything
    for sub in _SUBFOLDERS:
        path = folder / sub
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            continue
        if not stat.S_ISDIR(info.st_mode):  # a link or a file in place of our folder
            path.unlink()
            count += 1
        elif _UID is not None and info.st_uid != _UID:  # planted: off our paths, then deleted
            aside = folder / f".untrusted-{sub}-{os.urandom(6).hex()}"
            os.rename(path, aside)  # within the folder: needs no permission on the planted folder
            try:
                count += _remove_tree(aside)
            except OSError as exc:
                warnings.warn(
                    f"{aside} (moved aside, no longer read from) could not be deleted: {exc.strerror}; "
                    f"delete it as uid {info.st_uid} or as root",
                    stacklevel=2,
                )
        else:
            os.chmod(path, 0o700)
    for paths in _cache_files(folder).values():
        for path in paths:
            try:
                path.unlink()
                count += 1
            except FileNotFoundError:
                pass
    return count


def _remove_tree(path: Path) -> int:
    """Delete a folder and everything below it, links as links; the number of files deleted."""
    count = 0
    for parent, dirs, files in os.walk(path, topdown=False):
        for name in files:
            os.unlink(os.path.join(parent, name))
            count += 1
        for name in dirs:
            full = os.path.join(parent, name)
            if os.path.islink(full):
                os.unlink(full)
                count += 1
            else:
                os.rmdir(full)
    os.rmdir(path)
    return count
