"""References for tests/test_removal.py::test_continuous_slowdown_small_job_size_atom_with_removal
and ::test_continuous_job_size_and_slowdown_with_removal_against_the_ode (independent of
queuetheory): MDS(n, m) and Replication(n, d) WITH removal in the mean-field
limit, S&X runtimes ``X S`` with a job size on atoms ``x_j`` (probabilities ``p_j``, one ``X``
per batch) and a phase-type slowdown, a mixture of Erlangs ``sum_l w_l Erlang(k_l, r_l)``.

Given ``X = x``, branch ``l`` of ``x S`` is ``Erlang(k_l, r_l / x)``, so ``q(w | x) = P(V + x S
<= w) = sum_l w_l y_(l, k_l)(w)`` where the stages obey linear ODEs driven by ``F`` (``F = 0``
below 0, its atom ``F(0)`` at 0)::

    y_(l, 1)' = nu (F - y_(l, 1)),   y_(l, i)' = nu (y_(l, i - 1) - y_(l, i)),   nu = r_l / x,

and the level-crossing equation of a server's workload, for ``w > 0``::

    F'(w) = lam_t E_X[(F(w) - q(w | X)) phi(q(w | X))],    P(C > t) = E_X[B(q(t | X))],

MDS: ``phi(q) = P(Binomial(N - 1, q) <= n - 1)``, ``B(q) = P(Binomial(N, q) <= n - 1)``, ``lam_t
= lam N / n``; Replication(n, d): ``phi = (1 - q)^(d - 1)``, ``B = 1 - (1 - (1 - q)^d)^n``,
``lam_t = lam d``. An ODE system without delays: scipy's Radau (implicit: a small atom makes it
stiff) at rtol 1e-12, atol 1e-15, from ``F(0)`` found by Brent's method so that ``F(W) = 1``;
the mean ``int_0^W P(C > t) dt`` as one more component; quantiles by Brent's method on the
dense output. No grid and no code of the package.

A continuous job size ``X ~ Erlang(k, k)`` (``CONTINUOUS``) is replaced by the Gauss-Legendre
rule of :func:`erlang_job_size_rule` (480 atoms). The Jacobian is exact (:meth:`Reference.jac`,
sparse), which makes hundreds of stiff atoms (``x`` down to 1e-10) cheap for Radau.

Checks, measured 2026-12-06: ``python scripts/sx_atom_phase_removal_references.py --check``
solves MDS(1, 0), the M/G/1 sojourn, X on {0.1, 2} times Erlang(2, 2) at load 0.9: 1.3e-14 off
Pollaczek-Khinchine on ``W = 800`` (1.6e-11 on ``W = 400``), the busy fraction 0.9 to 6e-16;
and X ~ Exp(1) (the rule, with its own moments) times Erlang(2, 2) at load 0.5: 3.4e-13 off.
The values of ``CASES`` moved by at most 8e-15 relative on ``1.5 W``, by at most 1.7e-12 with
DOP853 at rtol 1e-13 in place of Radau (LSODA at rtol 1e-12, by up to 7e-11), and by at most
7e-12 between the exact and the finite-difference Jacobian; those of ``CONTINUOUS`` by at most
1.5e-11 with 400 atoms in place of 480 (and, for the second, the horizon 1500).

Run: ``python scripts/sx_atom_phase_removal_references.py`` prints ``key: (busy, mean, p50,
p99)`` lines (about 17 minutes, most of it for ``CONTINUOUS``).
"""

from __future__ import annotations

import math
import sys

import numpy as np
from scipy import integrate, optimize, sparse, special


