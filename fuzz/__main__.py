"""`python -m fuzz`: generate random programs, check them in worker processes, print the report.

python -m fuzz -n 5000 --seed 0 --jit-share 0.1 --jobs 2 [--features ...] [--out DIR]
python -m fuzz --replay fuzz-failures/wrong-0-17.py      # re-run one reproducer
python -m fuzz --shrink fuzz-failures/wrong-0-17.py      # make it smaller, same failure
python -m fuzz --show 0:17                               # print program 17 of seed 0
"""

from __future__ import annotations

import argparse
import ast
import multiprocessing
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, replace
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any

from .check import FAILURES, OUTCOMES, Outcome, load_reproducer, reproducer, worker_main
from .generate import FEATURES, Program, generate, resolve_features, wants_jit, written_params

MAX_TASKS = 40  # programs per worker process before it is replaced (bounds memory)


# --- the worker pool ----------------------------------------------------------------------------


class _Worker:
    """One spawned worker process with its own cache folders."""

    def __init__(self, context, features: frozenset[str]):
        self.folder = tempfile.mkdtemp(prefix="fuzz-worker-")
        self.conn, child = context.Pipe()
        self.process = context.Process(target=worker_main, args=(child, self.folder, features), daemon=True)
        self.process.start()
        child.close()
        self.task: Any = None
        self.started = 0.0
        self.done = 0

    def send(self, task: Any) -> None:
        self.task, self.started = task, time.monotonic()
        self.conn.send(task)

    def stop(self, kill: bool = False) -> None:
        if kill:
            self.process.kill()
        else:
            try:
                self.conn.send(None)
            except OSError:
                pass
        self.process.join(timeout=30)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.conn.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def _died(worker: _Worker) -> str:
    worker.process.join(timeout=10)
    code = worker.process.exitcode
    if code is not None and code < 0:
        import signal

        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"the worker died of {name}"
    return f"the worker exited with status {code}"


class Pool:
    """`jobs` worker processes. `run` feeds them (task, time limit) pairs and yields (task,
    program, outcome) as each ends. A worker that dies (a signal) or overruns its limit is
    replaced; its task gets `crash` or `timeout` and no program (the caller regenerates it)."""

    def __init__(self, jobs: int, features: frozenset[str]):
        self.context = multiprocessing.get_context("spawn")
        self.features = features
        self.workers = [_Worker(self.context, features) for _ in range(max(1, jobs))]

    def _replace(self, k: int, kill: bool) -> None:
        self.workers[k].stop(kill=kill)
        self.workers[k] = _Worker(self.context, self.features)

    def run(self, tasks: Iterator[tuple[Any, float]]) -> Iterator[tuple[Any, Program | None, Outcome]]:
        workers = self.workers
        limits: dict[int, float] = {}
        pending = iter(tasks)
        exhausted = False
        while True:
            for k, worker in enumerate(workers):
                if worker.task is None and not exhausted:
                    item = next(pending, None)
                    if item is None:
                        exhausted = True
                        break
                    task, limits[k] = item
                    worker.send(task)
            busy = [w for w in workers if w.task is not None]
            if not busy:
                return
            ready = wait([w.conn for w in busy], timeout=0.5)
            for k, worker in enumerate(workers):
                if worker.task is None:
                    continue
                task = worker.task
                if worker.conn in ready:
                    try:
                        program, outcome = worker.conn.recv()
                    except (EOFError, OSError):
                        outcome = Outcome("crash", _died(worker))
                        outcome.seconds = time.monotonic() - worker.started
                        self._replace(k, kill=True)
                        yield task, None, outcome
                        continue
                    worker.task = None
                    worker.done += 1
                    if worker.done >= MAX_TASKS:
                        self._replace(k, kill=False)
                    yield task, program, outcome
                elif time.monotonic() - worker.started > limits[k]:
                    outcome = Outcome("timeout", f"no answer within {limits[k]:.0f} s")
                    outcome.seconds = time.monotonic() - worker.started
                    self._replace(k, kill=True)
                    yield task, None, outcome

    def close(self) -> None:
        for worker in self.workers:
            worker.stop(kill=worker.task is not None)


# --- the fuzzing run ----------------------------------------------------------------------------


@dataclass
class Summary:
    counts: Counter
    rejections: Counter
    failures: Counter  # signature -> count
    files: list[Path]
    seconds: float
    jit_programs: int


