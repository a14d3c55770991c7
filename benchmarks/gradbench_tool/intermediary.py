"""Run one of GradBench's evals against this tool without Docker or GradBench's Rust CLI: this
script does the intermediary's job (forwards each JSON line of the eval to the tool and each
reply back), writes the whole exchange to a log, and prints, for each evaluate, the eval's
description, the function, whether GradBench's analysis found the output valid, and the median
of the timed runs.

    python -m benchmarks.gradbench_tool.intermediary --gradbench /path/to/gradbench llsq [-- -n 16 32]

``--gradbench`` is a checkout of github.com/gradbench/gradbench with its C++ reference tool built
(``make -C tools/manual bin/llsq``; see README.md here); the eval runs from there with
``--eval-python`` (a Python that has numpy, scipy and pydantic).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.gradbench_tool.intermediary")
    parser.add_argument("eval")
    parser.add_argument("--gradbench", type=Path, required=True)
    parser.add_argument("--eval-python", default=sys.executable)
    parser.add_argument("--log", type=Path, default=None, help="the exchange as JSON lines")
    parser.add_argument("eval_args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    extra = [a for a in args.eval_args if a != "--"]
    env = os.environ | {"PYTHONPATH": str(args.gradbench / "python" / "gradbench")}
    run_py = args.gradbench / "python" / "gradbench" / "gradbench" / "evals" / args.eval / "run.py"
    evaluator = subprocess.Popen(
        [args.eval_python, str(run_py), *extra],
        cwd=args.gradbench,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    tool = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.gradbench_tool"],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert evaluator.stdin and evaluator.stdout and tool.stdin and tool.stdout
    log = open(args.log, "w") if args.log else None
    pending: dict[int, dict] = {}
    for line in evaluator.stdout:
        message = json.loads(line)
        if message.get("kind") == "end":
            break
        tool.stdin.write(line)
        tool.stdin.flush()
        reply_line = tool.stdout.readline()
        if not reply_line:
            print("the tool closed its output", file=sys.stderr)
            break
        reply = json.loads(reply_line)
        if log:
            log.write(json.dumps({"message": message, "response": reply}) + "\n")
        report(message, reply, pending)
        evaluator.stdin.write(reply_line)
        evaluator.stdin.flush()
    tool.stdin.close()
    evaluator.stdin.close()
    tool.wait()
    evaluator.wait()
    if log:
        log.close()


def report(message: dict, reply: dict, pending: dict[int, dict]) -> None:
    kind = message.get("kind")
    if kind == "define":
        print(f"define {message['module']}: success={reply.get('success')} {reply.get('error', '')}", flush=True)
    elif kind == "evaluate":
        if not reply.get("success"):
            print(
                f"{message.get('description', '')} {message['function']}: FAILED {reply.get('error', '')}", flush=True
            )
            return
        pending[message["id"]] = {"message": message, "reply": reply}
    elif kind == "analysis" and message["of"] in pending:
        done = pending.pop(message["of"])
        runs = [t["nanoseconds"] for t in done["reply"]["timings"] if t["name"] == "evaluate"]
        print(
            f"{done['message'].get('description', '')}\t{done['message']['function']}\tvalid={message['valid']}"
            f"\truns={len(runs)}\tmedian_ms={statistics.median(runs) / 1e6:.4f}",
            flush=True,
        )
        if not message["valid"]:
            print(message.get("error", ""), flush=True)


if __name__ == "__main__":
    main()
