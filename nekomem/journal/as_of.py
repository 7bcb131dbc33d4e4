"""``?as_of=`` on the layers' list routes: a layer's rows as they stood at a time.

Each layer's list route answers it (the layers import this, never the ``history`` app); the rows come
from the reader the ``history`` app registers from its ``ready()``, which reads the versions back (404
without one: a server without the app keeps no history to read).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework import generics, serializers
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from nekomem.journal.registry import HistoryLayer, history_layer
from nekomem.subjects import SUBJECTS_ALL, SubjectError, subject_filter_parse

# (character id, layer, time) -> the layer's rows then: public id -> fields.
AsOfReader = Callable[[int, HistoryLayer, datetime], dict[str, dict[str, Any]]]

# One reader: the history app's (a list, so registering again replaces it rather than rebinding a global).
_reader: list[AsOfReader] = []

AS_OF_PARAMETER = OpenApiParameter(
    "as_of",
    OpenApiTypes.DATETIME,
    description="Read-only: the rows as they stood at this time (their history's fields, newest first).",
)


def register_as_of_reader(reader: AsOfReader) -> None:
    _reader[:] = [reader]


def as_of_param(request: Request) -> datetime | None:
    """The ``as_of`` query parameter, parsed (400 when malformed), or None."""
    if "as_of" not in request.query_params:
        return None
    field = serializers.DateTimeField()
    try:
        return field.to_internal_value(request.query_params["as_of"])
    except ValidationError as exc:
        raise ValidationError({"as_of": exc.detail}) from exc


def as_of_list(view: generics.GenericAPIView, *, character_id: int, layer: str, at: datetime) -> Response:
    """A layer's list route answered from the history: the rows at ``at`` of the ``subject`` the list
    route's filter names (the master's private memory unless it says otherwise), paginated like it."""
    try:
        subject = subject_filter_parse(view.request.query_params.get("subject", ""))
    except SubjectError as exc:
        raise ValidationError({"subject": [str(exc)]}) from exc
    history = history_layer(layer)
    if history is None:
        raise Http404("no such memory layer")
    if not _reader:
        raise Http404("this server keeps no history")
    rows = _reader[0](character_id, history, at)
    results = [
        {"id": row_id, "subject_key": history.subject_of(fields), **fields}
        for row_id, fields in rows.items()
        if subject == SUBJECTS_ALL or history.subject_of(fields) == subject
    ]
    results.sort(key=lambda row: str(row.get("created_at") or ""), reverse=True)
    page = view.paginate_queryset(results)  # type: ignore[arg-type]
    if page is not None:
        return view.get_paginated_response(page)
    return Response(results)