def fuzz(n: int, seed: int, jit_share: float, jobs: int, features: frozenset[str], out: Path | None,
         timeout: float, start: int = 0, progress: bool = True) -> Summary:  # fmt: skip
    """Check programs start..start+n-1 of `seed`; write a reproducer for every failure into `out`."""
    began = time.monotonic()
    jits = {i: wants_jit(seed, i, jit_share) for i in range(start, start + n)}
    tasks = ((("gen", seed, i, jits[i]), timeout * (4 if jits[i] else 1)) for i in range(start, start + n))
    counts: Counter = Counter()
    rejections: Counter = Counter()
    failures: Counter = Counter()
    files: list[Path] = []
    done = 0
    pool = Pool(jobs, features)
    try:
        for task, program, outcome in pool.run(tasks):
            _, _, index, jit = task
            counts[outcome.outcome] += 1
            if outcome.outcome == "rejected":
                rejections[outcome.detail] += 1
            if outcome.outcome in FAILURES:
                failures[outcome.signature] += 1
                if out is not None:
                    if program is None:  # the worker died or hung: the program is made again here
                        program = generate(seed, index, features, jit)
                    if program is not None:
                        out.mkdir(parents=True, exist_ok=True)
                        path = out / f"{outcome.outcome}-{seed}-{index}.py"
                        path.write_text(reproducer(program, outcome, path), encoding="utf-8")
                        files.append(path)
            done += 1
            if progress and (done % 50 == 0 or done == n):
                elapsed = time.monotonic() - began
                line = " ".join(f"{k}={counts[k]}" for k in OUTCOMES if counts[k])
                print(f"[{done}/{n} {elapsed:6.0f} s] {line}", file=sys.stderr, flush=True)
    finally:
        pool.close()
    return Summary(counts, rejections, failures, files, time.monotonic() - began, sum(jits.values()))


def print_report(summary: Summary, n: int, out: Path | None) -> None:
    print(f"\nsourcead fuzz: {n} programs ({summary.jit_programs} also with jit=True) in {summary.seconds:.0f} s")
    for outcome in OUTCOMES:
        print(f"  {outcome:<13} {summary.counts[outcome]:6d}")
    if summary.rejections:
        print("\nrejections (positioned SourceADError, first line):")
        for message, count in summary.rejections.most_common():
            print(f"  {count:6d}  {message}")
    if summary.failures:
        print("\nfailures, grouped (numbers and names taken out):")
        for signature, count in summary.failures.most_common():
            print(f"  {count:6d}  {signature}")
        if out is not None:
            print(f"\n{len(summary.files)} reproducers in {out}/ (python FILE re-runs one)")
    print(f"\nwall time {summary.seconds:.1f} s")


# --- the shrinker ---------------------------------------------------------------------------------


def _candidates(program: Program) -> Iterator[Program]:
    """Smaller variants of a program: a statement or block removed, a loop or `if` replaced by
    its body, an expression replaced by one of its operands or a constant, a parameter or wrt
    entry dropped."""
    tree = ast.parse(program.source)

    def edited(variant: ast.Module) -> Program:
        source = ast.unparse(variant) + "\n"
        arrays = [a.name for a in program.argspecs if a.kind == "array"]
        return replace(program, source=source, written=written_params(source, program.name, program.params, arrays))

    # helpers, whole
    for k, node in enumerate(tree.body):
        if isinstance(node, ast.FunctionDef) and node.name != program.name:
            smaller = _copy_tree(tree)
            del smaller.body[k]
            yield edited(smaller)
    # statements, last first (removing later statements rarely invalidates earlier ones)
    paths = list(_statement_paths(tree))
    for path in reversed(paths):
        for variant in _statement_edits(tree, path):
            yield edited(variant)
    # expressions
    count = sum(1 for _ in _expressions(tree))
    for k in range(count - 1, -1, -1):
        for variant in _expression_edits(tree, k):
            yield edited(variant)
    # wrt entries
    if len(program.wrt) > 1:
        for w in program.wrt:
            yield replace(program, wrt=(w,), wrt_api=w)
    # parameters the function does not read
    main = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == program.name)
    used = {node.id for node in ast.walk(ast.Module(body=main.body, type_ignores=[])) if isinstance(node, ast.Name)}
    for k, spec in enumerate(program.argspecs):
        if spec.name in used or (spec.name in program.wrt and len(program.wrt) == 1):
            continue
        smaller = _copy_tree(tree)
        fn = next(n for n in smaller.body if isinstance(n, ast.FunctionDef) and n.name == program.name)
        fn.args.args = [a for a in fn.args.args if a.arg != spec.name]
        args = program.args(0)
        wrt = tuple(w for w in program.wrt if w != spec.name)
        yield replace(
            program,
            source=ast.unparse(smaller) + "\n",
            argspecs=tuple(a for a in program.argspecs if a.name != spec.name),
            fixed_args=tuple(a for j, a in enumerate(args) if j != k),
            wrt=wrt,
            wrt_api=wrt,
            written=tuple(w for w in program.written if w != spec.name),
        )


