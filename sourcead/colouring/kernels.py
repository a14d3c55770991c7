"""The compiled loops of the colourings: greedy colourings, vertex orderings, DSATUR, the CSC
view of a CSR structure, and the gathers and uniqueness checks of decompression.

Every kernel works on index arrays only (CSR/CSC `indptr`/`indices`), so numba compiles each once
(`cache=True`) for int64 arrays. The graphs are never built: a vertex's distance-2 neighbours in
the bipartite graph of a pattern are read through its lines (rows of a column, then the columns
of each row). For a graph given by an adjacency list the same kernels take the identity as the
first hop (`identity_hop`), so "neighbours at distance <= 2 through a line" becomes "neighbours".

References: A. H. Gebremedhin, F. Manne, A. Pothen, "What color is your Jacobian? Graph coloring
for computing derivatives", SIAM Review 47(4), 2005 (GMP05: greedy distance-2 colouring,
Algorithm 3.2; orderings, section 3.3); A. H. Gebremedhin, A. Tarafdar, F. Manne, A. Pothen,
"New acyclic and star coloring algorithms with application to computing Hessians", SIAM J. Sci.
Comput. 29(3), 2007 (GTMP07: star colouring with two-coloured stars, Algorithm 4.1); D. W. Matula,
L. L. Beck, "Smallest-last ordering and clustering and graph coloring algorithms", JACM 1983;
D. Brelaz, "New methods to color the vertices of a graph", CACM 22(4), 1979 (DSATUR).
"""

from __future__ import annotations

import numpy as np
from numba import njit


