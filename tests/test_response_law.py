"""One contract for every response-time law (``Prediction.response_time``), whatever the policy:
:class:`queuetheory.ResponseLaw` owns ``cdf``, ``sf``, ``ppf``/``quantile``, ``isf``, ``median``,
``interval`` and ``quantile_error``, with one behaviour of ``precision=`` and ``full_output=``."""

import math
import re

import mpmath
import numpy as np
import pytest

import queuetheory as qt

EXP = qt.IR(qt.Exponential(1.0))
ERLANG = qt.IR(qt.Erlang(2, 2.0))
SX_DISCRETE = qt.SX(qt.Exponential(1.0), qt.Discrete([1.0, 2.0], [0.5, 0.5]))

# Every family of analysis handler (queuetheory/analysis/*): the system, the law class it
# returns, and what the law has (stated in docs/theory/validity.rst): a high-precision path,
# error estimates of the CDF and tail, error estimates of the quantiles.
FAMILIES = {
    "Random": (qt.System(qt.Random(), EXP, arrival_rate=0.5), "ResponseTime", True, True, True),
    # (RIQ's weights come from the float root b of its fixed point: no high-precision path)
    "RIQ": (qt.System(qt.RIQ(3), EXP, arrival_rate=0.7), "ResponseTime", False, True, True),
    "Threshold-0": (qt.System(qt.Threshold(2, 0), EXP, arrival_rate=0.7), "ResponseTime",
                    False, True, True),
    "Redundancy-d IR exponential": (qt.System(qt.RedundancyD(2), EXP, arrival_rate=0.5),
                                    "TabulatedResponseTime", True, False, True),
    "Redundancy-d mean-field": (qt.System(qt.RedundancyD(2), ERLANG, arrival_rate=0.5),
                                "RemovalBatchTime", False, False, True),
    "Redundancy-d cavity grid": (qt.System(qt.RedundancyD(2),
                                           qt.SX(qt.Exponential(1.0), qt.Uniform(1.0, 2.0)),
                                           arrival_rate=0.3),
                                 "TabulatedResponseTime", False, False, True),
    "MDS no removal IR": (qt.System(qt.MDS(4, 2, remove=False), ERLANG, arrival_rate=0.4),
                          "BatchCompletionTime", False, False, True),
    "Replication no removal S&X": (qt.System(qt.Replication(2, 2, remove=False), SX_DISCRETE,
                                             arrival_rate=0.2),
                                   "BatchCompletionTime", False, False, True),
    "MDS no removal atoms": (qt.System(qt.MDS(3, 1, remove=False), qt.IR(qt.Deterministic(1.0)),
                                       arrival_rate=0.3), "RemovalBatchTime", False, False, True),
    "MDS removal exponential": (qt.System(qt.MDS(4, 2), EXP, arrival_rate=0.5),
                                "ExponentialBatchTime", False, False, True),
    "MDS removal grid": (qt.System(qt.MDS(4, 2), ERLANG, arrival_rate=0.5), "RemovalBatchTime",
                         False, False, True),
    "Replication removal grid": (qt.System(qt.Replication(2, 2), qt.IR(qt.Deterministic(1.0)),
                                           arrival_rate=0.3),
                                 "RemovalBatchTime", False, False, True),
    "unstable": (qt.System(qt.RIQ(2), EXP, arrival_rate=1.5), "ResponseTime", True, True, True),
}

NO_PRECISION = re.compile(r"^.+ has no high-precision path \(precision=30\); .+; "
                          r"use precision=None$")
NO_ERROR = re.compile(r"^.+ has no error estimate of its (CDF|tail|quantiles) "
                      r"\(full_output=True\); .+; use full_output=False$")


@pytest.fixture(scope="module", params=list(FAMILIES))
def family(request):
    system, kind, *has = FAMILIES[request.param]
    return request.param, qt.analyze(system).response_time, kind, has


