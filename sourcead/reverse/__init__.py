"""Reverse mode: the plan (`plan`: what is recorded, where and how, from `tbr`, `recording`,
`recompute`, `elements`, `gather`, `promote`, `parallel`, `checkpoint`, `coverage`), each statement's
adjoint (`adjoint`, `peephole`), and the two sweeps written from the plan (`sweeps`, `emit/`).
"""
