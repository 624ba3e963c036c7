"""The API's gunicorn settings as a gunicorn configuration module, for a deployment that runs
gunicorn itself (deploy/systemd/webdata-api.service)::

    gunicorn -c python:launcher.gunicorn_config 'api:create_app()'

The same settings ``make run`` gives it (:func:`launcher.serve.gunicorn_settings`), from the
same environment: ``HOST``, ``PORT``, ``API_PROCESSES``, ``API_THREADS``, ``JOB_WAIT_SECONDS``.
A bad variable stops gunicorn before it starts, with the line naming it.
"""

from __future__ import annotations

from core.config import load_or_exit
from launcher.serve import gunicorn_settings

_config = load_or_exit()
globals().update(gunicorn_settings(_config.launch, _config.api))
