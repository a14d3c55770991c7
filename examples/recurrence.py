"""The README's 10-line example: a logistic-map recurrence, differentiated with respect to r."""


def recurrence(r, x0, n):
    x = x0
    for i in range(n):
        x = r * x * (1.0 - x)
    return x


def example_args():
    return 3.2, 0.4, 1000


if __name__ == "__main__":
    import sourcead

    print(sourcead.differentiable(recurrence).source(mode="reverse", wrt="r"))
    print("d x_n / d r =", sourcead.grad(recurrence, wrt="r")(*example_args()))
