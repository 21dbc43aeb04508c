"""Progress bars of the long-running verbs (``simulate``, ``compare``, ``validate``): tqdm's.

Every such verb takes ``progress``: ``True`` shows a bar on stderr (count, rate and ETA),
``False`` none, ``None`` (the default) shows it only when stderr is a terminal, so scripts,
logs, CI and notebooks stay quiet unless asked.
"""

from __future__ import annotations

import sys

__all__ = ["Bar", "wanted"]


def wanted(progress: bool | None) -> bool:
    """Whether to show a bar: ``progress`` if given, else whether stderr is a terminal."""
    if progress is None:
        isatty = getattr(sys.stderr, "isatty", None)
        return bool(isatty and isatty())
    return bool(progress)


class Bar:
    """A tqdm bar on stderr counting ``unit``s up to ``total``; ``advance(n)`` adds
    ``n * scale`` (e.g. batches of ``scale`` jobs). A no-op when ``show`` is False."""

    def __init__(self, total: int, desc: str, *, unit: str = "job", scale: int = 1,
                 show: bool = True):
        self.scale = scale
        self._bar = None
        if show:
            from tqdm import tqdm  # imported only when a bar is shown

            self._bar = tqdm(total=total, desc=desc, unit=unit, unit_scale=unit == "job",
                             file=sys.stderr, dynamic_ncols=True, leave=True)

    def advance(self, n: int = 1) -> None:
        if self._bar is not None:
            self._bar.update(n * self.scale)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