class Reference:
    """The ODE above for one system; ``lam`` is the arrival rate of jobs per server."""

    def __init__(self, mds: bool, n: int, r: int, lam: float, xs, ps, phases,
                 method: str = "Radau", rtol: float = 1e-12):
        self.xs, self.ps = np.asarray(xs, dtype=float), np.asarray(ps, dtype=float)
        self.phases = [(float(w), int(k), float(rate)) for w, k, rate in phases]
        self.mds, self.n, self.r, self.method, self.rtol = mds, n, r, method, rtol
        self.lam_t = lam * (n + r) / n if mds else lam * r
        self.stages = sum(k for _, k, _ in self.phases)

    def phi(self, q):
        p = np.clip(1.0 - q, 0.0, 1.0)
        if self.mds:
            N = self.n + self.r
            return sum(math.comb(N - 1, j) * (1 - p) ** j * p ** (N - 1 - j)
                       for j in range(self.n))
        return p ** (self.r - 1)

    def batch_sf(self, q):
        p = np.clip(1.0 - q, 0.0, 1.0)
        if self.mds:
            N = self.n + self.r
            return sum(math.comb(N, j) * (1 - p) ** j * p ** (N - j) for j in range(self.n))
        return 1.0 - (1.0 - p ** self.r) ** self.n

    def q_of(self, y):
        """``q(w | x_j)`` for every atom from the stages ``y`` (shape ``(J, stages)``)."""
        q, start = 0.0, 0
        for w, k, _ in self.phases:
            q = q + w * y[:, start + k - 1]
            start += k
        return q

    def rhs(self, _, state):
        F, y = state[0], state[1:-1].reshape(self.xs.size, self.stages)
        dy, start = np.empty_like(y), 0
        for _, k, rate in self.phases:
            nu = rate / self.xs
            dy[:, start] = nu * (F - y[:, start])
            for i in range(1, k):
                dy[:, start + i] = nu * (y[:, start + i - 1] - y[:, start + i])
            start += k
        q = self.q_of(y)
        dF = self.lam_t * np.sum(self.ps * (F - q) * self.phi(q))
        return np.concatenate([[dF], dy.ravel(), [np.sum(self.ps * self.batch_sf(q))]])

    def phi_prime(self, q):
        """``d phi / d q``."""
        p = np.clip(1.0 - q, 0.0, 1.0)
        if self.mds:
            N, n = self.n + self.r, self.n
            if N - 1 < n:   # phi = 1
                return 0.0 * p
            return -(N - 1) * math.comb(N - 2, n - 1) * (1 - p) ** (n - 1) * p ** (N - 1 - n)
        return -(self.r - 1) * p ** max(self.r - 2, 0)

    def batch_sf_prime(self, q):
        """``d B / d q``."""
        p = np.clip(1.0 - q, 0.0, 1.0)
        if self.mds:
            N, n = self.n + self.r, self.n
            return -N * math.comb(N - 1, n - 1) * (1 - p) ** (n - 1) * p ** (N - n)
        return -self.n * self.r * p ** (self.r - 1) * (1.0 - p ** self.r) ** (self.n - 1)

    def jac(self, _, state) -> sparse.csc_matrix:
        """The Jacobian of :meth:`rhs` (sparse: ``F`` from every last stage, each stage from
        ``F`` or the stage before, the mean from every last stage)."""
        F, y = state[0], state[1:-1].reshape(self.xs.size, self.stages)
        q = self.q_of(y)
        phi = self.phi(q)
        dF_dq = self.lam_t * self.ps * (-phi + (F - q) * self.phi_prime(q))
        dm_dq = self.ps * self.batch_sf_prime(q)
        size = 2 + self.xs.size * self.stages
        return stage_jacobian(self.xs, self.phases, self.lam_t * np.sum(self.ps * phi),
                              [(0, dF_dq), (size - 1, dm_dq)], size)

    def march(self, F0: float, W: float, dense: bool = False):
        start = np.zeros(2 + self.xs.size * self.stages)
        start[0] = F0
        extra = {"jac": self.jac} if self.method in ("Radau", "BDF", "LSODA") else {}
        return integrate.solve_ivp(self.rhs, (0.0, W), start, method=self.method,
                                   rtol=self.rtol, atol=1e-15, dense_output=dense, **extra)

    def solve(self, W: float) -> tuple[float, float]:
        """``(busy fraction, mean)`` on the horizon ``W``."""
        F0 = optimize.brentq(lambda F0: self.march(F0, W).y[0, -1] - 1.0, 1e-9, 1.0,
                             xtol=1e-15, rtol=1e-15)
        self.solution, self.W = self.march(F0, W, dense=True), W
        return 1.0 - F0, float(self.solution.y[-1, -1])

    def sf(self, t: float) -> float:
        y = self.solution.sol(t)[1:-1].reshape(self.xs.size, self.stages)
        return float(np.sum(self.ps * self.batch_sf(self.q_of(y))))

    def quantile(self, level: float) -> float:
        return optimize.brentq(lambda t: self.sf(t) - (1.0 - level), 0.0, self.W, xtol=1e-14,
                               rtol=1e-15)


