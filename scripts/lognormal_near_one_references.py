#!/usr/bin/env python
"""High-precision reference quantiles of the M/G/1 FCFS sojourn time with
lognormal service, close to load one.

Standalone (mpmath + scipy only; does not import ``queuetheory``).

Model
-----
B ~ lognormal(0, sigma) (scipy ``stats.lognorm(sigma)``), E[B] = exp(sigma^2/2),
E[B^2] = exp(2 sigma^2).  lam = (1 - free) / m with m the *float*
``stats.lognorm(sigma).mean()``; lam is that double, taken exactly into mpmath.
rho = lam * exp(sigma^2/2) is computed in mpmath with the exact mean, so 1 - rho
is close to, but not exactly, ``free``.

Sojourn time T = W + B (Pollaczek-Khinchine):

    T~(s) = (1 - rho) s B~(s) / (s (1 - rho) + lam psi(s)),
    psi(s) = E[exp(-sB) - 1 + sB],         B~(s) = 1 - s E[B] + psi(s).

psi is computed by mpmath.quad after x = exp(y - i*beta):

    psi(s) = int_R h(s e^{y - i beta}) phi_sigma(y - i beta) dy,
    h(z) = exp(-z) - 1 + z,  phi_sigma = N(0, sigma^2) density.

With beta = arg(s) the argument s*x = |s| e^y is real and positive, so the
integrand is non-oscillatory in exp(-sx) and the same formula gives the
analytic continuation of psi (and B~) to the cut plane C \ (-inf, 0], which
the fixed-Talbot contour needs (it runs into Re s < 0).  For Re s > 0 the value
equals the ordinary real-axis integral (beta = 0); this is checked below.  The
y-range is split at 0, sigma^2, 2 sigma^2, -log|s| (+-3), multiples of sigma,
and truncated where the Gaussian weight is below ~10^-dps.

P(T > t) = L^{-1}[(1 - T~(s))/s](t) and the density f_T = L^{-1}[T~](t) are
inverted with mpmath.invertlaplace(method='talbot') (same nodes -> psi values
are cached and shared), quantiles are found by Newton's method started at the
exponential heavy-traffic guess t_q = -log(1 - q) * lam E[B^2] / (2 (1 - rho)).
At the converged quantile, P(T > t) is recomputed with method='dehoog' and with
talbot at a higher precision; the implied shifts dt = dP / f_T(t) are reported
as the accuracy estimate (together with the last Newton step).

Run:  python scripts/lognormal_near_one_references.py   (2 worker processes)
"""

import math
import multiprocessing
import sys
import time

import mpmath as mp
from scipy import stats

CASES = [(1.5, 1e-2), (1.5, 1e-6), (1.0, 1e-6)]
LEVELS = [0.5, 0.99]

# mp.dps of the calling context; invertlaplace raises the working precision:
#   talbot: working dps = int(1.72*dps), degree M = int(1.38*working dps)
#   dehoog: working dps = int(1.36*dps), 2*M+1 nodes with M = working dps
BASE_DPS = 25      # talbot: working 43 digits, M = 59
HIGH_DPS = 32      # talbot: working 55 digits, M = 75   (precision check)
DEHOOG_DPS = 30    # dehoog: working 40 digits, 81 nodes (method check)
NEWTON_RTOL = mp.mpf(10) ** -21
NEWTON_MAXIT = 30
NPROC = 2


