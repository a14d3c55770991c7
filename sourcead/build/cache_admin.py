"""`sourcead cache info` and `sourcead cache clear`: what the cache folder holds and what in it would
be refused; deleting sourcead's files (never anything else) and making the folder private again.
"""

from __future__ import annotations

import os
import stat
import warnings
from pathlib import Path
from typing import Any

from .cache_folder import _SUBFOLDERS, _UID, _folder_problem, _refusal, _root, _why_untrusted


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
