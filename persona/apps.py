from django.apps import AppConfig


class PersonaConfig(AppConfig):
    name = "persona"
    verbose_name = "Persona"

    def ready(self) -> None:
        from nekomem.browser.registry import register_layer_page
        from persona import browser, handlers, portability  # noqa: F401  portability registers its file handlers

        handlers.register()
        register_layer_page(browser.LAYER_PAGE)