_LOW = (0.0,) + tuple(0.5 * 4.0 ** np.arange(-16, 1))
_HIGH = tuple(0.5 * 4.0 ** -np.arange(0, 23)) + (0.0,)


def stage_jacobian(xs, phases, dF_dF: float, from_q, size: int) -> sparse.csc_matrix:
    """The sparse Jacobian of a state ``(F, y_(j, stage), ...)``: each phase's first stage
    driven by ``F``, each later one by the stage before (rate ``rate / x_j``), ``dF_dF`` at
    ``(0, 0)``, and for each ``(row, d_dq)`` of ``from_q`` the derivative of that row by every
    last stage, ``w d_dq`` (``q`` weighs the last stages by the phases' weights ``w``);
    ``size`` the state's length (rows past the stages: their own entries only)."""
    J = xs.size
    stages = sum(k for _, k, _ in phases)
    rows, cols, vals = [[0]], [[0]], [[dF_dF]]
    base, start = 1 + np.arange(J) * stages, 0
    for w, k, rate in phases:
        nu = rate / xs
        first, last = base + start, base + start + k - 1
        rows += [first, first]
        cols += [np.zeros(J, dtype=int), first]
        vals += [nu, -nu]
        for row, d_dq in from_q:
            rows.append(np.full(J, row))
            cols.append(last)
            vals.append(w * d_dq)
        for i in range(1, k):
            rows += [first + i, first + i]
            cols += [first + i - 1, first + i]
            vals += [nu, -nu]
        start += k
    return sparse.csc_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                             shape=(size, size))


def erlang_job_size_rule(k: int, rate: float, per_piece: int = 12):
    """Nodes and weights standing for a continuous job size ``X ~ Erlang(k, rate)``:
    Gauss-Legendre in probability space, ``per_piece`` nodes on each piece of ``u`` in
    ``_LOW`` and of ``1 - u`` in ``_HIGH`` (graded fourfold towards both ends, the upper ones
    inverted through the survival function, so ``x = -log(1 - u)`` near 1 is resolved: pieces
    tenfold apart left 7e-10 of ``E[X]`` at 12 nodes). For Exp(1), 12 nodes per piece (480)
    leave 1.0e-13 of ``E[X]`` and 1.1e-12 of ``E[X^2]``, 10 (400) 9.8e-12 and 1.1e-10."""
    t, w = np.polynomial.legendre.leggauss(per_piece)
    xs, ws = [], []
    for a, b in zip(_LOW[:-1], _LOW[1:]):
        xs.append(special.gammaincinv(k, a + (b - a) * (t + 1) / 2) / rate)
        ws.append(w * (b - a) / 2)
    for a, b in zip(_HIGH[:-1], _HIGH[1:]):
        xs.append(special.gammainccinv(k, b + (a - b) * (t + 1) / 2) / rate)
        ws.append(w * (a - b) / 2)
    return np.concatenate(xs), np.concatenate(ws)


EXPONENTIAL = ((1.0, 1, 1.0),)
HYPER = ((0.9, 1, 1.8), (0.1, 1, 0.2))             # HyperExponential([0.9, 0.1], [1.8, 0.2])
HYPER_WIDE = ((0.5, 1, 4.0), (0.5, 1, 4.0 / 7))    # HyperExponential([0.5, 0.5], [4, 4 / 7])
HYPER_FAST = ((0.5, 1, 400.0), (0.5, 1, 0.5 / (1 - 0.5 / 400)))   # mean 1, a phase of mean 1/400
ERLANG2 = ((1.0, 2, 2.0),)
ERLANG3 = ((1.0, 3, 3.0),)
MIX = ((0.4, 1, 2.0), (0.6, 3, 1.5))               # Mixture([Exp(2), Erlang(3, 1.5)], [.4, .6])

