from django.apps import AppConfig


class FactsConfig(AppConfig):
    name = "facts"
    verbose_name = "Facts"

    def ready(self) -> None:
        from facts import handlers, portability  # noqa: F401  portability registers its file handlers

        handlers.register()
