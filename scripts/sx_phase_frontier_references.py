"""References for tests/test_removal.py::test_frontier_of_a_slowly_forming_front (independent of
queuetheory; written for an audit, 2026-12-07): the stability frontier ``lam*`` of mean-field MDS
and batch replication WITH removal, S&X runtimes ``X S`` with a job size ``X ~ Erlang(k, k)`` (a
Gauss-Legendre rule in probability space on graded pieces, as in
``scripts/sx_atom_phase_removal_references.py``, whose rule it imports) and a
hyperexponential slowdown.

Front march: ``F(0) = seed`` (tiny), the ODE of the level-crossing equation::

    F' = lam_t sum_j p_j (F - q_j) phi(q_j),   q_j = sum_l w_l y_(j, l, k_l),
    y_(j, l, 1)' = nu (F - y_(j, l, 1)),  y_(j, l, i)' = nu (y_(j, l, i - 1) - y_(j, l, i)),
    nu = r_l / x_j,

integrated by Radau (exact sparse Jacobian, ``atol = seed 1e-12``) until the front has passed.
The level behind the front is ``L = F(W) + D(W)``, ``D`` the rise left if ``F`` were frozen
(each stage's deficit ``F - y`` relaxes with time constant ``1 / nu``; ``phi(1) = 0`` in every
system here, so its feedback is negligible); ``lam*`` solves ``L(lam) = 1`` (Brent). No grid.

Checks (measured 2026-12-07, relative change of ``lam*``): seed 1e-14, at most 7e-13; 16 nodes
per piece instead of 12, 1.4e-12 (8 nodes: 1.1e-9); deeper grading of the rule, 2.5e-12; rtol
1e-12 instead of 1e-10, at most 1.2e-11; the stopping tolerance 1e-13 instead of 1e-11 (a longer
horizon), 0.9e-11 to 1.7e-11; BDF instead of Radau at rtol 1e-13, 8e-12. The values printed (16
nodes per piece, rtol 1e-12, tolerance 1e-13) are good to about 5e-11 relative.

``ATOMS``: a job size on atoms, {0.01, 3} times Erlang(2, 2), Replication(1, 3): 0.5490232697397904;
seed 1e-14, 0.5490232697405264; rtol 1e-11 and tolerance 1e-12, 0.5490232697392968.

``I`` (Erlang(2) times ``HyperExponential([0.5, 0.5], [0.5, 2])``, Replication(1, 3), for
tests/test_removal.py::test_frontier_of_a_balanced_hyperexponential_slowdown): 0.9703149954302025.

``J`` (``HYPER_X``: a hyperexponential job size, its rule the union of its phases' exponential
rules, times a hyperexponential slowdown, MDS(8, 1), for
tests/test_removal.py::test_frontier_of_a_slowly_forming_front_within_the_memory_bound):
3.3783761290554595 (6 minutes); seed 1e-14, 3.3783761290590553; 12 nodes per piece, rtol 1e-10
and tolerance 1e-11, 3.378376129036417 (measured 2026-12-07).

Run: ``python scripts/sx_phase_frontier_references.py [A B ... J]`` (1 to 3 minutes per system)
prints ``name: lam*``.
"""
from __future__ import annotations

import math
import sys

import numpy as np
from scipy import integrate, optimize, special
from sx_atom_phase_removal_references import erlang_job_size_rule as job_size_rule
from sx_atom_phase_removal_references import stage_jacobian


