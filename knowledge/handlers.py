"""What the knowledge app registers with the kernel at start: its schedule, its import route's body
limit (a pack may be 10 MiB, more than any other route takes) and, in a server process, the writer
of its lookups' diagnostics rows."""

from __future__ import annotations

from django.http import HttpResponse, JsonResponse

from knowledge.packs import MAX_PACK_BODY_BYTES
from knowledge.query_log import knowledge_query_log_start
from nekomem.runtime.middleware import RouteBody, register_route_body
from nekomem.runtime.schedules import ScheduleSpec, register_schedule
from nekomem.runtime.warmups import register_warm_up

PREFIX = "/internal/knowledge/"
IMPORT_PATH = PREFIX + "packs/import"


def pack_too_large() -> HttpResponse:
    return JsonResponse({"ok": False, "reason": "pack_too_large"}, status=413)


def register() -> None:
    from knowledge.install import handlers as folder_handlers

    folder_handlers.register()
    register_schedule(
        ScheduleSpec(
            name="knowledge-tick",
            func="knowledge.tasks.knowledge_tick",
            minutes=1,
            description="Public knowledge: lost imports re-enqueued, one round of the vector fill.",
        )
    )
    # The knowledge routes check their bodies themselves: JSON routes answer a wrong media type
    # 400 invalid_request, and the import takes multipart uploads too.
    register_route_body(RouteBody(prefix=PREFIX, media_checked_by_route=True))
    register_route_body(
        RouteBody(
            prefix=IMPORT_PATH,
            media_checked_by_route=True,
            limit=MAX_PACK_BODY_BYTES,
            too_large=pack_too_large,
        )
    )
    # Only a server runs its warm-ups: elsewhere (a command, a test in one transaction) the rows are
    # written by the diagnostics reader, on its own connection.
    register_warm_up("knowledge-query-log", knowledge_query_log_start, before_serving=True)
