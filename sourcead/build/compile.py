"""Compile, after the passes: generated module -> content-addressed file -> verified import -> numba.njit.
This module is the load step (`load`: a key file, or the pipeline, to a verified module and its
dispatcher); each other step is a module of its own in `build/`: `spec.py` (what a key file
records), `keys.py` (the hashes), `cache_folder.py` (what may be read), `modules.py` (write and
execute a module), `plain.py` (`jit=False`), `jit.py` (numba's options and dispatcher),
`numba_cache.py` (numba's records), `cache_admin.py` (`sourcead cache info / clear`).

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
and nobody else can write them (`cache_folder.py`); anything else is refused.

The module is registered in `sys.modules` under its real name before numba compiles it, which
numba needs to find its cache in the next process.
"""

from __future__ import annotations

import hashlib
import json
import re
import types
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from .. import nested
from . import cache_writes
from .cache_folder import _read_private, cache_dir
from .jit import bounds_checked, by_arguments, compiled_parallel, jit_module, warn_serial
from .keys import _RUNTIME, module_name
from .keys import source_key as source_key  # re-exported: api/ prepares with compile.load and source_key
from .modules import _LOCK, _execute, _write
from .plain import _plain_python
from .spec import Compiled, Spec

_LOADED: dict[str, types.ModuleType] = {}  # module name -> module, for this process


def loaded(name: str) -> types.ModuleType | None:
    """The generated module `name` if this process has loaded it (`load` has), else None."""
    return _LOADED.get(name)


def companion(stem: str, text: str) -> types.ModuleType:
    """A module written beside a generated one (a `.njit` entry, a batch loop: `api/`), named
    `sourcead_<stem>_<hash of its text and the runtime>`: written to the cache folder once and
    loaded once per process, under the lock every load takes."""
    name = f"sourcead_{stem}_{hashlib.sha256((_RUNTIME + text).encode()).hexdigest()[:20]}"
    with _LOCK:
        module = _LOADED.get(name)
        if module is None:
            path = _write(cache_dir() / f"{name}.py", text)
            module = _LOADED[name] = _execute(name, path, text)
    return module


_MODULE_NAME = re.compile(r"sourcead_\w+_([0-9a-f]{20})\Z")
_SPEC_FORMAT = 4  # 2: the key file records its own key; 3: parameter types with dtypes; 4: a shape contract
_ENTRY_SUFFIXES = ("_jvp", "_vjp", "_grad", "_primal", "_hvp")


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
        nested.bind_ahead(gen.source)  # with no load lock held (nested.py)
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
    chosen = by_arguments(spec, module, companion)
    if chosen is not None:
        return Compiled(spec, source, python, chosen, path)
    warn_serial(spec)
    jitted = jit_module(module, spec.entry, compiled_parallel(spec), bounds_checked(spec))
    return Compiled(spec, source, python, jitted, path)


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
        nested.bind_ahead(text)  # with no load lock held (nested.py)
        with _LOCK:
            module = _LOADED.get(name)
            if module is None:
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
