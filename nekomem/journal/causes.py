"""Why a change happened: the mechanism (``cause``) and the job, pass or request (``source``) that made it.

Set once where work enters (a request by the middleware, a mechanism's service by ``caused_by``, a job or
an outbox op by the job mechanism) and read by every event append, so no call site below passes it on.
A context variable costs no query and follows the code into nested services: the innermost mechanism
names the cause, while the outermost source stays, so undoing a request undoes everything it set off.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import ParamSpec, TypeVar

from django.http import HttpRequest, HttpResponse

P = ParamSpec("P")
R = TypeVar("R")

CAUSE_MAX = 24
SOURCE_MAX = 80

# The mechanisms that change memory. A person's own changes are the last group: a restore refuses to
# overwrite them silently (see ``history.services.row_restore``).
MACHINE_CAUSES = (
    "extraction",
    "dedup",
    "synthesis",
    "promotion",
    "refine",
    "correction",
    "feedback",
    "rebuttal",
    "archive",
    "recheck",
    "mention",
    "compaction",
    "compression",  # the recent window's head folded into its memo
    "review",  # the recent window's review corrected the memo
    "import",
    "markdown_import",
    "undo",
    "rollback",
    "restore",
    "baseline",
)
PERSON_CAUSES = ("edit", "rest", "mcp", "command", "forget")
CAUSES = (*MACHINE_CAUSES, *PERSON_CAUSES, "chat")

_cause: ContextVar[str] = ContextVar("nekomem_change_cause", default="")
_source: ContextVar[str] = ContextVar("nekomem_change_source", default="")
# Which of a mechanism's actions made the change (refine's merge, split, modify or discard): what a person
# reading the history needs beyond the mechanism, kept in the version's payload, not in the source, so that
# undoing the pass still takes back every action of it.
_detail: ContextVar[str] = ContextVar("nekomem_change_detail", default="")
DETAIL_MAX = 24


def new_source(kind: str) -> str:
    """A fresh id for one pass, request or import, which an undo names to take all of it back."""
    return f"{kind}:{uuid.uuid4().hex[:12]}"


def current_cause() -> tuple[str, str]:
    return _cause.get(), _source.get()


def current_detail() -> str:
    return _detail.get()


@contextmanager
def change_detail(detail: str) -> Iterator[None]:
    """Name the action of the enclosing mechanism the changes inside are (``merge``, ``split`` …)."""
    token = _detail.set(detail[:DETAIL_MAX])
    try:
        yield
    finally:
        _detail.reset(token)


@contextmanager
def change_cause(cause: str, *, source: str | None = None) -> Iterator[str]:
    """Changes made inside are stamped with ``cause``; ``source`` (given, else the enclosing one, else a
    fresh pass id) names the job, pass or request. Yields the source."""
    chosen = (source or _source.get() or new_source(cause))[:SOURCE_MAX]
    cause_token = _cause.set(cause[:CAUSE_MAX])
    source_token = _source.set(chosen)
    detail_token = _detail.set("")  # an inner mechanism's changes are not the outer one's action
    try:
        yield chosen
    finally:
        _detail.reset(detail_token)
        _source.reset(source_token)
        _cause.reset(cause_token)


@contextmanager
def change_source(source: str) -> Iterator[None]:
    """Name the job or op the changes inside belong to, keeping the enclosing cause."""
    token = _source.set(source[:SOURCE_MAX])
    try:
        yield
    finally:
        _source.reset(token)


def caused_by(cause: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorate a mechanism's entry point: everything it changes carries ``cause``."""

    def decorate(func: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(func)
        def run(*args: P.args, **kwargs: P.kwargs) -> R:
            with change_cause(cause):
                return func(*args, **kwargs)

        return run

    return decorate


def request_cause(path: str) -> str:
    """What a request's changes are, by where it came in."""
    if path.startswith("/api/"):
        return "rest"
    if path.startswith("/browse/") or path.startswith("/admin/"):
        return "edit"
    if path.startswith("/mcp/"):
        return "mcp"
    return "chat"


class ChangeCauseMiddleware:
    """Stamp every change a request makes with where it came in and the request's own source id."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        with change_cause(request_cause(request.path), source=new_source("request")):
            return self.get_response(request)
