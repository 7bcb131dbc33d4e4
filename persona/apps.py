from django.apps import AppConfig


class PersonaConfig(AppConfig):
    name = "persona"
    verbose_name = "Persona"

    def ready(self) -> None:
        from nekomem.browser.registry import register_layer_page
        from nekomem.runtime.caches import process_cache_register
        from persona import browser, handlers, portability  # noqa: F401  portability registers its file handlers
        from persona.services.mentions import mention_keywords_forget

        handlers.register()
        register_layer_page(browser.LAYER_PAGE)
        process_cache_register("persona_mention_keywords", mention_keywords_forget)
