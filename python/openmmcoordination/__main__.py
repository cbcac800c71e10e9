"""``python -m openmmcoordination``: the command line (see openmmcoordination.cli)."""

import sys

from openmmcoordination.cli import main

sys.exit(main())