# (slowdown, (x_1, x_2), (p_1, p_2), mds, n, r, task load lam_t E[X S], horizon W)
# X on two atoms
CASES = {
    "exp_mds23": (EXPONENTIAL, (0.003, 2.0), (0.5, 0.5), True, 2, 3, 0.7, 200.0),
    "erlang2_mds23": (ERLANG2, (0.01, 2.0), (0.5, 0.5), True, 2, 3, 0.7, 200.0),
    "hyper_rep22": (HYPER, (0.1, 2.0), (0.5, 0.5), False, 2, 2, 0.8, 600.0),
    "hyper_mds23": (HYPER, (0.025, 3.0), (0.2, 0.8), True, 2, 3, 0.8, 900.0),
    "wide_mds23": (HYPER_WIDE, (0.01, 3.0), (0.05, 0.95), True, 2, 3, 0.8, 600.0),
    "fast_mds23": (HYPER_FAST, (1.0, 3.0), (0.5, 0.5), True, 2, 3, 0.8, 900.0),
}
# (k of the job size X ~ Erlang(k, k), slowdown, mds, n, r, task load, horizon W): a continuous
# X through erlang_job_size_rule (12 nodes per piece)
CONTINUOUS = {
    "exp_erlang2_mds42": (1, ERLANG2, True, 4, 2, 0.75, 250.0),
    "erlang2_hyper_mds101": (2, HYPER, True, 10, 1, 0.6, 1000.0),
    # held out (2026-12-06): Replication with d = 3, n + m = 30 at task load 0.9, a wide
    # hyperexponential slowdown
    "erlang2_erlang3_rep13": (2, ERLANG3, False, 1, 3, 0.4, 150.0),
    "erlang4_erlang2_mds2010": (4, ERLANG2, True, 20, 10, 0.9, 600.0),
    "exp_wide_mds23": (1, HYPER_WIDE, True, 2, 3, 0.5, 400.0),
    # held out (2026-12-06, the march of the slowdown's phases): a mixture of an exponential
    # and an Erlang(3), load 0.9 (task load 1.35); 6e-13 relative from its values on W = 153.6
    "exp_mix_mds42": (1, MIX, True, 4, 2, 1.35, 250.0),
}


def lam_of(phases, xs, ps, mds: bool, n: int, r: int, load: float) -> float:
    """The arrival rate per server at the task load ``lam_t E[X S]``."""
    mean = float(np.dot(xs, ps)) * sum(w * k / rate for w, k, rate in phases)
    return load / mean * (n / (n + r) if mds else 1.0 / r)


def main() -> None:
    if "--check" in sys.argv:
        xs, ps, load = (0.1, 2.0), (0.5, 0.5), 0.9
        EX, EX2 = np.dot(xs, ps), np.dot(np.square(xs), ps)
        lam = load / EX
        for W in (400.0, 800.0):
            busy, mean = Reference(True, 1, 0, lam, xs, ps, ERLANG2).solve(W)
            exact = EX + lam * EX2 * 1.5 / (2 * (1 - load))
            print(f"W = {W}: busy {busy!r} (exactly {load}), mean {(mean - exact) / exact:.1e} "
                  f"relative off Pollaczek-Khinchine")
        # a continuous X ~ Exp(1) (the rule, its own moments in Pollaczek-Khinchine)
        xs, ps = erlang_job_size_rule(1, 1.0)
        EX, EX2 = np.dot(xs, ps), np.dot(np.square(xs), ps)
        lam = 0.5 / EX
        busy, mean = Reference(True, 1, 0, lam, xs, ps, ERLANG2).solve(250.0)
        exact = EX + lam * EX2 * 1.5 / (2 * (1 - 0.5))
        print(f"Exp(1) x Erlang(2, 2), W = 250: busy {busy!r} (exactly 0.5), mean "
              f"{(mean - exact) / exact:.1e} relative off Pollaczek-Khinchine")
        return
    systems = dict(CASES)
    for key, (k, phases, mds, n, r, load, W) in CONTINUOUS.items():
        systems[key] = (phases, *erlang_job_size_rule(k, float(k)), mds, n, r, load, W)
    for key, (phases, xs, ps, mds, n, r, load, W) in systems.items():
        ref = Reference(mds, n, r, lam_of(phases, xs, ps, mds, n, r, load), xs, ps, phases)
        busy, mean = ref.solve(W)
        print(f"{key!r}: ({busy!r}, {mean!r}, {ref.quantile(0.5)!r}, {ref.quantile(0.99)!r}),",
              flush=True)


if __name__ == "__main__":
    main()
