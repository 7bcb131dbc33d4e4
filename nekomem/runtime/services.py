from __future__ import annotations

from django.db import transaction
from django_q.models import Schedule

from nekomem.runtime.schedules import registered_schedules
from nekomem.runtime.tasks import SCHEDULED_TICK


@transaction.atomic
def schedules_upsert() -> list[str]:
    """Create or update every declared schedule by name; remove ours that are no longer declared.

    Each runs through ``scheduled_tick``, which holds the tick back while storage is blocked."""
    names = []
    for spec in registered_schedules():
        name = f"nekomem:{spec.name}"
        Schedule.objects.update_or_create(
            name=name,
            defaults={
                "func": SCHEDULED_TICK,
                "args": repr(spec.func),
                "schedule_type": Schedule.MINUTES,
                "minutes": spec.minutes,
                "repeats": -1,
            },
        )
        names.append(name)
    Schedule.objects.filter(name__startswith="nekomem:").exclude(name__in=names).delete()
    return names
