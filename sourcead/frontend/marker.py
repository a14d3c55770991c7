"""The comment a user writes to ask for a checkpointed loop: `# sourcead: checkpoint`, on the
line above a `for`/`while` loop or at the end of its header line.

The front end keeps each core loop's user statement (`origin`), so both modes read the mark from
it: reverse mode checkpoints the loop (`reverse/checkpoint.py`), forward mode repeats the mark in
the code it writes, for the reverse sweep of hvp (`forward/tangent.py`).
"""

from __future__ import annotations

import libcst as cst

from ..ir.core import For, While

MARKER = "sourcead: checkpoint"


def marked(loop: For | While) -> bool:
    """Is the loop marked `# sourcead: checkpoint` (above it, or at the end of its header line)?"""
    origin = loop.origin
    comments = []
    if isinstance(origin, (cst.For, cst.While)):
        comments += [line.comment.value for line in origin.leading_lines if line.comment is not None]
        header = getattr(origin.body, "header", None)
        if header is not None and header.comment is not None:
            comments.append(header.comment.value)
    return any(MARKER in text for text in comments)
