"""Swagger UI's files served by the API itself, so ``/docs`` works on an air-gapped deployment.

flask-smorest renders the docs page and loads Swagger UI's script and style from
``OPENAPI_SWAGGER_UI_URL``; that URL is our own asset route, which serves the Swagger UI
distribution the ``flask-swagger-ui`` package ships (Swagger UI 5, which reads OpenAPI 3.1).
Only the package's files are used, not its blueprint: flask-smorest already renders the page.
"""

from __future__ import annotations

import logging
from importlib.resources import files
from pathlib import Path

from flask import Flask, send_from_directory

logger = logging.getLogger(__name__)

#: Swagger UI's distribution files (swagger-ui-bundle.js, swagger-ui.css…).
DIST = Path(str(files("flask_swagger_ui").joinpath("dist")))
#: Config for the page: no online validator badge, which would call a public host.
CONFIG = {"validatorUrl": None}


def assets_url(base_path: str) -> str:
    """Where the assets are served; flask-smorest appends the file names to it."""
    return f"{base_path}/docs/assets/"


def register(app: Flask, base_path: str) -> None:
    """Serve the files of :data:`DIST` under :func:`assets_url`."""

    def asset(filename: str):
        # send_from_directory refuses paths that leave DIST (404).
        return send_from_directory(DIST, filename, max_age=86400)

    app.add_url_rule(f"{assets_url(base_path)}<path:filename>", "swagger_ui_asset", asset)
