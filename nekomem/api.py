"""DRF plumbing shared by every layer's API: one place maps domain errors to HTTP errors."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework import exceptions, serializers
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from nekomem.characters.models import Character
from nekomem.characters.names import InvalidCharacterName
from nekomem.errors import Conflict
from nekomem.subjects import SUBJECTS_ALL_WORD, SubjectError, subject_filter_parse


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, Conflict):
        body: dict[str, Any] = {"status": "error", "error_code": "conflict", "message": str(exc)}
        # A refusal that says why (the history's ``edited_since``, ``forgotten``) and what it concerns.
        reason = getattr(exc, "reason", "")
        if reason:
            body.update(reason=reason, **getattr(exc, "details", {}))
        return Response(body, status=409)
    if isinstance(exc, InvalidCharacterName):
        exc = exceptions.ValidationError({"name": [str(exc)]})
    elif isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(exc.message_dict if hasattr(exc, "error_dict") else exc.messages)
    response = drf_exception_handler(exc, context)
    if response is not None and isinstance(response.data, dict) and "detail" in response.data:
        response.data = {"status": "error", "message": str(response.data["detail"]), **response.data}
    elif response is not None:
        response.data = {"status": "error", "message": "invalid input", "errors": response.data}
    return response


class CharacterScopedMixin:
    """Resolve ``<name>`` in the URL to a character; every queryset is scoped to it."""

    kwargs: dict[str, Any]

    def get_character(self) -> Character:
        character = Character.objects.filter(name=self.kwargs["name"]).first()
        if character is None:
            raise Http404("no such character")
        return character


class SubjectFilterField(serializers.CharField):
    """A list route's ``subject``: the memory browser's subject filter (``subject_filter_parse``),
    a value that cannot be a subject key a 400."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(required=False, allow_blank=True, trim_whitespace=False, default="", **kwargs)

    def to_internal_value(self, data: Any) -> str:
        try:
            return subject_filter_parse(super().to_internal_value(data))
        except SubjectError as exc:
            raise serializers.ValidationError(str(exc)) from None


SUBJECT_PARAMETER = OpenApiParameter(
    "subject",
    OpenApiTypes.STR,
    description=(
        "whose rows: empty or omitted for the master's private memory, "
        f"`{SUBJECTS_ALL_WORD}` for every row (the master's and every group-chat subject's), or one "
        "subject key `<kind>:<subject_id>` (e.g. `group_participant:qq:7788:1001`) for that subject's rows"
    ),
)