def _size(program: Program) -> tuple[int, int]:
    """What the shrinker makes smaller: the source's length, then the number of wrt entries."""
    return (len(program.source), len(program.wrt))


def _copy_tree(tree: ast.Module) -> ast.Module:
    return ast.parse(ast.unparse(tree))


def _statement_paths(tree: ast.Module) -> Iterator[tuple]:
    """Paths (field, index, field, index, ...) to every statement inside a function."""

    def visit(node: ast.AST, path: tuple) -> Iterator[tuple]:
        for name in ("body", "orelse"):
            stmts = getattr(node, name, None)
            if not isinstance(stmts, list):
                continue
            for k, stmt in enumerate(stmts):
                here = (*path, name, k)
                if not isinstance(node, ast.Module):
                    yield here
                if isinstance(stmt, (ast.FunctionDef, ast.For, ast.While, ast.If)):
                    yield from visit(stmt, here)
                elif isinstance(node, ast.Module):
                    continue

    for k, node in enumerate(tree.body):
        if isinstance(node, ast.FunctionDef):
            yield from visit(node, ("body", k))


def _at(tree: ast.AST, path: tuple) -> tuple[list, int]:
    node: Any = tree
    for name, k in zip(path[:-2:2], path[1:-2:2], strict=True):
        node = getattr(node, name)[k]
    return getattr(node, path[-2]), path[-1]


def _statement_edits(tree: ast.Module, path: tuple) -> Iterator[ast.Module]:
    copy = _copy_tree(tree)
    stmts, k = _at(copy, path)
    stmt = stmts[k]
    # remove it
    removed = _copy_tree(tree)
    lst, j = _at(removed, path)
    del lst[j]
    if not lst:
        lst.append(ast.Pass())
    yield removed
    # a compound statement replaced by its body (a loop variable becomes a constant)
    if isinstance(stmt, (ast.For, ast.While, ast.If)):
        for body in [stmt.body, stmt.orelse] if isinstance(stmt, ast.If) else [stmt.body]:
            if not body:
                continue
            unwrapped = _copy_tree(tree)
            lst, j = _at(unwrapped, path)
            node = lst[j]
            inner = node.body if body is stmt.body else node.orelse
            prefix: list[ast.stmt] = []
            if isinstance(node, ast.For) and isinstance(node.target, ast.Name):
                prefix = [ast.Assign([ast.Name(node.target.id, ast.Store())], ast.Constant(0), lineno=0)]
            lst[j : j + 1] = prefix + inner
            yield ast.fix_missing_locations(unwrapped)
    # a function whose statement is removed entirely (a helper)
    if isinstance(stmt, ast.FunctionDef):
        return


def _expressions(tree: ast.AST) -> Iterator[ast.expr]:
    for node in ast.walk(tree):
        if isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Call, ast.IfExp, ast.BoolOp, ast.Compare)):
            yield node


def _expression_edits(tree: ast.Module, k: int) -> Iterator[ast.Module]:
    reference = list(_expressions(tree))[k]
    options: list[ast.expr] = []
    if isinstance(reference, ast.BinOp):
        options = [reference.left, reference.right]
    elif isinstance(reference, ast.UnaryOp):
        options = [reference.operand]
    elif isinstance(reference, ast.Call):
        options = list(reference.args)
    elif isinstance(reference, ast.IfExp):
        options = [reference.body, reference.orelse]
    elif isinstance(reference, ast.BoolOp):
        options = list(reference.values)
    elif isinstance(reference, ast.Compare):
        options = [ast.Constant(True), ast.Constant(False)]
    options.append(ast.Constant(1.0))
    for option in options:
        yield _swapped(tree, k, ast.unparse(option))


class _Swap(ast.NodeTransformer):
    def __init__(self, target: ast.AST, text: str):
        self.target, self.text = target, text

    def visit(self, node: ast.AST) -> ast.AST:
        if node is self.target:
            return ast.parse(self.text, mode="eval").body
        return super().visit(node)


def _swapped(tree: ast.Module, k: int, text: str) -> ast.Module:
    """A copy of `tree` with its k-th expression replaced by `text`."""
    copy = _copy_tree(tree)
    target = list(_expressions(copy))[k]
    return ast.fix_missing_locations(_Swap(target, text).visit(copy))


def shrink(path: Path, jobs: int, features: frozenset[str], timeout: float, budget: int, max_seconds: float) -> Path:
    """Greedy shrinking of a reproducer: keep any smaller variant with the same failure."""
    program, _ = load_reproducer(path)
    program = replace(program, source=ast.unparse(ast.parse(program.source)) + "\n")
    pool = Pool(jobs, features)
    try:
        return _shrink(pool, path, program, timeout, budget, max_seconds)
    finally:
        pool.close()


