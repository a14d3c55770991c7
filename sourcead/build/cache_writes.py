"""Writes to the cache folder, which is an accelerator, not a requirement.

Every file is written whole to a fresh 0600 temporary file beside its place and renamed over it,
so a reader finds the old file or the new one, never a part; a write that fails (a full disk, a
read-only or missing folder, a quota) removes its temporary file. Then nothing fails: a
generated module that cannot be written runs from its text in memory (its lines still show in
tracebacks and pdb: `remember`), numba's machine code that cannot be saved is compiled again
by the next process, and one warning per process says that the folder cannot be written and why.
Reading what the folder holds goes on as before (a read-only folder warmed earlier still hits).
"""

from __future__ import annotations

import linecache
import os
import threading
import warnings
from pathlib import Path
from types import FrameType
from typing import Any

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_LOCK = threading.Lock()
_WARNED: list[str] = []  # the folder warned about, once per process


class CacheWarning(UserWarning):
    """The cache folder cannot be written: derivatives are compiled in memory instead."""


def write_atomic(path: Path, data: bytes, tmp: Path) -> None:
    """Write `data` to `tmp` (a new 0600 file) and rename it over `path`. On any failure the
    temporary file is removed and the error raised."""
    fd = -1
    try:
        fd = os.open(tmp, _CREATE, 0o600)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.close(fd)
        fd = -1
        os.replace(tmp, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def unwritable(folder: Path, exc: OSError) -> None:
    """Say once per process that a cache folder cannot be written, and why."""
    with _LOCK:
        if _WARNED:
            return
        _WARNED.append(str(folder))
    warnings.warn(
        f"sourcead cannot write to the cache folder {folder} ({exc.strerror or exc}): what it compiles stays "
        "in memory in this process, and is compiled again in the next. Free some space, or set "
        "SOURCEAD_CACHE_DIR (NUMBA_CACHE_DIR for numba's cache of your own functions) to a folder you can write to.",
        CacheWarning,
        stacklevel=_callers_level(),
    )


def _callers_level() -> int:
    """The stack level of the first frame outside sourcead and numba: where the warning points."""
    import sys

    frame: FrameType | None = sys._getframe(2)
    level = 2
    while frame is not None and any(part in frame.f_code.co_filename for part in _INTERNAL):
        frame, level = frame.f_back, level + 1
    return level


_INTERNAL = (str(Path(__file__).parent.parent), f"{os.sep}numba{os.sep}", "sourcead_")  # sourcead/, numba


def remember(path: Path, text: str) -> None:
    """Keep a module's text for tracebacks, pdb and `inspect`, whether or not its file exists."""
    linecache.cache[str(path)] = (len(text), None, text.splitlines(True), str(path))


def tolerant(cache: Any) -> Any:
    """numba's per-function disk cache `cache` (of a dispatcher), whose saves, when they cannot
    write, warn once instead of failing the call that compiled."""
    save = cache.save_overload

    def save_overload(sig: Any, data: Any) -> None:
        try:
            save(sig, data)
        except OSError as exc:
            unwritable(Path(cache._cache_path), exc)

    cache.save_overload = save_overload
    return cache
