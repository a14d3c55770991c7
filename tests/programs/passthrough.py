"""Functions that return their arguments: derivatives must still be fresh arrays."""


def ident(x):
    return x


def pick_second(x, y):
    z = y
    return z


def twice(x):
    return x, x


def scaled_and_self(x, c):
    s = 0.0
    for i in range(x.shape[0]):
        s += c * x[i]
    return s, x
