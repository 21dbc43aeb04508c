"""References for tests/test_mds.py::test_heavy_tailed_batch_mean_states_a_true_error:
batches without removal, IR Pareto runtimes with E[R^2] = inf (independent of queuetheory).

E[T_b] = int_0^inf F(H(t)) dt for the three batch cases, H the M/G/1 sojourn's tail, F the
order statistic's map. The time-domain solver (volterra.py) and the branch-cut inversion
(model.py) agree to 9e-16 on t in [3, 50]; runs with different resolutions, panels and
switch points agree to 1.5e-15 (run_all: ``for k in 1 2 3; do python compute_ETb.py $k 50 2 16
2 16 20; python compute_ETb.py $k 50 4 16 3 20 24; python compute_ETb.py $k 20 4 16 2 18 20;
done``, about 25 minutes).

  [0, c]      : H = 1, F = 1 exactly  -> contributes c
  [c, T1]     : H from the float64 Volterra/Nystrom solver (volterra.py), Gauss-Legendre on
                each mesh element (breakpoints of H at multiples of c are mesh points)
  [T1, Tmax]  : H from the branch-cut inversion (model.py, mpmath dps 30), Gauss-Legendre
                panels in u = log t
  [Tmax, inf) : H(t) ~ H(Tmax) (Tmax/t)^(alpha-1) (leading power law), integrated exactly
                in closed form term by term (F is a polynomial in H); its size is reported.
usage: python compute_ETb.py CASE [T1] [panel_width] [npts] [m] [p] [qH]
"""
import json
import sys
import time
from math import comb

import mpmath as mp
import numpy as np
from model import ParetoMG1
from numpy.polynomial.legendre import leggauss
from volterra import pareto_solver

CASES = {
    1: dict(name='MDS(4,2)', alpha='1.5', c='1/3', lam='0.45', kind=('mds', 6, 3)),
    2: dict(name='MDS(10,3)', alpha='1.5', c='1/3', lam='0.39', kind=('mds', 13, 9)),
    3: dict(name='Rep(3,2)', alpha='1.8', c='0.4', lam='0.6', kind=('rep', 3, 2)),
}


def mpval(s):
    if '/' in s:
        a, b = s.split('/')
        return mp.mpf(a) / mp.mpf(b)
    return mp.mpf(s)


def Fcoeffs(kind):
    """F(H) = sum_k a_k H^k (exact integer coefficients)."""
    if kind[0] == 'mds':
        N, jmax = kind[1], kind[2]
        # P(Bin(N, 1-H) <= jmax) = sum_j C(N,j)(1-H)^j H^(N-j)
        a = [0] * (N + 1)
        for j in range(jmax + 1):
            for i in range(j + 1):  # (1-H)^j = sum_i C(j,i)(-H)^i
                a[N - j + i] += comb(N, j) * comb(j, i) * (-1) ** i
        return a
    n, d = kind[1], kind[2]
    # 1 - (1 - H^d)^n
    a = [0] * (n * d + 1)
    for i in range(1, n + 1):
        a[i * d] += -comb(n, i) * (-1) ** i
    return a


def F_direct(H, kind):
    """Cancellation-free evaluation (works for floats, numpy arrays, mpf)."""
    if kind[0] == 'mds':
        N, jmax = kind[1], kind[2]
        return sum(comb(N, j) * (1 - H) ** j * H ** (N - j) for j in range(jmax + 1))
    n, d = kind[1], kind[2]
    x = H ** d  # 1-(1-x)^n = x * sum_{i=0}^{n-1} (1-x)^i
    return x * sum((1 - x) ** i for i in range(n))