def _calls(law, x, q):
    """Every public method of the contract at one argument, with keyword arguments."""
    return {"cdf": lambda **kw: law.cdf(x, **kw), "sf": lambda **kw: law.sf(x, **kw),
            "ppf": lambda **kw: law.ppf(q, **kw), "quantile": lambda **kw: law.quantile(q, **kw),
            "isf": lambda **kw: law.isf(1.0 - q, **kw), "median": lambda **kw: law.median(**kw),
            "interval": lambda **kw: law.interval(0.8, **kw)}


def test_every_law_is_a_response_law(family):
    name, law, kind, (digits, _, _) = family
    assert isinstance(law, qt.ResponseLaw) and type(law).__name__ == kind
    assert law.stable == (name != "unstable") and law.high_precision == digits


def test_double_precision(family):
    law = family[1]
    x, q = np.array([0.5, 2.0, 6.0]), np.array([0.1, 0.5, 0.9])
    cdf, sf = law.cdf(x), law.sf(x)
    assert cdf.shape == sf.shape == (3,) and isinstance(law.cdf(2.0), float)
    assert np.all((cdf >= 0) & (cdf <= 1)) and np.all(np.diff(cdf) >= 0)
    np.testing.assert_allclose(cdf + sf, 1.0, rtol=0, atol=1e-9)
    quantiles = law.ppf(q)
    assert isinstance(law.ppf(0.5), float)
    if not law.stable:
        assert np.all(quantiles == math.inf) and np.all(sf == 1.0)
        return
    assert np.all(np.diff(quantiles) >= 0)
    # the same level through every method (an array and a scalar call may differ by rounding:
    # the inversion keeps the values of one call monotone; interval(0.8) asks for the levels
    # (1 -+ 0.8) / 2, one rounding from 0.1 and 0.9)
    assert law.quantile(0.5) == law.ppf(0.5)
    for value, ref in ((law.median(), quantiles[1]), (law.isf(0.1), quantiles[2]),
                       (law.interval(0.8), (quantiles[0], quantiles[2]))):
        assert value == pytest.approx(ref, rel=1e-12)
    # the CDF at the quantile reaches the level (within the laws' accuracy)
    assert np.all(law.cdf(quantiles) >= q - 1e-6)


def test_precision(family):
    """``precision=30``: an mpmath.mpf from the high-precision path, or the one exception."""
    _, law, _, (_, distribution_errors, _) = family
    calls = _calls(law, 2.0, 0.9)
    if not law.high_precision:
        for name, call in calls.items():
            with pytest.raises(NotImplementedError) as info:
                call(precision=30)
            assert NO_PRECISION.match(str(info.value)), (name, str(info.value))
        return
    # one call per law (an inversion costs about a second): the 30-digit value agrees with the
    # double-precision one within its error estimate (the de Hoog against the Euler inversion),
    # or within rounding for a closed form
    value = law.sf(2.0, precision=30)
    assert isinstance(value, mpmath.mpf)
    if distribution_errors:
        fast, error = law.sf(2.0, full_output=True)
    else:
        fast, error = law.sf(2.0), 1e-14 * law.sf(2.0)
    assert abs(float(value) - fast) <= error + 1e-15


def test_precision_argument_checked_first(family):
    """A bad ``precision`` is a ValueError for every law, and so is ``full_output`` with it."""
    law = family[1]
    with pytest.raises(ValueError, match="precision must be an integer >= 15"):
        law.sf(2.0, precision=10)
    with pytest.raises(ValueError, match="full_output is for the double-precision path"):
        law.ppf(0.5, precision=30, full_output=True)


