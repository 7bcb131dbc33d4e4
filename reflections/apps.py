from django.apps import AppConfig


class ReflectionsConfig(AppConfig):
    name = "reflections"
    verbose_name = "Reflections"

    def ready(self) -> None:
        from nekomem.browser.registry import register_layer_page
        from reflections import browser, handlers, portability  # noqa: F401  portability registers its file handlers

        handlers.register()
        register_layer_page(browser.LAYER_PAGE)
