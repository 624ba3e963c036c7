"""``python -m client``: the ``webdata`` command without its console script."""

import sys

from client.cli import main

sys.exit(main())
