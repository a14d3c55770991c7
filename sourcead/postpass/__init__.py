"""Passes over generated code after the sweeps: dead code, first contributions, unsigned indices."""
