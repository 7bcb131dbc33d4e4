"""REST for one character's facts: list (filtered), retrieve, edit text/importance/entity, delete."""

from __future__ import annotations

from typing import Any

from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, serializers, viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from facts.models import Fact
from facts.selectors import fact_list
from facts.services import fact_delete, fact_update
from facts.services.records import FILE_KEYS
from nekomem.api import SUBJECT_PARAMETER, CharacterScopedMixin, SubjectFilterField
from nekomem.journal.as_of import AS_OF_PARAMETER, as_of_list, as_of_param
from nekomem.subjects import SUBJECTS_ALL


class FactSerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="fact_id", read_only=True)

    class Meta:
        model = Fact
        # The file's keys (``id`` is ``fact_id``), plus what only the database keeps.
        fields = [*FILE_KEYS, "subject_key", "archived", "archived_at", "extra", "updated_at"]
        read_only_fields = fields


class FactEditSerializer(serializers.Serializer):
    text = serializers.CharField(required=False, allow_blank=False, trim_whitespace=True)
    importance = serializers.IntegerField(required=False, min_value=1, max_value=10)
    entity = serializers.ChoiceField(choices=Fact.Entity.choices, required=False)


class FactFilterSerializer(serializers.Serializer):
    entity = serializers.ChoiceField(choices=Fact.Entity.choices, required=False)
    importance = serializers.IntegerField(required=False, min_value=1, max_value=10)
    absorbed = serializers.BooleanField(required=False, allow_null=True, default=None)
    archived = serializers.BooleanField(required=False, allow_null=True, default=None)
    start = serializers.DateTimeField(required=False)
    end = serializers.DateTimeField(required=False)
    subject = SubjectFilterField()


_FILTERS = [
    OpenApiParameter("entity", OpenApiTypes.STR, enum=Fact.Entity.values),
    OpenApiParameter("importance", OpenApiTypes.INT, description="minimum importance (1–10)"),
    OpenApiParameter("absorbed", OpenApiTypes.BOOL),
    OpenApiParameter("archived", OpenApiTypes.BOOL, description="omit for active and archived together"),
    OpenApiParameter("start", OpenApiTypes.DATETIME, description="event start at or after"),
    OpenApiParameter("end", OpenApiTypes.DATETIME, description="event start before"),
    SUBJECT_PARAMETER,
    AS_OF_PARAMETER,
]


@extend_schema_view(
    list=extend_schema(parameters=_FILTERS),
    partial_update=extend_schema(request=FactEditSerializer, responses=FactSerializer),
)
class FactViewSet(
    CharacterScopedMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet,
):
    """A character's facts; archived ones included unless filtered (each fact appears once). The list
    shows the master's facts unless ``subject`` says otherwise; retrieve, edit and delete find a
    group-chat subject's fact by its id too, as the memory browser does."""

    serializer_class = FactSerializer
    lookup_field = "fact_id"
    lookup_url_kwarg = "fact_id"
    http_method_names = ["get", "patch", "delete", "head", "options"]

    def get_queryset(self) -> Any:
        character = self.get_character()
        if self.action != "list":
            return fact_list(character_id=character.pk, subject=SUBJECTS_ALL)
        filters = FactFilterSerializer(data=self.request.query_params)
        filters.is_valid(raise_exception=True)
        f = filters.validated_data
        return fact_list(
            character_id=character.pk,
            entity=f.get("entity"),
            min_importance=f.get("importance"),
            absorbed=f.get("absorbed"),
            archived=f.get("archived"),
            start=f.get("start"),
            end=f.get("end"),
            subject=f["subject"],
        )

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        at = as_of_param(request)
        if at is not None:  # read-only: the rows as they stood then, from their history
            return as_of_list(self, character_id=self.get_character().pk, layer="facts", at=at)
        return super().list(request, *args, **kwargs)

    def partial_update(self, request: Request, name: str, fact_id: str) -> Response:
        character = self.get_character()
        edit = FactEditSerializer(data=request.data)
        edit.is_valid(raise_exception=True)
        self.get_object()  # 404 before anything is written
        fact = fact_update(
            character_id=character.pk, fact_id=fact_id, with_subjects=True, **edit.validated_data
        )
        return Response(FactSerializer(fact).data)

    def destroy(self, request: Request, name: str, fact_id: str) -> Response:
        forgotten = fact_delete(character_id=self.get_character().pk, fact_id=fact_id, with_subjects=True)
        if forgotten is None:
            raise Http404("no such fact")
        return Response(forgotten.as_json())
