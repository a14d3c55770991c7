"""Checkpointing of time loops (issue 15): binomial (offline) for `for` loops, where the schedule is
revolve's optimum; online for `while` loops and loops with a `break`; nested loops. Gradients are
those of the unbounded adjoint, and memory stays within the budget."""

from __future__ import annotations

import pickle
import tracemalloc
from math import comb

import checkpointing as ck
import numpy as np
import pytest

import sourcead
from sourcead.api.budget import memory_bytes
from sourcead.runtime.checkpoint import (
    CHECKPOINT_ADVANCE,
    CHECKPOINT_RESTORE,
    CHECKPOINT_STEP,
    CHECKPOINT_STORE,
    checkpoint_next,
    checkpoint_online,
    checkpoint_online_plan,
    checkpoint_place,
    checkpoint_schedule,
    checkpoint_slots,
)


def revolve_optimum(steps: int, snapshots: int) -> int:
    """The fewest advances that reverse `steps` steps with `snapshots` snapshots (Griewank)."""
    if steps <= 1:
        return 0
    r = 0
    while comb(snapshots + r, snapshots) < steps:
        r += 1
    return r * steps - comb(snapshots + r, r - 1)


def play(steps: int, slots: int) -> tuple[int, int]:
    """Carry out the schedule on a model whose state is the step index; every action is checked
    against the state it needs. Returns (advances in the reverse sweep, forward steps before the
    last snapshot the forward sweep takes)."""
    stores, plan = checkpoint_schedule(steps, slots)
    snaps: dict[int, int] = {}
    for step, slot in stores:
        snaps[int(slot)] = int(step)
    return reverse_on_the_model(steps, slots, plan, snaps), int(stores[:, 0].max()) if steps else 0


def play_online(steps: int, slots: int | None) -> tuple[int, int]:
    """The online schedule on the same model: snapshots placed step by step (never more than the
    limit), then the reverse sweep. `slots` None: no budget. Returns (advances in the reverse
    sweep, slots at the end)."""
    table = checkpoint_online(8, -1 if slots is None else slots * 48)  # 8 bytes of state, 40 of table
    snaps: dict[int, int] = {}
    for step in range(steps):
        table, slot = checkpoint_place(table, step)
        if slot >= 0:
            snaps[int(slot)] = step
        limit = int(table[0, 1])
        assert len(snaps) <= limit and all(0 <= s < limit for s in snaps)
        assert snaps[0] == 0 and (slot >= 0 or limit == 1)  # the entry, and every step where a slot is left
    final, plan = checkpoint_online_plan(table, steps)
    return reverse_on_the_model(steps, int(final), plan, snaps), int(final)


def reverse_on_the_model(steps: int, slots: int, plan: np.ndarray, snaps: dict[int, int]) -> int:
    state, advances, reversed_steps = steps, 0, []
    while True:
        plan, action, a, b, slot = checkpoint_next(plan, slots)
        if action < 0:
            break
        if action == CHECKPOINT_RESTORE:
            state = snaps[int(slot)]
        elif action == CHECKPOINT_STORE:
            snaps[int(slot)] = state
        elif action == CHECKPOINT_ADVANCE:
            advances += b - a
            state = b
        assert action == CHECKPOINT_RESTORE or state == a or (action == CHECKPOINT_ADVANCE and state == b)
        if action == CHECKPOINT_STEP:
            reversed_steps.append(int(a))
            state = None
        assert len(snaps) <= slots and all(0 <= s < slots for s in snaps)
    assert reversed_steps == list(range(steps - 1, -1, -1))
    return advances


@pytest.mark.parametrize("slots", range(1, 9))
def test_schedule_reverses_every_step_with_the_fewest_advances(slots):
    for steps in range(0, 70):
        advances, forward = play(steps, slots)
        assert advances + forward == revolve_optimum(steps, slots), (steps, slots)


