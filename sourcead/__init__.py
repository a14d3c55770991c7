"""sourcead: source-to-source automatic differentiation for numeric Python, compiled with numba.

import sourcead as ad
g = ad.grad(f, wrt=0)          # g(*args) -> gradient
vg = ad.value_and_grad(f)      # vg(*args) -> (value, gradient)
jf = ad.jvp(f, wrt=0)          # jf(*args, tangents=t) -> (value, J t)
vf = ad.vjp(f, wrt=0)          # vf(*args, cotangent=c) -> (value, c^T J)
h = ad.hvp(f, wrt=0)           # h(*args, tangents=v) -> H v
H = ad.hessian(f, wrt=0)       # H(*args) -> x.shape + x.shape
J = ad.jacobian(f, wrt=0)      # J(*args) -> out.shape + x.shape
P = ad.sparsity(f, wrt=0)      # P(*args) -> the Jacobian's pattern, a csr_array of bool (of="hessian" too)

The bridges `sourcead.torch` and `sourcead.jax` are imported on first use (`ad.torch.function`),
never by `import sourcead`.
"""

from ._version import __version__
from .build.threads import use_threadsafe_layer

use_threadsafe_layer()
from .api.check import check_derivative  # noqa: E402
from .api.decorator import differentiable  # noqa: E402
from .api.first_order import grad, jvp, value_and_grad, vjp  # noqa: E402
from .api.higher import hessian, hvp, jacobian  # noqa: E402
from .api.nested import entry as _nested_entry  # noqa: E402, F401  (installs the derivative-call builder)
from .api.sparse import sparsity  # noqa: E402
from .custom import custom_rule  # noqa: E402
from .errors import AliasingError, ArgumentTypeError, RaceWarning, ShapeError, SourceADError  # noqa: E402

__all__ = [
    "AliasingError",
    "ArgumentTypeError",
    "RaceWarning",
    "ShapeError",
    "SourceADError",
    "custom_rule",
    "__version__",
    "check_derivative",
    "differentiable",
    "grad",
    "hessian",
    "hvp",
    "jacobian",
    "jvp",
    "sparsity",
    "value_and_grad",
    "vjp",
]


def __getattr__(name: str):  # the framework bridges, imported only when used
    if name in ("torch", "jax"):
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
