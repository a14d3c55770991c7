"""``python -m benchmarks.gradbench_tool``: serve GradBench's protocol on stdin/stdout."""

import sys

from benchmarks.gradbench_tool.protocol import serve

if __name__ == "__main__":
    serve(sys.stdin, sys.stdout)
