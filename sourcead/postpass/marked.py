"""Passes over the text of a generated function, from a marked statement on.

The reverse sweep's last passes (`unsigned.py`, `first_contributions.py`) rewrite the statements of the
finished function after the comment that opens the sweep: they need only its loop headers and
assignments, and every emitter's code gets them without asking. The function is parsed once for
all of them (parsing is a fair part of a cold first call's transform).
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

Rewrite = Callable[[list[cst.CSTNode]], list[cst.CSTNode]]


def rewrite_after(function: str, marker: str, *rewrites: Rewrite) -> str:
    """`function` (the text of one generated function) with its statements from the one after the
    comment `marker` on passed through each of `rewrites` in turn; unchanged without the marker."""
    module = cst.parse_module(function)
    (definition,) = module.body
    assert isinstance(definition, cst.FunctionDef)
    statements = list(definition.body.body)
    start = next((k for k, s in enumerate(statements) if _marked(s, marker)), None)
    if start is None:
        return function
    sweep = statements[start:]
    for rewrite in rewrites:
        sweep = rewrite(sweep)
    definition = definition.with_changes(body=definition.body.with_changes(body=statements[:start] + sweep))
    return module.with_changes(body=[definition]).code


def _marked(statement: cst.CSTNode, marker: str) -> bool:
    lines = getattr(statement, "leading_lines", ())
    return any(line.comment is not None and line.comment.value == marker for line in lines)
