"""Forward mode: tangents (`tangent`), k directions at once (`vector`), and the program whose reverse
mode is the Hessian-vector product (`second`).
"""
