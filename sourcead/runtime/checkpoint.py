"""Runtime helpers of checkpointed loops: how many snapshots, where they go, and the order in which
the reverse sweep restores, stores, advances and reverses steps (`reverse/emit/checkpoint.py` writes the
calls; `sourcead.runtime` re-exports them for generated code).

Offline (a `for` loop whose step count is known at its entry): binomial checkpointing, Griewank and
Walther's revolve. A checkpointed loop keeps snapshots of the state its body overwrites instead of recording each
step. Its reverse sweep reverses steps lo..hi-1 from a snapshot of the state at lo: with c free
snapshot slots it advances m steps, stores the state there, reverses m..hi-1 with c - 1 slots,
restores lo and reverses lo..lo+m-1 with c slots; with none left it advances from lo to each
step in turn. revolve's choice of m makes the number of advances the fewest possible,
r * l - C(s + r, r - 1) for l steps, s = c + 1 snapshots and the least r with C(s + r, s) >= l.

Online (a `while` loop, or a `for` loop with a `break`: the step count is known only at the end):
the forward sweep places snapshots as the loop runs, by the levels of Wang, Moin and Iaccarino's
dynamic checkpointing (the state before every step is kept until a later, higher-level snapshot
makes it dispensable). Once the loop ends, its step count is known, and each stretch between two
snapshots held is reversed as revolve would, with the slots that stretch has free (the task stack
of `checkpoint_next`, one task per stretch, the last on top).

A plan is an int64 array: row 0 holds (tasks pending, the step the state is at, whether that state
is valid); rows 1.. are the task stack (lo, hi, logical slot, next step, phase) in columns 0-4, and
column 5 of row 1 + q names the row of the snapshot arrays that holds logical snapshot q (the
snapshots in step order; online placement keeps them in any rows).
"""

from __future__ import annotations

import numpy as np
from numba.extending import overload, register_jitable

from .lowered import advise_huge_pages

# the helpers generated code may import (`sourcead.runtime.HELPERS` is the union of these lists)
__all__ = [
    "checkpoint_slots",
    "checkpoint_schedule",
    "checkpoint_next",
    "checkpoint_online",
    "checkpoint_capacity",
    "checkpoint_grow",
    "checkpoint_store",
    "checkpoint_restore",
    "checkpoint_place",
    "checkpoint_online_plan",
]

CHECKPOINT_RESTORE = 0  # restore the state held in snapshot `slot` (the state before step a)
CHECKPOINT_STORE = 1  # store the current state (before step a) in snapshot `slot`
CHECKPOINT_ADVANCE = 2  # run steps a .. b - 1 without records
CHECKPOINT_STEP = 3  # run step a with its records, then its adjoint


@register_jitable
def checkpoint_slots(steps, snapshot_bytes, budget):
    """How many snapshots a checkpointed loop of `steps` steps keeps: as many as `budget` bytes hold
    (at most one per step), or about sqrt(steps) where no budget is given (budget < 0)."""
    if steps <= 1:
        return 1
    if budget < 0:
        slots = 2
        while slots * slots < steps:
            slots += 1
        return min(slots, steps)
    fits = budget // max(snapshot_bytes, 1)
    if fits < 1:
        raise MemoryError("sourcead: the memory budget is smaller than one snapshot of a checkpointed loop's state")
    return min(fits, steps)


@register_jitable
def _revolve_split(steps, free):
    """revolve's first advance for reversing `steps` steps (>= 2) with `free` (>= 1) empty slots."""
    ds = free + 1  # snapshots, counting the one held at the start
    reps = 0
    span = 1
    while span < steps:
        reps += 1
        span = span * (reps + ds) // reps
    bino1 = span * reps // (ds + reps)
    bino2 = bino1 * ds // (ds + reps - 1) if ds > 1 else 1
    if ds == 1:
        bino3 = 0
    elif ds > 2:
        bino3 = bino2 * (ds - 1) // (ds + reps - 2)
    else:
        bino3 = 1
    bino4 = bino2 * (reps - 1) // ds
    if ds < 3:
        bino5 = 0
    elif ds > 3:
        bino5 = bino3 * (ds - 2) // reps
    else:
        bino5 = 1
    if steps <= bino1 + bino3:
        m = bino4
    elif steps >= span - bino5:
        m = bino1
    else:
        m = steps - bino2 - bino3
    return min(max(m, 1), steps - 1)


