from __future__ import annotations

from rest_framework import mixins, serializers, viewsets

from nekomem.api import CharacterScopedMixin
from recent.models import RawMessage, RecentMessage


class RecentMessageSerializer(serializers.ModelSerializer):
    class Meta:
        model = RecentMessage
        fields = ["position", "type", "data", "created_at"]


class RawMessageSerializer(serializers.ModelSerializer):
    class Meta:
        model = RawMessage
        fields = ["id", "session_id", "message", "timestamp"]


class RecentMessageViewSet(CharacterScopedMixin, mixins.ListModelMixin, viewsets.GenericViewSet):
    """The character's recent window, memo first."""

    serializer_class = RecentMessageSerializer
    pagination_class = None

    def get_queryset(self):
        return RecentMessage.objects.filter(character=self.get_character()).order_by("position")


class RawMessageViewSet(CharacterScopedMixin, mixins.ListModelMixin, viewsets.GenericViewSet):
    """The raw time-indexed log, oldest first."""

    serializer_class = RawMessageSerializer

    def get_queryset(self):
        return RawMessage.objects.filter(character=self.get_character()).order_by("timestamp", "id")