def test_schedule_of_a_long_loop_keeps_its_plan_small():
    advances, forward = play(20_000, 141)
    assert advances + forward == revolve_optimum(20_000, 141)
    _, plan = checkpoint_schedule(20_000, 141)
    assert plan.shape[0] < 400  # the plan is O(snapshots), not O(steps)


@pytest.mark.parametrize("slots", range(1, 9))
def test_online_schedule_reverses_every_step_within_its_slots(slots):
    for steps in range(0, 70):
        play_online(steps, slots)


def place_as_written(snapshots: list[list[int]], step: int, limit: int) -> int:
    """Wang, Moin and Iaccarino's rule by a scan of `snapshots` ([step, level, slot] in step order,
    the entry first): the reference for `checkpoint_place`, which keeps a stack of ascents."""
    if step == 0:
        snapshots.append([0, 1 << 62, 0])
        return 0
    if len(snapshots) < limit:
        snapshots.append([step, 0, len(snapshots)])
        return snapshots[-1][2]
    if limit == 1:
        return -1
    later = [max(level for _, level, _ in snapshots[k + 1 :]) for k in range(len(snapshots) - 1)]
    dispensable = [k for k in range(1, len(snapshots) - 1) if snapshots[k][1] < later[k]]
    if dispensable:
        _, _, slot = snapshots.pop(dispensable[-1])
        snapshots.append([step, 0, slot])
        return slot
    snapshots[-1][0], snapshots[-1][1] = step, snapshots[-1][1] + 1
    return snapshots[-1][2]


@pytest.mark.parametrize("slots", [1, 2, 3, 5, 8, 13])
def test_online_placement_is_the_rule_as_written(slots):
    table, snapshots = checkpoint_online(8, slots * 48), []
    for step in range(400):
        table, slot = checkpoint_place(table, step)
        assert slot == place_as_written(snapshots, step, slots), step


def test_online_schedule_costs_little_more_than_revolve():
    # the forward sweep runs every step in both; the reverse sweep's advances, online (placed without
    # knowing the step count) against offline revolve, which knows it
    worst = 0.0
    for slots in (2, 3, 4, 6, 10, 32):
        for steps in (10, 50, 100, 300, 1000):
            online, offline = play_online(steps, slots)[0], play(steps, slots)[0]
            worst = max(worst, online / max(offline, 1))
    assert worst < 1.3


def test_online_schedule_without_a_budget_keeps_about_sqrt_steps():
    for steps in (10, 100, 1000, 5000):
        advances, slots = play_online(steps, None)
        assert slots == int(np.ceil(np.sqrt(steps)))
        assert advances < 2 * steps  # each step replayed about twice at most, as revolve's r = 2


def test_slots_from_the_budget():
    assert checkpoint_slots(100, 1000, 5000) == 5
    assert checkpoint_slots(3, 1000, 5000) == 3  # never more than one per step
    assert checkpoint_slots(10_000, 1000, -1) == 100  # no budget: about sqrt(steps)
    with pytest.raises(MemoryError, match="smaller than one snapshot"):
        checkpoint_slots(100, 1000, 999)


@pytest.mark.parametrize(
    "given, expected",
    [
        (4096, 4096),
        ("64kB", 64_000),
        ("16MB", 16_000_000),
        ("2GB", 2_000_000_000),
        ("1.5 MiB", 1_572_864),
        (None, None),
    ],
)
def test_memory_sizes(given, expected):
    assert memory_bytes(given) == expected


@pytest.mark.parametrize("given", ["12 parsecs", "", -5, 0, 2.5, True, "MB"])
def test_bad_memory_sizes_are_refused(given):
    with pytest.raises(sourcead.SourceADError, match="memory="):
        sourcead.grad(ck.heat_swap, wrt=(0, 1), jit=False, memory=given)


def _heat_args(n: int = 24):
    rng = np.random.default_rng(3)
    return rng.standard_normal(n), 0.2


def _state_bytes(n: int) -> int:
    return 2 * 8 * n + 16  # u and un, left and right


