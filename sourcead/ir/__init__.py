"""The intermediate forms every stage shares: the core form (`core`), libcst expression helpers
(`exprs`), value types (`types`), generated names (`naming`), generated lines and modules (`emit`),
and record-count algebra (`counts`).
"""
