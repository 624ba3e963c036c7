"""The headers of the app's answers, each value declared once here: the request's id, and
the security headers.

Every answer (the API's JSON and errors, exports, openapi.json, the docs page and its files,
the console, gunicorn's own refusals) says :data:`NOSNIFF`: a browser never reads a JSON body,
a CSV export or an error as HTML or script, whatever it guesses from the bytes. The app's two
HTML faces, the console and the API docs page, also carry :data:`PAGE`: scripts, styles and
connections from the app itself only, nothing inline (an injected ``<script>`` does not run),
and no framing by any site (clickjacking).
"""

from __future__ import annotations

import secrets

#: The id of the request, on every answer of the app and of gunicorn (:func:`new_request_id`).
REQUEST_ID = "X-Request-Id"


def new_request_id() -> str:
    """The id of one request (``req_`` + 96 random bits): in every answer, error or not, and
    in the history, so a client can quote it."""
    return "req_" + secrets.token_hex(12)


#: On every answer.
NOSNIFF = {"X-Content-Type-Options": "nosniff"}

#: The HTML pages' Content-Security-Policy: nothing inline, nothing from another origin
#: (``data:`` images: the SVG icons in the style sheets).
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")

#: On every HTML page: the policy, no framing (``frame-ancestors`` for today's browsers,
#: ``X-Frame-Options`` for older ones), and no URL with its query sent to other sites.
PAGE = {
    "Content-Security-Policy": CSP,
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
}
