"""Console sign-ins: a server-side session in Redis (Flask-Session), CSRF tokens (Flask-WTF).

Signing in checks the API key once (:func:`storage.accounts.authenticate`) and keeps only the
key's id in the session, server-side: the browser holds a random session id in an ``HttpOnly``,
``SameSite=Lax`` cookie scoped to ``/console`` (``Secure`` when the request came over HTTPS),
never the key. Every console request looks the key up again by its id, so revoking the key
ends every console session it opened. A session lasts ``CONSOLE_SESSION_SECONDS`` from the
sign-in (the Redis key's TTL); signing out deletes it.

Every POST of the console carries the session's CSRF token (Flask-WTF's ``generate_csrf`` /
``validate_csrf``, signed with ``CONSOLE_SECRET_KEY`` or a random key kept in Redis), except the
sign-in form, which has no session yet: it carries a signed token matching a cookie of its own,
so that nothing is stored for a visitor who has not signed in.
"""

from __future__ import annotations

import logging
import secrets
import time
from datetime import timedelta
from typing import Any

from flask import Flask, current_app, flash, g, request, session
from flask_session.redis import RedisSessionInterface
from flask_wtf.csrf import generate_csrf, validate_csrf
from itsdangerous import BadData, URLSafeTimedSerializer
from redis import Redis
from redis.exceptions import RedisError
from wtforms import ValidationError

from api.errors import ApiError
from api.extensions import db, limiter, redis
from storage import accounts
from storage.accounts import Principal
from storage.models import Account

logger = logging.getLogger(__name__)

#: Where the session cookie is sent: the console only, never the API's paths.
COOKIE_PATH = "/console"
COOKIE_NAME = "webdata_console"
#: Redis keys of the sessions, and of the CSRF signing key made when none is configured.
KEY_PREFIX = "webdata:console:session:"
SECRET_KEY = "webdata:console:secret-key"
#: The session fields holding the signed-in key's id, and when it signed in (epoch seconds).
KEY_ID, SIGNED_IN_AT = "key_id", "signed_in_at"
#: How long a session that is not signed in (a flash message after a sign-out) is kept, and
#: how long a sign-in form stays valid.
ANONYMOUS_SECONDS = 900
#: The sign-in form's cookie (:func:`sign_in_token`).
SIGN_IN_COOKIE = "webdata_console_sign_in"


class ConsoleSessions(RedisSessionInterface):
    """Flask-Session's Redis sessions, with the cookie ``Secure`` whenever the request itself
    came over HTTPS (behind a proxy: its X-Forwarded-Proto, which gunicorn takes from the
    addresses in FORWARDED_ALLOW_IPS), Redis trouble answered as a 503 page instead of
    failing every console request with a 500, and no session at all outside the console's
    paths (every API request opened and saved one)."""

    def get_cookie_secure(self, app: Flask) -> bool:
        return request.is_secure or super().get_cookie_secure(app)

    def open_session(self, app: Flask, request: Any) -> Any:
        if not request.path.startswith(COOKIE_PATH):
            return self.make_null_session(app)  # the API itself keeps no sessions
        try:
            return super().open_session(app, request)
        except RedisError as exc:
            logger.error("Console sessions unavailable: %s", exc)
            g.console_sessions_down = True
            return self.session_class(sid=self._generate_sid(self.sid_length),
                                      permanent=self.permanent)

    def _upsert_session(self, session_lifetime: timedelta, session: Any,
                        store_id: str) -> None:
        """Stored until the sign-in's own end (``CONSOLE_SESSION_SECONDS`` after signing in,
        whatever was changed since: a flash message, a new CSRF token), or for
        :data:`ANONYMOUS_SECONDS` while nobody is signed in."""
        super()._upsert_session(timedelta(seconds=_remaining(session, session_lifetime)),
                                session, store_id)

    def save_session(self, app: Flask, session: Any, response: Any) -> None:
        if self.is_null_session(session) or g.get("console_sessions_down"):
            return
        try:
            super().save_session(app, session, response)
        except RedisError as exc:
            logger.error("Could not save a console session: %s", exc)


def _remaining(session: Any, lifetime: timedelta) -> float:
    """Seconds the session has left: the sign-in's lifetime less its age, or the anonymous
    allowance."""
    started = session.get(SIGNED_IN_AT)
    if started is None:
        return min(ANONYMOUS_SECONDS, lifetime.total_seconds())
    return max(1.0, lifetime.total_seconds() - (time.time() - started))


