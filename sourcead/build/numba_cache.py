"""numba's disk cache of generated modules: in the cache folder's own `__pycache__/` (whatever
NUMBA_CACHE_DIR says), each record written 0600 and read only if this user's and nobody else's,
guarded by a checksum bound to its name and module: a damaged or swapped record is compiled
again, never a crash and never another's code.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numba
from numba.core.caching import CompileResultCacheImpl, FunctionCache, IndexDataCacheFile, _CacheLocator

from . import cache_writes
from .cache_folder import _folder_problem, _read_private, _refusal


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
