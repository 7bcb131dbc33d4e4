from __future__ import annotations

from typing import ClassVar

from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

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