def install(app: Flask, redis_client: Redis, lifetime_seconds: int) -> None:
    """Server-side sessions for the console on ``app`` (the API itself uses none)."""
    app.config.update(
        SESSION_COOKIE_NAME=COOKIE_NAME,
        SESSION_COOKIE_PATH=COOKIE_PATH,
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        SESSION_REFRESH_EACH_REQUEST=False,  # the lifetime counts from the sign-in
        PERMANENT_SESSION_LIFETIME=timedelta(seconds=lifetime_seconds),
        WTF_CSRF_TIME_LIMIT=None,  # a token lives as long as its session
    )
    app.session_interface = ConsoleSessions(app, client=redis_client, key_prefix=KEY_PREFIX,
                                            permanent=True)


def _secret() -> str:
    """What CSRF tokens are signed with: ``CONSOLE_SECRET_KEY``, else a random key kept in
    Redis (made by whichever API process comes first). Read once per request, not cached
    longer: every process of the deployment signs with the same key, also after Redis lost
    it (with the sessions, which then sign in again anyway); a page's many forms share one
    read."""
    configured = current_app.config["WEBDATA"].api.console_secret_key
    if configured:
        return configured
    if "console_secret" in g:
        return g.console_secret
    try:
        with redis().pipeline(transaction=False) as pipeline:
            pipeline.set(SECRET_KEY, secrets.token_hex(32), nx=True)
            pipeline.get(SECRET_KEY)
            g.console_secret = pipeline.execute()[1].decode()
            return g.console_secret
    except RedisError as exc:
        logger.error("Console CSRF key unavailable: %s", exc)
        raise ApiError("unavailable", "The console cannot sign its forms right now; try "
                                      "again shortly.") from None


def csrf_token() -> str:
    """The token every signed-in console form carries (a template global)."""
    return generate_csrf(secret_key=_secret())


def check_csrf() -> None:
    """Refuse a POST without its CSRF token (400): the session's, or on the sign-in form the
    signed token that matches its cookie (see :func:`sign_in_token`)."""
    if request.endpoint == "console.sign_in":
        valid = _sign_in_token_valid(request.form.get("csrf_token", ""))
    else:
        try:
            validate_csrf(request.form.get("csrf_token"), secret_key=_secret())
            valid = True
        except ValidationError:
            valid = False
    if not valid:
        raise ApiError("bad_request", "This form has expired or did not come from the "
                                      "console; reload the page and try again.")


def sign_in_token(response: Any) -> str:
    """The sign-in form's CSRF token, stateless: a random value in a short-lived cookie and,
    signed, in the form (the signed double-submit cookie). Nothing is stored before a
    sign-in succeeds, so loading the sign-in page in a loop costs the server nothing."""
    nonce = secrets.token_urlsafe(16)
    response.set_cookie(SIGN_IN_COOKIE, nonce, max_age=ANONYMOUS_SECONDS, path=COOKIE_PATH,
                        secure=request.is_secure, httponly=True, samesite="Lax")
    return _sign_in_serializer().dumps(nonce)


def _sign_in_token_valid(token: str) -> bool:
    nonce = request.cookies.get(SIGN_IN_COOKIE)
    try:
        signed = _sign_in_serializer().loads(token, max_age=ANONYMOUS_SECONDS)
    except BadData:
        return False
    return bool(nonce) and secrets.compare_digest(str(signed), nonce)


def _sign_in_serializer() -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(_secret(), salt="webdata-console-sign-in")


def sign_in(key: str) -> Principal | None:
    """Check ``key`` once and bind this session to it; None (and no session) when unknown.

    A sign-in with a live key is a request of its account, counted against its plan's rate
    before any session is made (over it: 429, no session); an unknown key has no account to
    count against, as an API request with one answers 401 uncounted."""
    with db().session() as transaction:
        principal = accounts.authenticate(transaction, key.strip())
    if principal is None:
        return None
    limiter().check(principal)
    current_app.session_interface.regenerate(session)  # no id chosen before the sign-in
    session.clear()
    session[KEY_ID], session[SIGNED_IN_AT] = principal.key_id, time.time()
    return principal


def sign_out(message: str) -> None:
    """End the sign-in: its stored session is deleted; ``message`` is shown on the next page
    from a new, anonymous session."""
    session.clear()
    flash(message, "info")
    current_app.session_interface.regenerate(session)  # deletes the signed-in one


def signed_in() -> tuple[Account, Principal] | None:
    """The account of this session's key (its plan loaded) and the caller it makes, while
    that key is live (else the session ends)."""
    key_id = session.get(KEY_ID)
    if key_id is None:
        return None
    if _remaining(session, current_app.permanent_session_lifetime) <= 1.0:
        session.clear()  # over its lifetime (Redis would have dropped it within a second)
        return None
    with db().session() as transaction:
        found = accounts.account_of_key(transaction, key_id)
    if found is None:
        session.clear()
    return found