@register_jitable
def checkpoint_schedule(steps, slots):
    """Where the forward sweep snapshots a checkpointed loop's state, and where its reverse sweep
    starts: `stores`, rows (step, slot), the snapshots taken before those steps run (the first
    advances of the schedule are that one pass from step 0); `plan`, the state `checkpoint_next`
    steps through (row 0: tasks pending, the step the state is at, whether it is valid; then a
    stack of tasks: lo, hi, slot, next step, phase). Memory: O(slots), whatever the step count."""
    stores = np.zeros((slots + 1, 2), np.int64)  # row 0: the state at the loop's entry, in slot 0
    n_stores = 1
    plan = np.zeros((slots + 65, 6), np.int64)
    for q in range(slots):
        plan[1 + q, 5] = q  # every snapshot in its own slot, in step order
    pending, lo, slot = 0, 0, 0
    while steps - lo > 1 and slots - 1 - slot > 0:
        m = _revolve_split(steps - lo, slots - 1 - slot)
        plan[1 + pending, 0], plan[1 + pending, 1], plan[1 + pending, 2], plan[1 + pending, 3] = lo, lo + m, slot, -1
        pending += 1
        lo, slot = lo + m, slot + 1
        stores[n_stores, 0], stores[n_stores, 1] = lo, slot
        n_stores += 1
    if steps > 0:
        plan[1 + pending, 0], plan[1 + pending, 1], plan[1 + pending, 2], plan[1 + pending, 3] = lo, steps, slot, -1
        pending += 1
    plan[0, 0], plan[0, 1], plan[0, 2] = pending, steps, 0  # at the end of the loop: no snapshot's state
    return stores[:n_stores].copy(), plan


@register_jitable
def checkpoint_next(plan, slots):
    """The next action of the reverse sweep of a checkpointed loop: (plan, action, a, b, slot) with
    action CHECKPOINT_RESTORE, _STORE, _ADVANCE or _STEP, or -1 when every step is reversed; `slot`
    is the row of the snapshot arrays to restore from or store into. `plan` may come back larger
    (its task stack grows by doubling)."""
    while True:
        pending, at, valid = plan[0, 0], plan[0, 1], plan[0, 2] == 1
        if pending == 0:
            return plan, -1, 0, 0, 0
        top = pending  # the task on top of the stack is row `pending`
        lo, hi, slot, j, phase = plan[top, 0], plan[top, 1], plan[top, 2], plan[top, 3], plan[top, 4]
        if j == -2:  # the state was just advanced to lo: snapshot it in its slot
            plan[top, 3] = -1
            return plan, CHECKPOINT_STORE, lo, 0, plan[1 + slot, 5]
        if not (valid and at == lo) and (j == -1 or phase == 0):
            plan[0, 1], plan[0, 2] = lo, 1
            if j >= 0:
                plan[top, 4] = 1
            return plan, CHECKPOINT_RESTORE, lo, 0, plan[1 + slot, 5]
        if j == -1:  # a task not yet started, the state before its first step at hand
            free = slots - 1 - slot
            if hi - lo == 1:
                plan[0, 0], plan[0, 2] = pending - 1, 0
                return plan, CHECKPOINT_STEP, lo, 0, slot
            if free == 0:  # no slot left: from lo to each step in turn, the last first
                plan[top, 3], plan[top, 4] = hi - 1, 1
                continue
            m = _revolve_split(hi - lo, free)
            if pending + 2 >= plan.shape[0]:
                bigger = np.zeros((2 * plan.shape[0], 6), np.int64)
                bigger[: plan.shape[0]] = plan
                plan = bigger
            plan[top, 1] = lo + m  # this task becomes lo .. lo + m - 1, after the rest
            plan[top + 1, 0], plan[top + 1, 1], plan[top + 1, 2], plan[top + 1, 3] = lo + m, hi, slot + 1, -2
            plan[top + 1, 4] = 0
            plan[0, 0], plan[0, 1], plan[0, 2] = pending + 1, lo + m, 1
            return plan, CHECKPOINT_ADVANCE, lo, lo + m, slot
        # a task with no free slot, at step j: advance from lo (if j > lo), then step j
        if phase == 1:
            plan[top, 4] = 2
            if j > lo:
                plan[0, 1] = j
                return plan, CHECKPOINT_ADVANCE, lo, j, slot
            continue
        plan[0, 2] = 0
        if j == lo:
            plan[0, 0] = pending - 1
        else:
            plan[top, 3], plan[top, 4] = j - 1, 0
        return plan, CHECKPOINT_STEP, j, 0, slot


