"""Collection rules for the whole run (tests/ and the doctests of queuetheory/)."""

import importlib.util

# The figures need the optional matplotlib: without it their doctests are not collected
# (tests/test_plot.py skips itself).
collect_ignore = [] if importlib.util.find_spec("matplotlib") else ["queuetheory/plot.py"]
