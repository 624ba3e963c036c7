"""``python -m launcher``: what ``make run`` runs."""

from launcher.serve import main

main()
