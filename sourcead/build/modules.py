"""The generated modules of this process: written atomically to the cache folder, executed from
their verified text (never from a second read of the file), registered in `sys.modules` under
their real name (numba needs it to find its cache in the next process); and the finder that turns
an import of a generated module this process has not built (a stale numba cache of the user's)
into an error saying what to do.
"""

from __future__ import annotations

import os
import re
import sys
import threading
import types
from pathlib import Path
from typing import Any

from ..errors import SourceADError
from . import cache_writes
from .cache_folder import _read_private

_LOCK = threading.RLock()  # reentrant: a module whose header binds derivative calls (nested.py) loads theirs


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
