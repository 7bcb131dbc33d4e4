from django.apps import AppConfig


class RecentConfig(AppConfig):
    name = "recent"
    verbose_name = "Recent memory"

    def ready(self) -> None:
        from recent import (
            handlers,
            portability,  # noqa: F401  registers its import/export file handlers
        )

        handlers.register()  # the post-turn step, the compression and review jobs, idle maintenance
