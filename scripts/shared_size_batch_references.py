"""References: E[T_b] and quantiles of T_b = X + max(W1, W2), M/G/1 FCFS, Pareto(alpha, 1) sizes.

W1, W2 are i.i.d. stationary FCFS waits (arrival rate lam, service B ~ Pareto(alpha, 1), i.e.
``P(B > x) = x^-alpha`` for x >= 1), X ~ Pareto(alpha, 1) independent of them, so

    E[T_b] = alpha / (alpha - 1) + 2 E[W] - I,   I = int_0^inf Z(t)^2 dt,   Z(t) = P(W > t),
    P(T_b <= t) = int_0^(t-1) F_W(u)^2 alpha (t - u)^(-alpha-1) du,   F_W = 1 - Z,

with ``E[W] = lam E[B^2] / (2 (1 - rho))`` (Pollaczek-Khinchine).  ``lam = rho / E[B]`` is formed
in floats, then taken exactly into mpmath, and ``rho = lam alpha / (alpha - 1)`` at working
precision (30 digits).

How Z is computed (mpmath throughout):

* t in [0, T0] (T0 = 64): time domain.  Z solves the ladder-height renewal equation
  ``Z(t) = rho P(B_e > t) + lam int_{t-1}^t Z + lam int_0^{t-1} Z(u) (t - u)^-alpha du``
  (B_e: equilibrium excess, density ``P(B > y) / E[B]``; ``lam = rho / E[B]``), solved
  interval by interval on [n, n + 1] ("method of steps"): on each unit interval Z is analytic
  (its kinks sit at the integers), is held at N + 1 = 33 Chebyshev points, and the
  remaining Volterra part ``Z = h + lam int_n^t Z`` is solved exactly
  (``Z = h + lam e^(lam t) int_n^t e^(-lam tau) h``) by spectral integration.  On [0, 1]
  this reproduces ``Z = 1 - (1 - rho) e^(lam t)`` (checked).
  Talbot's method is NOT used there: its contour misses the infinitely many poles of the
  continued W~(s) (the e^-s behaviour of B~ in the left half-plane), which costs 5e-5 at
  t = 0.3, 1e-7 at t = 1.5, 1e-9 at t = 3 (de Hoog's method is fine there and is used as a
  check of the time-domain solver).
* t in [T0, T1] (T1 = 4096): mpmath.invertlaplace(method='talbot') of ``(1 - W~(s)) / s``,
  cached; checked against de Hoog and against the time-domain solver at t <= T0.
* t > T1: the asymptotic expansion ``Z(t) ~ sum_{m>=1,k>=0} c_{mk} t^-(m(alpha-1)+k)`` from
  the singular expansion of ``(1 - W~(s)) / s`` at s = 0 (integrated in closed form);
  checked against Talbot at 256 ... 4096.

Checks printed: ``int_0^inf Z`` against the closed-form E[W]; I also by Plancherel
``I = (1/pi) int_0^inf |F(i w)|^2 dw``, F = (1 - W~)/s, a method with no inversion at all.

Quantiles: secant iteration on P(T_b <= t) = level, the u-integral by mpmath.quad split at
every integer (the kinks of F_W), F_W from the time-domain tables (t - 1 <= T0 is asserted).

Usage: ``python scripts/shared_size_batch_references.py`` (about 3 minutes on 2 cores).
"""

import sys
import time
from concurrent.futures import ProcessPoolExecutor

import mpmath
from mpmath import mp, mpf, mpc

DPS = 30
N = 32          # Chebyshev degree per unit interval
G = 32          # Gauss-Legendre nodes (local rules)
T0 = 64         # end of the time-domain table
T1 = 4096       # end of the Talbot range; asymptotic tail beyond
CASES = ((2.5, 0.3), (2.5, 0.7), (3.5, 0.3), (3.5, 0.7))
LEVELS = (0.5, 0.99)


# ----------------------------------------------------------------------------- quadrature tools
def gauss_legendre(n):
    """Nodes and weights on [0, 1]."""
    xs, ws = [], []
    for i in range(1, n + 1):
        x = mpmath.cos(mpmath.pi * (i - mpf(1) / 4) / (n + mpf(1) / 2))
        for _ in range(100):
            p0, p1 = mpf(1), x
            for k in range(2, n + 1):
                p0, p1 = p1, ((2 * k - 1) * x * p1 - (k - 1) * p0) / k
            dp = n * (x * p1 - p0) / (x * x - 1)
            dx = p1 / dp
            x -= dx
            if abs(dx) < mpf(10) ** (-mp.dps - 5):
                break
        p0, p1 = mpf(1), x
        for k in range(2, n + 1):
            p0, p1 = p1, ((2 * k - 1) * x * p1 - (k - 1) * p0) / k
        dp = n * (x * p1 - p0) / (x * x - 1)
        xs.append((1 - x) / 2)
        ws.append(1 / ((1 - x * x) * dp * dp))
    return xs, ws


