"""Runtime special functions that `math` lacks and derivative rules call: `digamma`, the derivative
of `math.lgamma` (and, times Gamma, of `math.gamma`).
"""

from __future__ import annotations

import math

from numba.extending import register_jitable

# the helpers generated code may import (`sourcead.runtime.HELPERS` is the union of these lists)
__all__ = ["digamma"]


@register_jitable
def digamma(x):
    """psi(x), the derivative of log |Gamma(x)| (math.lgamma), so Gamma'(x) = Gamma(x) psi(x):
    reflection for x < 0, the recurrence psi(x) = psi(x + 1) - 1 / x up to x >= 6, then the
    asymptotic series (relative error below 1e-11). nan at the poles 0, -1, -2, ..."""
    if x <= 0.0 and x == math.floor(x):
        return math.nan
    result = 0.0
    if x < 0.0:  # psi(x) = psi(1 - x) - pi / tan(pi x)
        result = -math.pi / math.tan(math.pi * x)
        x = 1.0 - x
    while x < 6.0:
        result -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    series = f * (1.0 / 12.0 - f * (1.0 / 120.0 - f * (1.0 / 252.0 - f * (1.0 / 240.0 - f / 132.0))))
    return result + math.log(x) - 0.5 / x - series