_ENTRY_LEVEL = 1 << 62  # the snapshot of the loop's entry state: never dispensable
_PLACE_BYTES = 40  # a row of the placement table, per snapshot slot


@register_jitable
def checkpoint_online(snapshot_bytes, budget):
    """The placement table of an online-checkpointed loop. Row 0: (snapshots held, the most it may
    hold, 1 if a budget fixes that number, the slot of the latest snapshot, ascents on the stack);
    row 1 + slot: (step, level, previous slot, next slot in step order, and in column 4 one entry of
    the stack of ascents: slots whose level is below the next one's, in step order). Without a
    budget (budget < 0) it holds about sqrt(steps so far), growing."""
    if budget < 0:
        table = np.zeros((17, 5), np.int64)
        table[0, 1], table[0, 2] = 2, 0
        return table
    fits = budget // max(snapshot_bytes + _PLACE_BYTES, 1)
    if fits < 1:
        raise MemoryError("sourcead: the memory budget is smaller than one snapshot of a checkpointed loop's state")
    table = np.zeros((fits + 1, 5), np.int64)
    table[0, 1], table[0, 2] = fits, 1
    return table


@register_jitable
def checkpoint_capacity(table):
    """Rows to allocate for the snapshot arrays at the loop's entry (they grow without a budget)."""
    return table[0, 1] if table[0, 2] == 1 else 4


@register_jitable
def checkpoint_grow(snaps, rows):
    """`snaps` with at least `rows` rows (doubling), its rows kept."""
    if snaps.shape[0] >= rows:
        return snaps
    bigger = np.empty((max(rows, 2 * snaps.shape[0]),) + snaps.shape[1:], snaps.dtype)
    advise_huge_pages(bigger)
    bigger[: snaps.shape[0]] = snaps
    return bigger


STATE_CHANGED_SHAPE = "a checkpointed loop's state array changed shape between snapshots"


def checkpoint_store(snaps, slot, a):
    """`snaps[slot] = a`: a snapshot of the state array `a` in row `slot`. The snapshots have the
    shape the state had when the loop started; a state that changes shape is refused (ValueError
    with STATE_CHANGED_SHAPE, which the call reports as the user's), never stored broadcast."""
    if a.shape != snaps.shape[1:]:
        raise ValueError(STATE_CHANGED_SHAPE)
    snaps[slot] = a


@overload(checkpoint_store)
def _checkpoint_store(snaps, slot, a):
    def store(snaps, slot, a):  # element by element: numba's row assignment is far slower
        if a.shape != snaps.shape[1:]:
            raise ValueError(STATE_CHANGED_SHAPE)
        row = snaps[slot].reshape(a.size)
        k = 0
        for value in a.flat:
            row[k] = value
            k += 1

    return store


