"""peephole.py's three rewrites of one statement's adjoint lines, before and after, as text."""

from __future__ import annotations

import re

import libcst as cst
import pytest

from sourcead.ir.emit import Line
from sourcead.reverse.peephole import simplify


def _lines(text: str) -> list[Line]:
    out = []
    for row in text.strip().splitlines():
        target, op, value = re.match(r"\s*(.+?) (\+=|-=|=) (.+)", row).groups()
        out.append(Line(cst.parse_expression(target), op, cst.parse_expression(value)))
    return out


def _text(lines: list[Line]) -> str:
    return "\n".join(line.text() for line in lines)


CASES = [
    (  # 1: the cancelling triple of U[i, j] = U[i, j] - f * U[k, j]
        "t3 = U_bar[i, j]\nU_bar[i, j] = 0.0\nU_bar[i, j] += t3\nf_bar += U[k, j] * -t3\nU_bar[k, j] += f * -t3",
        "t3 = U_bar[i, j]\nf_bar += U[k, j] * -t3\nU_bar[k, j] += f * -t3",
    ),
    (  # 2: repeated contributions of total += d * d
        "d_bar += d * total_bar\nd_bar += d * total_bar",
        "d_bar += 2.0 * (d * total_bar)",
    ),
    (  # 3: zeroed, then the first contribution: assigned
        "t0 = v_bar\nv_bar = 0.0\nx_bar += 2.0 * t0\nv_bar += math.cos(v) * (1.1 * t0)",
        "t0 = v_bar\nx_bar += 2.0 * t0\nv_bar = math.cos(v) * (1.1 * t0)",
    ),
    (  # 3, subtracted
        "t0 = v_bar\nv_bar = 0.0\nv_bar -= a * t0 + b",
        "t0 = v_bar\nv_bar = -(a * t0 + b)",
    ),
    (  # 3 not across an accumulation into the same array (U_bar[k, j] is U_bar[i, j] when k == i)
        "t0 = U_bar[i, j]\nU_bar[i, j] = 0.0\nU_bar[k, j] += f * t0\nU_bar[i, j] += g * t0",
        "t0 = U_bar[i, j]\nU_bar[i, j] = 0.0\nU_bar[k, j] += f * t0\nU_bar[i, j] += g * t0",
    ),
    (  # 3 not where the contribution reads the zeroed adjoint itself
        "v_bar = 0.0\nv_bar += 2.0 * v_bar",
        "v_bar = 0.0\nv_bar += 2.0 * v_bar",
    ),
    (  # 3 not across a line that reads it
        "v_bar = 0.0\nw_bar += v_bar\nv_bar += a",
        "v_bar = 0.0\nw_bar += v_bar\nv_bar += a",
    ),
]


@pytest.mark.parametrize("before, after", CASES)
def test_each_rewrite_before_and_after(before, after):
    assert _text(simplify(_lines(before))) == after