def identity_hop(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The first hop of a one-hop graph: vertex v reaches the single "line" v."""
    return np.arange(n + 1, dtype=np.int64), np.arange(n, dtype=np.int64)


@njit(cache=True, nogil=True)
def greedy_distance2(ptr1, idx1, ptr2, idx2, order):  # pragma: no cover - compiled
    """GMP05 Algorithm 3.2: give each vertex of `order` the smallest colour that no vertex sharing
    a line with it has (v's lines are idx1[ptr1[v]:ptr1[v+1]], a line's vertices idx2[...])."""
    n = ptr1.shape[0] - 1
    colour = np.full(n, -1, np.int64)
    forbidden = np.full(n + 1, -1, np.int64)
    for v in order:
        for p in range(ptr1[v], ptr1[v + 1]):
            line = idx1[p]
            for q in range(ptr2[line], ptr2[line + 1]):
                c = colour[idx2[q]]
                if c >= 0:
                    forbidden[c] = v
        c = 0
        while forbidden[c] == v:
            c += 1
        colour[v] = c
    return colour


@njit(cache=True, nogil=True)
def distance2_degrees(ptr1, idx1, ptr2, idx2):  # pragma: no cover - compiled
    """The number of other vertices sharing a line with each vertex (its distance-2 degree)."""
    n = ptr1.shape[0] - 1
    degree = np.zeros(n, np.int64)
    seen = np.full(n, -1, np.int64)
    for v in range(n):
        seen[v] = v
        d = 0
        for p in range(ptr1[v], ptr1[v + 1]):
            line = idx1[p]
            for q in range(ptr2[line], ptr2[line + 1]):
                w = idx2[q]
                if seen[w] != v:
                    seen[w] = v
                    d += 1
        degree[v] = d
    return degree


@njit(cache=True, nogil=True)
def smallest_last(ptr1, idx1, ptr2, idx2, degree):  # pragma: no cover - compiled
    """Matula-Beck smallest-last order on the distance-2 graph: repeatedly remove a vertex of least
    remaining degree, placing it before those removed earlier; buckets of equal degree are doubly
    linked lists, so the whole order costs one more sweep over the distance-2 neighbourhoods."""
    n = ptr1.shape[0] - 1
    order = np.empty(n, np.int64)
    if n == 0:
        return order
    deg = degree.copy()
    top = 0
    for v in range(n):
        top = max(top, deg[v])
    head = np.full(top + 1, -1, np.int64)
    nxt = np.full(n, -1, np.int64)
    prv = np.full(n, -1, np.int64)
    for v in range(n - 1, -1, -1):  # so that each bucket lists its vertices in increasing order
        d = deg[v]
        nxt[v] = head[d]
        if head[d] >= 0:
            prv[head[d]] = v
        head[d] = v
    removed = np.zeros(n, np.bool_)
    seen = np.full(n, -1, np.int64)
    low = 0
    for position in range(n - 1, -1, -1):
        while head[low] < 0:
            low += 1
        v = head[low]
        head[low] = nxt[v]
        if nxt[v] >= 0:
            prv[nxt[v]] = -1
        removed[v] = True
        order[position] = v
        seen[v] = v
        for p in range(ptr1[v], ptr1[v + 1]):
            line = idx1[p]
            for q in range(ptr2[line], ptr2[line + 1]):
                w = idx2[q]
                if removed[w] or seen[w] == v:
                    continue
                seen[w] = v
                d = deg[w]  # unlink w from bucket d, push it onto bucket d - 1
                if prv[w] >= 0:
                    nxt[prv[w]] = nxt[w]
                else:
                    head[d] = nxt[w]
                if nxt[w] >= 0:
                    prv[nxt[w]] = prv[w]
                deg[w] = d - 1
                prv[w] = -1
                nxt[w] = head[d - 1]
                if head[d - 1] >= 0:
                    prv[head[d - 1]] = w
                head[d - 1] = w
        low = max(low - 1, 0)
    return order


@njit(cache=True, nogil=True)
def _forbid_neighbours(v, w, ptr, idx, colour, forbidden, treated):  # pragma: no cover - compiled
    for p in range(ptr[w], ptr[w + 1]):
        c = colour[idx[p]]
        if c > 0:
            forbidden[c] = v
    treated[w] = v


@njit(cache=True, nogil=True)
def greedy_star(ptr, idx, edge, order):  # pragma: no cover - compiled
    """GTMP07 Algorithm 4.1: a greedy star colouring of the graph ptr/idx (symmetric, no loops)
    that keeps the two-coloured stars, so forbidding a colour costs O(degree^2), not O(degree^3).

    `edge[p]` names the undirected edge at position p (the same for (v, w) and (w, v)). Colours
    are 1..k here (0: not yet coloured). A star whose hub is not yet known (one edge) has hub
    -(max(v, w) + 1), which no vertex equals.
    """
    n = ptr.shape[0] - 1
    colour = np.zeros(n, np.int64)
    forbidden = np.full(n + 2, -1, np.int64)
    first_v = np.full(n + 2, -1, np.int64)  # per colour c: the last vertex v that met a neighbour
    first_w = np.full(n + 2, -1, np.int64)  # of colour c, that neighbour, and the edge between them
    first_e = np.full(n + 2, -1, np.int64)
    treated = np.full(n, -1, np.int64)
    star = np.full(idx.shape[0], -1, np.int64)
    hub = np.empty(idx.shape[0] + 1, np.int64)
    stars = 0
    for v in order:
        forbidden[0] = v
        for p in range(ptr[v], ptr[v + 1]):
            w = idx[p]
            cw = colour[w]
            if cw == 0:
                continue
            forbidden[cw] = v
            if first_v[cw] == v:  # a second neighbour of colour cw: no colour of their neighbours
                q = first_w[cw]
                if treated[q] != v:
                    _forbid_neighbours(v, q, ptr, idx, colour, forbidden, treated)
                _forbid_neighbours(v, w, ptr, idx, colour, forbidden, treated)
            else:
                first_v[cw] = v
                first_w[cw] = w
                first_e[cw] = edge[p]
                for r in range(ptr[w], ptr[w + 1]):
                    x = idx[r]
                    if x != v and colour[x] > 0 and hub[star[edge[r]]] == x:
                        forbidden[colour[x]] = v  # v would be a spoke of x's star through w
        c = 1
        while forbidden[c] == v:
            c += 1
        colour[v] = c
        stars = _grow_stars(v, ptr, idx, edge, colour, first_v, first_w, first_e, star, hub, stars)
    return colour - 1


@njit(cache=True, nogil=True)
def _grow_stars(v, ptr, idx, edge, colour, first_v, first_w, first_e, star, hub, stars):  # pragma: no cover
    """Put every edge vw (w coloured) into its two-coloured star, as GTMP07's updateStars."""
    cv = colour[v]
    for p in range(ptr[v], ptr[v + 1]):
        w = idx[p]
        cw = colour[w]
        if cw == 0:
            continue
        joined = False
        for r in range(ptr[w], ptr[w + 1]):
            x = idx[r]
            if x != v and colour[x] == cv:  # vw and wx: w is the hub of their star
                s = star[edge[r]]
                hub[s] = w
                star[edge[p]] = s
                joined = True
                break
        if not joined:
            if first_v[cw] == v and first_w[cw] != w:  # vw and vq with colour(q) = colour(w)
                s = star[first_e[cw]]
                hub[s] = v
                star[edge[p]] = s
            else:
                hub[stars] = -(max(v, w) + 1)
                star[edge[p]] = stars
                stars += 1
    return stars


@njit(cache=True, nogil=True)
def unique_in_line(ptr, idx, colour):  # pragma: no cover - compiled
    """For every position p of line i: whether idx[p] has a colour (> 0) that no other index of
    line i has. That is when an entry can be read straight off the compressed line."""
    count = np.zeros(colour.max() + 1 if colour.shape[0] else 1, np.int64)
    unique = np.zeros(idx.shape[0], np.bool_)
    for i in range(ptr.shape[0] - 1):
        for p in range(ptr[i], ptr[i + 1]):
            count[colour[idx[p]]] += 1
        for p in range(ptr[i], ptr[i + 1]):
            c = colour[idx[p]]
            unique[p] = c > 0 and count[c] == 1
        for p in range(ptr[i], ptr[i + 1]):
            count[colour[idx[p]]] = 0
    return unique


@njit(cache=True, nogil=True)
def saturation_distance2(ptr1, idx1, ptr2, idx2, degree):  # pragma: no cover - compiled
    """DSATUR (Brelaz 1979) on the distance-2 graph: colour next an uncoloured vertex whose
    distance-2 neighbours already show the most distinct colours (ties: the most recently raised,
    starting from the largest degree), with the smallest colour they leave free. Each vertex keeps
    its neighbours' colours as a bitset of ceil((max degree + 1) / 64) words (a colour never
    exceeds the degree), so the whole colouring costs about two greedy sweeps."""
    n = ptr1.shape[0] - 1
    colour = np.full(n, -1, np.int64)
    if n == 0:
        return colour
    words = (degree.max() + 1 + 63) // 64
    bits = np.zeros((n, words), np.uint64)
    sat = np.zeros(n, np.int64)
    head = np.full(degree.max() + 2, -1, np.int64)
    nxt = np.full(n, -1, np.int64)
    prv = np.full(n, -1, np.int64)
    for v in np.argsort(degree, kind="mergesort"):  # LIFO bucket: largest degree on top
        nxt[v] = head[0]
        if head[0] >= 0:
            prv[head[0]] = v
        head[0] = v
    seen = np.full(n, -1, np.int64)
    top = 0
    for _ in range(n):
        while head[top] < 0:
            top -= 1
        v = head[top]
        head[top] = nxt[v]
        if nxt[v] >= 0:
            prv[nxt[v]] = -1
        c = 0
        while (bits[v, c >> 6] >> np.uint64(c & 63)) & np.uint64(1):
            c += 1
        colour[v] = c
        word, bit = c >> 6, np.uint64(1) << np.uint64(c & 63)
        seen[v] = v
        for p in range(ptr1[v], ptr1[v + 1]):
            line = idx1[p]
            for q in range(ptr2[line], ptr2[line + 1]):
                w = idx2[q]
                if colour[w] >= 0 or seen[w] == v:
                    continue
                seen[w] = v
                if bits[w, word] & bit:
                    continue
                bits[w, word] |= bit
                s = sat[w]  # move w from bucket s to the top of bucket s + 1
                if prv[w] >= 0:
                    nxt[prv[w]] = nxt[w]
                else:
                    head[s] = nxt[w]
                if nxt[w] >= 0:
                    prv[nxt[w]] = prv[w]
                sat[w] = s + 1
                prv[w] = -1
                nxt[w] = head[s + 1]
                if head[s + 1] >= 0:
                    prv[head[s + 1]] = w
                head[s + 1] = w
                top = max(top, s + 1)
    return colour


@njit(cache=True, nogil=True)
def transpose(indptr, indices, n):  # pragma: no cover - compiled
    """The CSC arrays of a CSR structure with n columns, by counting sort (rows stay sorted within
    each column), and for each CSC position the CSR position it came from."""
    col_ptr = np.zeros(n + 1, np.int64)
    for p in range(indices.shape[0]):
        col_ptr[indices[p] + 1] += 1
    for j in range(n):
        col_ptr[j + 1] += col_ptr[j]
    fill = col_ptr[:-1].copy()
    col_rows = np.empty(indices.shape[0], np.int64)
    to_csr = np.empty(indices.shape[0], np.int64)
    for i in range(indptr.shape[0] - 1):
        for p in range(indptr[i], indptr[i + 1]):
            q = fill[indices[p]]
            fill[indices[p]] = q + 1
            col_rows[q] = i
            to_csr[q] = p
    return col_ptr, col_rows, to_csr


@njit(cache=True, nogil=True)
def gather_columns(indptr, indices, colour, B):  # pragma: no cover - compiled
    """J's CSR data from B = J @ S of a column colouring: data[p] = B[i, colour[j]] for the entry
    (i, j) at p; and the first position whose colour another entry of its row shares (-1: none),
    where B holds a sum, not the entry."""
    data = np.empty(indices.shape[0], np.float64)
    last = np.full(B.shape[1], -1, np.int64)  # per colour: the last row that used it
    bad = -1
    for i in range(indptr.shape[0] - 1):
        for p in range(indptr[i], indptr[i + 1]):
            c = colour[indices[p]]
            if last[c] == i and bad < 0:
                bad = p
            last[c] = i
            data[p] = B[i, c]
    return data, bad


@njit(cache=True, nogil=True)
def gather_rows(indptr, indices, colour, C, n):  # pragma: no cover - compiled
    """J's CSR data from C = S.T @ J of a row colouring: data[p] = C[colour[i], j]; and the first
    position (in colour order) whose column another row of its colour also has (-1: none)."""
    data = np.empty(indices.shape[0], np.float64)
    mark = np.full(n, -1, np.int64)  # per column: the last colour whose rows touched it
    bad = -1
    for i in np.argsort(colour, kind="mergesort"):
        c = colour[i]
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            if mark[j] == c and bad < 0:
                bad = p
            mark[j] = c
            data[p] = C[c, j]
    return data, bad


@njit(cache=True, nogil=True)
def drop_diagonal(indptr, indices):  # pragma: no cover - compiled
    """The CSR structure without its diagonal entries."""
    m = indptr.shape[0] - 1
    ptr = np.zeros(m + 1, np.int64)
    idx = np.empty(indices.shape[0], np.int64)
    k = 0
    for i in range(m):
        for p in range(indptr[i], indptr[i + 1]):
            if indices[p] != i:
                idx[k] = indices[p]
                k += 1
        ptr[i + 1] = k
    return ptr, idx[:k].copy()


@njit(cache=True, nogil=True)
def split_bound(indptr, indices, t, n):  # pragma: no cover - compiled
    """A lower bound on the passes of "rows longer than t by reverse passes, the rest forward":
    the longest row kept, plus the most entries of the long rows in one column."""
    count = np.zeros(n, np.int64)
    kept = 0
    most = 0
    for i in range(indptr.shape[0] - 1):
        length = indptr[i + 1] - indptr[i]
        if length <= t:
            kept = max(kept, length)
            continue
        for p in range(indptr[i], indptr[i + 1]):
            count[indices[p]] += 1
            most = max(most, count[indices[p]])
    return kept + most
