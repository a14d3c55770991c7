"""Issue 38 (what outsiders found): the programs of one area, each a zoo entry (`zoo.py`) that was
silently wrong, crashing or wrongly refused before. The comment above each says what went wrong."""

from __future__ import annotations
