from __future__ import annotations

import base64
import binascii
import io
from typing import Any

from django.http import FileResponse, Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from nekomem.characters.language import language_arrival_stamp, stored_language
from nekomem.characters.models import Character
from nekomem.characters.names import validate_character_name
from nekomem.characters.selectors import character_footprint
from nekomem.characters.services import (
    CharacterNotFound,
    character_delete,
    character_language_set,
    character_rename,
)
from nekomem.language.codes import SUPPORTED_LANGUAGES, supported_language
from nekomem.portability import CharacterImported, ImportRefused, memory_export_archive, memory_import_archive


class CharacterSerializer(serializers.ModelSerializer):
    class Meta:
        model = Character
        fields = [
            "name",
            "master_name",
            "master_nicknames",
            "card",
            "language",
            "language_order",
            "created_at",
            "last_activity_at",
        ]
        read_only_fields = ["created_at", "last_activity_at", "language_order"]
        extra_kwargs = {
            "language": {
                "help_text": "The durable prompt locale (one of the eight codes; a region or a Steam name is "
                "normalised). Changing it is a new choice in arrival order, like PUT /prompt-locale."
            }
        }

    def validate_language(self, value: str) -> str:
        if value == "":
            return value
        code = supported_language(value)
        if code is None:
            raise serializers.ValidationError(f"one of {', '.join(SUPPORTED_LANGUAGES)}")
        return code

    def validate_name(self, value: str) -> str:
        return validate_character_name(value)

    def validate_master_nicknames(self, value: object) -> list[str]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise serializers.ValidationError("a list of strings")
        return value

    def validate_card(self, value: object) -> dict:
        if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
            raise serializers.ValidationError(
                'an object of entity → {field: value}, e.g. {"master": {"昵称": "阿凛"}}'
            )
        return value


class RenameSerializer(serializers.Serializer):
    new_name = serializers.CharField(trim_whitespace=False, max_length=200)


class ImportArchiveSerializer(serializers.Serializer):
    archive = serializers.CharField(
        help_text="The zip (as GET …/export/ gives it) in base64: the API takes JSON bodies only."
    )


class ImportedFileSerializer(serializers.Serializer):
    filename = serializers.CharField()
    created = serializers.IntegerField()
    updated = serializers.IntegerField()
    unchanged = serializers.IntegerField()


class ImportReportSerializer(serializers.Serializer):
    name = serializers.CharField()
    created = serializers.BooleanField(help_text="the character was new")
    files = ImportedFileSerializer(many=True, help_text="the files that changed something")


def import_report(report: CharacterImported) -> dict[str, Any]:
    return {
        "name": report.name,
        "created": report.created,
        "files": [
            {
                "filename": f.filename,
                "created": f.result.created,
                "updated": f.result.updated,
                "unchanged": f.result.unchanged,
            }
            for f in report.written
        ],
    }


def refused(exc: ImportRefused) -> Response:
    return Response(
        {"status": "error", "error_code": "malformed_memory", "message": str(exc), "problems": exc.problems},
        status=status.HTTP_400_BAD_REQUEST,
    )


class CharacterViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.UpdateModelMixin,
    viewsets.GenericViewSet,
):
    """Characters and their card fields (the persona layer turns card fields into protected entries);
    rename, delete, and their memory as a zip in the original layout."""

    serializer_class = CharacterSerializer
    lookup_field = "name"
    lookup_value_regex = "[^/]+"
    queryset = Character.objects.order_by("name")

    def perform_update(self, serializer: serializers.BaseSerializer) -> None:
        # A new name goes through the rename service (its lock, the caches it drops).
        assert isinstance(serializer, CharacterSerializer) and serializer.instance is not None
        arrived = language_arrival_stamp()
        new_name = serializer.validated_data.pop("name", serializer.instance.name)
        language = serializer.validated_data.pop("language", None)
        if new_name != serializer.instance.name:
            serializer.instance = character_rename(name=serializer.instance.name, new_name=new_name)
        if language and language != stored_language(serializer.instance):
            # Raises LanguageSuperseded (a Conflict: 409) when a newer choice arrived meanwhile.
            character_language_set(name=serializer.instance.name, language=language, order=arrived)
            serializer.instance.refresh_from_db()
        serializer.save()

    @extend_schema(
        request=RenameSerializer,
        responses={
            200: CharacterSerializer,
            400: OpenApiResponse(description="invalid new name"),
            404: OpenApiResponse(description="no such character"),
            409: OpenApiResponse(description="another character has the name; nothing changed"),
        },
    )
    @action(detail=True, methods=["post"])
    def rename(self, request: Request, name: str) -> Response:
        body = RenameSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            character = character_rename(name=name, new_name=body.validated_data["new_name"])
        except CharacterNotFound as exc:
            raise Http404(str(exc)) from exc
        return Response(CharacterSerializer(character).data)

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "confirm",
                OpenApiTypes.STR,
                required=True,
                description="the character's name again: what is lost cannot be brought back",
            )
        ],
        responses={
            200: OpenApiResponse(description="deleted: {deleted: {layer: {rows: count}}}"),
            400: OpenApiResponse(description="confirm missing or wrong: {would_delete: …}, nothing deleted"),
            404: OpenApiResponse(description="no such character"),
        },
    )
    def destroy(self, request: Request, name: str) -> Response:
        character = Character.objects.filter(name=name).first()
        if character is None:
            raise Http404("no such character")
        if request.query_params.get("confirm") != name:
            return Response(
                {
                    "status": "error",
                    "error_code": "confirmation_required",
                    "message": "repeat the character's name as ?confirm= to delete it and all its memory "
                    "(GET …/export/ first keeps a copy)",
                    "would_delete": character_footprint(character_id=character.pk).as_dict(),
                },
                status=status.HTTP_400_BAD_REQUEST,
            )
        try:
            footprint = character_delete(name=name)
        except CharacterNotFound as exc:
            raise Http404(str(exc)) from exc
        return Response({"status": "deleted", "name": name, "deleted": footprint.as_dict()})

    @extend_schema(
        responses={
            (200, "application/zip"): OpenApiResponse(
                OpenApiTypes.BINARY, description="<name>/… in the original layout (import_memory reads it)"
            ),
            404: OpenApiResponse(description="no such character"),
        },
    )
    @action(detail=True, methods=["get"])
    def export(self, request: Request, name: str) -> FileResponse:
        character = Character.objects.filter(name=name).first()
        if character is None:
            raise Http404("no such character")
        return FileResponse(
            memory_export_archive(character=character),
            as_attachment=True,
            filename=f"{character.name}-memory.zip",
            content_type="application/zip",
        )

    @extend_schema(
        request=ImportArchiveSerializer,
        responses={
            200: ImportReportSerializer,
            400: OpenApiResponse(description="not a zip, or a malformed file (named); nothing imported"),
        },
    )
    @action(detail=True, methods=["post"], url_path="import")
    def import_archive(self, request: Request, name: str) -> Response:
        """Import a zip made by …/export/ into the character ``name`` (created when new), all or nothing.

        The zip travels base64 in a JSON body: every API route takes JSON only (a web page cannot send
        JSON to another origin without asking first), so there is no multipart upload here; the memory
        browser's upload form posts to /browse/<name>/import/ under its CSRF protection instead.
        """
        validate_character_name(name)
        body = ImportArchiveSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            archive = base64.b64decode(body.validated_data["archive"], validate=True)
        except (binascii.Error, ValueError) as exc:
            raise serializers.ValidationError({"archive": ["not base64"]}) from exc
        try:
            report = memory_import_archive(name=name, archive=io.BytesIO(archive))
        except ImportRefused as exc:
            return refused(exc)
        return Response(import_report(report))
