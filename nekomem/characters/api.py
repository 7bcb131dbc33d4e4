from __future__ import annotations

from rest_framework import mixins, serializers, viewsets

from nekomem.characters.models import Character
from nekomem.characters.names import validate_character_name


class CharacterSerializer(serializers.ModelSerializer):
    class Meta:
        model = Character
        fields = [
            "name",
            "master_name",
            "master_nicknames",
            "card",
            "language",
            "created_at",
            "last_activity_at",
        ]
        read_only_fields = ["created_at", "last_activity_at", "language"]

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


class CharacterViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.UpdateModelMixin,
    viewsets.GenericViewSet,
):
    """Characters and their card fields (the persona layer turns card fields into protected entries)."""

    serializer_class = CharacterSerializer
    lookup_field = "name"
    lookup_value_regex = "[^/]+"
    queryset = Character.objects.order_by("name")
