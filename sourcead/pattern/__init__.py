"""Sparsity patterns read from the source: the pattern sweep (`sweep.py`), a forward mode whose
tangents are sets of input elements, and what decides whether a pattern is static (`static.py`)."""