class Front:
    """The front march of one system at the arrival rate ``lam`` (jobs per server)."""

    def __init__(self, mds, n, r, lam, xs, ps, phases, rtol=1e-12, seed=1e-12, atol_rel=1e-12):
        self.xs, self.ps = np.asarray(xs, float), np.asarray(ps, float)
        self.phases = [(float(w), int(k), float(rate)) for w, k, rate in phases]
        self.mds, self.n, self.r = mds, n, r
        self.lam_t = lam * (n + r) / n if mds else lam * r
        self.stages = sum(k for _, k, _ in self.phases)
        self.rtol, self.seed = rtol, seed
        self.atol = seed * atol_rel
        J = self.xs.size
        # per (atom, stage): the rate nu and the weight of (F - y) in D: w_l / nu
        nu = np.empty((J, self.stages))
        wt = np.empty((J, self.stages))
        start = 0
        for w, k, rate in self.phases:
            nu[:, start:start + k] = (rate / self.xs)[:, None]
            wt[:, start:start + k] = (w * self.xs / rate)[:, None]
            start += k
        self.nu, self.wt = nu, wt
        # stage structure: prev index for each stage (-1 means F), last-stage weights
        self.first = np.zeros(self.stages, bool)
        self.lastw = np.zeros(self.stages)
        start = 0
        for w, k, rate in self.phases:
            self.first[start] = True
            self.lastw[start + k - 1] = w
            start += k
    def phi(self, q):
        qc = np.clip(q, 0.0, 1.0)
        if self.mds:
            return special.bdtr(self.n - 1, self.n + self.r - 1, qc)
        return (1.0 - qc) ** (self.r - 1)

    def phi_prime(self, q):
        qc = np.clip(q, 0.0, 1.0)
        if self.mds:
            N, n = self.n + self.r, self.n
            if N - 1 < n:
                return 0.0 * qc
            return -(N - 1) * math.comb(N - 2, n - 1) * qc ** (n - 1) * (1.0 - qc) ** (N - 1 - n)
        return -(self.r - 1) * (1.0 - qc) ** max(self.r - 2, 0)

    def q_of(self, y):
        """``q(w | x_j)`` for every atom from the stages ``y`` (the last stage of each phase)."""
        return y @ self.lastw

    def rhs(self, _, state):
        F, y = state[0], state[1:].reshape(self.xs.size, self.stages)
        prev = np.empty_like(y)
        prev[:, 1:] = y[:, :-1]
        prev[:, self.first] = F
        dy = self.nu * (prev - y)
        q = self.q_of(y)
        dF = self.lam_t * np.dot(self.ps, (F - q) * self.phi(q))
        out = np.empty(state.size)
        out[0] = dF
        out[1:] = dy.ravel()
        return out

    def jac(self, _, state):
        F, y = state[0], state[1:].reshape(self.xs.size, self.stages)
        q = self.q_of(y)
        phi = self.phi(q)
        dF_dq = self.lam_t * self.ps * (-phi + (F - q) * self.phi_prime(q))
        return stage_jacobian(self.xs, self.phases, self.lam_t * np.sum(self.ps * phi),
                              [(0, dF_dq)], 1 + self.xs.size * self.stages)

    def deficit(self, state):
        """D: the remaining increase of F if F were frozen now."""
        F, y = state[0], state[1:].reshape(self.xs.size, self.stages)
        q = self.q_of(y)
        return self.lam_t * np.sum(self.ps * self.phi(q) * np.sum(self.wt * (F - y), axis=1))

    def level(self, tol=1e-13, Wmax=1e6, Fstop=1.5, method="Radau"):
        """March; returns (L, F(W), D(W), W, status, number of right-hand side calls)."""
        start = np.zeros(1 + self.xs.size * self.stages)
        start[0] = self.seed

        def ev_over(t, s):
            return s[0] - Fstop
        ev_over.terminal, ev_over.direction = True, 1

        def ev_done(t, s):
            F = s[0]
            if F < 0.05:
                return 1.0
            return self.deficit(s) - tol * F
        ev_done.terminal, ev_done.direction = True, -1

        extra = {"jac": self.jac} if method in ("Radau", "BDF", "LSODA") else {}
        sol = integrate.solve_ivp(self.rhs, (0.0, Wmax), start, method=method, rtol=self.rtol,
                                  atol=self.atol, events=[ev_over, ev_done], **extra)
        s = sol.y[:, -1]
        W = sol.t[-1]
        D = self.deficit(s)
        if sol.t_events[0].size:
            status = "over"
        elif sol.t_events[1].size:
            status = "levelled"
        else:
            status = "horizon"
        return s[0] + D, s[0], D, W, status, sol.nfev


HYPER = ((0.9, 1, 1.8), (0.1, 1, 0.2))
HYPER2 = ((0.7, 1, 3.0), (0.3, 1, 0.3))
HYPER3 = ((0.5, 1, 0.5), (0.5, 1, 2.0))

# name: (k of X ~ Erlang(k, k), slowdown, mds, n, r)
SYSTEMS = {
    "A": (1, HYPER, True, 2, 1),
    "B": (1, HYPER, True, 4, 2),
    "C": (1, HYPER, True, 10, 5),
    "D": (1, HYPER, False, 2, 2),
    "E": (1, HYPER, False, 1, 3),
    "F": (1, HYPER2, True, 4, 2),
    "G": (2, HYPER, True, 2, 1),
    "I": (2, HYPER3, False, 1, 3),
}


