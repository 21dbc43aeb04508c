"""``python -m queuetheory``: the command line (see :mod:`queuetheory.cli`)."""

from .cli import main

raise SystemExit(main())
