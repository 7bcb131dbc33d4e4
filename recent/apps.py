from django.apps import AppConfig


class RecentConfig(AppConfig):
    name = "recent"
    verbose_name = "Recent memory"

    def ready(self) -> None:
        from recent import handlers  # noqa: F401  registers the post-turn outbox handler
