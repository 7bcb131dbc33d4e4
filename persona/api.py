"""REST for one character's persona: entries (add, edit with version history, delete) and the
corrections queue (list, resolve by hand); the powerful-memory switch that goes through the reset."""

from __future__ import annotations

from typing import Any

from django.http import Http404
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from nekomem.api import SUBJECT_PARAMETER, CharacterScopedMixin, SubjectFilterField
from nekomem.errors import Conflict
from nekomem.journal.as_of import AS_OF_PARAMETER, as_of_list, as_of_param
from nekomem.runtime.api import PowerfulMemoryConfigView, SwitchSerializer
from nekomem.subjects import SUBJECTS_ALL
from persona.models import PersonaCorrection, PersonaEntry
from persona.selectors import (
    persona_corrections_dropped,
    persona_corrections_list,
    persona_entries_archived,
    persona_entries_live,
)
from persona.services import (
    AddOutcome,
    persona_correction_resolve,
    persona_entry_create,
    persona_entry_delete,
    persona_entry_edit,
    persona_entry_restore,
    powerful_memory_set,
)
from persona.services.records import score_of


class PersonaEntrySerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="entry_id", read_only=True)
    entity = serializers.CharField(source="section", read_only=True)
    evidence_score = serializers.SerializerMethodField()

    class Meta:
        model = PersonaEntry
        fields = [
            "id",
            "entity",
            "text",
            "source",
            "source_id",
            "subject_key",
            "protected",
            "evidence_score",
            "reinforcement",
            "disputation",
            "rein_last_signal_at",
            "disp_last_signal_at",
            "sub_zero_days",
            "user_fact_reinforce_count",
            "recent_mentions",
            "suppress",
            "suppressed_at",
            "merged_from_ids",
            "version_history",
            "created_at",
            "archived_at",
            "archive_shard_path",
        ]
        read_only_fields = fields

    def get_evidence_score(self, entry: PersonaEntry) -> float | None:
        score = score_of(entry, now=timezone.now())
        return None if score == float("inf") else round(score, 6)  # JSON has no infinity


class EntryCreateSerializer(serializers.Serializer):
    entity = serializers.RegexField(r"^[A-Za-z0-9_@:.\-]{1,200}$")
    text = serializers.CharField(max_length=4000)


class EntryEditSerializer(serializers.Serializer):
    text = serializers.CharField(max_length=4000)


class EntryFilterSerializer(serializers.Serializer):
    archived = serializers.BooleanField(required=False, default=False)
    subject = SubjectFilterField()


@extend_schema_view(
    list=extend_schema(
        parameters=[
            OpenApiParameter(
                "archived",
                OpenApiTypes.BOOL,
                description="entries the archive sweep moved into a shard instead",
            ),
            SUBJECT_PARAMETER,
            AS_OF_PARAMETER,
        ]
    )
)
class PersonaEntryViewSet(CharacterScopedMixin, mixins.ListModelMixin, viewsets.GenericViewSet):
    """A character's persona entries with their evidence (``?archived=true``: the archived ones, which
    ``restore`` brings back); card entries are read-only here. The list shows the master's entries
    unless ``subject`` says otherwise; retrieve, edit and delete find an entry of a group-chat
    subject's section by its id too, as the memory browser does."""

    serializer_class = PersonaEntrySerializer
    lookup_field = "entry_id"

    def get_queryset(self) -> Any:
        filters = EntryFilterSerializer(data=self.request.query_params)
        filters.is_valid(raise_exception=True)
        character_id = self.get_character().pk
        # Retrieve finds any row by its id; only the list is filtered by subject.
        subject = filters.validated_data["subject"] if self.action == "list" else SUBJECTS_ALL
        if filters.validated_data["archived"]:
            return persona_entries_archived(character_id=character_id, subject=subject)
        return persona_entries_live(character_id=character_id, subject=subject)

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        at = as_of_param(request)
        if at is not None:  # read-only: the rows as they stood then, from their history
            return as_of_list(self, character_id=self.get_character().pk, layer="persona", at=at)
        return super().list(request, *args, **kwargs)

    def retrieve(self, request: Request, name: str, entry_id: str) -> Response:
        return Response(PersonaEntrySerializer(self.get_object()).data)

    @extend_schema(request=EntryCreateSerializer, responses=PersonaEntrySerializer)
    def create(self, request: Request, name: str) -> Response:
        incoming = EntryCreateSerializer(data=request.data)
        incoming.is_valid(raise_exception=True)
        result = persona_entry_create(character_id=self.get_character().pk, **incoming.validated_data)
        if result.outcome is not AddOutcome.ADDED:
            # The contradiction test said no: a card conflict, or a correction now waits in the queue.
            raise Conflict(f"not added: {result.outcome.value}")
        return Response(PersonaEntrySerializer(result.entry).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=EntryEditSerializer, responses=PersonaEntrySerializer)
    def partial_update(self, request: Request, name: str, entry_id: str) -> Response:
        incoming = EntryEditSerializer(data=request.data)
        incoming.is_valid(raise_exception=True)
        try:
            entry = persona_entry_edit(
                character_id=self.get_character().pk,
                entry_id=entry_id,
                text=incoming.validated_data["text"],
                with_subjects=True,
            )
        except PersonaEntry.DoesNotExist:
            raise Http404("no such entry") from None
        return Response(PersonaEntrySerializer(entry).data)

    def destroy(self, request: Request, name: str, entry_id: str) -> Response:
        try:
            forgotten = persona_entry_delete(
                character_id=self.get_character().pk, entry_id=entry_id, with_subjects=True
            )
        except PersonaEntry.DoesNotExist:
            raise Http404("no such entry") from None
        return Response(forgotten.as_json())

    @extend_schema(request=None, responses=PersonaEntrySerializer)
    @action(detail=True, methods=["post"])
    def restore(self, request: Request, name: str, entry_id: str) -> Response:
        """Bring an archived entry back (409 when it is not archived)."""
        try:
            entry = persona_entry_restore(character_id=self.get_character().pk, entry_id=entry_id)
        except PersonaEntry.DoesNotExist:
            raise Http404("no such entry") from None
        return Response(PersonaEntrySerializer(entry).data)


