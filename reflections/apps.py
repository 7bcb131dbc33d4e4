from django.apps import AppConfig


class ReflectionsConfig(AppConfig):
    name = "reflections"
    verbose_name = "Reflections"

    def ready(self) -> None:
        from reflections import handlers, portability  # noqa: F401  portability registers its file handlers

        handlers.register()
