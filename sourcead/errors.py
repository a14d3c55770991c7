"""Errors that point at the user's code: file, line, column, the line itself and a caret."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Location:
    """A position in a user's source file (line 1-based, column 0-based)."""

    filename: str
    line: int
    column: int
    source_line: str = ""

    def render(self) -> str:
        caret = " " * self.column + "^"
        text = self.source_line.rstrip("\n")
        return f"  File {self.filename}, line {self.line}, column {self.column + 1}\n    {text}\n    {caret}"


class SourceADError(Exception):
    """Base class of every error sourcead raises about the user's code or call.

    `where` is the place in the user's code, when there is one; `hint` says what to do.
    """

    def __init__(self, message: str, where: Location | None = None, hint: str = ""):
        self.message = message
        self.where = where
        self.hint = hint
        super().__init__(self._render())

    def _render(self) -> str:
        parts = [self.message]
        if self.where is not None:
            parts.append(self.where.render())
        if self.hint:
            parts.append(self.hint)
        return "\n".join(parts)

    def one_line(self) -> str:
        """The message on one line, for the command line."""
        if self.where is None:
            return self.message
        return f"{self.where.filename}:{self.where.line}:{self.where.column + 1}: {self.message}"


class AliasingError(SourceADError):
    """Two arguments share memory in a way that makes the derivative ill-defined for us."""


class ShapeError(SourceADError, ValueError):
    """Arguments, tangents or cotangents whose shapes do not fit what the code indexes, or an
    index out of range in the user's code. Also a `ValueError`, as NumPy raises for shapes."""


class ArgumentTypeError(SourceADError, TypeError):
    """An argument, tangent or cotangent of the wrong kind (complex, a float where the code indexes
    an array, an array of the wrong number of dimensions). Also a `TypeError`."""


class RaceWarning(UserWarning):
    """A `prange` loop whose iterations may write what another writes or reads: sourcead runs it
    serially (`races.py`)."""


class BoundsWarning(UserWarning):
    """A derivative with `prange` loops runs serially with numba's bounds checks: an index the
    argument shapes do not bound (named in the message, with its line)."""


def numba_failure(exc: BaseException, what: str) -> SourceADError:
    """The error for an exception out of numba running `what` (the generated code, a batch loop):
    it could not compile it, or the compiled code failed a check numba inserted (a bare
    `AssertionError`: the differentiated subset has no `assert`, so it is never the user's)."""
    detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if isinstance(exc, AssertionError):
        message = f"numba's run-time check failed in {what}: {detail}"
    else:
        message = f"numba could not compile {what}: {detail}"
    return SourceADError(
        message,
        hint="This is a sourcead limitation or bug; please report it with the function's source "
        "(jit=False runs the same generated code without numba).",
    )
