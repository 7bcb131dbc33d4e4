from django.apps import AppConfig


class PersonaConfig(AppConfig):
    name = "persona"
    verbose_name = "Persona"

    def ready(self) -> None:
        from nekomem.runtime.caches import process_cache_register
        from persona import handlers, portability  # noqa: F401  portability registers its file handlers
        from persona.services.mentions import mention_keywords_forget

        handlers.register()
        process_cache_register("persona_mention_keywords", mention_keywords_forget)
