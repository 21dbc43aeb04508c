"""Independent references for MDS / Replication WITH removal under IR runtimes (k -> infinity).

The producer of the literals pinned in ``tests/test_removal.py`` (``_SURVEY``). It solves the
same level-crossing equation as :mod:`queuetheory.analysis.removal`,

    F'(w) = lam_t (F(w) - q(w)) phi(q(w)),   q(w) = P(V + R <= w),   F(0) = 1 - busy,

(``docs/theory/removal.md``) by a different discretisation: an adaptive 8th-order Runge-Kutta
method (scipy's DOP853, rtol 1e-13) on an ODE or a delay ODE that carries ``q`` exactly,

* phase-type ``R`` (Erlang, HyperExponential): ``Q_j = P(V + (phase sum) <= w)`` obey linear
  ODEs driven by ``F`` (``Q' = mu (F - Q)`` per exponential stage): an ODE system, no grid;
* ``ShiftedExponential(s, mu)``: ``q(w) = Q(w - s)`` with ``Q' = mu (F - Q)``: a delay ODE;
* ``Uniform(a, b)``: ``q(w) = (I(w - a) - I(w - b)) / (b - a)`` with ``I' = F``: a delay ODE;
* laws on integer atoms: ``q(w) = sum_x p_x F(w - x)``: a delay ODE;

delay ODEs by the method of steps (pieces as long as the shortest positive delay, dense output);
``F(0)`` by Brent's method on ``F(W) = 1`` (``W`` where ``1 - q(W)`` is negligible); the mean
``int_0^W P(C > t) dt`` as one more ODE component; the p99 by Brent's method on the dense output.
No code of the package is used.

Run: ``python scripts/removal_references.py`` prints ``key: (busy, mean, p99)`` lines.
"""

from __future__ import annotations

import numpy as np
from scipy import integrate, optimize, special

RTOL, ATOL = 1e-13, 1e-16


def kernel(mds: bool, n: int, r: int, lam: float):
    """(lam_t, phi, batch survival from q) of MDS(n, r) or Replication(n, r)."""
    if mds:
        def phi(q):
            return special.betainc(r, n, min(max(1 - q, 0.0), 1.0)) if r else 1.0

        def batch_sf(q):
            return special.betainc(r + 1, n, min(max(1 - q, 0.0), 1.0))
        return lam * (n + r) / n, phi, batch_sf

    def phi(q):
        return max(1 - q, 0.0) ** (r - 1)

    def batch_sf(q):
        return 1 - (1 - max(1 - q, 0.0) ** r) ** n
    return lam * r, phi, batch_sf


class Law:
    """A runtime law as (auxiliary ODE components, q from them and the history, delay)."""

    def __init__(self, aux: int, delay: float | None, deriv, q_of):
        self.aux, self.delay, self.deriv, self.q_of = aux, delay, deriv, q_of


def erlang(k: int, mu: float) -> Law:
    def deriv(F, y, past):
        out = np.empty(k)
        out[0] = mu * (F - y[0])
        out[1:] = mu * (y[:-1] - y[1:])
        return out
    return Law(k, None, deriv, lambda y, past: y[-1])


def hyperexponential(probs, rates) -> Law:
    probs, rates = np.asarray(probs, float), np.asarray(rates, float)
    return Law(len(probs), None, lambda F, y, past: rates * (F - y),
               lambda y, past: float(probs @ y))


def shifted_exponential(shift: float, mu: float) -> Law:
    return Law(1, shift, lambda F, y, past: np.array([mu * (F - y[0])]),
               lambda y, past: past(shift, 1))


def uniform(a: float, b: float) -> Law:
    def q_of(y, past):
        upper = y[0] if a == 0 else past(a, 1)
        return (upper - past(b, 1)) / (b - a)
    return Law(1, b if a == 0 else a, lambda F, y, past: np.array([F]), q_of)


def atoms(values, probs) -> Law:
    pairs = list(zip(values, probs))
    return Law(0, float(min(values)), lambda F, y, past: np.empty(0),
               lambda y, past: sum(p * past(x, 0) for x, p in pairs))


