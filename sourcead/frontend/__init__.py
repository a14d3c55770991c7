"""The front end: a user function's source becomes the core form.

`parse` finds and parses the source, `resolve` names what it reads, `fence` rejects what is outside
the supported subset, `normalize` (with `exits`, `loopvars`, `rings`, `parameters`, `outputs`,
`aliases`) writes the core form every later pass reads.
"""
