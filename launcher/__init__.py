"""``make run``: the API, the workers, the cron scheduler and an embedded Redis in one process
tree (``python -m launcher``), started in order, announced when ready, stopped by Ctrl-C.

:mod:`launcher.serve` starts it all, :mod:`launcher.ready` waits until it serves,
:mod:`launcher.supervisor` watches the children and stops them in order, and
:mod:`launcher.embedded` is the private Redis it (and the tests) start.
"""
