"""The cache folder (`$SOURCEAD_CACHE_DIR`, else the user's cache folder) and what may be read from it.

The trust model (docs/design.md, "Cache trust model"): whoever can write to a folder or file
sourcead reads from can run code as this user, since modules are imported and numba's records
unpickled. So every level read from (the folder, `keys/`, `__pycache__/`, each module, key file
and numba record) must be this user's and writable by nobody else, checked on the open file
itself. Anything else is refused, never repaired and then trusted: a folder that was ever open
may already hold planted files. `sourcead cache clear` is the fix (`cache_admin.py`).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from ..errors import SourceADError
from . import cache_writes

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
