"""REST for one character's reflections: list (filter by status), retrieve, edit the text,
confirm/deny/archive/restore."""

from __future__ import annotations

from typing import Any

from django.http import Http404
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from nekomem.api import SUBJECT_PARAMETER, CharacterScopedMixin, SubjectFilterField
from nekomem.journal.as_of import AS_OF_PARAMETER, as_of_list, as_of_param
from nekomem.subjects import SUBJECTS_ALL
from reflections.models import Reflection
from reflections.selectors import reflection_list
from reflections.services import (
    reflection_archive,
    reflection_confirm,
    reflection_delete,
    reflection_deny,
    reflection_edit,
    reflection_restore,
)
from reflections.services.editing import MAX_TEXT_LENGTH
from reflections.services.records import score_of


class ReflectionSerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="reflection_id", read_only=True)
    evidence_score = serializers.SerializerMethodField()

    class Meta:
        model = Reflection
        fields = [
            "id",
            "text",
            "entity",
            "status",
            "source_fact_ids",
            "created_at",
            "feedback",
            "next_eligible_at",
            "relation_type",
            "temporal_scope",
            "subject",
            "subject_key",
            "event_start_at",
            "event_end_at",
            "evidence_score",
            "reinforcement",
            "disputation",
            "rein_last_signal_at",
            "disp_last_signal_at",
            "sub_zero_days",
            "user_fact_reinforce_count",
            "confirmed_at",
            "promoted_at",
            "denied_at",
            "archived_at",
            "archive_shard_path",
            "suppress",
        ]
        read_only_fields = fields

    def get_evidence_score(self, reflection: Reflection) -> float:
        return round(score_of(reflection, now=timezone.now()), 6)


class ReflectionFilterSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=Reflection.Status.choices, required=False)
    archived = serializers.BooleanField(required=False, allow_null=True, default=None)
    subject = SubjectFilterField()


class ReflectionEditSerializer(serializers.Serializer):
    text = serializers.CharField(max_length=MAX_TEXT_LENGTH)


_ACTIONS = {
    "confirm": reflection_confirm,
    "deny": reflection_deny,
    "archive": reflection_archive,
    "restore": reflection_restore,
}


@extend_schema_view(
    list=extend_schema(
        parameters=[
            OpenApiParameter("status", OpenApiTypes.STR, enum=Reflection.Status.values),
            OpenApiParameter("archived", OpenApiTypes.BOOL, description="in an archive shard or not"),
            SUBJECT_PARAMETER,
            AS_OF_PARAMETER,
        ]
    )
)
class ReflectionViewSet(
    CharacterScopedMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet
):
    """A character's reflections with their evidence score and clocks. The list shows the master's
    reflections unless ``subject`` says otherwise; retrieve, edit and delete find a group-chat
    subject's reflection by its id too, as the memory browser does (confirm, deny, archive and
    restore act on the master's reflections only, as there)."""

    serializer_class = ReflectionSerializer
    lookup_field = "reflection_id"
    lookup_url_kwarg = "reflection_id"

    def get_queryset(self) -> Any:
        character = self.get_character()
        if self.action == "retrieve":
            return reflection_list(character_id=character.pk, subject=SUBJECTS_ALL)
        if self.action != "list":
            return reflection_list(character_id=character.pk)
        filters = ReflectionFilterSerializer(data=self.request.query_params)
        filters.is_valid(raise_exception=True)
        return reflection_list(
            character_id=character.pk,
            status=filters.validated_data.get("status"),
            archived=filters.validated_data.get("archived"),
            subject=filters.validated_data["subject"],
        )

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        at = as_of_param(request)
        if at is not None:  # read-only: the rows as they stood then, from their history
            return as_of_list(self, character_id=self.get_character().pk, layer="reflections", at=at)
        return super().list(request, *args, **kwargs)

    def _act(self, name: str, reflection_id: str) -> Response:
        character = self.get_character()
        try:
            reflection = _ACTIONS[name](character_id=character.pk, reflection_id=reflection_id)
        except Reflection.DoesNotExist:
            raise Http404("no such reflection") from None
        return Response(ReflectionSerializer(reflection).data)

    @extend_schema(request=ReflectionEditSerializer, responses=ReflectionSerializer)
    def partial_update(self, request: Request, name: str, reflection_id: str) -> Response:
        incoming = ReflectionEditSerializer(data=request.data)
        incoming.is_valid(raise_exception=True)
        try:
            reflection = reflection_edit(
                character_id=self.get_character().pk,
                reflection_id=reflection_id,
                text=incoming.validated_data["text"],
                with_subjects=True,
            )
        except Reflection.DoesNotExist:
            raise Http404("no such reflection") from None
        return Response(ReflectionSerializer(reflection).data)

    @extend_schema(responses=OpenApiTypes.OBJECT)
    def destroy(self, request: Request, name: str, reflection_id: str) -> Response:
        """Delete the reflection and every copy of its text; answers what was removed."""
        try:
            forgotten = reflection_delete(
                character_id=self.get_character().pk, reflection_id=reflection_id, with_subjects=True
            )
        except Reflection.DoesNotExist:
            raise Http404("no such reflection") from None
        return Response(forgotten.as_json())

    @extend_schema(request=None, responses=ReflectionSerializer)
    @action(detail=True, methods=["post"])
    def confirm(self, request: Request, name: str, reflection_id: str) -> Response:
        return self._act("confirm", reflection_id)

    @extend_schema(request=None, responses=ReflectionSerializer)
    @action(detail=True, methods=["post"])
    def deny(self, request: Request, name: str, reflection_id: str) -> Response:
        return self._act("deny", reflection_id)

    @extend_schema(request=None, responses=ReflectionSerializer)
    @action(detail=True, methods=["post"])
    def archive(self, request: Request, name: str, reflection_id: str) -> Response:
        return self._act("archive", reflection_id)

    @extend_schema(request=None, responses=ReflectionSerializer)
    @action(detail=True, methods=["post"])
    def restore(self, request: Request, name: str, reflection_id: str) -> Response:
        return self._act("restore", reflection_id)
