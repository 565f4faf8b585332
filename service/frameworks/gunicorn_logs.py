"""gunicorn's own log lines without any request's query string.

gunicorn writes a request's target into its error log itself: ``Error handling request <uri>``
when an error escapes the app (a stream's body that fails, in either pool), and ``Invalid
request from ip=...: Invalid HTTP request line: '<uri>'`` when it refuses a request line. The
query may carry a credential (a seat token or a stream ticket in ``access_token``, still
accepted on the events endpoint), so :class:`QuerylessLogger` (``logger_class`` in
``deploy/gunicorn.conf.py``) drops every query from the lines of both of gunicorn's logs,
tracebacks included. The access log's query is dropped from each atom (``%(r)s``, ``%(U)s``,
a header's ``%({referer}i)s``) before its format is applied, not from the formatted line:
``access_log_format`` is a JSON object, and a path whose ``%3F`` gunicorn decodes to a ``?``
must not take the rest of the line with it. The whole query goes,
not named parameters: a percent-encoded name (``access%5Ftoken``) is the same parameter to the
app. The app's own request lines carry the route, never the query.
"""

from __future__ import annotations

import logging
import re

from gunicorn.glogging import Logger

#: A path's query: from its ``?`` to the next blank (a quote of gunicorn's goes with it).
QUERY = re.compile(r"(/[^\s?'\"]*)\?\S*")
DROPPED = r"\1?[query dropped]"


def without_queries(text: str) -> str:
    return QUERY.sub(DROPPED, text)


class _DropQueries(logging.Filter):
    """Rewrites a record's message and traceback ahead of any handler's formatting."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = without_queries(record.getMessage()), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = without_queries(record.exc_text)
        return True


class QuerylessLogger(Logger):  # type: ignore[misc]  # gunicorn ships no types
    """gunicorn's logger whose error and access logs never print a query string."""

    def setup(self, cfg):  # type: ignore[no-untyped-def]
        super().setup(cfg)
        if not any(isinstance(f, _DropQueries) for f in self.error_log.filters):
            self.error_log.addFilter(_DropQueries())

    def atoms(self, resp, req, environ, request_time):  # type: ignore[no-untyped-def]
        """The access log's atoms without queries, each on its own: the line's format stays
        whole whatever a client puts in its target."""
        atoms = super().atoms(resp, req, environ, request_time)
        return {k: without_queries(v) if isinstance(v, str) else v for k, v in atoms.items()}