@pytest.mark.parametrize("steps", [0, 1, 2, 5, 23])
def test_gradient_equals_the_unbounded_adjoint_for_every_budget(steps):
    u0, k = _heat_args()
    exact = sourcead.grad(ck.heat_swap, wrt=(0, 1), jit=False)(u0, k, steps)
    for slots in range(1, max(steps, 1) + 2):
        got = sourcead.grad(ck.heat_swap, wrt=(0, 1), jit=False, memory=slots * _state_bytes(u0.size))(u0, k, steps)
        np.testing.assert_allclose(got[0], exact[0], rtol=1e-12, atol=1e-14)
        assert got[1] == pytest.approx(exact[1], rel=1e-12, abs=1e-14)


@pytest.mark.parametrize("slots", [3])  # each budget is another compiled module: one here, all above
def test_compiled_gradient_equals_the_unbounded_adjoint(slots):
    u0, k = _heat_args()
    exact = sourcead.grad(ck.heat_swap, wrt=(0, 1))(u0, k, 40)
    got = sourcead.grad(ck.heat_swap, wrt=(0, 1), memory=slots * _state_bytes(u0.size))(u0, k, 40)
    np.testing.assert_allclose(got[0], exact[0], rtol=1e-12, atol=1e-14)
    assert got[1] == pytest.approx(exact[1], rel=1e-12)


