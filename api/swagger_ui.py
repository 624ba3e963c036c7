"""The API docs page (Swagger UI), served by the API itself with its own files, so ``/docs``
works on an air-gapped deployment and under a Content-Security-Policy that runs no inline
script.

The page is ours rather than flask-smorest's, whose template starts Swagger UI with an inline
script: ours loads Swagger UI's script and style from :func:`assets_url` (the Swagger UI
distribution the ``flask-swagger-ui`` package ships: Swagger UI 5, which reads OpenAPI 3.1;
only its files are used, not its blueprint) and starts it with :data:`INIT` (a file of ours),
and answers with the HTML pages' headers (:data:`api.headers.PAGE`). Swagger UI's default
layout sets its styles through the DOM, which ``style-src 'self'`` allows; its standalone
layout (a top bar whose logo brings a ``<style>`` element) is not used.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from flask import (
    Flask,
    Response,
    make_response,
    render_template_string,
    send_file,
    send_from_directory,
    url_for,
)

from api.headers import PAGE

#: Swagger UI's distribution files (swagger-ui-bundle.js, swagger-ui.css…).
DIST = Path(str(files("flask_swagger_ui").joinpath("dist")))
#: The script that starts Swagger UI on the page.
INIT = Path(__file__).with_name("swagger_ui_init.js")

#: The docs page: every script a file of this server, none inline (Jinja escapes the values).
TEMPLATE = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>{{ title }}</title>
  <link rel="stylesheet" href="{{ assets }}swagger-ui.css">
  <script src="{{ assets }}swagger-ui-bundle.js" defer></script>
  <script src="{{ init }}" defer></script>
</head>
<body>
  <div id="swagger-ui" data-spec-url="{{ spec_url }}"></div>
</body>
</html>
"""


def assets_url(base_path: str) -> str:
    """Where Swagger UI's files are served."""
    return f"{base_path}/docs/assets/"


def register(app: Flask, base_path: str) -> None:
    """Serve the docs page at ``base_path/docs`` (titled ``API_TITLE``), its starting script
    beside it, and the files of :data:`DIST` under :func:`assets_url`."""
    title = app.config["API_TITLE"]

    def page() -> Response:
        html = render_template_string(
            TEMPLATE, title=title, assets=assets_url(base_path),
            init=url_for("swagger_ui_init"), spec_url=url_for("api-docs.openapi_json"))
        response = make_response(html)
        response.headers.update(PAGE)
        return response

    def init() -> Response:
        return send_file(INIT, mimetype="text/javascript")

    def asset(filename: str) -> Response:
        # send_from_directory refuses paths that leave DIST (404).
        return send_from_directory(DIST, filename, max_age=86400)

    app.add_url_rule(f"{base_path}/docs", "swagger_ui", page)
    app.add_url_rule(f"{base_path}/docs/init.js", "swagger_ui_init", init)
    app.add_url_rule(f"{assets_url(base_path)}<path:filename>", "swagger_ui_asset", asset)
