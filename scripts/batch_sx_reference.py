"""Reference for tests/test_mds.py::test_sx_batch_without_removal_errors_are_true: an
independent mpmath solver of MDS(2, 1) without removal under S&X runtimes, X in {1 (0.3),
2.5 (0.7)}, S ~ Uniform(1, 3), task load 0.5 and 0.8 (written apart from queuetheory; a second
method, Gauss-Legendre collocation of the renewal equation of the wait, agreed to 25 digits).
Usage: ``python scripts/batch_sx_reference.py`` (about 1.5 minutes). Method:

W = stationary M/G/1 FCFS waiting time, B = X*S, X in {1 (0.3), 2.5 (0.7)}, S ~ U(1,3).
F(y) = P(W <= y) satisfies the level-crossing (Takacs) equation for y > 0
    F'(y) = lam * [ F(y) - int F(y-u) f_B(u) du ],   F(0) = 1 - rho,
and f_B is piecewise constant with breakpoints {1, 2.5, 3, 7.5} (multiples of h = 0.5),
so the delay term on [k h, (k+1) h] only involves already computed pieces (delay >= 1 = 2h).
On each interval F is entire; we carry its Taylor series in the local variable tau in [0,h]
(method of steps, NT terms) together with Psi(y) = int_0^y F.
Then 1 - H(t|x) = P(W + xS <= t) = (Psi(t-x) - Psi(t-3x)) / (2x), again a series per interval,
P(T_b > t) = sum_x p_x sum_{j<n} C(N,j) (1-H)^j H^(N-j) is a series per interval, integrated
exactly term-wise; quantiles by bisection on the series.
"""
import sys, time
import mpmath as mp

