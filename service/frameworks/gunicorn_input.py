"""gunicorn's request body: the errors its chunked reader raises on a malformed body.

werkzeug turns a body cut short (gunicorn's ``NoMoreData``, an ``OSError``) into a 400 of its
own, but gunicorn's parse errors (a chunk size that is not hexadecimal, a chunk without its
CRLF) are plain exceptions that reach the app from ``request.get_data()``. The app answers
them as a malformed request (400). gunicorn, whose reader is left in the middle of the body,
then closes the connection without reading it as another request.
``tests/api/test_bad_input.py`` sends such bodies to a real gunicorn and reads one answer.
"""

from __future__ import annotations

from gunicorn.http.errors import ParseException

#: What reading a request's body may raise under gunicorn, beyond ``OSError``.
BODY_ERRORS: tuple[type[Exception], ...] = (ParseException,)
