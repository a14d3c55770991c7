"""sourcead: source-to-source automatic differentiation for numeric Python, compiled with numba.

import sourcead as ad
g = ad.grad(f, wrt=0)          # g(*args) -> gradient
vg = ad.value_and_grad(f)      # vg(*args) -> (value, gradient)
jf = ad.jvp(f, wrt=0)          # jf(*args, tangents=t) -> (value, J t)
vf = ad.vjp(f, wrt=0)          # vf(*args, cotangent=c) -> (value, c^T J)
"""

from ._version import __version__
from .api import differentiable, grad, jvp, value_and_grad, vjp
from .errors import AliasingError, SourceADError

__all__ = [
    "AliasingError",
    "SourceADError",
    "__version__",
    "differentiable",
    "grad",
    "jvp",
    "value_and_grad",
    "vjp",
]
