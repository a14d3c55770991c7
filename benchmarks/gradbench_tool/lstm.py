"""GradBench's ``lstm`` (ADBench's): a stack of LSTM layers with diagonal weights reads a text
one character (a row of bits) at a time and predicts the next; ``objective`` is the mean negative
log-likelihood of the text under ``log(2 + sum exp)`` normalisation, ``jacobian`` its gradient in
main_params and extra_params, each flattened row by row, concatenated.

main_params rows 2l (weights) and 2l+1 (biases) of layer l, each four blocks of b (forget, input
and output gates, cell change); extra_params rows: input weight, output weight, output bias;
state rows 2l (hidden) and 2l+1 (cell) of layer l."""

from __future__ import annotations

import math

import numpy as np

import sourcead
from benchmarks.gradbench_tool.common import Function, as_list, number, primal, vector

TINY = {
    "main_params": [[0.1 * ((3 * i + j) % 7) - 0.3 for j in range(8)] for i in range(4)],
    "extra_params": [[0.2, -0.1], [0.3, 0.4], [-0.2, 0.1]],
    "state": [[0.1, 0.2], [-0.1, 0.3], [0.05, -0.2], [0.4, 0.1]],
    "sequence": [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 0.0]],
    "min_runs": 1,
    "min_seconds": 0.0,
}


def lstm_objective(main_params, extra_params, state, sequence):
    n_layers = main_params.shape[0] // 2
    b = sequence.shape[1]
    st = state.copy()
    x = np.empty(b)
    ypred = np.empty(b)
    total = 0.0
    count = 0
    for t in range(sequence.shape[0] - 1):
        for j in range(b):
            x[j] = sequence[t, j] * extra_params[0, j]
        for layer in range(n_layers):
            w = 2 * layer
            for j in range(b):
                h = st[w, j]
                forget = 1.0 / (1.0 + math.exp(-(x[j] * main_params[w, j] + main_params[w + 1, j])))
                ingate = 1.0 / (1.0 + math.exp(-(h * main_params[w, b + j] + main_params[w + 1, b + j])))
                outgate = 1.0 / (1.0 + math.exp(-(x[j] * main_params[w, 2 * b + j] + main_params[w + 1, 2 * b + j])))
                change = math.tanh(h * main_params[w, 3 * b + j] + main_params[w + 1, 3 * b + j])
                cell = st[w + 1, j] * forget + ingate * change
                st[w + 1, j] = cell
                st[w, j] = outgate * math.tanh(cell)
                x[j] = st[w, j]
        lse = 2.0
        for j in range(b):
            ypred[j] = x[j] * extra_params[1, j] + extra_params[2, j]
            lse += math.exp(ypred[j])
        lse = math.log(lse)
        for j in range(b):
            total += sequence[t + 1, j] * (ypred[j] - lse)
        count += b
    return -total / count


def decode(raw):
    return vector(raw["main_params"]), vector(raw["extra_params"]), vector(raw["state"]), vector(raw["sequence"])


def encode_jacobian(grads):
    main, extra = grads
    return as_list(np.concatenate((np.ravel(main), np.ravel(extra))))


def define(jit: bool) -> dict[str, Function]:
    gradient = sourcead.grad(lstm_objective, wrt=("main_params", "extra_params"), jit=jit)
    return {
        "objective": Function(decode, primal(lstm_objective, jit), number),
        "jacobian": Function(decode, gradient, encode_jacobian),
    }
