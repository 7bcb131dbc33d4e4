from __future__ import annotations

from typing import ClassVar

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from nekomem.runtime.status import status_snapshot
from nekomem.runtime.switches import POWERFUL_MEMORY, switch_enabled, switch_set


class StrictBooleanField(serializers.BooleanField):
    """Only JSON true/false: a switch must not flip on a typo such as "yes" or "0"."""

    def to_internal_value(self, data: object) -> bool:
        if not isinstance(data, bool):
            self.fail("invalid", input=data)
        return data


class SwitchSerializer(serializers.Serializer):
    enabled = StrictBooleanField()


class SwitchConfigView(APIView):
    """GET/POST ``{"enabled": bool}`` for one feature switch (the browser's settings panel)."""

    serializer_class = SwitchSerializer
    switch_name: ClassVar[str]

    def get(self, request: Request) -> Response:
        return Response({"enabled": switch_enabled(self.switch_name)})

    def post(self, request: Request) -> Response:
        incoming = SwitchSerializer(data=request.data)
        incoming.is_valid(raise_exception=True)
        switch_set(name=self.switch_name, enabled=incoming.validated_data["enabled"])
        return Response({"enabled": switch_enabled(self.switch_name)})


class PowerfulMemoryConfigView(SwitchConfigView):
    """``powerful_memory_enabled`` (default on), read hot by every background loop."""

    switch_name = POWERFUL_MEMORY


class TierStatusSerializer(serializers.Serializer):
    tier = serializers.CharField()
    configured = serializers.BooleanField(help_text="Whether the tier has a provider (base URL and model).")
    model = serializers.CharField(help_text="The model name; empty when not configured. Never the key.")
    provider_tier = serializers.CharField(help_text="The tier whose provider it uses: itself or summary.")


class WaitingReasonSerializer(serializers.Serializer):
    reason = serializers.CharField(help_text="Machine-readable: no_provider:<tier>, backoff …")
    description = serializers.CharField(help_text="The reason for people, zh then en.")
    count = serializers.IntegerField()
    kinds = serializers.ListField(child=serializers.CharField(), help_text="Job kinds or outbox op types.")


class WorkCountsSerializer(serializers.Serializer):
    pending = serializers.IntegerField(help_text="Due now, queued for a worker.")
    running = serializers.IntegerField()
    waiting = serializers.IntegerField()
    dead = serializers.IntegerField(help_text="Spent its attempts; stays until retried.")
    unfinished = serializers.IntegerField(help_text="pending + running + waiting")
    waiting_by_reason = WaitingReasonSerializer(many=True)


class EmbeddingsStatusSerializer(serializers.Serializer):
    state = serializers.ChoiceField(
        choices=["on", "off", "backfilling"], help_text="backfilling: on, with rows still without a vector"
    )
    model_id = serializers.CharField()
    model_state = serializers.CharField(help_text="This process's model: init, loading, ready or disabled.")
    reason = serializers.CharField(help_text="Why vectors are off, when they are.")
    with_vectors = serializers.IntegerField(allow_null=True)
    without_vectors = serializers.IntegerField(allow_null=True)
    counted_at = serializers.DateTimeField(
        allow_null=True,
        help_text="When with_vectors and without_vectors were counted: they count every row of the vector "
        "pools, so a worker reuses its last count for NEKOMEM_STATUS_VECTOR_COUNTS_TTL seconds (60).",
    )


class StorageStatusSerializer(serializers.Serializer):
    blocked = serializers.BooleanField()
    reason = serializers.CharField()


class CacheStatusSerializer(serializers.Serializer):
    name = serializers.CharField()
    entries = serializers.IntegerField(help_text="Items kept (for recall_indexes: characters).")
    rows = serializers.IntegerField(help_text="Rows they hold.")
    bytes = serializers.IntegerField(help_text="Bytes of their arrays.")


class ProcessStatusSerializer(serializers.Serializer):
    pid = serializers.IntegerField(help_text="The worker process that answered; each keeps its own caches.")
    caches = CacheStatusSerializer(many=True)


class InstallStatusSerializer(serializers.Serializer):
    folder = serializers.CharField(help_text="The N.E.K.O. install's folder (NEKOMEM_NEKO_ROOT).")
    characters_file = serializers.CharField()
    characters_ok = serializers.BooleanField(
        help_text="false: the file is missing or does not parse; the last good copy stays in use"
    )
    characters_error = serializers.CharField(help_text="Why the current file was not taken.")
    characters_read_at = serializers.DateTimeField(
        allow_null=True, help_text="When the copy in use was read."
    )
    characters = serializers.ListField(child=serializers.CharField(), help_text="猫娘 in the file.")
    current_character = serializers.CharField(allow_null=True)
    master_name = serializers.CharField()
    vanished = serializers.ListField(
        child=serializers.CharField(),
        help_text="Stored here but no longer in characters.json: kept with their memory until deleted.",
    )
    invalid_names = serializers.ListField(child=serializers.CharField())
    core_config_ok = serializers.BooleanField()
    core_config_error = serializers.CharField()
    migration = serializers.JSONField(
        allow_null=True, help_text="The memory folder's first-start migration: state, done, total, current."
    )
    last_pass_at = serializers.DateTimeField(allow_null=True, help_text="The folder writer's last pass.")
    refused = serializers.JSONField(help_text="Files from outside that failed validation: nothing taken in.")
    vanished_folders = serializers.ListField(
        child=serializers.CharField(), help_text="Characters whose memory folder vanished: kept."
    )


class StatusSerializer(serializers.Serializer):
    llm_tiers = TierStatusSerializer(many=True)
    llm_work_waits = serializers.BooleanField(help_text="Some tier has no provider: its work waits.")
    tiers_without_provider = serializers.ListField(child=serializers.CharField())
    jobs = WorkCountsSerializer(allow_null=True, help_text="null while the server is starting")
    outbox = WorkCountsSerializer(allow_null=True, help_text="null while the server is starting")
    embeddings = EmbeddingsStatusSerializer()
    storage = StorageStatusSerializer()
    process = ProcessStatusSerializer()
    install = InstallStatusSerializer(allow_null=True, help_text="null when standalone")


class StatusView(APIView):
    """What the server can do right now: LLM tiers, waiting and dead work, vectors, storage.

    Answers in restricted mode too, so a blocked storage is reported rather than hidden behind 409.
    """

    serializer_class = StatusSerializer

    @extend_schema(responses=StatusSerializer)
    def get(self, request: Request) -> Response:
        return Response(StatusSerializer(status_snapshot()).data)
