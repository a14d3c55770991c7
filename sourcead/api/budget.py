"""`memory=`: the budget, in bytes, for the snapshots of checkpointed loops."""

from __future__ import annotations

import re

from ..errors import SourceADError

_UNITS = {
    "": 1,
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}
_HINT = 'Give bytes as an int, or a string with a unit: memory="64kB", "16MB", "2GB" (or KiB, MiB, GiB).'


def memory_bytes(memory: int | str | None) -> int | None:
    """`memory` in bytes (None: no budget). kB, MB, GB are powers of 1000; KiB, MiB, GiB of 1024."""
    if memory is None:
        return None
    if isinstance(memory, bool) or not isinstance(memory, (int, str)):
        raise SourceADError(f"memory= must be an int or a string, got {type(memory).__name__}", hint=_HINT)
    if isinstance(memory, int):
        value = memory
    else:
        found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*", memory)
        unit = found.group(2).lower() if found else None
        if found is None or unit not in _UNITS:
            raise SourceADError(f"memory={memory!r} is not a size", hint=_HINT)
        value = int(float(found.group(1)) * _UNITS[unit])
    if value <= 0:
        raise SourceADError(f"memory={memory!r} must be positive", hint=_HINT)
    return value
