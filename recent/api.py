from __future__ import annotations

from rest_framework import mixins, serializers, viewsets
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from nekomem.api import CharacterScopedMixin
from nekomem.runtime.api import SwitchConfigView
from nekomem.runtime.switches import RECENT_AUTO_REVIEW
from recent.models import RawMessage, RecentMessage
from recent.selectors import raw_log_forget_preview, recent_window_dicts, window_fingerprint
from recent.services import (
    MAX_MESSAGE_CHARS,
    MAX_WINDOW_CHARS,
    MAX_WINDOW_MESSAGES,
    RangeRefused,
    raw_log_forget,
    raw_log_range_check,
    recent_window_replace,
)


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


class ReviewConfigView(SwitchConfigView):
    """``recent_memory_auto_review``: whether the background history review may run (default on)."""

    switch_name = RECENT_AUTO_REVIEW


class WindowMessageSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=["human", "ai", "system"])
    text = serializers.CharField(allow_blank=True, max_length=MAX_MESSAGE_CHARS, trim_whitespace=False)


class WindowReplaceSerializer(serializers.Serializer):
    chat = serializers.ListField(child=WindowMessageSerializer(), max_length=MAX_WINDOW_MESSAGES)
    fingerprint = serializers.CharField(required=False, allow_blank=True)

    def validate_chat(self, value: list[dict]) -> list[dict]:
        if sum(len(m["text"]) for m in value) > MAX_WINDOW_CHARS:
            raise serializers.ValidationError(f"more than {MAX_WINDOW_CHARS} characters in all")
        return value


class RecentWindowView(CharacterScopedMixin, APIView):
    """The whole recent window for the memory browser: read it, or replace it after a manual edit.

    The fingerprint read with the window must be sent back; a window that changed meanwhile (a new
    turn, a compression) answers 409 instead of overwriting it.
    """

    serializer_class = WindowReplaceSerializer

    def get(self, request: Request, name: str) -> Response:
        character = self.get_character()
        messages = recent_window_dicts(character_id=character.pk)
        return Response({"messages": messages, "fingerprint": window_fingerprint(messages)})

    def put(self, request: Request, name: str) -> Response:
        character = self.get_character()
        incoming = WindowReplaceSerializer(data=request.data)
        incoming.is_valid(raise_exception=True)
        messages = recent_window_replace(
            character_id=character.pk,
            chat=[(m["role"], m["text"]) for m in incoming.validated_data["chat"]],
            expected_fingerprint=incoming.validated_data.get("fingerprint") or None,
        )
        return Response(
            {"messages": messages, "fingerprint": window_fingerprint(messages), "need_refresh": True}
        )


class RawForgetSerializer(serializers.Serializer):
    start = serializers.DateTimeField()
    end = serializers.DateTimeField()
    preview = serializers.BooleanField(default=False)


class RawForgetView(CharacterScopedMixin, APIView):
    """Forget a time range [start, end) of the raw log with every copy of its turns. ``preview``: what
    would go (the count and the first turns), nothing removed. Answers the counts of what was removed."""

    serializer_class = RawForgetSerializer

    def post(self, request: Request, name: str) -> Response:
        character = self.get_character()
        incoming = RawForgetSerializer(data=request.data)
        incoming.is_valid(raise_exception=True)
        try:
            start, end = raw_log_range_check(
                start=incoming.validated_data["start"], end=incoming.validated_data["end"]
            )
        except RangeRefused as exc:
            return Response({"error": str(exc)}, status=400)
        if incoming.validated_data["preview"]:
            count, turns = raw_log_forget_preview(character_id=character.pk, start=start, end=end)
            return Response(
                {
                    "count": count,
                    "turns": [
                        {"id": t.id, "timestamp": t.timestamp.isoformat(), "type": t.type, "text": t.text}
                        for t in turns
                    ],
                }
            )
        forgotten = raw_log_forget(character_id=character.pk, start=start, end=end)
        return Response(forgotten.as_json())
