"""REST for the history (issue 49): a row's versions and restoring one, a character's changes and undoing
them, rolling a character back to a time. A layer's list as it stood at a time (``?as_of=``) is answered by
the layer's own list route (``nekomem.journal.as_of``) with this app's read (``history.selectors``)."""

from __future__ import annotations

from typing import Any

from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import generics, serializers
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from history.selectors import changes_list, history_row_id, row_versions
from history.services import NoSuchVersion, changes_undo, memory_rollback, row_restore
from nekomem.api import CharacterScopedMixin
from nekomem.journal.causes import CAUSES
from nekomem.journal.models import Event
from nekomem.journal.registry import HistoryLayer, history_layer

# ``corrections`` (persona's queued pairs) and ``recent_memo`` also have their own routes under
# ``persona/corrections/{id}/`` and ``recent/memo/``.
LAYERS = ["facts", "reflections", "persona", "corrections", "recent_memo"]
LAYER_PARAMETER = OpenApiParameter("layer", OpenApiTypes.STR, OpenApiParameter.PATH, enum=LAYERS)
ROW_PARAMETER = OpenApiParameter(
    "row_id", OpenApiTypes.STR, OpenApiParameter.PATH, description="the fact's, reflection's or entry's id"
)


def _layer(name: str) -> HistoryLayer:
    layer = history_layer(name)
    if layer is None:
        raise Http404("no such memory layer")
    return layer


class VersionSerializer(serializers.Serializer):
    # DRF pops declared fields off the class: ``source`` and ``fields`` clash with Serializer's
    # attributes only for the type checker.

    version = serializers.IntegerField()
    id = serializers.IntegerField(help_text="The change's id (undo it with changes/undo/ {id}).")
    at = serializers.DateTimeField()
    cause = serializers.CharField(help_text="The mechanism: extraction, dedup, refine, edit, undo …")
    source = serializers.CharField(help_text="The job, pass or request (undo all of it by this value).")  # type: ignore[assignment]
    detail = serializers.CharField(
        help_text="The mechanism's action (refine: merge, split, modify, discard)."
    )
    deleted = serializers.BooleanField()
    fields = serializers.JSONField(allow_null=True, help_text="The row's whole state after the change.")  # type: ignore[assignment]


class RowHistoryView(CharacterScopedMixin, APIView):
    """A fact's, reflection's or persona entry's versions, oldest first."""

    @extend_schema(
        responses=inline_serializer("RowHistory", {"versions": VersionSerializer(many=True)}),
        operation_id="row_history",
        parameters=[LAYER_PARAMETER, ROW_PARAMETER],
    )
    def get(self, request: Request, name: str, layer: str, row_id: str) -> Response:
        character = self.get_character()
        _layer(layer)
        row_id = history_row_id(character_id=character.pk, layer=layer, row_id=row_id)
        versions = row_versions(character_id=character.pk, layer=layer, row_id=row_id)
        return Response({"versions": VersionSerializer([v.as_json() for v in versions], many=True).data})


class RestoreSerializer(serializers.Serializer):
    version = serializers.IntegerField(min_value=1)
    force = serializers.BooleanField(
        default=False, help_text="Overwrite changes a person made after that version (refused otherwise)."
    )


class RowRestoreView(CharacterScopedMixin, APIView):
    """Put the row back to one of its versions (a change of its own, cause ``restore``).

    409 ``edited_since`` when a person changed the row after that version (send ``force``), 409
    ``forgotten`` when that version's text was forgotten (never restored)."""

    @extend_schema(
        request=RestoreSerializer,
        responses=inline_serializer(
            "RowRestored",
            {
                "version": serializers.IntegerField(),
                "source": serializers.CharField(),
                "fields": serializers.JSONField(),
            },
        ),
        operation_id="row_history_restore",
        parameters=[LAYER_PARAMETER, ROW_PARAMETER],
    )
    def post(self, request: Request, name: str, layer: str, row_id: str) -> Response:
        character = self.get_character()
        _layer(layer)
        data = RestoreSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            restored = row_restore(
                character_id=character.pk,
                layer=layer,
                row_id=history_row_id(character_id=character.pk, layer=layer, row_id=row_id),
                version=data.validated_data["version"],
                force=data.validated_data["force"],
            )
        except NoSuchVersion as exc:
            raise Http404(str(exc)) from exc
        return Response({"version": restored.version, "source": restored.source, "fields": restored.fields})