def ER(k, phases):
    return 1.0 * sum(w * kk / rate for w, kk, rate in phases)


def lam_lower(name):
    k, phases, mds, n, r = SYSTEMS[name]
    return (n / (n + r) if mds else 1.0 / r) / ER(k, phases)


BEST = dict(per_piece=16, rtol=1e-12, seed=1e-12, tol=1e-13)


def rough(name):
    """A bracketing estimate of ``lam*`` with a coarse rule and loose tolerances."""
    k, ph, mds, n, r = SYSTEMS[name]
    xs, ps = job_size_rule(k, float(k), 6)
    lo = lam_lower(name)

    def g(lam):
        return Front(mds, n, r, lam, xs, ps, ph, rtol=1e-7).level(tol=1e-8)[0] - 1.0
    a = 1.25 * lo
    step = 1.25
    if g(a) < 0:
        b = a * step
        while g(b) < 0:
            a, b = b, b * step
    else:
        b = a
        a = b / step
        while g(a) > 0 and a > 1.02 * lo:
            b, a = a, max(a / step, 1.02 * lo)
    return optimize.brentq(g, a, b, xtol=1e-7)


def accurate(name, guess, width, per_piece, rtol, seed, tol, method="Radau"):
    """Brent's method on ``L(lam) - 1`` within ``guess (1 +- width)`` (widened if needed)."""
    lo, hi = guess * (1 - width), guess * (1 + width)
    k, ph, mds, n, r = SYSTEMS[name]
    xs, ps = job_size_rule(k, float(k), per_piece)

    def g(lam):
        return Front(mds, n, r, lam, xs, ps, ph, rtol=rtol, seed=seed).level(
            tol=tol, method=method)[0] - 1.0
    while g(lo) > 0:
        lo -= (hi - lo)
    while g(hi) < 0:
        hi += (hi - lo)
    return optimize.brentq(g, lo, hi, xtol=1e-13 * guess, rtol=1e-15)


# name: (job size atoms, their probabilities, slowdown, mds, n, r or d), bracket of lam*
ATOMS = {
    "H": ((0.01, 3.0), (0.5, 0.5), ((1.0, 2, 2.0),), False, 1, 3, (0.5, 0.6)),
}


def atoms_frontier(name, rtol=1e-12, seed=1e-12, tol=1e-13):
    """``lam*`` of a job size on atoms (no rule over ``X``) by Brent's method in its bracket."""
    xs, ps, ph, mds, n, r, bracket = ATOMS[name]

    def g(lam):
        return Front(mds, n, r, lam, xs, ps, ph, rtol=rtol, seed=seed).level(tol=tol)[0] - 1.0
    return optimize.brentq(g, *bracket, xtol=1e-15, rtol=1e-15)


# name: (job size phases (weight, rate), slowdown, mds, n, r or d), bracket of lam*: a
# hyperexponential job size, its rule the union of each phase's exponential rule
HYPER_X = {
    "J": (((0.238743, 0.616588), (0.761257, 4.89854)),
          ((0.397813, 1, 1.12526), (0.602187, 1, 3.02744)), True, 8, 1, (3.37, 3.39)),
}


def hyper_x_frontier(name, per_piece=16, rtol=1e-12, seed=1e-12, tol=1e-13):
    """``lam*`` of a hyperexponential job size by Brent's method in its bracket."""
    xphases, ph, mds, n, r, bracket = HYPER_X[name]
    rules = [job_size_rule(1, rate, per_piece) for _, rate in xphases]
    xs = np.concatenate([x for x, _ in rules])
    ps = np.concatenate([w * p for (w, _), (_, p) in zip(xphases, rules)])

    def g(lam):
        return Front(mds, n, r, lam, xs, ps, ph, rtol=rtol, seed=seed).level(tol=tol)[0] - 1.0
    return optimize.brentq(g, *bracket, xtol=1e-15, rtol=1e-15)


if __name__ == "__main__":
    for name in sys.argv[1:] or sorted(SYSTEMS) + sorted(ATOMS) + sorted(HYPER_X):
        value = (atoms_frontier(name) if name in ATOMS else hyper_x_frontier(name)
                 if name in HYPER_X else accurate(name, rough(name), 1e-5, **BEST))
        print(f"{name}: {value!r}", flush=True)
