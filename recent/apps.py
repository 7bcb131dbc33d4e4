from django.apps import AppConfig


class RecentConfig(AppConfig):
    name = "recent"
    verbose_name = "Recent memory"

    def ready(self) -> None:
        from recent import (
            handlers,  # noqa: F401  registers the post-turn outbox handler
            portability,  # noqa: F401  registers its import/export file handlers
        )
        from recent.tasks import register_schedules

        register_schedules()  # idle maintenance and the job sweep
