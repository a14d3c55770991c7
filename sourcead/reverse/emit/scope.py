"""What the emitters of the sweeps share, so that none imports another: what the code collects as
it is written (`Emission`), where it is written (`Scope`), and the parts of the two sweeps and of
the dispatcher (`dispatch.py`) that the emitters of checkpointed and gathered loops call back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from ...analysis.program import Program
from ...ir.core import Assign, For, Stmt
from ...ir.emit import Line, Writer
from ..checkpoint import Checkpointed
from ..gather import Gather
from ..parallel import ParallelLoop
from ..plan import ReversePlan
from ..recording import Tapes


@dataclass
class Emission:
    """What the code of both sweeps collects as it is written: the runtime helpers it calls, and
    the names that have a typed value at the top of the function."""

    helpers: set[str] = field(default_factory=set)
    placed: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class Scope:
    """Where the sweeps write: the tapes in use; in a parallel adjoint's iteration, the loop it
    replays and the partial sums of the shared scalar adjoints it accumulates; in the body of a
    `while` loop recorded in chunks of iterations, the flag its `break` sets to end the loop; in
    the reversed iterations of a loop whose contributions at constant offsets were gathered before
    them, the adjoint lines left for each statement (`gather.py`)."""

    tapes: Tapes
    replaying: ParallelLoop | None = None
    partial_sums: Mapping[str, str] = field(default_factory=dict)
    done: str | None = None
    residual: Mapping[Assign, tuple[Line, ...]] = field(default_factory=dict)


class ForwardWriter(Protocol):
    """The forward sweep, as the emitters of checkpointed loops call it back (`forward_sweep.py`)."""

    plan: ReversePlan
    emission: Emission

    def sweep(self, body: tuple[Stmt, ...], out: Writer, exact: set[str] | None, mode: str = "normal") -> None: ...


class ReverseWriter(Protocol):
    """The reverse sweep, as the emitters of checkpointed and gathered loops call it back
    (`reverse_sweep.py`)."""

    plan: ReversePlan
    prog: Program
    emission: Emission
    scope: Scope
    forward: ForwardWriter

    def sweep(self, body: tuple[Stmt, ...], out: Writer) -> None: ...

    def scattered(self, line: Line) -> Line: ...


class Dispatch(Protocol):
    """Which emitter writes which kind of statement or loop (`dispatch.py` is the one there is)."""

    def forward(self, plan: ReversePlan, emission: Emission, scope: Scope) -> ForwardWriter: ...

    def reverse(self, plan: ReversePlan, emission: Emission, scope: Scope) -> ReverseWriter: ...

    def forward_checkpointed(self, loop: Checkpointed, sweep: ForwardWriter, out: Writer) -> None: ...

    def reverse_checkpointed(self, loop: Checkpointed, sweep: ReverseWriter, out: Writer) -> None: ...

    def gathered(self, sweep: ReverseWriter, loop: For, gather: Gather, out: Writer, parallel: bool) -> None: ...
