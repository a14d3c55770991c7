"""Analyses over the core form: types (`kinds`), which values carry derivatives (`activity`,
`liveness`), definite assignment (`definite`), the analysed program (`program`) and the shape contract
(`contract`).
"""