def test_full_output(family):
    """``(value, error)`` with the very value of the plain call, or the one exception; the
    quantile statistics (ppf, quantile, isf, median, interval, quantile_error) agree."""
    _, law, _, (_, distribution_errors, quantile_errors) = family
    has = {}
    for name, call in _calls(law, np.array([0.7, 2.0]), np.array([0.5, 0.9])).items():
        try:
            value, error = call(full_output=True)
        except NotImplementedError as exc:
            assert NO_ERROR.match(str(exc)), (name, str(exc))
            has[name] = False
            continue
        has[name] = True
        np.testing.assert_array_equal(value, call())
        assert np.all(np.isfinite(error)) and np.all(np.asarray(error) >= 0)
    assert has["cdf"] == has["sf"] == distribution_errors
    assert {has[k] for k in ("ppf", "quantile", "isf", "median", "interval")} == {quantile_errors}
    if has["ppf"]:
        np.testing.assert_array_equal(law.quantile_error([0.5, 0.9]),
                                      law.ppf([0.5, 0.9], full_output=True)[1])
    else:
        with pytest.raises(NotImplementedError, match="no error estimate of its quantiles"):
            law.quantile_error(0.9)


@pytest.mark.slow
def test_every_high_precision_statistic_mm1():
    """Random with exponential runtimes is M/M/1: ``T ~ Exp(mu - lam) = Exp(0.5)`` (Kleinrock
    1975, eq. 5.105); every statistic to 30 digits against the closed forms in mpmath at 40."""
    law = qt.analyze(FAMILIES["Random"][0]).response_time
    with mpmath.workdps(40):
        def close(value, ref):
            assert isinstance(value, mpmath.mpf)
            assert abs(value - ref) <= mpmath.mpf(10) ** -28 * abs(ref)

        q = mpmath.mpf(0.9)   # the binary level 0.9000000000000000222...
        close(law.cdf(2.0, precision=30), 1 - mpmath.exp(-1))
        close(law.ppf(0.9, precision=30), -2 * mpmath.log(1 - q))
        close(law.isf(0.1, precision=30), -2 * mpmath.log(mpmath.mpf(0.1)))
        close(law.median(precision=30), 2 * mpmath.log(2))
        lo, hi = law.interval(0.8, precision=30)
        close(lo, -2 * mpmath.log(1 - (1 - mpmath.mpf(0.8)) / 2))
        close(hi, -2 * mpmath.log((1 - mpmath.mpf(0.8)) / 2))


@pytest.mark.parametrize(("d", "lam", "mu"), [(2, 0.5, 1.0), (3, 1.5, 2.0), (5, 0.999, 1.0)])
def test_redundancy_closed_form_to_30_digits(d, lam, mu):
    """Redundancy-d, IR exponential (Gardner et al., Operations Research 65(4), 2017; derived in
    docs/theory/redundancy.rst, eq. red-ir-tail): the tail
    ``P(T > t) = (rho + (1 - rho) exp((d - 1) mu t))^(-d/(d-1))`` written directly in mpmath at
    60 digits, against the law's 30-digit tail, CDF (a tiny t: no cancellation) and quantiles
    (the tail at the quantile is the level)."""
    law = qt.analyze(qt.System(qt.RedundancyD(d), qt.IR(qt.Exponential(mu)),
                               arrival_rate=lam)).response_time
    with mpmath.workdps(60):
        rho = mpmath.mpf(lam) / mpmath.mpf(mu)

        def tail(t):
            t = mpmath.mpf(t)
            return (rho + (1 - rho) * mpmath.exp((d - 1) * mpmath.mpf(mu) * t)) ** (
                -mpmath.mpf(d) / (d - 1))

        def close(value, ref):
            assert isinstance(value, mpmath.mpf)
            assert abs(value - ref) <= mpmath.mpf(10) ** -29 * abs(ref)

        for t in (1e-20, 0.3, 2.0, 40.0):
            close(law.sf(t, precision=30), tail(t))
            close(law.cdf(t, precision=30), 1 - tail(t))
        for q in (1e-12, 0.5, 0.99):
            close(tail(law.ppf(q, precision=30)), 1 - mpmath.mpf(q))
        close(tail(law.isf(1e-6, precision=30)), mpmath.mpf(1e-6))
