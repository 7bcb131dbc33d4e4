"""Read-only REST view of the background jobs: what runs, what waits and why, what is dead."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import serializers, viewsets

from nekomem.journal.models import Job, WorkStatus
from nekomem.journal.selectors import job_list


class JobSerializer(serializers.ModelSerializer):
    character = serializers.CharField(source="character.name", read_only=True)

    class Meta:
        model = Job
        fields = [
            "id",
            "kind",
            "character",
            "key",
            "status",
            "attempts",
            "waiting_reason",
            "next_attempt_at",
            "outcome",
            "last_error",
            "payload",
            "lease_until",
            "probed_at",
            "created_at",
            "updated_at",
            "finished_at",
        ]
        read_only_fields = fields


class JobFilterSerializer(serializers.Serializer):
    character = serializers.CharField(required=False)
    kind = serializers.CharField(required=False)
    status = serializers.ChoiceField(choices=WorkStatus.choices, required=False)


@extend_schema_view(
    list=extend_schema(
        parameters=[
            OpenApiParameter("character", OpenApiTypes.STR, description="character name"),
            OpenApiParameter("kind", OpenApiTypes.STR, description="e.g. recent.compress"),
            OpenApiParameter("status", OpenApiTypes.STR, enum=WorkStatus.values),
        ]
    )
)
class JobViewSet(viewsets.ReadOnlyModelViewSet):
    """Every layer's background jobs, newest first."""

    serializer_class = JobSerializer

    def get_queryset(self):
        if self.action != "list":
            return job_list()
        filters = JobFilterSerializer(data=self.request.query_params)
        filters.is_valid(raise_exception=True)
        data = filters.validated_data
        return job_list(
            character_name=data.get("character"), kind=data.get("kind"), status=data.get("status")
        )
