"""Independent reference computations for M/G/1 FCFS with Pareto(alpha,c) service.

Transform-side tools (mpmath, high precision).

B~(s) = alpha (sc)^alpha Gamma(-alpha, sc)
      = alpha Gamma(-alpha) z^alpha - alpha sum_{n>=0} (-z)^n / (n! (n-alpha)),  z = s c
(from Gamma(a,z) = Gamma(a) - z^a sum (-z)^n/(n!(a+n))).  The n=0 term equals 1 and the
n=1 term equals -s E[R], so
   Phi(s) := B~(s) - 1 + s E[R]
          = alpha Gamma(-alpha) z^alpha - alpha sum_{n>=2} (-z)^n/(n!(n-alpha))
is computed without cancellation.  Then
   D(s)   = s - lam (1 - B~) = (1-rho) s + lam Phi
   Hhat(s)= (1 - T~(s))/s = [ (1-rho) s (1-B~) + lam Phi ] / ( s D ),   1-B~ = s E[R] - Phi.
Only non-entire piece: z^alpha (branch cut on the negative real axis).
Inversion for t large (poles of Hhat in the left half plane give exponentially small terms,
checked numerically against the time-domain solver):
   H(t) = -(1/pi) int_0^inf e^{-r t} Im Hhat(-r + i0) dr
        = -(1/(pi t)) int_0^inf e^{-x} Im Hhat(-x/t + i0) dx
"""
import mpmath as mp


class ParetoMG1:
    def __init__(self, alpha, c, lam, dps=30):
        self.dps = dps
        with mp.workdps(dps):
            self.alpha = mp.mpf(alpha)
            self.c = mp.mpf(c)
            self.lam = mp.mpf(lam)
            self.ER = self.alpha * self.c / (self.alpha - 1)
            self.rho = self.lam * self.ER
            self.G = mp.gamma(-self.alpha)

    def _series(self, z):
        # sum_{n>=2} (-z)^n / (n! (n-alpha))
        a = self.alpha
        mz = -z
        term = mz * mz / 2  # (-z)^n/n! at n=2
        s = term / (2 - a)
        n = 2
        eps = mp.mpf(10) ** (-(mp.mp.dps + 5))
        while True:
            n += 1
            term = term * mz / n
            d = term / (n - a)
            s += d
            if abs(d) <= eps * abs(s) and n > 5:
                break
            if n > 100000:
                raise RuntimeError('series')
        return s

    def zpow(self, z, upper_cut=None):
        """z^alpha, principal branch; on negative real axis choose side via upper_cut."""
        if upper_cut is None:
            return mp.power(z, self.alpha)
        x = -mp.re(z)
        ph = mp.pi * self.alpha if upper_cut else -mp.pi * self.alpha
        return mp.power(x, self.alpha) * mp.expj(ph)

    def Phi(self, s, upper_cut=None):
        z = s * self.c
        return self.alpha * self.G * self.zpow(z, upper_cut) - self.alpha * self._series(z)

    def Btilde(self, s):
        return 1 - s * self.ER + self.Phi(s)

    def D(self, s, upper_cut=None):
        return (1 - self.rho) * s + self.lam * self.Phi(s, upper_cut)

    def Hhat(self, s, upper_cut=None):
        Ph = self.Phi(s, upper_cut)
        omB = s * self.ER - Ph
        Dd = (1 - self.rho) * s + self.lam * Ph
        return ((1 - self.rho) * s * omB + self.lam * Ph) / (s * Dd)

    def What(self, s):
        """Laplace transform of P(W>y):  (1 - W~(s))/s, W~ = (1-rho) s / D."""
        Ph = self.Phi(s)
        Dd = (1 - self.rho) * s + self.lam * Ph
        return (Dd - (1 - self.rho) * s) / (s * Dd)  # = lam Phi/(s D)

    def H_cut(self, t, dps=None, err=False):
        """H(t) from the branch-cut integral (valid when pole terms are negligible)."""
        dps = dps or self.dps
        with mp.workdps(dps):
            t = mp.mpf(t)

            def f(x):
                r = x / t
                return mp.exp(-x) * mp.im(self.Hhat(mp.mpc(-r, 0), upper_cut=True))

            v, e = mp.quad(f, [0, 1, 4, 12, 30, 60, 120], error=True)
            res = -v / (mp.pi * t)
            if err:
                return res, e / (mp.pi * t)
            return res