def run(rho, n, m, dps=50, NT=45, h_=None, tmax_tail=1e-25, verbose=True):
    mp.mp.dps = dps
    h = mp.mpf(1) / 2
    px = [(mp.mpf('0.3'), mp.mpf(1)), (mp.mpf('0.7'), mp.mpf('2.5'))]
    EX = sum(p * x for p, x in px)
    EX2 = sum(p * x * x for p, x in px)
    ES, ES2 = mp.mpf(2), mp.mpf(13) / 3
    EB, EB2 = EX * ES, EX2 * ES2
    rho = mp.mpf(rho)
    lam = rho / EB
    EW = lam * EB2 / (2 * (1 - rho))
    # pieces of f_B: density c on [a,b] (in units of h)
    pieces = []
    for p, x in px:
        a, b = x, 3 * x
        pieces.append((p / (b - a), int(a / h), int(b / h)))
    N = n + m

    # stored series
    Fser = []   # Taylor coefficients of F on interval k
    Pser = []   # Taylor coefficients of Psi on interval k
    zero = [mp.mpf(0)] * NT

    def ev(c, tau):
        return mp.polyval(c[::-1], tau)

    def getP(j):
        return Pser[j] if j >= 0 else zero

    def build(K):
        while len(Fser) < K:
            k = len(Fser)
            g = [mp.mpf(0)] * NT
            for c, ia, ib in pieces:
                A, Bb = getP(k - ia), getP(k - ib)
                for i in range(NT):
                    g[i] += c * (A[i] - Bb[i])
            f = [mp.mpf(0)] * NT
            f[0] = (1 - rho) if k == 0 else ev(Fser[k - 1], h)
            for i in range(NT - 1):
                f[i + 1] = lam * (f[i] - g[i]) / (i + 1)
            P = [mp.mpf(0)] * NT
            P[0] = mp.mpf(0) if k == 0 else ev(Pser[k - 1], h)
            for i in range(NT - 1):
                P[i + 1] = f[i] / (i + 1)
            Fser.append(f)
            Pser.append(P)

    def smul(a, b):
        r = [mp.mpf(0)] * NT
        for i in range(NT):
            ai = a[i]
            if ai == 0:
                continue
            for j in range(NT - i):
                r[i + j] += ai * b[j]
        return r

    def spow(a, e):
        r = [mp.mpf(1)] + [mp.mpf(0)] * (NT - 1)
        for _ in range(e):
            r = smul(r, a)
        return r

    def sf_series(k):
        """series of P(T_b > t) on interval k (t = k h + tau)"""
        tot = [mp.mpf(0)] * NT
        for p, x in px:
            i1, i3 = k - int(x / h), k - int(3 * x / h)
            A, Bb = getP(i1), getP(i3)
            F1 = [(A[i] - Bb[i]) / (2 * x) for i in range(NT)]   # 1 - H
            Hs = [-v for v in F1]
            Hs[0] += 1
            for j in range(n):
                term = smul(spow(F1, j), spow(Hs, N - j))
                cb = mp.binomial(N, j)
                for i in range(NT):
                    tot[i] += p * cb * term[i]
        return tot

    # decide horizon: build until Sbar_W tiny
    t0 = time.time()
    K = 40
    build(K)
    while 1 - ev(Fser[-1], h) > mp.mpf(tmax_tail):
        K += 40
        build(K)
    # tail of F check
    res = {}
    res['F_end'] = ev(Fser[-1], h)
    res['y_end'] = K * h
    # E[W] from Psi: E[W] = int_0^Y (1-F) + tail  ~ Y - Psi(Y)
    res['EW_num'] = K * h - ev(Pser[-1], h)
    res['EW_PK'] = EW
    # asymptotic tail check: Sbar(y) ~ C e^{-gamma y}
    Bst = lambda s: sum(p * (mp.exp(-s * x) - mp.exp(-3 * s * x)) / (2 * s * x) for p, x in px)
    D = lambda s: s - lam * (1 - Bst(s))
    lo_, hi_ = -mp.mpf(3), -mp.mpf('0.001')   # D(lo_) > 0 > D(hi_)
    assert D(lo_) > 0 > D(hi_)
    for _ in range(dps * 4):
        mid_ = (lo_ + hi_) / 2
        if D(mid_) > 0: lo_ = mid_
        else: hi_ = mid_
    gam = -mp.findroot(D, (lo_ + hi_) / 2)
    EBe = mp.diff(lambda s: -Bst(s), -gam)  # E[B e^{gamma B}] = -B*'(-gamma)
    C = (1 - rho) / (lam * EBe - 1)
    res['gamma'] = gam
    res['tail_C'] = C
    chk = []
    for ky in [40, 100, 200, 400]:
        if ky < K:
            y = ky * h
            sb = 1 - ev(Fser[ky], 0)
            chk.append((y, sb, sb / (C * mp.exp(-gam * y)) - 1))
    res['tail_ratio'] = chk
    # build horizon for T_b: need sf < tail
    k = 0
    mean = mp.mpf(0)
    sfs = []
    while True:
        build(k + 16)
        s = sf_series(k)
        integ = sum(s[i] * h ** (i + 1) / (i + 1) for i in range(NT))
        mean += integ
        sfs.append(s)
        if k > 10 and ev(s, h) < mp.mpf(tmax_tail) and abs(integ) < mp.mpf(tmax_tail):
            break
        k += 1
    res['t_end'] = (k + 1) * h
    res['sf_end'] = ev(sfs[-1], h)
    res['mean'] = mean
    qs = {}
    for q in ['0.5', '0.95', '0.99']:
        target = 1 - mp.mpf(q)
        kk = next(i for i in range(len(sfs)) if ev(sfs[i], h) <= target)
        s = sfs[kk]
        lo, hi = mp.mpf(0), h
        assert ev(s, lo) >= target >= ev(s, hi)
        for _ in range(int(dps * 3.5) + 10):
            mid = (lo + hi) / 2
            if ev(s, mid) > target:
                lo = mid
            else:
                hi = mid
        qs[q] = kk * h + (lo + hi) / 2
    res['quantiles'] = qs
    res['time'] = time.time() - t0
    return res


if __name__ == '__main__':
    import json
    T0 = time.time()
    confs = [('0.5', 2, 1), ('0.8', 2, 1), ('0.5', 1, 0), ('0.8', 1, 0)]
    for dps, NT in [(40, 35), (60, 55)]:
        for rho, n, m in confs:
            r = run(rho, n, m, dps=dps, NT=NT)
            print(f"=== dps={dps} NT={NT} rho={rho} n={n} m={m}  ({r['time']:.1f}s)")
            for key in ['y_end', 'F_end', 'EW_num', 'EW_PK', 'gamma', 'tail_C', 't_end', 'sf_end', 'mean']:
                print(f"  {key:8s} = {mp.nstr(r[key], 25)}")
            for y, sb, rel in r['tail_ratio']:
                print(f"  tail y={mp.nstr(y,5)} Sbar={mp.nstr(sb,20)} rel.dev from C e^-gy = {mp.nstr(rel,5)}")
            for q, v in r['quantiles'].items():
                print(f"  t_{q} = {mp.nstr(v, 25)}")
            sys.stdout.flush()
    print('total', time.time() - T0)
