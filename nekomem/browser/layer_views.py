"""What every layer page's views share: the character of the URL, form input checked by the REST API's
own serializers, and the way back after an action."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponseRedirect
from django.utils.encoding import iri_to_uri
from rest_framework import serializers

from nekomem.characters.models import Character
from nekomem.characters.selectors import character_get


def character_or_404(name: str) -> Character:
    """The character a browser page is about; an unknown name is the 404 page."""
    character = character_get(name=name)
    if character is None:
        raise Http404(f"no character named {name!r}")
    return character


def redirect_back(request: HttpRequest, listing: str) -> HttpResponseRedirect:
    """Back to the list the form was posted from (the ``next`` field: its filters and page), or to
    ``listing`` itself; never anywhere outside that list, so a crafted form cannot send a user away."""
    wanted = iri_to_uri(request.POST.get("next", ""))
    return HttpResponseRedirect(wanted if wanted.startswith(listing) else listing)


def report_invalid(request: HttpRequest, incoming: serializers.Serializer) -> None:
    """The serializer's complaints as one error message ("field: problem; …")."""
    problems = "; ".join(f"{field}: {e}" for field, errors in incoming.errors.items() for e in errors)
    messages.error(request, f"输入无效 Invalid input: {problems}")