class LognormalMG1:
    """M/G/1 with lognormal(0, sigma) service; all mp quantities are built at
    the current mp precision (cached per precision)."""

    def __init__(self, sigma, free):
        self.sigma = float(sigma)
        self.free = float(free)
        self.m_float = float(stats.lognorm(self.sigma).mean())
        self.lam_float = (1.0 - self.free) / self.m_float      # IEEE double
        self._par = {}
        self._psi_cache = {}

    # ------------------------------------------------------------ parameters
    def par(self):
        prec = mp.mp.prec
        p = self._par.get(prec)
        if p is None:
            sig = mp.mpf(self.sigma)
            lam = mp.mpf(self.lam_float)        # exact conversion of the double
            EB = mp.exp(sig ** 2 / 2)
            EB2 = mp.exp(2 * sig ** 2)
            rho = lam * EB
            p = dict(sig=sig, lam=lam, EB=EB, EB2=EB2, rho=rho, one_m_rho=1 - rho,
                     c=1 / (sig * mp.sqrt(2 * mp.pi)))
            self._par[prec] = p
        return p

    def mean_wait(self):
        p = self.par()
        return p['lam'] * p['EB2'] / (2 * p['one_m_rho'])

    # ------------------------------------------------------------ quadrature
    def _breakpoints(self, s_abs):
        sg = self.sigma
        W = math.sqrt(2 * mp.mp.dps * math.log(10)) + 1.0   # Gaussian cut (in sigmas)
        lo, hi = -W * sg, 2 * sg * sg + W * sg
        L = -float(mp.log(s_abs))
        cand = [-W * sg / 2, -3 * sg, 0.0, sg * sg, 2 * sg * sg, 2 * sg * sg + 3 * sg,
                2 * sg * sg + W * sg / 2, L - 3.0, L, L + 3.0]
        pts = [lo]
        for x in sorted(c for c in cand if lo < c < hi):
            if x - pts[-1] > 0.5:
                pts.append(x)
        if hi - pts[-1] <= 0.5:
            pts.pop()
        pts.append(hi)
        return pts

    def _quad(self, s, kernel, beta=None, method='tanh-sinh', error=False):
        p = self.par()
        s = mp.mpc(s)
        a = abs(s)
        if beta is None:
            beta = mp.arg(s)
        beta = mp.mpf(beta)
        rot = mp.expj(mp.arg(s) - beta)          # s x = |s| e^y * rot
        two_var = 2 * p['sig'] ** 2
        c = p['c']
        real_z = (rot == 1)

        def g(y):
            z = a * mp.exp(y)
            if not real_z:
                z = z * rot
            w = mp.mpc(y, -beta)
            return kernel(z) * c * mp.exp(-(w * w) / two_var)

        return mp.quad(g, self._breakpoints(a), method=method, error=error)

    @staticmethod
    def _h(z):
        return mp.exp(-z) - 1 + z

    def psi(self, s, beta=None, method='tanh-sinh', error=False):
        return self._quad(s, self._h, beta=beta, method=method, error=error)

    def bst_quad(self, s, beta=None, method='tanh-sinh'):
        """B~(s) by its own quadrature (used only for verification)."""
        return self._quad(s, lambda z: mp.exp(-z), beta=beta, method=method)

    def psi_cached(self, s):
        key = (mp.mp.prec, s.real, s.imag)
        v = self._psi_cache.get(key)
        if v is None:
            v = self.psi(s)
            self._psi_cache[key] = v
        return v

    # ------------------------------------------------------------ transforms
    def _pieces(self, s):
        p = self.par()
        s = mp.mpc(s)
        ps = self.psi_cached(s)
        D = s * p['one_m_rho'] + p['lam'] * ps
        return p, s, ps, D

    def tail_lt(self, s):
        """(1 - T~(s)) / s, written without cancellation for small s."""
        p, s, ps, D = self._pieces(s)
        one_m_B = s * p['EB'] - ps
        return (p['one_m_rho'] * one_m_B + p['lam'] * ps / s) / D

    def sojourn_lst(self, s):
        p, s, ps, D = self._pieces(s)
        Bt = 1 - s * p['EB'] + ps
        return p['one_m_rho'] * s * Bt / D

    # ------------------------------------------------------------ inversion
    def tail_and_density(self, t, dps, method='talbot'):
        with mp.workdps(dps):
            t = mp.mpf(t)
            P = mp.invertlaplace(self.tail_lt, t, method=method)
            f = mp.invertlaplace(self.sojourn_lst, t, method=method)
            return P, f          # not rounded to dps (computed at working precision)

    def tail(self, t, dps, method='talbot'):
        with mp.workdps(dps):
            return mp.invertlaplace(self.tail_lt, mp.mpf(t), method=method)


