"""The hashes that name things in the cache: `source_key` (everything a generated module depends on:
the function's source, the globals it reads, mode, options and sourcead's own code), and
`module_name` (a module by the hash of its text, the runtime helpers and the tool versions).
"""

from __future__ import annotations

import hashlib
import inspect
import json
import linecache
import os
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numba
import numpy as np

from .. import custom, nested
from .._version import __version__
from ..functions import unwrap

_PACKAGE = Path(__file__).resolve().parent.parent  # sourcead/
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
    recipe = nested.recipe_of(value)
    if recipe is not None:  # a derivative call (nested.py): what it is decides the caller's code
        what = f"prepared:{recipe.transform}:{recipe.wrt!r}:{recipe.jit}:"
        return what + _describe_callable(recipe.func, seen)
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
        parts += [_describe_callable(rule.partials, seen), f"singular:{rule.singular}"]
    return f"function:{name}:" + hashlib.sha256("\0".join(parts).encode()).hexdigest()


def module_name(entry: str, source: str) -> tuple[str, str]:
    """The module's name (entry + short hash) and its full hash."""
    digest = hashlib.sha256((_RUNTIME + source).encode()).hexdigest()
    return f"sourcead_{entry}_{digest[:20]}", digest


def _module_hash(module: types.ModuleType) -> str:
    """The full hash of a loaded module's verified text (its name holds the first 20 digits)."""
    return hashlib.sha256((_RUNTIME + module.__sourcead_text__).encode()).hexdigest()
