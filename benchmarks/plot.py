"""The chart of ``benchmarks.suite``: per workload, each tool's gradient time relative to sourcead.

``python -m benchmarks.plot`` redraws ``results/chart.png`` from ``results/peers.json``.
"""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
SERIES = (  # label, colour, time of a record
    ("numba primal", "#999999", lambda r: r["primal"]),
    ("JAX jit(grad)", "#1f77b4", lambda r: r["peers"].get("JAX", {}).get("time")),
    ("PyTorch", "#d62728", lambda r: r["peers"].get("PyTorch", {}).get("time")),
    ("autograd", "#2ca02c", lambda r: r["peers"].get("autograd", {}).get("time")),
)


def chart(records: list[dict], path: Path) -> None:
    """Grouped bars on a log scale; 1 (the dashed line) is sourcead's gradient."""
    records = [r for r in records if "grad" in r]
    fig, ax = plt.subplots(figsize=(11, 4.8), dpi=110)
    width = 0.8 / len(SERIES)
    for k, (label, colour, time_of) in enumerate(SERIES):
        xs, ys = [], []
        for i, rec in enumerate(records):
            t = time_of(rec)
            if t is not None:
                xs.append(i + (k - (len(SERIES) - 1) / 2) * width)
                ys.append(t / rec["grad"])
        ax.bar(xs, ys, width, label=label, color=colour)
    ax.axhline(1.0, color="black", linestyle="--", linewidth=1, label="sourcead gradient")
    ax.set_yscale("log")
    ax.set_xticks(range(len(records)))
    ax.set_xticklabels([f"{r['name']}\n({r['style']})" for r in records], fontsize=8)
    ax.set_ylabel("time / sourcead gradient time (log)")
    ax.set_title("Gradient time relative to sourcead (above 1: slower than sourcead)")
    ax.legend(fontsize=8, ncol=5, loc="upper left")
    ax.grid(axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


if __name__ == "__main__":
    chart(json.loads((RESULTS / "peers.json").read_text()), RESULTS / "chart.png")
