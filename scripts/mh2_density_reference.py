"""The M/H2/1 sojourn density by partial fractions (tests/test_atoms.py::test_response_density_is_the_inversions_own)."""
import mpmath as mp
mp.mp.dps = 40
lam = mp.mpf(1)/2
p1, p2 = mp.mpf(9)/10, mp.mpf(1)/10
m1, m2 = mp.mpf(2), mp.mpf(1)/4
rho = lam*(p1/m1+p2/m2)
# Q(s) = D(s)/s: D = (s-lam)(s+m1)(s+m2) + lam(p1 m1 (s+m2) + p2 m2 (s+m1))
D = lambda s: (s-lam)*(s+m1)*(s+m2) + lam*(p1*m1*(s+m2)+p2*m2*(s+m1))
P = lambda s: p1*m1*(s+m2)+p2*m2*(s+m1)
# Q quadratic: coefficients of D/s
c3, c2, c1 = 1, (m1+m2-lam), (m1*m2 - lam*(m1+m2) + lam*(p1*m1+p2*m2))
roots = mp.polyroots([c3, c2, c1])
Q = lambda s: c3*s**2 + c2*s + c1
dQ = lambda s: 2*c3*s + c2
def pdf(t): return (1-rho)*mp.fsum(P(r)/dQ(r)*mp.exp(r*t) for r in roots)
def sf(t): return (1-rho)*mp.fsum(-P(r)/dQ(r)/r*mp.exp(r*t) for r in roots)
print(rho, roots, sf(0))
for t in ['0.01','0.5','2','10','40']:
    print(t, mp.nstr(pdf(mp.mpf(t)), 20))
