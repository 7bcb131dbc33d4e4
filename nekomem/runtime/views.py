"""Process lifecycle routes (reference §1.5)."""

from __future__ import annotations

import hashlib
import hmac
import os
import signal

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from nekomem.characters.names import InvalidCharacterName
from nekomem.characters.services import character_release
from nekomem.http import BadRequestBody, json_error, json_ok, read_json_object
from nekomem.runtime.launcher import reported_instance_id
from nekomem.runtime.middleware import blocked_response
from nekomem.runtime.startup import rereads_run, storage_release
from nekomem.runtime.state import INSTANCE_ID, current_block, storage_block, storage_reload


@require_GET
def health(request: HttpRequest) -> HttpResponse:
    block = current_block()
    instance_id = reported_instance_id(INSTANCE_ID)
    signature = hmac.new(settings.SECRET_KEY.encode(), f"memory:{instance_id}".encode(), hashlib.sha256)
    return json_ok(
        {
            "app": "N.E.K.O",
            "status": "ok",
            "service": "memory",
            "instance_id": instance_id,
            "limited_mode": block is not None,
            "signature": signature.hexdigest(),
        }
    )


@csrf_exempt
@require_POST
def shutdown(request: HttpRequest) -> HttpResponse:
    if not settings.NEKOMEM_ALLOW_SHUTDOWN:
        return json_ok({"ok": False, "status": "shutdown_disabled"}, status=403)
    # The HTTP server's main process is our parent: a TERM there stops every worker gracefully.
    os.kill(os.getppid(), signal.SIGTERM)
    return json_ok({"ok": True, "status": "shutting_down"})


@csrf_exempt
@require_POST
def storage_startup_block(request: HttpRequest) -> HttpResponse:
    try:
        body = read_json_object(request)
    except BadRequestBody as exc:
        return json_error(str(exc), status=422, error_code="invalid_request")
    reason = str(body.get("reason") or "storage_startup_blocked_after_init")
    storage_block(reason=reason)
    return json_ok({"ok": True, "limited_mode": True, "blocking_reason": reason})


@csrf_exempt
@require_POST
def storage_startup_continue(request: HttpRequest) -> HttpResponse:
    # The reread hooks take in what changed outside while storage is still blocked (install mode: a
    # restored or moved memory folder is what is served afterwards); then ``storage_release`` runs the
    # continue hooks, lifts the block and lets the writers go.
    reread = rereads_run()
    block = storage_release()
    if block is not None:
        return blocked_response(block)
    answer: dict[str, object] = {"ok": True, "limited_mode": False}
    answer.update(reread)
    return json_ok(answer)


@csrf_exempt
@require_POST
def reload(request: HttpRequest) -> HttpResponse:
    """Every worker drops its caches and re-reads its configuration before its next request.

    The original rebuilds its managers; here the database is the state, so what a process holds is
    caches. ``resume_derived_task_names`` in the body is accepted and has nothing to resume.
    """
    try:
        read_json_object(request)
    except BadRequestBody as exc:
        return json_error(str(exc), status=422, error_code="invalid_request")
    generation = storage_reload()
    rereads_run()  # install mode: an edit from outside is taken in at once
    return json_ok({"ok": True, "status": "reloaded", "generation": generation})


@csrf_exempt
@require_POST
def release_character(request: HttpRequest, name: str) -> HttpResponse:
    """Before a rename or delete (reference §1.5): cancel the character's derived background work.

    There is no per-character database engine to dispose of here; ``hold_derived_task_admission`` is
    accepted and has nothing to hold, since jobs belong to the character's id, not its name.
    """
    try:
        released = character_release(name=name)
        rereads_run(names=[name])  # install mode: its edited files are taken in at once
    except InvalidCharacterName as exc:
        return json_ok({"status": "error", "character_name": name, "message": str(exc)}, status=400)
    return json_ok(
        {"status": "success", "character_name": name, "cancelled_derived_tasks": released.cancelled_jobs}
    )