class Cheb:
    """Chebyshev points on [0, 1], barycentric interpolation, spectral integration."""

    def __init__(self, n):
        self.n = n
        self.x = [(1 - mpmath.cos(mpmath.pi * k / n)) / 2 for k in range(n + 1)]
        self.bw = [mpf((-1) ** k) * (mpf(1) / 2 if k in (0, n) else 1) for k in range(n + 1)]
        self.gx, self.gw = gauss_legendre(G)
        # S[j][k] = int_0^{x_j} l_k (exact: GL with G >= (N + 1) / 2)
        self.S = []
        for xj in self.x:
            row = [mpf(0)] * (n + 1)
            for y, w in zip(self.gx, self.gw):
                lr = self.lag(xj * y)
                for k in range(n + 1):
                    row[k] += xj * w * lr[k]
            self.S.append(row)
        self.wcc = self.S[n]
        self.Lgl = [self.lag(y) for y in self.gx]

    def lag(self, x):
        for k, xk in enumerate(self.x):
            if x == xk:
                r = [mpf(0)] * (self.n + 1)
                r[k] = mpf(1)
                return r
        q = [b / (x - xk) for b, xk in zip(self.bw, self.x)]
        s = mpmath.fsum(q)
        return [qk / s for qk in q]

    def interp(self, vals, x):
        for k, xk in enumerate(self.x):
            if x == xk:
                return vals[k]
        num = den = mpf(0)
        for b, xk, v in zip(self.bw, self.x, vals):
            q = b / (x - xk)
            num += q * v
            den += q
        return num / den

    def integ(self, vals):
        return [mpmath.fdot(row, vals) for row in self.S]


# ----------------------------------------------------------------------------- the model
class Model:
    def __init__(self, alpha, load, ch):
        self.alpha_f, self.load_f = alpha, load
        a = self.a = mpf(alpha)
        lam_float = load / (alpha / (alpha - 1))
        self.lam = lam = mpf(lam_float)
        self.rho = rho = lam * a / (a - 1)
        self.EB = a / (a - 1)
        self.EB2 = a / (a - 2)
        self.EW = lam * self.EB2 / (2 * (1 - rho))
        self.ch = ch
        self.talbot_cache = {}

    # Laplace side
    def F(self, s):
        a, lam, rho = self.a, self.lam, self.rho
        b = a * s ** a * mpmath.gammainc(-a, s)
        w = (1 - rho) * s / (s - lam * (1 - b))
        return (1 - w) / s

    def talbot(self, t):
        t = mpf(t)
        if t not in self.talbot_cache:
            self.talbot_cache[t] = mpmath.invertlaplace(self.F, t, method="talbot")
        return self.talbot_cache[t]

    def dehoog(self, t):
        return mpmath.invertlaplace(self.F, mpf(t), method="dehoog")

    # time domain
    def gbar(self, t):  # P(B_e > t)
        a = self.a
        return 1 - (a - 1) / a * t if t <= 1 else t ** (1 - a) / a

    def solve_time_domain(self):
        ch, a, lam, rho = self.ch, self.a, self.lam, self.rho
        n1 = ch.n + 1
        xs = ch.x
        # partial-interval kernel: int_0^{x_j} Z_{n-1}(x) (1 + x_j - x)^-a dx = Pm[j] . Z_{n-1}
        Pm = []
        for xj in xs:
            row = [mpf(0)] * n1
            for y, w in zip(ch.gx, ch.gw):
                x = xj * y
                kw = xj * w * (1 + xj - x) ** (-a)
                lr = ch.lag(x)
                for k in range(n1):
                    row[k] += kw * lr[k]
            Pm.append(row)
        # full-interval kernels, D = n - m >= 2: K_D[j][k] = wcc_k (D + x_j - x_k)^-a
        K = {D: [[ch.wcc[k] * (D + xj - xs[k]) ** (-a) for k in range(n1)] for xj in xs]
             for D in range(2, T0 + 1)}
        ex_m = [mpmath.exp(-lam * x) for x in xs]
        ex_p = [mpmath.exp(lam * x) for x in xs]
        Z = []
        for n in range(T0):
            h = [rho * self.gbar(n + xj) for xj in xs]
            if n >= 1:
                prev = Z[n - 1]
                SZ = ch.integ(prev)
                for j in range(n1):
                    acc = lam * (SZ[-1] - SZ[j]) + lam * mpmath.fdot(Pm[j], prev)
                    for m in range(n - 1):
                        acc += lam * mpmath.fdot(K[n - m][j], Z[m])
                    h[j] += acc
            Sq = ch.integ([e * hk for e, hk in zip(ex_m, h)])
            Z.append([h[j] + lam * ex_p[j] * Sq[j] for j in range(n1)])
        self.Ztab = Z

    def Z(self, t):
        """P(W > t) for 0 < t <= T0 (time domain), Talbot beyond."""
        t = mpf(t)
        if t > T0:
            return self.talbot(t)
        n = min(int(mpmath.floor(t)), T0 - 1)
        return self.ch.interp(self.Ztab[n], t - n)

    # asymptotic expansion for large t
    def asymptotic_terms(self, pmax):
        """[(p, c)] with Z(t) ~ sum c t^-p, all p <= pmax."""
        a, lam, rho = self.a, self.lam, self.rho
        K = int(mpmath.ceil(pmax)) + 2
        # a(s) = (1 - A(s)) / s = alpha sum_{k>=1} (-1)^k s^(k-1) / (k! (k - alpha))
        aser = [a * (-1) ** k / (mpmath.factorial(k) * (k - a)) for k in range(1, K + 2)]
        d = [-lam * c for c in aser]
        d[0] += 1
        # 1 / d
        inv = [1 / d[0]]
        for k in range(1, K + 1):
            inv.append(-mpmath.fsum(d[i] * inv[k - i] for i in range(1, k + 1)) / d[0])

        def mul(u, v):
            return [mpmath.fsum(u[i] * v[k - i] for i in range(k + 1)) for k in range(K + 1)]

        e = lam * a * mpmath.gamma(-a)
        terms = []
        m = 1
        power = mul(inv, inv)  # d^-(m+1), m = 1
        while m * (a - 1) <= pmax:
            for k in range(K + 1):
                p = m * (a - 1) + k
                if p > pmax:
                    break
                c = -(1 - rho) * (-e) ** m * power[k] * mpmath.rgamma(1 - p)
                if c != 0:
                    terms.append((p, c))
            m += 1
            power = mul(power, inv)
        return terms


