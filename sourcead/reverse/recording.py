"""How a value the forward sweep records reaches the reverse sweep: one strategy per record.

A recorded statement is an assignment whose old value an adjoint reads, an `if` whose taken
branch its reversal needs, or a loop whose trip count its reversal needs. The reverse plan
(`reverse/plan.py`) gives each one `Recording`:

- `OnTape`: pushed on the float or int tape (the main tapes, or a parallel iteration's own), and
  popped at its mirror point;
- `InRegister`: a local variable, for what a replayed parallel iteration records once;
- `InSlot`: the iteration's own slot of the main tape, for the elements a parallel loop overwrites
  (each iteration owns a range of the tape at an offset computed from the loop index);
- `ArrayOnTape` and `ArrayInRegister`: the same for rows, slices and whole arrays, flattened;
- `Undone`: nothing kept, an integer increment by a value that never changes (`idx += 1`) is
  undone by its inverse (`idx -= 1`), exact in integers.

A whole time loop can instead be checkpointed (`checkpoint.py`): snapshots of its state and a
replay of each step, emitted by `reverse/emit/checkpoint.py`.

Each strategy says how many records it puts on each tape per run (`counts`: what the
reservations before a region add up) and writes its two halves (`save`, `load`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..ir.counts import Count
from ..ir.emit import Writer

Tapes = tuple[tuple[str, str], tuple[str, str]]  # ((tape, top), (itape, itop)): floats, then ints and bools


@dataclass(frozen=True)
class Where:
    """Where a record is written: the tapes in use there, the tapes whose room is reserved already
    (plain stores, no capacity check), and the runtime helpers and fresh names the code takes."""

    tapes: Tapes
    exact: frozenset[str]
    helpers: set[str]
    fresh: Callable[[str], str]


class Recording:
    """The interface: records per run on tape 0 (floats) or 1 (ints), and the two halves."""

    def counts(self, index: int) -> Count | None:
        """Records this puts on tape `index` each time it runs; None: known only when it runs."""
        return Count()

    def uses(self, index: int) -> bool:
        """Does it write to tape `index` at all?"""
        return False

    def save(self, value: str, comment: str, out: Writer, at: Where) -> None:
        raise NotImplementedError

    def load(self, target: str, comment: str, out: Writer, at: Where) -> None:
        raise NotImplementedError


def position(index: str) -> str:
    """A tape position as an index: unsigned, so numba leaves out its negative-index wraparound
    (a signed `tape[top]` compiles to a select on `top < 0` that keeps LLVM from vectorising the
    loop around it: a loop recording `yt[i]` ran 2.8x slower, one restoring it 1.4x). A position
    is never negative: `top` starts at 0 and each pop undoes a push."""
    return f"np.uint64({index})"


def _suffix(comment: str) -> str:
    return f"  # {comment}" if comment else ""


@dataclass(frozen=True)
class OnTape(Recording):
    index: int  # 0: the float tape; 1: the int tape

    def counts(self, index: int) -> Count | None:
        return Count.of(1 if index == self.index else 0)

    def uses(self, index: int) -> bool:
        return index == self.index

    def save(self, value: str, comment: str, out: Writer, at: Where) -> None:
        tape, top = at.tapes[self.index]
        if tape not in at.exact:  # no bound known at the entry of this statement: grow by doubling
            at.helpers.add("reserve")
            with out.block(f"if {top} == {tape}.shape[0]"):
                out.line(f"{tape} = reserve({tape}, 2 * {top} + 16)")
        out.line(f"{tape}[{position(top)}] = {value}  # {comment}")
        out.line(f"{top} += 1")

    def load(self, target: str, comment: str, out: Writer, at: Where) -> None:
        tape, top = at.tapes[self.index]
        out.line(f"{top} -= 1")
        out.line(f"{target} = {tape}[{position(top)}]{_suffix(comment)}")


@dataclass(frozen=True)
class InRegister(Recording):
    name: str

    def save(self, value: str, comment: str, out: Writer, at: Where) -> None:
        if value != self.name:  # a loop's trip counter is its own register
            out.line(f"{self.name} = {value}  # {comment}")

    def load(self, target: str, comment: str, out: Writer, at: Where) -> None:
        if target != self.name:
            out.line(f"{target} = {self.name}{_suffix(comment)}")


@dataclass(frozen=True)
class InSlot(Recording):
    """Counted by the parallel loop that owns the slots (`reverse_plan.slot_count`), not here."""

    tape: str  # the main float tape
    slot: str  # the next position in this iteration's slot

    def save(self, value: str, comment: str, out: Writer, at: Where) -> None:
        out.line(f"{self.tape}[{position(self.slot)}] = {value}  # {comment}")
        out.line(f"{self.slot} += 1")

    def load(self, target: str, comment: str, out: Writer, at: Where) -> None:
        out.line(f"{self.slot} -= 1")
        out.line(f"{target} = {self.tape}[{position(self.slot)}]{_suffix(comment)}")


@dataclass(frozen=True)
class ArrayOnTape(Recording):
    """The values a row, slice or whole array overwrites, flattened onto the tape of their dtype; a
    whole array also saves its shape on the int tape. It reserves its own room when it runs."""

    index: int
    ndim: int
    dtype: str
    whole: bool  # the array rebound (not its elements written)

    def counts(self, index: int) -> Count | None:
        return None

    def uses(self, index: int) -> bool:
        return index == self.index or index == 1 and self.whole

    def save(self, value: str, comment: str, out: Writer, at: Where) -> None:
        (tape, top), (itape, itop) = at.tapes[self.index], at.tapes[1]
        at.helpers.update(("reserve", "record_flat"))
        out.line(f"{tape} = reserve({tape}, {top} + {value}.size)  # {comment}")
        out.line(f"record_flat({tape}, {top}, {value})")
        out.line(f"{top} += {value}.size")
        if self.whole:  # the shape last: the load pops it first, and an int or bool array's values share its tape
            out.line(f"{itape} = reserve({itape}, {itop} + {self.ndim})")
            for k in range(self.ndim):
                out.line(f"{itape}[{position(itop)}] = {value}.shape[{k}]")
                out.line(f"{itop} += 1")

    def load(self, target: str, comment: str, out: Writer, at: Where) -> None:
        (tape, top), (itape, itop) = at.tapes[self.index], at.tapes[1]
        cast = "" if self.dtype == "float" else f".astype(np.{'bool_' if self.dtype == 'bool' else 'int64'})"
        if not self.whole:
            out.line(f"{top} -= {target}.size")
            if not cast:  # in place, by the runtime's loop (`restore_flat`), not as a slice assigned from an array
                at.helpers.add("restore_flat")
                out.line(f"restore_flat({tape}, {top}, {target})  # restore the values {target} had before")
                return
            out.line(f"{target} = {tape}[{top} : {top} + {target}.size].reshape({target}.shape){cast}"
                     f"  # restore the values {target} had before")  # fmt: skip
            return
        shape = at.fresh("shape")
        out.line(f"{itop} -= {self.ndim}")
        dims = ", ".join(f"{itape}[{itop} + {k}]" for k in range(self.ndim))
        out.line(f"{shape} = ({dims},)" if self.ndim == 1 else f"{shape} = ({dims})")
        size = " * ".join(f"{shape}[{k}]" for k in range(self.ndim))
        out.line(f"{top} -= {size}")
        out.line(f"{target} = {tape}[{top} : {top} + {size}].reshape({shape}).copy(){cast}"
                 f"  # restore the array {target} was before")  # fmt: skip


@dataclass(frozen=True)
class ShapeOnTape(Recording):
    """The shape an array had before it is bound again, on the int tape: its adjoint starts again
    at zero with that shape (`t = x[:k] * 2.0` in a loop changes `t`'s shape every iteration)."""

    ndim: int

    def counts(self, index: int) -> Count | None:
        return Count.of(self.ndim if index == 1 else 0)

    def uses(self, index: int) -> bool:
        return index == 1

    def save(self, value: str, comment: str, out: Writer, at: Where) -> None:
        itape, itop = at.tapes[1]
        if itape not in at.exact:
            at.helpers.add("reserve")
            out.line(f"{itape} = reserve({itape}, {itop} + {self.ndim})  # {comment}")
        for k in range(self.ndim):
            out.line(f"{itape}[{position(itop)}] = {value}.shape[{k}]")
            out.line(f"{itop} += 1")

    def load(self, target: str, comment: str, out: Writer, at: Where) -> None:
        itape, itop = at.tapes[1]
        out.line(f"{itop} -= {self.ndim}")
        dims = ", ".join(f"{itape}[{itop} + {k}]" for k in range(self.ndim))
        out.line(
            f"{target} = ({dims},){_suffix(comment)}" if self.ndim == 1 else f"{target} = ({dims}){_suffix(comment)}"
        )


@dataclass(frozen=True)
class Undone(Recording):
    """An integer `x += v` (or `-=`) whose `v` has one value wherever it runs: nothing saved, the
    reverse sweep subtracts `v` again (a counter `idx += 1` in a loop: no record per increment)."""

    inverse: str  # the statement that undoes it, `idx -= 1`

    def save(self, value: str, comment: str, out: Writer, at: Where) -> None:
        pass

    def load(self, target: str, comment: str, out: Writer, at: Where) -> None:
        out.line(f"{self.inverse}  # undo it: the value {target} had before")


@dataclass(frozen=True)
class ArrayInRegister(Recording):
    name: str

    def save(self, value: str, comment: str, out: Writer, at: Where) -> None:
        out.line(f"{self.name} = np.copy({value})  # {comment}")

    def load(self, target: str, comment: str, out: Writer, at: Where) -> None:
        out.line(f"{target} = {self.name}  # restore the values {target} had before")
