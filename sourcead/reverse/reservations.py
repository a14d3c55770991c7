"""The plan's last step, `reservations`: where each main tape is reserved, so that every record at
the top level is covered and the records themselves are plain stores. It reads the plan's count
of the records each top-level statement makes, computable at its entry (`ReversePlan.bound_stmt`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..ir.core import Assign, Stmt, assigned_names
from ..ir.counts import Count


@dataclass(frozen=True)
class Reservation:
    """Room reserved on one main tape around a top-level statement: `before` it (its records and
    the straight-line ones up to the next such statement), or `after` it (the straight-line records
    that follow a statement whose own records check capacity). None where there is none."""

    before: Count | None = None
    after: Count | None = None


def reservations(
    bound_stmt: Callable[[Stmt, int, set[str]], Count | None], body: tuple[Stmt, ...]
) -> tuple[tuple[Count, Count], dict[Stmt, tuple[Reservation, Reservation]]]:
    """Where each main tape is reserved, so that every record at the top level is covered: the
    first allocation holds the straight-line records before the first statement that records
    more; before each such statement whose records can be counted at its entry, the tape is
    reserved for them and for the straight-line records that follow it, up to the next one;
    after one whose records cannot be counted (they check capacity themselves), for the
    straight-line records that follow it. `bound_stmt(s, tape, inside)`: the records `s` makes
    on `tape`, computable before it runs from names not in `inside`, or None."""
    first = [Count(), Count()]
    entries: dict[Stmt, list[list[Count | None]]] = {}
    for index in (0, 1):
        pending: tuple[str, Stmt | None] = ("first", None)
        for s in body:
            records = bound_stmt(s, index, assigned_names((s,)))
            if isinstance(s, Assign) and records is not None:
                where, at = pending
                if where == "first":
                    first[index] = first[index] + records
                else:
                    assert at is not None  # a statement that reserves came before
                    slot = 0 if where == "before" else 1
                    added = entries[at][index][slot]
                    assert added is not None  # set when `at` was reserved for
                    entries[at][index][slot] = added + records
                continue
            if records is not None and records.is_zero:
                continue  # records nothing on this tape
            entry = entries.setdefault(s, [[None, None], [None, None]])
            if records is not None:
                entry[index][0] = records
                pending = ("before", s)
            else:
                entry[index][1] = Count()
                pending = ("after", s)
    found = {s: (Reservation(*entry[0]), Reservation(*entry[1])) for s, entry in entries.items()}
    return (first[0], first[1]), found
