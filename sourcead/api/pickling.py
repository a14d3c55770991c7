"""Pickling prepared derivatives: what travels is the recipe, not the compiled code.

A prepared object pickles as (transform, a reference to the user's function, wrt, jit). The
function travels as pickle itself sends a module-level function: by module and qualified name
(resolved in the receiving process, and unwrapped if that name holds a numba dispatcher or a
`@differentiable`). A function of the script being run (`__main__`) travels by name and by its
file: a `spawn` worker finds it in its `__mp_main__`, a Dask worker loads the script by path under
a private module name (its `if __name__ == "__main__":` block does not run). It never travels by
value, as cloudpickle would send it: that loses its source file, which sourcead reads. Unpickling prepares
the transform again, which in a process that shares the disk cache is a cache hit: the key is
computed (~1 ms), the generated module imported, and numba loads its machine code at the first
call. No pipeline, no compilation.

Each process keeps what it rebuilt (keyed by function, transform, wrt and jit), so a worker that
receives the same gradient with every task prepares it once.

A recipe's fields are checked as it is loaded (`check_recipe`): a pickle that sourcead did not
make, or that was edited, is a `SourceADError` saying which field is wrong, never a bare
KeyError or TypeError from deep inside. Loading one imports the module (or runs the script) it
names, as loading any pickle may run code: load only pickles you trust.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import os
import sys
import threading
from collections.abc import Callable
from typing import Any

from ..errors import SourceADError
from ..functions import unwrap
from .budget import memory_bytes
from .protocol import Prepared, Recipe

_LOCK = threading.Lock()
_REBUILT: dict[tuple, Any] = {}  # (transform, function, wrt, jit) -> prepared object
_MAIN_FILES: dict[str, Any] = {}  # a __main__ script loaded by path in this process


def function_ref(func: Callable) -> tuple:
    """How the user's function travels: ("module", module, qualname), ("main", qualname, file)
    for a function of the script being run, or ("object", func) for pickle to send as it can."""
    module = getattr(func, "__module__", None)
    qualname = getattr(func, "__qualname__", "")
    if module is None or "<" in qualname:  # a lambda or a local function: only by value (cloudpickle)
        return ("object", func)
    found = _lookup(sys.modules.get(module), qualname)
    if found is None or unwrap(found) is not func:
        return ("object", func)
    if module == "__main__":
        # a script's function: by name (spawn's workers import the script as __mp_main__) and by
        # its file for other workers (Dask's); never by value, which loses the source file
        try:
            filename = inspect.getsourcefile(func)
        except TypeError:
            filename = None
        if filename is None or not os.path.exists(filename):
            return ("object", func)
        return ("main", qualname, os.path.abspath(filename))
    return ("module", module, qualname)


_TRANSFORMS = ("primal", "grad", "value_and_grad", "vjp", "jvp")
_OPTIONS = {"hvp": 3, "hessian": 3, "jacobian": 4}  # second order: (wrt, [mode,] jit, memory)
_MAKERS: dict[str, Callable[[Recipe], Any]] = {}  # transform -> its maker (`register`)


def refused(what: str) -> SourceADError:
    return SourceADError(
        f"cannot unpickle a sourcead derivative: {what}",
        hint="This pickle was not made by sourcead (or was edited since): pickle the prepared object again.",
    )


def check_recipe(ref: Any, wrt: Any = (), jit: Any = True, memory: Any = None, transform: Any = None) -> None:
    """A recipe's fields as pickled by sourcead: a function reference, wrt (positions or names),
    jit a bool, memory None or a size (`budget.memory_bytes`), and a known transform."""
    if transform is not None and transform not in _TRANSFORMS:
        raise refused(f"unknown transform {transform!r} (one of {', '.join(_TRANSFORMS)})")
    _check_ref(ref)
    items = tuple(wrt) if isinstance(wrt, (tuple, list)) else (wrt,)  # jacobian keeps the list it was given
    if not all(isinstance(w, str) or (isinstance(w, int) and not isinstance(w, bool)) for w in items):
        raise refused(f"wrt={wrt!r} is not a position, a name or a tuple of them")
    if not isinstance(jit, bool):
        raise refused(f"jit={jit!r} is not True or False")
    try:
        memory_bytes(memory)
    except SourceADError:
        raise refused(f"memory={memory!r} is not a size in bytes") from None


def check_second_order(kind: Any, ref: Any, options: Any) -> None:
    """The recipe of hvp, hessian or jacobian: (kind, function, (wrt, [mode,] jit, memory))."""
    if kind not in _OPTIONS:
        raise refused(f"unknown transform {kind!r} (one of {', '.join(_OPTIONS)})")
    if not isinstance(options, tuple) or len(options) != _OPTIONS[kind]:
        raise refused(f"the options of {kind} are {options!r}, not a tuple of {_OPTIONS[kind]}")
    if kind == "jacobian" and not isinstance(options[1], str):
        raise refused(f"mode={options[1]!r} is not a string")
    check_recipe(ref, options[0], options[-2], options[-1])


def _check_ref(ref: Any) -> None:
    kinds = {"object": 2, "module": 3, "main": 3}
    if not isinstance(ref, tuple) or not ref or ref[0] not in kinds or len(ref) != kinds[ref[0]]:
        raise refused(f"the function reference {ref!r} is not one sourcead makes")
    if ref[0] == "object" and not callable(ref[1]):
        raise refused(f"{ref[1]!r} is not a function")
    if ref[0] != "object" and not all(isinstance(part, str) for part in ref[1:]):
        raise refused(f"the function reference {ref!r} names no module and function")


def resolve(ref: tuple, raw: bool = False) -> Any:
    """The function a reference names, in this process (`raw`: before unwrapping)."""
    _check_ref(ref)
    kind = ref[0]
    if kind == "object":
        found = ref[1]
    elif kind == "module":
        _, module, qualname = ref
        try:
            found = _lookup(importlib.import_module(module), qualname)
        except ImportError as exc:
            raise SourceADError(
                f"cannot unpickle a sourcead derivative of {module}.{qualname}: {exc}",
                hint="The receiving process must be able to import the function's module (same code, sys.path).",
            ) from None
        if found is None:
            raise SourceADError(f"cannot unpickle a sourcead derivative: {module} has no {qualname}")
    else:
        _, qualname, filename = ref
        found = _lookup(sys.modules.get("__main__"), qualname)
        if found is None and filename and os.path.exists(filename):
            found = _lookup(_load_script(filename), qualname)
        if found is None:
            raise SourceADError(
                f"cannot unpickle a sourcead derivative of {qualname} from a script ({filename})",
                hint="Define the function in an importable module.",
            )
    return found if raw else unwrap(found)


def register(transform: str, make: Callable[[Recipe], Any]) -> None:
    """How to make a prepared `transform` again from its recipe: each transform's module says so
    as it is imported (`import sourcead` imports them all before any pickle can name one), so
    this module imports none of them."""
    _MAKERS[transform] = make


def rebuild(transform: str, ref: tuple, wrt: Any, jit: bool, memory: int | None = None) -> Any:
    """The prepared object, made once per process for each (function, transform, wrt, jit, memory)."""
    check_recipe(ref, wrt, jit, memory, transform)
    wrt = tuple(wrt) if isinstance(wrt, list) else wrt  # a key of the memo below
    func = resolve(ref)
    key = (transform, func, wrt, jit, memory)
    found = _REBUILT.get(key)
    if found is None:
        with _LOCK:
            found = _REBUILT.get(key)
            if found is None:
                single = not isinstance(wrt, tuple)
                found = _REBUILT[key] = _MAKERS[transform](Recipe(transform, func, wrt, single, jit, memory))
    return found


def rebuild_differentiable(ref: tuple, memory: Any = None) -> Any:
    """The `@differentiable` object: the module's own, when the name holds it, else a new one."""
    check_recipe(ref, memory=memory)
    raw = resolve(ref, raw=True)
    if isinstance(raw, Prepared) and raw.__sourcead_recipe__().transform == "differentiable":
        return raw
    func = unwrap(raw)
    key = ("differentiable", func, None, None, memory)
    with _LOCK:
        found = _REBUILT.get(key)
        if found is None:
            found = _REBUILT[key] = _MAKERS["differentiable"](Recipe("differentiable", func, (), False, True, memory))
    return found


def _lookup(module: Any, qualname: str) -> Any:
    obj = module
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _load_script(filename: str) -> Any:
    """A script's module, loaded by path under a private name (its `if __name__ == "__main__"`
    block does not run), for a function of `__main__` that only its file can give back."""
    with _LOCK:
        module = _MAIN_FILES.get(filename)
        if module is None:
            name = "__sourcead_main_" + hashlib.sha256(filename.encode()).hexdigest()[:12] + "__"
            spec = importlib.util.spec_from_file_location(name, filename)
            if spec is None or spec.loader is None:
                return None
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
            _MAIN_FILES[filename] = module
    return module
