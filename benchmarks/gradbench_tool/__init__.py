"""sourcead as a GradBench tool (github.com/gradbench/gradbench).

``python -m benchmarks.gradbench_tool`` speaks GradBench's protocol on stdin/stdout
(``protocol.py``); each eval is a module of its own here, its objective written once in numba's
loop style and its derivative prepared by sourcead. ``EVALS`` maps GradBench's module names to
ours; ``REFUSED`` names the evals this tool answers ``define`` with ``success: false``, and why.
"""

EVALS = {
    "ba": "benchmarks.gradbench_tool.ba",
    "det": "benchmarks.gradbench_tool.det",
    "gmm": "benchmarks.gradbench_tool.gmm",
    "hello": "benchmarks.gradbench_tool.hello",
    "ht": "benchmarks.gradbench_tool.ht",
    "kmeans": "benchmarks.gradbench_tool.kmeans",
    "llsq": "benchmarks.gradbench_tool.llsq",
    "lse": "benchmarks.gradbench_tool.lse",
    "lstm": "benchmarks.gradbench_tool.lstm",
    "ode": "benchmarks.gradbench_tool.ode",
    "particle": "benchmarks.gradbench_tool.particle",
    "saddle": "benchmarks.gradbench_tool.saddle",
}

REFUSED: dict[str, str] = {}