class PersonaCorrectionSerializer(serializers.ModelSerializer):
    status = serializers.SerializerMethodField()

    class Meta:
        model = PersonaCorrection
        fields = [
            "id",
            "old_text",
            "new_text",
            "entity",
            "created_at",
            "resolve_attempts",
            "status",
            "dropped_at",
            "extra",
        ]
        read_only_fields = fields

    def get_status(self, correction: PersonaCorrection) -> str:
        return "queued" if correction.dropped_at is None else "dropped"


CORRECTION_STATUSES = ("queued", "dropped", "all")


class CorrectionFilterSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=CORRECTION_STATUSES, required=False, default="queued")


class ResolveSerializer(serializers.Serializer):
    action = serializers.ChoiceField(choices=["merge", "keep_new", "keep_old", "keep_both"])
    text = serializers.CharField(max_length=4000, required=False, allow_blank=True, default="")


@extend_schema_view(
    list=extend_schema(
        parameters=[
            OpenApiParameter(
                "status",
                OpenApiTypes.STR,
                enum=CORRECTION_STATUSES,
                description="queued (default); dropped: given up after 5 failed resolutions; all",
            ),
            AS_OF_PARAMETER,
        ]
    )
)
class PersonaCorrectionViewSet(CharacterScopedMixin, mixins.ListModelMixin, viewsets.GenericViewSet):
    """The contradiction queue, and the pairs the resolver dropped; either can be resolved by hand.
    ``?as_of=`` answers the pairs (queued or dropped) as they stood then, from their history."""

    serializer_class = PersonaCorrectionSerializer

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        at = as_of_param(request)
        if at is not None:
            return as_of_list(self, character_id=self.get_character().pk, layer="corrections", at=at)
        return super().list(request, *args, **kwargs)

    def get_queryset(self) -> Any:
        filters = CorrectionFilterSerializer(data=self.request.query_params)
        filters.is_valid(raise_exception=True)
        character_id = self.get_character().pk
        wanted = filters.validated_data["status"]
        if wanted == "dropped":
            return persona_corrections_dropped(character_id=character_id)
        return persona_corrections_list(character_id=character_id, dropped_too=wanted == "all")

    @extend_schema(request=ResolveSerializer, responses={204: None})
    @action(detail=True, methods=["post"])
    def resolve(self, request: Request, name: str, pk: int) -> Response:
        incoming = ResolveSerializer(data=request.data)
        incoming.is_valid(raise_exception=True)
        persona_correction_resolve(
            character_id=self.get_character().pk, correction_pk=int(pk), **incoming.validated_data
        )
        return Response(status=status.HTTP_204_NO_CONTENT)


class PowerfulMemorySwitchView(PowerfulMemoryConfigView):
    """The switch turns OFF only after every character's confirmed reflections were re-stamped."""

    def post(self, request: Request) -> Response:
        incoming = SwitchSerializer(data=request.data)
        incoming.is_valid(raise_exception=True)
        return Response({"enabled": powerful_memory_set(enabled=incoming.validated_data["enabled"])})