# ---------------------------------------------------------------- tasks
def quantile_task(sigma, free, level):
    t0 = time.time()
    mdl = LognormalMG1(sigma, free)
    mp.mp.dps = 40          # Newton arithmetic / differences; inversions use their own dps
    target = 1 - mp.mpf(level)
    t = -mp.log(target) * mdl.mean_wait()       # heavy-traffic start
    t_start = t
    step = None
    nit = 0
    for nit in range(1, NEWTON_MAXIT + 1):
        P, f = mdl.tail_and_density(t, BASE_DPS)
        step = (P - target) / f
        t_new = t + step
        if t_new <= t / 4:
            t_new = t / 4
        elif t_new >= 4 * t:
            t_new = 4 * t
        t = t_new
        if abs(step) < NEWTON_RTOL * t:
            break
    # final evaluation at the converged point
    P, f = mdl.tail_and_density(t, BASE_DPS)
    resid_step = (P - target) / f
    P_dh = mdl.tail(t, DEHOOG_DPS, method='dehoog')
    P_hi = mdl.tail(t, HIGH_DPS, method='talbot')
    dt_dh = (P_dh - P) / f
    dt_hi = (P_hi - P) / f
    acc = max(abs(dt_dh), abs(dt_hi), abs(resid_step))
    return dict(kind='q', sigma=sigma, free=free, level=level, t=t, t_start=t_start,
                nit=nit, step=step, resid=resid_step, P=P, f=f, P_dh=P_dh,
                P_hi=P_hi, dt_dh=dt_dh, dt_hi=dt_hi, acc=acc,
                secs=time.time() - t0)


def moment_series(mdl, s):
    """Optimally truncated (divergent, asymptotic) series
    sum_{k>=2} (-s)^k E[B^k]/k!, E[B^k] = exp(k^2 sigma^2/2); s real > 0."""
    p = mdl.par()
    tot = mp.mpf(0)
    prev = None
    k = 2
    while True:
        term = (-s) ** k * mp.exp(k * k * p['sig'] ** 2 / 2) / mp.factorial(k)
        if prev is not None and abs(term) >= abs(prev):
            return tot, abs(prev), k - 1
        tot += term
        prev = term
        k += 1


def verify_task(sigma, free):
    t0 = time.time()
    mdl = LognormalMG1(sigma, free)
    lines = []
    with mp.workdps(43):
        rel = lambda a, b: abs(a - b) / abs(b)
        # (a) tiny real s: moment series (optimal truncation)
        for s in ['1e-6', '1e-7', '1e-8']:
            s = mp.mpf(s)
            q, err = mdl.psi(s, error=True)
            ser, smallest, K = moment_series(mdl, s)
            lines.append('  psi(%s) quad vs moment series (k<=%d): rel diff %s '
                         '(series limit ~%s, quad err est %s)'
                         % (mp.nstr(s, 3), K, mp.nstr(rel(q, ser), 3),
                            mp.nstr(smallest / abs(ser), 3), mp.nstr(err / abs(q), 3)))
        # (b) Re s > 0: rotated contour vs real-axis integral (beta = 0),
        #     plus Gauss-Legendre vs tanh-sinh
        for s in [mp.mpc('1e-7', '3e-7'), mp.mpc('2e-5', '-7e-5'), mp.mpc('0.3', '2.5')]:
            q = mdl.psi(s)
            q0 = mdl.psi(s, beta=0)
            qg = mdl.psi(s, method='gauss-legendre')
            lines.append('  psi(%s) rotated vs real-axis: %s ; tanh-sinh vs GL: %s'
                         % (mp.nstr(s, 3), mp.nstr(rel(q, q0), 3), mp.nstr(rel(q, qg), 3)))
        # (c) Re s < 0 (analytic continuation used by Talbot): two rotation angles
        for s in [mp.mpc('-3e-6', '1e-6'), mp.mpc('-0.5', '0.05')]:
            q = mdl.psi(s)
            q1 = mdl.psi(s, beta=mp.arg(s) - mp.mpf('0.6'))
            lines.append('  psi(%s) beta=arg s vs beta=arg s-0.6: %s'
                         % (mp.nstr(s, 3), mp.nstr(rel(q, q1), 3)))
        # (d) larger s: psi vs B~(s) - 1 + s E[B], B~ by its own quadrature
        EB = mdl.par()['EB']
        for s in [mp.mpf(2), mp.mpc('0.5', '1.5'), mp.mpc('-0.4', '0.3')]:
            q = mdl.psi(s)
            b = mdl.bst_quad(s)
            lines.append('  psi(%s) vs Bst-1+sEB: %s'
                         % (mp.nstr(s, 3), mp.nstr(rel(q, b - 1 + s * EB), 3)))
    return dict(kind='v', sigma=sigma, free=free, lines=lines, secs=time.time() - t0)