def _shrink(pool: Pool, path: Path, program: Program, timeout: float, budget: int, max_seconds: float) -> Path:
    jobs = len(pool.workers)
    # the reference outcome, as this checker sees it now
    ((_, _, reference),) = list(pool.run(iter([(("program", program), timeout)])))
    print(f"reference: {reference.signature} ({reference.seconds:.1f} s)", file=sys.stderr)
    if reference.outcome in ("ok", "discarded"):  # a rejection can be shrunk too (to see its cause)
        raise SystemExit(f"{path}: does not fail now ({reference.outcome}); nothing to shrink")
    limit = max(10.0, 4 * reference.seconds + 5)
    began = time.monotonic()
    cursor, improved, tried = 0, False, 0
    # linear passes over the candidates: after a success the cursor stays where it was (the
    # variants after it are still worth trying); a pass with no success ends the shrinking
    while tried < budget and time.monotonic() - began < max_seconds:
        candidates = [c for c in _candidates(program) if _size(c) < _size(program)]
        if cursor >= len(candidates):
            if not improved:
                break
            cursor, improved = 0, False
            continue
        batch = candidates[cursor : cursor + jobs]
        tried += len(batch)
        results = {id(t[1]): o for t, _, o in pool.run(iter((("program", c), limit) for c in batch))}
        match = next((k for k, c in enumerate(batch) if results[id(c)].signature == reference.signature), None)
        if match is None:
            cursor += len(batch)
            continue
        program, improved = batch[match], True
        cursor += match
        print(f"  {program.lines} lines ({tried} tried)", file=sys.stderr)
    tasks_done = tried
    # the final outcome, with its point and report
    ((_, _, final),) = list(pool.run(iter([(("program", program), limit)])))
    if final.args is None:
        final.args = program.args(0)
    target = path.with_name(path.stem + ".min.py")
    target.write_text(reproducer(program, final, target), encoding="utf-8")
    print(f"{final.signature}\nwrote {target} ({program.lines} lines; {tasks_done} candidates tried)")
    return target


# --- command line -----------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fuzz", description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=200, help="number of programs (default 200)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--start", type=int, default=0, help="index of the first program")
    parser.add_argument("--jit-share", type=float, default=0.1, help="share of programs also run with jit=True")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes")
    parser.add_argument("--features", default="", help="comma list: +name / name enables, -name disables, all, none")
    parser.add_argument("--out", type=Path, default=Path("fuzz-failures"), help="folder for the reproducers")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per program (4x with jit)")
    parser.add_argument("--replay", type=Path, help="re-run one reproducer")
    parser.add_argument("--shrink", type=Path, nargs="+", help="shrink reproducers (writes FILE.min.py)")
    parser.add_argument("--budget", type=int, default=3000, help="candidates the shrinker may try")
    parser.add_argument("--shrink-time", type=float, default=900.0, help="seconds the shrinker may take per file")
    parser.add_argument("--show", help="print program SEED:INDEX and its arguments")
    parser.add_argument("--list-features", action="store_true")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    opts = parser.parse_args(argv)
    try:
        features = resolve_features(opts.features)
    except ValueError as exc:
        parser.error(str(exc))
    if opts.list_features:
        for name, (on, what) in FEATURES.items():
            print(f"  {'+' if name in features else '-'}{name:<16} {what}{'' if on else '  [off by default]'}")
        return 0
    if opts.replay is not None:
        from .check import import_file, replay

        module = import_file(opts.replay.resolve(), f"fuzz_replay_{abs(hash(str(opts.replay)))}")
        return replay(module.__dict__, str(opts.replay.resolve()))
    if opts.shrink:
        for path in opts.shrink:
            shrink(path, opts.jobs, features, opts.timeout, opts.budget, opts.shrink_time)
        return 0
    if opts.show:
        seed, index = (int(x) for x in opts.show.split(":"))
        program = generate(seed, index, features, wants_jit(seed, index, opts.jit_share))
        if program is None:
            print("discarded: no valid program")
            return 0
        print(program.source)
        print(f"# args = {program.args(0)!r}\n# wrt = {program.wrt_api!r}; written = {program.written}; "
              f"result = {program.result}; jit = {program.jit}\n# features: {', '.join(program.used)}")  # fmt: skip
        return 0
    summary = fuzz(opts.n, opts.seed, opts.jit_share, opts.jobs, features, opts.out, opts.timeout, opts.start,
                   not opts.quiet)  # fmt: skip
    print_report(summary, opts.n, opts.out)
    return 1 if summary.failures else 0


if __name__ == "__main__":
    sys.exit(main())
