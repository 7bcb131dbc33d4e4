from django.apps import AppConfig


class PersonaConfig(AppConfig):
    name = "persona"
    verbose_name = "Persona"

    def ready(self) -> None:
        from persona import handlers, portability  # noqa: F401  portability registers its file handlers

        handlers.register()