def run(task):
    kind, args = task
    return quantile_task(*args) if kind == 'q' else verify_task(*args)


def main():
    t_wall = time.time()
    print('mpmath %s (backend %s), scipy %s' % (mp.__version__, mp.libmp.BACKEND,
                                                __import__('scipy').__version__))
    print('talbot: mp.dps=%d (working %d digits, M=%d); precision check mp.dps=%d '
          '(working %d, M=%d); dehoog: mp.dps=%d (working %d, %d nodes)'
          % (BASE_DPS, int(1.72 * BASE_DPS), int(1.38 * int(1.72 * BASE_DPS)),
             HIGH_DPS, int(1.72 * HIGH_DPS), int(1.38 * int(1.72 * HIGH_DPS)),
             DEHOOG_DPS, int(1.36 * DEHOOG_DPS), 2 * int(1.36 * DEHOOG_DPS) + 1))
    print()
    mp.mp.dps = 30
    for sigma, free in CASES:
        mdl = LognormalMG1(sigma, free)
        p = mdl.par()
        ET = p['EB'] + mdl.mean_wait()
        print('sigma=%g free=%g:  m = lognorm(sigma).mean() = %r, lam = %r'
              % (sigma, free, mdl.m_float, mdl.lam_float))
        print('    1-rho = %s   E[W] = %s   E[T] = %s'
              % (mp.nstr(p['one_m_rho'], 20), mp.nstr(mdl.mean_wait(), 20), mp.nstr(ET, 20)))
    print()

    tasks = [('q', (s, f, q)) for (s, f) in CASES for q in LEVELS]
    tasks += [('v', (s, f)) for (s, f) in CASES[1:]]   # psi checks depend on sigma only
    with multiprocessing.Pool(NPROC) as pool:
        results = pool.map(run, tasks, chunksize=1)

    mp.mp.dps = 30
    print('psi verification (43 digits):')
    for r in results:
        if r['kind'] == 'v':
            print(' sigma=%g  (%.1f s)' % (r['sigma'], r['secs']))
            for ln in r['lines']:
                print(ln)
    print()
    print('Inversion details (dP = P_other - P_talbot at the quantile; dt = dP/f_T):')
    for r in results:
        if r['kind'] != 'q':
            continue
        print(' sigma=%g free=%g q=%g: HT start %s, Newton its %d, last step %s, '
              'P_talbot-(1-q) %s, f_T %s'
              % (r['sigma'], r['free'], r['level'], mp.nstr(r['t_start'], 12), r['nit'],
                 mp.nstr(r['step'], 3), mp.nstr(r['P'] - (1 - mp.mpf(r['level'])), 3),
                 mp.nstr(r['f'], 10)))
        print('     dehoog-talbot dP %s (dt %s);  talbot dps%d-dps%d dP %s (dt %s);  '
              'dehoog-talbot(dps%d) dP %s;  %.0f s'
              % (mp.nstr(r['P_dh'] - r['P'], 3), mp.nstr(r['dt_dh'], 3), HIGH_DPS, BASE_DPS,
                 mp.nstr(r['P_hi'] - r['P'], 3), mp.nstr(r['dt_hi'], 3), HIGH_DPS,
                 mp.nstr(r['P_dh'] - r['P_hi'], 3), r['secs']))
    print()
    hdr = '%5s %7s %5s  %-26s %-9s %-9s %-9s %-9s' % (
        'sigma', 'free', 'level', 'quantile t_q', 'acc(abs)', 'acc(rel)',
        'dt_dehoog', 'dt_prec')
    print(hdr)
    print('-' * len(hdr))
    for r in results:
        if r['kind'] != 'q':
            continue
        print('%5g %7g %5g  %-26s %-9s %-9s %-9s %-9s' % (
            r['sigma'], r['free'], r['level'], mp.nstr(r['t'], 20),
            mp.nstr(r['acc'], 2), mp.nstr(r['acc'] / r['t'], 2),
            mp.nstr(r['dt_dh'], 2), mp.nstr(r['dt_hi'], 2)))
    print()
    print('acc = max(|dt_dehoog|, |dt_prec|, |(P_talbot(t_q) - (1-q))/f_T|)')
    print('total wall time %.1f s' % (time.time() - t_wall))


if __name__ == '__main__':
    sys.exit(main())