def solve(law: Law, mds: bool, n: int, r: int, lam: float, W: float, level: float = 0.99):
    """(busy, mean, level-quantile, 1 - q(W)) of the equation with ``law``, horizon ``W``."""
    lam_t, phi, batch_sf = kernel(mds, n, r, lam)
    dim = 2 + law.aux          # F, aux..., int P(C > t)
    step = law.delay if law.delay is not None else W

    def march(F0):
        pieces = []            # (start, dense output)

        def past(delay, component, w, current):
            """A component at ``w - delay`` from the piece ``delay / step`` pieces back (left
            limits at the ends of the current piece: delays are multiples of the step)."""
            j = current - round(delay / step)
            return 0.0 if j < 0 else float(pieces[j][1](w - delay)[component])

        y0 = np.zeros(dim)
        y0[0] = F0
        start = 0.0
        while start < W - 1e-12:
            end, piece = min(start + step, W), len(pieces)

            def rhs(w, y, current=piece):
                def hist(delay, component):
                    return past(delay, component, w, current)
                q = law.q_of(y[1:1 + law.aux], hist)
                out = np.empty(dim)
                out[0] = lam_t * (y[0] - q) * phi(q)
                out[1:1 + law.aux] = law.deriv(y[0], y[1:1 + law.aux], hist)
                out[-1] = batch_sf(q)
                return out

            sol = integrate.solve_ivp(rhs, (start, end), y0, method="DOP853", rtol=RTOL,
                                      atol=ATOL, dense_output=True)
            pieces.append((start, sol.sol))
            y0, start = sol.y[:, -1], end

        def q_at(w):
            j = min(int(w / step), len(pieces) - 1)
            y = pieces[j][1](w)

            def hist(delay, component):
                return past(delay, component, w, j)
            return law.q_of(y[1:1 + law.aux], hist)
        return y0, q_at

    F0 = optimize.brentq(lambda a: march(a)[0][0] - 1.0, 1e-9, 1.0, xtol=1e-16, rtol=1e-15)
    end, q_at = march(F0)
    target = 1 - level
    grid = np.linspace(0, W, int(W / min(step, 0.25)) + 1)
    sf = [batch_sf(q_at(t)) for t in grid]
    i = next(i for i, s in enumerate(sf) if s <= target)
    quantile = optimize.brentq(lambda t: batch_sf(q_at(t)) - target, grid[i - 1], grid[i],
                               xtol=1e-14, rtol=1e-15)
    return 1.0 - F0, float(end[-1]), quantile, 1.0 - q_at(W)


def mph1_batch(beta, S, n: int, lam: float, level: float = 0.99):
    """(busy, mean, level-quantile) of MDS(n, 0) (nothing removed: the batch waits for the last of
    n independent M/PH/1 sojourns) for phase-type runtimes PH(beta, S), exactly: the workload is
    PH(beta_+, S + s beta_+) with beta_+ = lam beta (-S)^{-1}, s = -S 1 (Asmussen, Applied
    Probability and Queues, 2nd ed., Cor. VIII.5.7), the sojourn its sum with a runtime (a PH of
    twice the order), P(C <= t) = P(sojourn <= t)^n; matrix exponentials (scipy.linalg.expm),
    the mean by adaptive quadrature, the quantile by Brent's method."""
    from scipy.linalg import expm
    beta, S = np.asarray(beta, float), np.asarray(S, float)
    k = beta.size
    s = -S @ np.ones(k)
    plus = lam * beta @ np.linalg.inv(-S)
    TV = S + np.outer(s, plus)
    T = np.block([[TV, np.outer(-TV @ np.ones(k), beta)], [np.zeros((k, k)), S]])
    alpha = np.concatenate([plus, (1 - plus.sum()) * beta])

    def sf(t):
        return 1 - (1 - float(alpha @ expm(T * t) @ np.ones(2 * k))) ** n

    mean, a = 0.0, 0.0
    while sf(a) > 1e-18:
        mean += integrate.quad(sf, a, a + 4, epsabs=1e-15, epsrel=1e-13, limit=200)[0]
        a += 4
    hi = 1.0
    while sf(hi) > 1 - level:
        hi *= 2
    quantile = optimize.brentq(lambda t: sf(t) - (1 - level), 0, hi, xtol=1e-14, rtol=1e-15)
    return lam * float(beta @ np.linalg.inv(-S) @ np.ones(k)), mean, quantile