def test_marked_loop_is_checkpointed_without_a_budget():
    u0, k = _heat_args()
    source = sourcead.grad(ck.heat_marked, wrt=(0, 1), jit=False).source
    assert "checkpointed loop" in source and "checkpoint_next(" in source
    assert "checkpointed loop" not in sourcead.grad(ck.heat_swap, wrt=(0, 1), jit=False).source
    for jit in (False, True):
        exact = sourcead.grad(ck.heat_swap, wrt=(0, 1), jit=jit)(u0, k, 30)
        got = sourcead.grad(ck.heat_marked, wrt=(0, 1), jit=jit)(u0, k, 30)
        np.testing.assert_allclose(got[0], exact[0], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("jit", [False])  # compiled: the zoo's parallel_steps_marked
def test_prange_inside_and_written_argument(jit):
    rng = np.random.default_rng(5)
    u, k = rng.standard_normal(40), 0.15
    exact = sourcead.vjp(ck.parallel_in_place, wrt=(0, 1), jit=jit)
    bounded = sourcead.vjp(ck.parallel_in_place, wrt=(0, 1), jit=jit, memory=3 * 8 * 40)
    assert "prange(" in bounded.source.split("checkpoint_next(")[1]  # the replayed steps stay parallel
    w = (1.0, rng.standard_normal(40))
    (v0, u_after0), g0 = exact(u, k, 17, cotangent=w)
    (v1, u_after1), g1 = bounded(u, k, 17, cotangent=w)
    assert v1 == pytest.approx(v0, rel=1e-13)
    np.testing.assert_allclose(u_after1, u_after0, rtol=1e-13)
    np.testing.assert_allclose(g1[0], g0[0], rtol=1e-12, atol=1e-14)
    assert g1[1] == pytest.approx(g0[1], rel=1e-12)


def test_whole_array_state_against_finite_differences():
    rng = np.random.default_rng(7)
    x0, A = rng.standard_normal(6) * 0.5, rng.standard_normal((6, 6)) * 0.3
    g = sourcead.grad(ck.whole_arrays, wrt=0, jit=False, memory=2 * 8 * 6)(x0, A, 0.05, 25)
    exact = sourcead.grad(ck.whole_arrays, wrt=0, jit=False)(x0, A, 0.05, 25)
    np.testing.assert_allclose(g, exact, rtol=1e-12)
    e, h = np.eye(6), 1e-6
    fd = [(ck.whole_arrays(x0 + h * e[i], A, 0.05, 25) - ck.whole_arrays(x0 - h * e[i], A, 0.05, 25)) / (2 * h)
          for i in range(6)]  # fmt: skip
    np.testing.assert_allclose(g, fd, rtol=1e-6)


def _particle_args(n: int = 5):
    rng = np.random.default_rng(11)
    return rng.standard_normal(n), rng.standard_normal(n), 0.3, 0.05, 1.0  # 20 steps


def test_while_loop_gradient_equals_the_unbounded_adjoint_for_every_budget():
    args = _particle_args()
    exact = sourcead.grad(ck.particle_while, wrt=(0, 1, 2), jit=False)(*args)
    state = 2 * 8 * 5 + 3 * 8  # x, v, and the scalars t, a, i
    for slots in range(1, 23):
        vjp = sourcead.grad(ck.particle_while, wrt=(0, 1, 2), jit=False, memory=slots * (state + 40))
        assert "checkpoint_place(" in vjp.source
        got = vjp(*args)
        for a, b in zip(got, exact, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_compiled_while_loop_against_finite_differences_and_forward_mode():
    args = _particle_args()
    bounded = sourcead.vjp(ck.particle_while, wrt=(0, 1, 2), memory=4 * (2 * 8 * 5 + 3 * 8 + 40))
    _, (gx, gv, gd) = bounded(*args, cotangent=1.0)
    exact = sourcead.grad(ck.particle_while, wrt=(0, 1, 2), jit=False)(*args)
    np.testing.assert_allclose(gx, exact[0], rtol=1e-12)
    assert gd == pytest.approx(exact[2], rel=1e-12)
    h = 1e-6
    fd = (
        ck.particle_while(args[0], args[1], 0.3 + h, 0.05, 1.0)
        - ck.particle_while(args[0], args[1], 0.3 - h, 0.05, 1.0)
    ) / (2 * h)
    assert gd == pytest.approx(fd, rel=1e-6)
    rng = np.random.default_rng(2)
    dx, dv = rng.standard_normal(5), rng.standard_normal(5)
    _, tangent = sourcead.jvp(ck.particle_while, wrt=(0, 1, 2), jit=False)(*args, tangents=(dx, dv, 0.7))
    assert tangent == pytest.approx(gx @ dx + gv @ dv + gd * 0.7, rel=1e-11)  # <J v, w> = <v, J^T w>


def _check_against_fd_and_forward(f, gradient, args, rng):
    """The gradient wrt (u0, k) of f(u0, k, ...): k against central differences, u0 against forward
    mode along a random direction (the dot-product test)."""
    (gu, gk), (u0, k, *rest), h = gradient, args, 1e-6
    assert gk == pytest.approx((f(u0, k + h, *rest) - f(u0, k - h, *rest)) / (2 * h), rel=1e-6)
    v = rng.standard_normal(u0.size)
    _, tangent = sourcead.jvp(f, wrt=(0, 1), jit=False)(*args, tangents=(v, 0.0))
    assert tangent == pytest.approx(gu @ v, rel=1e-11)


@pytest.mark.parametrize("jit", [False, True])
def test_marked_while_loop_with_a_computed_condition(jit):
    rng = np.random.default_rng(4)
    u0, k = rng.standard_normal(12), 0.2
    g = sourcead.grad(ck.heat_until, wrt=(0, 1), jit=jit)
    assert "checkpoint_place(" in g.source and "online" in g.source
    _check_against_fd_and_forward(ck.heat_until, g(u0, k, 0.3, 500), (u0, k, 0.3, 500), rng)


def test_a_loop_with_a_break_is_checkpointed_online():
    x0 = np.array([0.5, 0.3])
    exact = sourcead.grad(ck.early_exit, wrt=0, jit=False)
    for memory in (2 * 64, 3 * 64, 10 * 64):  # 24 bytes of state and 40 of table a snapshot
        bounded = sourcead.grad(ck.early_exit, wrt=0, jit=False, memory=memory)
        assert "checkpoint_place(" in bounded.source and "range(1)" in bounded.source
        for steps in (0, 1, 2, 7, 200):  # the break is taken after about 60 steps
            np.testing.assert_allclose(bounded(x0, steps), exact(x0, steps), rtol=1e-12)


@pytest.mark.parametrize("jit", [False, True])
def test_nested_marked_loops(jit):
    rng = np.random.default_rng(6)
    u0, k = rng.standard_normal(10), 0.2
    g = sourcead.grad(ck.nested_steps, wrt=(0, 1), jit=jit)
    assert g.source.count("checkpoint_schedule(") == 2  # the outer loop, and the inner one in its steps
    _check_against_fd_and_forward(ck.nested_steps, g(u0, k, 4, 6), (u0, k, 4, 6), rng)


def test_a_marked_loop_inside_an_unmarked_one_keeps_its_records_and_says_why():
    g = sourcead.grad(ck.inner_only, wrt=(0, 1), jit=False)
    assert "not checkpointed: it is inside a loop that is not checkpointed (mark that loop too)" in g.source
    rng = np.random.default_rng(8)
    u0 = rng.standard_normal(8)
    h = 1e-6
    fd = (ck.inner_only(u0, 0.2 + h, 3, 4) - ck.inner_only(u0, 0.2 - h, 3, 4)) / (2 * h)
    assert g(u0, 0.2, 3, 4)[1] == pytest.approx(fd, rel=1e-6)


def _call_peak(g, *args, calls: int = 3) -> int:
    """The peak of the memory a call of `g` allocates, the least of `calls` calls: tracemalloc
    counts every allocation of the process, a pytest-xdist worker's I/O thread's too (a full run
    under load once measured 119 kB for a call whose own peak is under 40 kB). A peak only
    required to be large needs one call: others' allocations can only add to it."""
    peaks = []
    for _ in range(calls):
        tracemalloc.start()
        try:
            start = tracemalloc.get_traced_memory()[0]
            g(*args)
            peaks.append(tracemalloc.get_traced_memory()[1] - start)
        finally:
            tracemalloc.stop()
    return min(peaks)


def test_peak_memory_of_a_while_loop_stays_within_the_budget():
    x0, v0, drag, _, _ = _particle_args(60)
    dt, t_end, budget = 0.01, 2.0, 8_000  # 200 steps
    peaks = {}
    for memory in (None, budget):
        g = sourcead.grad(ck.particle_while, wrt=(0, 1), jit=False, memory=memory)
        g(x0, v0, drag, dt, 0.02)
        peaks[memory] = _call_peak(g, x0, v0, drag, dt, t_end, calls=3 if memory else 1)
    constant = 32_000  # one step's records and the call's own arrays, as for `for` loops
    assert peaks[budget] <= budget + constant
    assert peaks[None] > 4 * (budget + constant)


def test_peak_memory_stays_within_the_budget():
    u0, k = _heat_args(60)
    steps, budget = 120, 8_000
    peaks = {}
    for memory in (None, budget):
        g = sourcead.grad(ck.heat_swap, wrt=(0, 1), jit=False, memory=memory)
        g(u0, k, 2)  # the module is loaded; what follows is the call alone
        peaks[memory] = _call_peak(g, u0, k, steps, calls=3 if memory else 1)
    # stated constant: one step's records (3 floats and 2 ints per point) and the call's own arrays
    constant = 32_000
    assert peaks[budget] <= budget + constant
    assert peaks[None] > 4 * (budget + constant)  # the unbounded tape: the test can fail


def test_memory_keyword_on_every_transform_and_the_decorator():
    u0, k = _heat_args()
    exact = sourcead.grad(ck.heat_swap, wrt=(0, 1), jit=False)(u0, k, 9)
    memory = 2 * _state_bytes(u0.size)
    value, g = sourcead.value_and_grad(ck.heat_swap, wrt=(0, 1), jit=False, memory=memory)(u0, k, 9)
    np.testing.assert_allclose(g[0], exact[0], rtol=1e-12)
    _, g = sourcead.vjp(ck.heat_swap, wrt=(0, 1), jit=False, memory=memory)(u0, k, 9, cotangent=1.0)
    np.testing.assert_allclose(g[0], exact[0], rtol=1e-12)
    decorated = sourcead.differentiable(memory=memory)(ck.heat_swap)
    np.testing.assert_allclose(decorated.grad((0, 1), jit=False)(u0, k, 9)[0], exact[0], rtol=1e-12)
    assert "checkpointed loop" in decorated.source(wrt=(0, 1))
    jac = sourcead.jacobian(ck.heat_swap, wrt=0, mode="reverse", jit=False, memory=memory)(u0, k, 9)
    np.testing.assert_allclose(jac, exact[0], rtol=1e-12)
    prepared = pickle.loads(pickle.dumps(sourcead.grad(ck.heat_swap, wrt=(0, 1), jit=False, memory=memory)))
    assert "checkpointed loop" in prepared.source


def test_hvp_checkpoints_the_marked_loops_too():
    u0, k = _heat_args()
    marked = sourcead.hvp(ck.heat_marked, wrt=(0, 1), jit=False)
    assert "checkpoint_next(" in marked.source  # the marker reached the reverse sweep over forward mode
    assert "checkpoint_next(" not in sourcead.hvp(ck.heat_swap, wrt=(0, 1), jit=False).source
    v = (np.random.default_rng(9).standard_normal(u0.size), 0.4)
    got = marked(u0, k, 12, tangents=v)
    exact = sourcead.hvp(ck.heat_swap, wrt=(0, 1), jit=False)(u0, k, 12, tangents=v)
    np.testing.assert_allclose(got[0], exact[0], rtol=1e-12, atol=1e-14)
    assert got[1] == pytest.approx(exact[1], rel=1e-12)


# --- scratch arrays: written by each step before it reads them, not part of the state (coverage.py)


def _snapshotted(source: str) -> set[str]:
    """The arrays the snapshots hold (not the scalars)."""
    return {line.split("_snaps = ")[0].strip() for line in source.splitlines() if "_snaps = np.empty((" in line}


def _bounded_equals_unbounded(func, args, wrt, budgets, jit=False):
    exact = sourcead.grad(func, wrt=wrt, jit=jit)(*args)
    for budget in budgets:
        got = sourcead.grad(func, wrt=wrt, jit=jit, memory=budget)(*args)
        np.testing.assert_allclose(got, exact, rtol=1e-12, atol=1e-14)
    return exact


def test_rk4_snapshots_hold_the_state_alone():
    x = 0.5 + 0.1 * np.arange(8.0)
    source = sourcead.grad(ck.rk4_stages, wrt=0, jit=False).source
    assert _snapshotted(source) == {"y"}
    assert "(not of k1, k2, k3, k4, yt: each step writes them before reading)" in source
    one = 8 * x.size
    exact = _bounded_equals_unbounded(ck.rk4_stages, (x, 13), 0, [one, 2 * one, 3 * one, 20 * one])
    h = 1e-6
    fd = [(ck.rk4_stages(x + h * e, 13) - ck.rk4_stages(x - h * e, 13)) / (2 * h) for e in np.eye(x.size)]
    np.testing.assert_allclose(exact, fd, rtol=1e-6, atol=1e-9)


def test_rk4_compiled_with_a_budget_of_two_snapshots():
    x = 0.5 + 0.1 * np.arange(8.0)
    _bounded_equals_unbounded(ck.rk4_stages, (x, 21), 0, [2 * 8 * x.size], jit=True)


@pytest.mark.parametrize(
    "func", [ck.carried_corner, ck.read_before_the_loop, ck.read_in_place], ids=lambda f: f.__name__
)
def test_arrays_a_step_reads_before_filling_stay_in_the_state(func):
    # each excluded wrongly would give another gradient under a budget: the replays would read
    # what the last replay left
    x = np.random.default_rng(3).standard_normal(6) * 0.5
    assert "a" in _snapshotted(sourcead.grad(func, wrt=0, jit=False).source)
    _bounded_equals_unbounded(func, (x, 9), 0, [2 * 8 * 6 + 64, 4 * 8 * 6 + 64])


@pytest.mark.parametrize("jit", [False, True])
def test_a_scratch_array_returned_is_the_last_steps(jit):
    x = np.random.default_rng(4).standard_normal(5) * 0.5
    w = np.random.default_rng(5).standard_normal(5)
    exact = sourcead.vjp(ck.scratch_returned, wrt=0, jit=jit)(x, 7, cotangent=w)
    bounded = sourcead.vjp(ck.scratch_returned, wrt=0, jit=jit, memory=2 * 8 * 5)
    assert _snapshotted(bounded.source) == {"y"}
    value, grad = bounded(x, 7, cotangent=w)
    np.testing.assert_array_equal(value, ck.scratch_returned(x, 7))
    np.testing.assert_allclose(value, exact[0], rtol=1e-14)
    np.testing.assert_allclose(grad, exact[1], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("layout", ["contiguous", "strided", "transposed"])
def test_snapshot_helpers_copy_every_layout(layout):
    # numba compiles checkpoint_store / checkpoint_restore element by element (its own row
    # assignment is far slower); a state array may be any view the user passes
    import numba

    from sourcead.runtime.checkpoint import checkpoint_restore, checkpoint_store

    @numba.njit
    def round_trip(snaps, a, b):
        checkpoint_store(snaps, 1, a)
        checkpoint_restore(b, snaps, 1)

    rng = np.random.default_rng(9)
    base = rng.standard_normal((6, 8))
    a = {"contiguous": base[:4, :5].copy(), "strided": base[::2, 1::2][:, :3], "transposed": base[:5, :4].T}[layout]
    snaps = np.zeros((3,) + a.shape)
    target = np.zeros((a.shape[1], a.shape[0])).T if layout == "transposed" else np.zeros(a.shape)
    round_trip(snaps, a, target)
    np.testing.assert_array_equal(snaps[1], a)
    np.testing.assert_array_equal(target, a)
    assert not snaps[0].any() and not snaps[2].any()
    flat = a[0].copy(), np.zeros(a.shape[1])
    round_trip(np.zeros((2, a.shape[1])), *flat)  # 1-D as well
    np.testing.assert_array_equal(flat[1], flat[0])


def _fd_gradient(func, args, position, h=1e-6):
    x = args[position]
    grad = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[k] = h
        up = list(args)
        down = list(args)
        up[position], down[position] = x + e, x - e
        grad[k] = (func(*up) - func(*down)) / (2 * h)
    return grad


def test_a_swapped_buffer_written_whole_is_not_state():
    u0 = np.random.default_rng(12).standard_normal(9) * 0.5
    source = sourcead.grad(ck.swap_stencil, wrt=0, jit=False).source
    assert _snapshotted(source) == {"u"}
    assert "(not of v: each step writes it before reading)" in source
    exact = _bounded_equals_unbounded(ck.swap_stencil, (u0, 0.2, 17), 0, [8 * 9 + 8, 2 * 8 * 9, 5 * 8 * 9])
    np.testing.assert_allclose(exact, _fd_gradient(ck.swap_stencil, (u0, 0.2, 17), 0), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("jit", [False, True])
def test_two_swapped_grids_snapshot_half_their_buffers(jit):
    rng = np.random.default_rng(13)
    u0, v0 = 1.0 + 0.1 * rng.standard_normal((4, 5)), 0.3 + 0.1 * rng.standard_normal((4, 5))
    source = sourcead.grad(ck.swap_grid, wrt=(0, 1, 2), jit=False).source
    assert _snapshotted(source) == {"u", "v"}
    budget = 2 * (2 * 8 * 20) + 64  # two snapshots of u and v (and the step's scalars)
    exact = sourcead.grad(ck.swap_grid, wrt=(0, 1, 2), jit=jit)(u0, v0, 0.04, 9)
    got = sourcead.grad(ck.swap_grid, wrt=(0, 1, 2), jit=jit, memory=budget)(u0, v0, 0.04, 9)
    for a, b in zip(got, exact, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    if not jit:
        fd = _fd_gradient(ck.swap_grid, (u0, v0, 0.04, 9), 1)
        np.testing.assert_allclose(exact[1], fd, rtol=1e-6, atol=1e-8)


def test_a_swapped_buffer_with_an_unwritten_rim_stays_in_the_state():
    u0 = np.random.default_rng(14).standard_normal((5, 4)) * 0.5
    assert _snapshotted(sourcead.grad(ck.fixed_rim, wrt=0, jit=False).source) == {"u", "un"}
    _bounded_equals_unbounded(ck.fixed_rim, (u0, 0.1, 11), 0, [2 * 8 * 20 + 16, 4 * 8 * 20 + 16])


def test_hvp_of_rk4_snapshots_y_and_its_tangent_alone():
    # the tangent program allocates k1_dot = np.zeros_like(k1) before the loop: that reads k1's
    # shape, not its values, so k1 stays scratch
    x = 0.5 + 0.1 * np.arange(6.0)
    bounded = sourcead.hvp(ck.rk4_stages, wrt=0, jit=False, memory=3 * 2 * 8 * 6 + 64)
    assert _snapshotted(bounded.source) == {"y", "y_dot"}
    v = np.random.default_rng(15).standard_normal(6)
    got = bounded(x, 9, tangents=v)
    exact = sourcead.hvp(ck.rk4_stages, wrt=0, jit=False)(x, 9, tangents=v)
    np.testing.assert_allclose(got, exact, rtol=1e-12, atol=1e-14)
    h = 1e-5
    grad = sourcead.grad(ck.rk4_stages, wrt=0, jit=False)
    fd = (grad(x + h * v, 9) - grad(x - h * v, 9)) / (2 * h)
    np.testing.assert_allclose(exact, fd, rtol=1e-6, atol=1e-8)


def test_fills_spelled_with_the_arrays_own_sizes():
    x = 0.5 + 0.1 * np.arange(7.0)
    source = sourcead.grad(ck.rk4_sizes_spelled, wrt=0, jit=False).source
    assert _snapshotted(source) == {"y"}
    _bounded_equals_unbounded(ck.rk4_sizes_spelled, (x, 11), 0, [8 * 7 + 24, 3 * 8 * 7 + 24])  # y and 3 ints


@pytest.mark.parametrize("jit", [False, True])
def test_what_a_loop_in_a_branch_reads_and_later_statements_overwrite_is_state(jit):
    rng = np.random.default_rng(6)
    x, w = rng.standard_normal(5) * 0.5, 1.0 + 0.2 * rng.standard_normal(5)
    bounded = sourcead.grad(ck.weights_changed_after_the_branch, wrt=0, jit=jit, memory=2 * 8 * 5 + 64)
    assert "w" in _snapshotted(bounded.source)
    exact = sourcead.grad(ck.weights_changed_after_the_branch, wrt=0, jit=jit)(x, w.copy(), 9, True)
    np.testing.assert_allclose(bounded(x, w.copy(), 9, True), exact, rtol=1e-12, atol=1e-14)
    h = 1e-6
    fd = [
        (ck.weights_changed_after_the_branch(x + h * e, w.copy(), 9, True)
         - ck.weights_changed_after_the_branch(x - h * e, w.copy(), 9, True)) / (2 * h)
        for e in np.eye(x.size)
    ]  # fmt: skip
    np.testing.assert_allclose(exact, fd, rtol=1e-6, atol=1e-9)
