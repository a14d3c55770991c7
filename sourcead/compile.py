"""Pass 7, compile: generated module -> content-addressed file -> import -> numba.njit.

The file name is a hash of the module text, the runtime helpers and the tool versions, so an
edited function or a new sourcead gives a new file and numba's own disk cache (kept beside it
in `__pycache__`) is never stale. The module is registered in `sys.modules` under its real
name before numba compiles it, which numba needs to find its cache in the next process.
A file is imported only if its content is exactly the text we generated.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import os
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numba

from . import runtime
from ._version import __version__
from .pipeline import Generated

_LOCK = threading.Lock()
_LOADED: dict[str, object] = {}  # module name -> module, for this process
_FINGERPRINT = hashlib.sha256((inspect.getsource(runtime) + __version__ + numba.__version__).encode()).hexdigest()


@dataclass(frozen=True)
class Compiled:
    """The generated derivative, as plain Python and (when asked) as a numba dispatcher."""

    python: Callable
    call: Callable  # what to call: the dispatcher, or `python` itself when jit=False
    path: Path


def cache_dir() -> Path:
    """`$SOURCEAD_CACHE_DIR`, else the user's cache folder; created private to the user."""
    root = os.environ.get("SOURCEAD_CACHE_DIR")
    if not root:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(base, "sourcead")
    path = Path(root)
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


def module_key(generated: Generated) -> str:
    digest = hashlib.sha256((_FINGERPRINT + generated.source).encode()).hexdigest()
    return f"sourcead_{generated.entry}_{digest[:20]}"


def load(generated: Generated, jit: bool) -> Compiled:
    name = module_key(generated)
    with _LOCK:
        module = _LOADED.get(name)
        if module is None:
            path = _write(cache_dir() / f"{name}.py", generated.source)
            module = _import(name, path)
            _LOADED[name] = module
    python = getattr(module, generated.entry)
    path = Path(module.__file__)  # type: ignore[attr-defined]
    if not jit:
        return Compiled(python, python, path)
    jitted = getattr(module, "_sourcead_jitted", None)
    if jitted is None:
        with _LOCK:
            jitted = getattr(module, "_sourcead_jitted", None)
            if jitted is None:
                jitted = numba.njit(cache=True, nogil=True)(python)
                module._sourcead_jitted = jitted  # type: ignore[attr-defined]
    return Compiled(python, jitted, path)


def _write(path: Path, text: str) -> Path:
    """Write `text` to `path` atomically, unless the file there already holds exactly `text`."""
    try:
        if path.read_text(encoding="utf-8") == text:
            return path
    except (OSError, UnicodeDecodeError):
        pass  # missing, truncated or corrupted: rewrite it
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".py")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)
    return path


def _import(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[name] = module
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module
