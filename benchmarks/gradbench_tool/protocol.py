"""GradBench's protocol (its CONTRIBUTING.md, "Protocol"): one JSON message a line on the input,
one reply a line on the output carrying the message's ``id``, logs on stderr only, and the loop
ends when the input closes.

``start`` -> the tool's name; ``define`` -> whether the module exists, after compiling it (every
function run once on the module's ``TINY`` input, so no compilation falls in a timed run);
``evaluate`` -> the output and one ``evaluate`` timing per run, at least ``min_runs`` runs and until
the runs add up to ``min_seconds``; anything else (``analysis``, ``end``) -> just the ``id``.
"""

from __future__ import annotations

import importlib
import json
import sys
import time
import traceback
from typing import IO, Any

from benchmarks.gradbench_tool import EVALS, REFUSED
from benchmarks.gradbench_tool.common import Function


class Session:
    """The modules defined so far and how to compile them (``jit=False`` runs the same code in
    plain Python, for the tests of the protocol)."""

    def __init__(self, jit: bool = True):
        self.jit = jit
        self.modules: dict[str, dict[str, Function]] = {}

    def handle(self, message: dict) -> dict:
        kind = message.get("kind")
        if kind == "start":
            return {"tool": "sourcead"}
        if kind == "define":
            return self.define(message["module"])
        if kind == "evaluate":
            return self.evaluate(message["module"], message["function"], message["input"])
        return {}

    def define(self, name: str) -> dict:
        if name in REFUSED:
            return {"success": False, "error": REFUSED[name]}
        if name not in EVALS:
            return {"success": False, "error": f"sourcead has no implementation of the eval {name!r}"}
        try:
            start = time.perf_counter_ns()
            module = importlib.import_module(EVALS[name])
            functions = module.define(self.jit)
            for function in functions.values():  # compile: one run on a small input of the same kinds
                function.encode(function.run(*function.decode(module.TINY)))
            elapsed = time.perf_counter_ns() - start
        except Exception as error:  # noqa: BLE001 - the eval is told why, the loop goes on
            return {"success": False, "error": "".join(traceback.format_exception(error))}
        self.modules[name] = functions
        return {"success": True, "timings": [{"name": "compile", "nanoseconds": elapsed}]}

    def evaluate(self, name: str, function_name: str, raw: Any) -> dict:
        try:
            if name not in self.modules:
                raise KeyError(f"module {name!r} was not defined")
            function = self.modules[name][function_name]
            args = function.decode(raw)
            min_runs, min_seconds = run_bounds(raw)
            timings = []
            total = 0
            while len(timings) < min_runs or total < min_seconds * 1e9:
                start = time.perf_counter_ns()
                result = function.run(*args)
                elapsed = time.perf_counter_ns() - start
                timings.append({"name": "evaluate", "nanoseconds": elapsed})
                total += elapsed
            return {"success": True, "output": function.encode(result), "timings": timings}
        except Exception as error:  # noqa: BLE001
            return {"success": False, "error": "".join(traceback.format_exception(error))}


def run_bounds(raw: Any) -> tuple[int, float]:
    """``min_runs`` and ``min_seconds`` of an input (hello's inputs are bare numbers: one run)."""
    if isinstance(raw, dict):
        return int(raw.get("min_runs", 1)), float(raw.get("min_seconds", 0.0))
    return 1, 0.0


def serve(instream: IO[str], outstream: IO[str], jit: bool = True) -> None:
    session = Session(jit)
    for line in instream:
        if not line.strip():
            continue
        message = json.loads(line)
        reply = session.handle(message)
        if reply.get("success") is False:
            print(reply.get("error", ""), file=sys.stderr, flush=True)
        outstream.write(json.dumps({"id": message["id"]} | reply) + "\n")
        outstream.flush()
