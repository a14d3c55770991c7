"""``python -m benchmarks.gradbench_tool``: serve GradBench's protocol on stdin/stdout.
``--no-jit`` runs the same generated code in plain Python (for the tests: no numba compile)."""

import argparse
import sys

from benchmarks.gradbench_tool.protocol import serve

if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m benchmarks.gradbench_tool")
    parser.add_argument("--no-jit", action="store_true", help="plain Python instead of numba (tests)")
    serve(sys.stdin, sys.stdout, jit=not parser.parse_args().no_jit)