class ChangeSerializer(serializers.ModelSerializer):
    id = serializers.IntegerField(source="seq")
    at = serializers.DateTimeField(source="ts")
    row_id = serializers.CharField(source="row")
    detail = serializers.SerializerMethodField(help_text="refine's merge, split, modify or discard")

    class Meta:
        model = Event
        fields = ["id", "at", "layer", "row_id", "cause", "source", "detail"]
        read_only_fields = fields

    def get_detail(self, event: Event) -> str:
        return str((event.payload or {}).get("detail") or "")


class ChangeFilterSerializer(serializers.Serializer):
    since = serializers.DateTimeField(required=False)
    until = serializers.DateTimeField(required=False)
    layer = serializers.CharField(required=False)
    cause = serializers.CharField(required=False)
    # DRF pops declared fields off the class: the names clash with Field's only for the type checker.
    source = serializers.CharField(required=False)  # type: ignore[assignment]


class ChangeListView(CharacterScopedMixin, generics.ListAPIView):
    """The character's changes, newest first: one per row a change touched."""

    serializer_class = ChangeSerializer

    @extend_schema(
        parameters=[
            OpenApiParameter("since", OpenApiTypes.DATETIME, description="at or after"),
            OpenApiParameter("until", OpenApiTypes.DATETIME, description="before"),
            OpenApiParameter("layer", OpenApiTypes.STR, enum=LAYERS),
            OpenApiParameter("cause", OpenApiTypes.STR, enum=list(CAUSES)),
            OpenApiParameter("source", OpenApiTypes.STR, description="one job, pass or request"),
        ],
        operation_id="changes_list",
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self) -> Any:
        character = self.get_character()
        filters = ChangeFilterSerializer(data=self.request.query_params)
        filters.is_valid(raise_exception=True)
        return changes_list(character_id=character.pk, **filters.validated_data)


class UndoSerializer(serializers.Serializer):
    source = serializers.CharField(  # type: ignore[assignment]
        required=False, help_text="Undo every change of this job, pass or request."
    )
    id = serializers.IntegerField(required=False, help_text="Undo this one change.")
    force = serializers.BooleanField(default=False, help_text="Also take back rows changed again since.")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("source" in attrs) == ("id" in attrs):
            raise ValidationError("give exactly one of source and id")
        return attrs


_NAMED_ROWS = serializers.ListField(child=serializers.DictField(child=serializers.CharField()))


class UndoView(CharacterScopedMixin, APIView):
    """Take back a whole job, pass, request or import (``source``) or one change (``id``): every row it
    touched goes back to its version before, a row it made is archived. Rows changed again since are
    left alone and listed in ``conflicts`` (send ``force`` to take them back too); forgotten text stays
    forgotten. The undo is a change of its own: undo its ``source`` to take it back."""

    @extend_schema(
        request=UndoSerializer,
        responses=inline_serializer(
            "UndoReport",
            {
                "source": serializers.CharField(),
                "restored": _NAMED_ROWS,
                "archived": _NAMED_ROWS,
                "conflicts": _NAMED_ROWS,
                "forgotten": _NAMED_ROWS,
            },
        ),
        operation_id="changes_undo",
    )
    def post(self, request: Request, name: str) -> Response:
        character = self.get_character()
        data = UndoSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            report = changes_undo(
                character_id=character.pk,
                source=data.validated_data.get("source"),
                change_id=data.validated_data.get("id"),
                force=data.validated_data["force"],
            )
        except NoSuchVersion as exc:
            raise Http404(str(exc)) from exc
        return Response(report.as_json())


class RollbackSerializer(serializers.Serializer):
    at = serializers.DateTimeField()


class RollbackView(CharacterScopedMixin, APIView):
    """Every memory layer back to its state at ``at``; the raw log is untouched. Roll back to a time
    after this rollback to take it back."""

    @extend_schema(
        request=RollbackSerializer,
        responses=inline_serializer(
            "RollbackReport",
            {
                "source": serializers.CharField(),
                "restored": serializers.IntegerField(),
                "archived": serializers.IntegerField(),
                "forgotten": serializers.IntegerField(),
                "layers": serializers.DictField(child=serializers.IntegerField()),
            },
        ),
        operation_id="character_rollback",
    )
    def post(self, request: Request, name: str) -> Response:
        character = self.get_character()
        data = RollbackSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        report = memory_rollback(character_id=character.pk, at=data.validated_data["at"])
        return Response(report.as_json())