def checkpoint_restore(a, snaps, slot):
    """`a[...] = snaps[slot]`: the state array `a` as snapshot `slot` holds it, in its own buffer."""
    a[...] = snaps[slot]


@overload(checkpoint_restore)
def _checkpoint_restore(a, snaps, slot):
    def restore(a, snaps, slot):
        row = snaps[slot].reshape(a.size)
        for k in range(a.size):
            a.flat[k] = row[k]

    return restore


@register_jitable
def checkpoint_place(table, step):
    """Where the state before `step` (just about to run) is kept: (table, slot), slot -1 if it is not.
    Wang, Moin and Iaccarino's rule: into a free slot at level 0; else in place of the latest
    dispensable snapshot (one with a later snapshot of a higher level), at level 0; else in place of
    the latest snapshot (the previous step's), one level higher. The latest dispensable snapshot is
    the latest ascent (a level below the next snapshot's), so a stack of ascents finds it in O(1)."""
    held, limit, tail, ascents = table[0, 0], table[0, 1], table[0, 3], table[0, 4]
    if table[0, 2] == 0:
        while limit * limit < step + 1:  # no budget: about sqrt(steps) snapshots
            limit += 1
        table[0, 1] = limit
    if step == 0:
        table[0, 0], table[0, 3], table[0, 4] = 1, 0, 0
        table[1, 0], table[1, 1], table[1, 2], table[1, 3] = 0, _ENTRY_LEVEL, -1, -1
        return table, 0
    if held < limit:
        if held + 1 >= table.shape[0]:
            bigger = np.zeros((2 * table.shape[0], 5), np.int64)
            bigger[: table.shape[0]] = table
            table = bigger
        slot = held
        table[0, 0] = held + 1
    elif held == 1:
        return table, -1  # one slot, the entry's: every step is replayed from there
    elif ascents > 0:  # drop the latest dispensable snapshot; its neighbours become adjacent
        slot = table[ascents, 4]
        ascents -= 1
        before, after = table[1 + slot, 2], table[1 + slot, 3]
        table[1 + before, 3], table[1 + after, 2] = after, before
        was_ascent = table[1 + before, 1] < table[1 + slot, 1]  # then it is on the stack already
        if not was_ascent and table[1 + before, 1] < table[1 + after, 1]:
            ascents += 1
            table[ascents, 4] = before
    else:  # levels never rise: the previous step's snapshot gives way, one level higher
        before = table[1 + tail, 2]
        table[1 + tail, 0], table[1 + tail, 1] = step, table[1 + tail, 1] + 1
        if table[1 + before, 1] < table[1 + tail, 1]:
            ascents += 1
            table[ascents, 4] = before
        table[0, 4] = ascents
        return table, tail
    table[1 + slot, 0], table[1 + slot, 1], table[1 + slot, 2], table[1 + slot, 3] = step, 0, tail, -1
    table[1 + tail, 3] = slot
    table[0, 3], table[0, 4] = slot, ascents
    return table, slot


@register_jitable
def checkpoint_online_plan(table, steps):
    """After an online-checkpointed loop ran `steps` steps: (slots, plan) for `checkpoint_next`, one
    task per stretch between two snapshots held, the last stretch on top."""
    held, slots = table[0, 0], table[0, 1]
    plan = np.zeros((slots + 65, 6), np.int64)
    slot = 0  # the entry's snapshot, then each next one in step order
    for q in range(held):
        after = table[1 + slot, 3]
        hi = table[1 + after, 0] if after >= 0 else steps
        plan[1 + q, 0], plan[1 + q, 1], plan[1 + q, 2], plan[1 + q, 3] = table[1 + slot, 0], hi, q, -1
        plan[1 + q, 5] = slot
        slot = after
    for q in range(held, slots):
        plan[1 + q, 5] = q  # the slots in use are rows 0 .. held - 1 of the snapshot arrays
    plan[0, 0], plan[0, 1], plan[0, 2] = held, steps, 0
    return slots, plan