# key: (law name, law parameters, mds, n, r, lam) -> horizon W
CASES = {
    ("erlang", (2, 2.0), True, 4, 2, 0.5): 60,
    ("erlang", (2, 2.0), True, 4, 0, 0.95): 1400,
    ("erlang", (4, 4.0), False, 2, 3, 0.7): 60,
    ("hyperexponential", ((0.9, 0.1), (2.0, 0.25)), True, 4, 2, 0.5): 160,
    ("hyperexponential", ((0.9, 0.1), (2.0, 0.25)), True, 10, 4, 1.45): 400,
    ("hyperexponential", ((0.9, 0.1), (2.0, 0.25)), False, 2, 3, 0.2): 160,
    ("hyperexponential", ((0.95, 0.05), (1.9, 0.1)), True, 4, 2, 0.5): 400,
    ("hyperexponential", ((0.95, 0.05), (1.9, 0.1)), True, 10, 1, 0.5): 1500,
    ("hyperexponential", ((0.95, 0.05), (1.9, 0.1)), False, 4, 2, 0.2): 400,
    ("shifted_exponential", (0.5, 2.0), True, 4, 2, 0.85): 120,
    ("shifted_exponential", (0.5, 2.0), True, 4, 0, 0.5): 120,
    ("uniform", (0.0, 2.0), True, 4, 0, 0.5): 120,
    ("uniform", (0.0, 2.0), True, 10, 4, 0.86): 120,
    ("atoms", ((1, 10), (0.9, 0.1)), True, 4, 2, 0.5): 200,
    ("atoms", ((1, 10), (0.9, 0.1)), False, 2, 3, 0.2): 150,
    ("atoms", ((1,), (1.0,)), True, 10, 4, 0.8): 80,
    ("erlang", (3, 3.0), True, 10, 1, 0.9): 200,
    ("atoms", ((1, 10), (0.9, 0.1)), True, 20, 10, 0.25): 200,
    ("atoms", ((1,), (1.0,)), True, 20, 10, 0.4): 80,
    ("atoms", ((1,), (1.0,)), True, 17, 3, 0.255): 40,
    # within 1e-3 and 2e-4 of the stability frontier (1.35626)
    ("hyperexponential", ((0.9, 0.1), (1.8, 0.2)), True, 4, 2, 1.3549): 220,
    ("hyperexponential", ((0.9, 0.1), (1.8, 0.2)), True, 4, 2, 1.356): 300,
}

# key: (phase-type name, (beta, S), n, lam) -> mph1_batch(beta, S, n, lam) (MDS(n, 0))
MPH1 = {
    ("erlang", (2, 2.0), 4, 0.95): ((1.0, 0.0), ((-2.0, 2.0), (0.0, -2.0))),
    ("hyperexponential", ((0.95, 0.05), (1.9, 0.1)), 4, 0.5): ((0.95, 0.05),
                                                               ((-1.9, 0.0), (0.0, -0.1))),
    ("hyperexponential", ((0.95, 0.05), (1.9, 0.1)), 4, 0.95): ((0.95, 0.05),
                                                                ((-1.9, 0.0), (0.0, -0.1))),
}

LAWS = {"erlang": erlang, "hyperexponential": hyperexponential,
        "shifted_exponential": shifted_exponential, "uniform": uniform, "atoms": atoms}


def reference(key):
    name, params, mds, n, r, lam = key
    return solve(LAWS[name](*params), mds, n, r, lam, CASES[key])


if __name__ == "__main__":
    import sys
    keys = list(CASES)
    if len(sys.argv) > 1:
        keys = [keys[int(i)] for i in sys.argv[1:]]
    for key in keys:
        busy, mean, quantile, tail = reference(key)
        assert tail < 1e-12, (key, tail)
        print(f"    {key!r}: ({busy!r}, {mean!r}, {quantile!r}),  # 1 - q(W) = {tail:.1e}",
              flush=True)
    if len(sys.argv) == 1:
        for (name, params, n, lam), (beta, S) in MPH1.items():
            busy, mean, quantile = mph1_batch(beta, S, n, lam)
            print(f"    {(name, params, True, n, 0, lam)!r}: ({busy!r}, {mean!r}, {quantile!r}),"
                  f"  # M/PH/1", flush=True)