def zasym(terms, t):
    return mpmath.fsum(c * t ** (-p) for p, c in terms)


# ----------------------------------------------------------------------------- one case
def run_case(case):
    alpha, load = case
    mp.dps = DPS
    t_start = time.time()
    out = []
    say = out.append
    ch = Cheb(N)
    M = Model(alpha, load, ch)
    a, lam, rho = M.a, M.lam, M.rho
    say(f"=== alpha={alpha} rho={load}: lam={float(lam)!r} rho(mp)={mpmath.nstr(rho, 20)}")
    M.solve_time_domain()
    say(f"  time-domain table to t={T0}: {time.time() - t_start:.1f}s")

    # --- checks of the time-domain solver
    err01 = max(abs(M.Z(t) - (1 - (1 - rho) * mpmath.exp(lam * t)))
                for t in (mpf("0.1"), mpf("0.5"), mpf("0.93")))
    say(f"  [0,1] vs closed form 1-(1-rho)e^(lam t): max err {mpmath.nstr(err01, 3)}")
    for t in ("0.93", "1.5", "2.5", "4.5", "10.5", "30.5"):
        with mp.workdps(60):  # de Hoog at 30 digits leaves ~1e-12 just below the kink at t = 1
            dh = M.dehoog(t)
        say(f"  t={t:>5}: time-domain {mpmath.nstr(M.Z(t), 22)}  de Hoog(60 dps) diff "
            f"{mpmath.nstr(M.Z(t) - dh, 3)}")
    for t in (32, 48, 63.5):
        ta = M.talbot(t)
        say(f"  t={t:>5}: time-domain vs Talbot diff {mpmath.nstr(M.Z(t) - ta, 3)}"
            f"  (rel {mpmath.nstr((M.Z(t) - ta) / ta, 3)})")
    for t in (128, 1024, 4096):
        ta, dh = M.talbot(t), M.dehoog(t)
        say(f"  t={t:>5}: Talbot {mpmath.nstr(ta, 20)}  Talbot-de Hoog rel "
            f"{mpmath.nstr((ta - dh) / ta, 3)}")

    say(f"  checks done: {time.time() - t_start:.0f}s")
    # --- asymptotic tail
    pmax = (a - 1) + 14
    terms = M.asymptotic_terms(pmax)
    terms_lo = [(p, c) for p, c in terms if p <= (a - 1) + 8]
    for t in (256, 1024, 4096):
        ta = M.talbot(t)
        say(f"  t={t:>5}: asymptotic vs Talbot rel {mpmath.nstr((zasym(terms, t) - ta) / ta, 3)}"
            f"  (fewer terms: {mpmath.nstr((zasym(terms_lo, t) - ta) / ta, 3)})")

    # --- integrals
    def tail_int(terms, T):
        s1 = mpmath.fsum(c * T ** (1 - p) / (p - 1) for p, c in terms)
        s2 = mpmath.fsum(c1 * c2 * T ** (1 - p1 - p2) / (p1 + p2 - 1)
                         for p1, c1 in terms for p2, c2 in terms)
        return s1, s2

    # [0, T0]: exact integrals of the interpolants
    int1_td = mpmath.fsum(mpmath.fdot(ch.wcc, Zn) for Zn in M.Ztab)
    int2_td = mpmath.fsum(mpmath.fsum(w * mpmath.fdot(L, Zn) ** 2 for w, L in zip(ch.gw, ch.Lgl))
                          for Zn in M.Ztab)
    # [T0, T1]: Gauss-Legendre on doubling pieces, Talbot values; two rules for an estimate
    edges = [mpf(T0) * 2 ** i for i in range(int(mpmath.log(T1 / T0, 2)) + 1)]
    rules = {24: gauss_legendre(24), 16: gauss_legendre(16)}
    mid = {}
    for ng, (gx, gw) in rules.items():
        s1 = s2 = mpf(0)
        for lo, hi in zip(edges[:-1], edges[1:]):
            for y, w in zip(gx, gw):
                z = M.talbot(lo + (hi - lo) * y)
                s1 += (hi - lo) * w * z
                s2 += (hi - lo) * w * z * z
        mid[ng] = (s1, s2)
    t1, t2 = tail_int(terms, mpf(T1))
    t1b, t2b = tail_int(terms_lo, mpf(T1))
    EW_num = int1_td + mid[24][0] + t1
    I = int2_td + mid[24][1] + t2
    say(f"  pieces: int_0^T0 Z = {mpmath.nstr(int1_td, 20)}, int_T0^T1 Z = "
        f"{mpmath.nstr(mid[24][0], 20)} (GL24-GL16 {mpmath.nstr(mid[24][0] - mid[16][0], 3)}), "
        f"tail {mpmath.nstr(t1, 15)} (vs fewer terms {mpmath.nstr(t1 - t1b, 3)})")
    say(f"          int_0^T0 Z^2 = {mpmath.nstr(int2_td, 20)}, int_T0^T1 Z^2 = "
        f"{mpmath.nstr(mid[24][1], 20)} (GL24-GL16 {mpmath.nstr(mid[24][1] - mid[16][1], 3)}), "
        f"tail {mpmath.nstr(t2, 15)} (vs fewer terms {mpmath.nstr(t2 - t2b, 3)})")
    say(f"  E[W] closed {mpmath.nstr(M.EW, 22)}  integral {mpmath.nstr(EW_num, 22)}  rel diff "
        f"{mpmath.nstr((EW_num - M.EW) / M.EW, 3)}")

    # --- Plancherel check of I
    tp = time.time()

    def sq(w):
        return abs(M.F(mpc(0, w))) ** 2

    gx, gw = gauss_legendre(40)
    low = mpf(0)
    for lo, hi in ((0, mpf(1) / 4), (mpf(1) / 4, mpf(1) / 2), (mpf(1) / 2, 1)):
        for y, w in zip(gx, gw):
            v = lo + (hi - lo) * y
            with mp.workdps(DPS + 15):
                low += (hi - lo) * w * 2 * v * sq(v * v)
    # [1, inf): 20-point Gauss-Legendre per period 2 pi, partial sums to W_K = 1 + 2 pi K plus
    # rho^2 / W_K (the 1/w^2 tail); the rest, ~ A / W^3 + B / W^4 + C / W^5 (the endpoints all
    # share one phase), removed by fitting the partial sums at K = 50, 100, 200, 400.
    gx, gw = gauss_legendre(20)
    per = 2 * mpmath.pi
    acc, sums = mpf(0), {}
    for k in range(400):
        lo = 1 + per * k
        acc += per * mpmath.fsum(w * sq(lo + per * y) for y, w in zip(gx, gw))
        if k + 1 in (50, 100, 200, 400):
            sums[k + 1] = (lo + per, acc + rho ** 2 / (lo + per))
    ws_ = [sums[k][0] for k in (50, 100, 200, 400)]
    vs_ = [sums[k][1] for k in (50, 100, 200, 400)]
    sol = mpmath.lu_solve(mpmath.matrix([[1, w ** -3, w ** -4, w ** -5] for w in ws_]),
                          mpmath.matrix(vs_))
    high = sol[0]
    high_raw = vs_[-1]
    I_pl = (low + high) / mpmath.pi
    say(f"  I  time/Talbot/asym {mpmath.nstr(I, 22)}  Plancherel {mpmath.nstr(I_pl, 22)}  rel diff "
        f"{mpmath.nstr((I - I_pl) / I, 3)}  (unextrapolated {mpmath.nstr((I - (low + high_raw) / mpmath.pi) / I, 3)};"
        f" {time.time() - tp:.0f}s)")

    ETb = M.EB + 2 * M.EW - I
    tq = time.time()

    # --- quantiles of T_b
    def cdf(t):
        if t <= 1:
            return mpf(0)
        top = t - 1
        assert top <= T0
        pts = [mpf(k) for k in range(int(mpmath.floor(top)) + 1)]
        if pts[-1] < top:
            pts.append(top)
        return mpmath.quad(lambda u: (1 - M.Z(u)) ** 2 * a * (t - u) ** (-a - 1), pts)

    quant = {}
    for level in LEVELS:
        lv = mpf(level)
        lo, hi = mpf(1), mpf(2)
        while cdf(hi) < lv:
            lo, hi = hi, 2 * hi
        for _ in range(6):  # coarse bracket, then secant
            c = (lo + hi) / 2
            if cdf(c) < lv:
                lo = c
            else:
                hi = c
        x0, x1 = lo, hi
        f0, f1 = cdf(x0) - lv, cdf(x1) - lv
        for it in range(40):
            x2 = x1 - f1 * (x1 - x0) / (f1 - f0)
            x0, f0 = x1, f1
            x1, f1 = x2, cdf(x2) - lv
            if abs(x1 - x0) < mpf(10) ** (-24) * x1:
                break
        quant[level] = x1
        # the same CDF by 32-point Gauss-Legendre on each unit piece (another quadrature)
        top, pieces = x1 - 1, []
        k = 0
        while k < top:
            pieces.append((mpf(k), min(mpf(k + 1), top)))
            k += 1
        alt = mpmath.fsum((hi - lo) * w * (1 - M.Z(lo + (hi - lo) * y)) ** 2 * a
                          * (x1 - lo - (hi - lo) * y) ** (-a - 1)
                          for lo, hi in pieces for y, w in zip(ch.gx, ch.gw))
        say(f"  q{level}: CDF by Gauss-Legendre pieces minus level: {mpmath.nstr(alt - lv, 3)}")
        say(f"  q{level}: {mpmath.nstr(x1, 22)}  residual {mpmath.nstr(f1, 3)}  ({it + 1} secant steps)")

    say(f"  quantiles: {time.time() - tq:.0f}s")
    say(f"  RESULT alpha={alpha} rho={load}: E[T_b]={mpmath.nstr(ETb, 20)}  "
        f"p50={mpmath.nstr(quant[0.5], 18)}  p99={mpmath.nstr(quant[0.99], 18)}")
    say(f"  case time {time.time() - t_start:.0f}s")
    return "\n".join(out), (alpha, load, ETb, quant, M.EW, EW_num, I, I_pl)


if __name__ == "__main__":
    t0 = time.time()
    workers = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    with ProcessPoolExecutor(workers) as pool:
        results = list(pool.map(run_case, CASES))
    mp.dps = DPS
    for text, _ in results:
        print(text)
    print("\nalpha  rho   E[T_b]                   p50                  p99"
          "                  E[W] rel diff   I rel diff (Plancherel)")
    for _, (alpha, load, ETb, quant, EW, EWn, I, Ipl) in results:
        print(f"{alpha:<6} {load:<5} {mpmath.nstr(ETb, 20):<24} {mpmath.nstr(quant[0.5], 18):<20} "
              f"{mpmath.nstr(quant[0.99], 18):<20} {mpmath.nstr((EWn - EW) / EW, 3):<15} "
              f"{mpmath.nstr((I - Ipl) / I, 3)}")
    print(f"total {time.time() - t0:.0f}s")
