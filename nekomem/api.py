"""DRF plumbing shared by every layer's API: one place maps domain errors to HTTP errors."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from nekomem.characters.models import Character
from nekomem.characters.names import InvalidCharacterName
from nekomem.errors import Conflict


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
