"""The explaining run, and interrupts: what happens around a raw error out of the generated code.

A raw error (an index out of range, a TypeError) is explained by running the user's own
function in Python on copies of the arguments (`callplan.explain`). That run is bounded: a
trace on this thread alone stops it once it has taken `SECONDS`, and the error is then reported
without the explanation. A compiled loop may run for minutes where the same loop in Python
runs for hours.

An interrupt is never explained: Ctrl-C during compiled code reaches the caller as a
SystemError ("returned a result with an exception set") whose cause is the KeyboardInterrupt.
`reraise_interrupt` raises the interrupt itself (any BaseException that is not an Exception:
KeyboardInterrupt, SystemExit, GeneratorExit), at once.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

SECONDS = 10.0  # the explaining run's budget
_EVERY = 256  # trace events between two looks at the clock


class OutOfTime(BaseException):  # noqa: N818 - a BaseException, so the user's `except Exception` lets it through
    """The explaining run took longer than its budget and was stopped."""


def reraise_interrupt(exc: BaseException) -> None:
    """Raise the interrupt `exc` carries (as its cause or context), if it carries one."""
    seen: set[int] = set()
    inner: BaseException | None = exc
    while inner is not None and id(inner) not in seen:
        if not isinstance(inner, Exception):
            raise inner from None
        seen.add(id(inner))
        inner = inner.__cause__ or inner.__context__


def bounded(func: Callable, args: list, seconds: float | None = None) -> Any:
    """`func(*args)` in Python, stopped with `OutOfTime` once it has run `seconds` (default
    `SECONDS`). The trace is this thread's alone and the one in place (a debugger's, coverage's)
    is put back after; functions compiled by numba run untraced, each call as one step."""
    deadline = time.monotonic() + (SECONDS if seconds is None else seconds)
    count = 0

    def trace(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        count += 1
        if count % _EVERY == 0 and time.monotonic() > deadline:
            raise OutOfTime
        return trace

    previous = sys.gettrace()
    sys.settrace(trace)
    try:
        return func(*args)
    finally:
        sys.settrace(previous)