def main():
    cid = int(sys.argv[1])
    T1 = float(sys.argv[2]) if len(sys.argv) > 2 else 50.0
    pw = float(sys.argv[3]) if len(sys.argv) > 3 else 2.0
    npts = int(sys.argv[4]) if len(sys.argv) > 4 else 16
    m = int(sys.argv[5]) if len(sys.argv) > 5 else 2
    p = int(sys.argv[6]) if len(sys.argv) > 6 else 16
    qH = int(sys.argv[7]) if len(sys.argv) > 7 else 20
    Tmax = 1e24
    C = CASES[cid]
    kind = C['kind']
    mp.mp.dps = 30
    alpha, c, lam = mpval(C['alpha']), mpval(C['c']), mpval(C['lam'])
    M = ParetoMG1(alpha, c, lam, dps=30)
    af, cf, lf = float(alpha), float(c), float(lam)
    t0 = time.time()
    # ---- [c, T1] time domain ----
    S = pareto_solver(af, cf, lf, T1 + 0.5, m=m, p=p, q=max(24, p + 8))
    h = cf / m
    nel = int(round((T1 - cf) / h))
    assert abs(cf + nel * h - T1) < 1e-9, 'T1 must be c + multiple of h'
    xg, wg = leggauss(qH)
    tt = (cf + np.arange(nel)[:, None] * h + h * (1 + xg[None, :]) / 2).ravel()
    ww = np.tile(wg * h / 2, nel)
    Ht = S.H_pareto(tt, af)
    I_mid = float(np.dot(ww, F_direct(Ht, kind)))
    t_mid = time.time() - t0
    # ---- [T1, Tmax] branch cut, panels in log t ----
    u0, u1 = mp.log(T1), mp.log(Tmax)
    npan = int(mp.ceil((u1 - u0) / pw))
    edges = [u0 + (u1 - u0) * i / npan for i in range(npan + 1)]
    xs, ws = mp.gauss_legendre_nodes(npts) if hasattr(mp, 'gauss_legendre_nodes') else (None, None)
    if xs is None:
        xl, wl = leggauss(npts)  # float nodes are fine: quadrature rule error << 1e-16 anyway
        # refine to mp precision by Newton on Legendre polynomial
        xs, ws = [], []
        for x0 in xl:
            x = mp.mpf(x0)
            for _ in range(5):
                P = mp.legendre(npts, x)
                dP = npts * (x * P - mp.legendre(npts - 1, x)) / (x * x - 1)
                x -= P / dP
            dP = npts * (x * mp.legendre(npts, x) - mp.legendre(npts - 1, x)) / (x * x - 1)
            xs.append(x)
            ws.append(2 / ((1 - x * x) * dP * dP))
    I_tail = mp.mpf(0)
    for a, b in zip(edges[:-1], edges[1:]):
        for x, w in zip(xs, ws):
            u = (a + b) / 2 + (b - a) / 2 * x
            t = mp.exp(u)
            Hv = M.H_cut(t)
            I_tail += (b - a) / 2 * w * t * F_direct(Hv, kind)
    t_tail = time.time() - t0 - t_mid
    # ---- [Tmax, inf): leading power law, exact term-by-term ----
    HT = M.H_cut(mp.mpf(Tmax))
    a = Fcoeffs(kind)
    rem = mp.mpf(0)
    for k, ak in enumerate(a):
        if ak == 0:
            continue
        e = k * (alpha - 1)  # int_T^inf (H_T (T/t)^(alpha-1))^k dt = H_T^k T/(e-1)
        assert e > 1
        rem += ak * HT ** k * Tmax / (e - 1)
    ET = c + I_mid + I_tail + rem
    out = dict(case=cid, name=C['name'], T1=T1, panel_width=pw, npts=npts, m=m, p=p, qH=qH,
               Tmax=Tmax, c=float(c), I_mid=repr(I_mid), I_tail=mp.nstr(I_tail, 20),
               remainder=mp.nstr(rem, 5), ETb=mp.nstr(ET, 17),
               time_mid=round(t_mid, 1), time_tail=round(t_tail, 1))
    print(json.dumps(out), flush=True)


if __name__ == '__main__':
    main()
