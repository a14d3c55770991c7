"""The one place that knows which emitter writes which kind of statement or loop: the forward
sweep (`forward_sweep.py`) and the reverse sweep (`reverse_sweep.py`) write the statements, and
hand checkpointed loops (`checkpoint.py`) and the gathered contributions of a reversed loop
(`gather.py`) to their emitters through it. No emitter imports another: each receives this
dispatcher (the `Dispatch` of `scope.py`) or the sweep that called it.
"""

from __future__ import annotations

from ...ir.core import For
from ...ir.emit import Writer
from ..checkpoint import Checkpointed
from ..gather import Gather
from ..plan import ReversePlan
from .checkpoint import forward_checkpointed, reverse_checkpointed
from .forward_sweep import ForwardSweep
from .gather import write_gathered
from .reverse_sweep import ReverseSweep
from .scope import Emission, ForwardWriter, ReverseWriter, Scope


class Emitters:
    """The emitters of reverse mode's code, by what they write."""

    def forward(self, plan: ReversePlan, emission: Emission, scope: Scope) -> ForwardSweep:
        """The forward sweep: the primal with its records (or without, in its modes)."""
        return ForwardSweep(plan, emission, scope, self)

    def reverse(self, plan: ReversePlan, emission: Emission, scope: Scope) -> ReverseSweep:
        """The reverse sweep: the statements backwards, each restoring what it overwrote."""
        return ReverseSweep(plan, emission, scope, self)

    def forward_checkpointed(self, loop: Checkpointed, sweep: ForwardWriter, out: Writer) -> None:
        """A checkpointed loop in the forward sweep: no records, snapshots of its state."""
        forward_checkpointed(loop, sweep, out)

    def reverse_checkpointed(self, loop: Checkpointed, sweep: ReverseWriter, out: Writer) -> None:
        """A checkpointed loop in the reverse sweep: its steps again from snapshots, as scheduled."""
        reverse_checkpointed(loop, sweep, out)

    def gathered(self, sweep: ReverseWriter, loop: For, gather: Gather, out: Writer, parallel: bool) -> None:
        """The contributions a reversed loop gathers, before the rest of its reversal."""
        write_gathered(sweep, loop, gather, out, parallel)
