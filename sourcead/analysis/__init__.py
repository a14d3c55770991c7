"""Analyses over the core form: types (`kinds`), which values carry derivatives (`activity`,
`liveness`), definite assignment (`definite`), the analysed program (`program`) and the shape contract
(`contract`, with `contract_terms`, `contract_facts`, `contract_walk`); and the helpers the later
stages share: what a statement reads (`reads`) and affine index expressions (`affine`).
"""
