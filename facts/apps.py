from django.apps import AppConfig


class FactsConfig(AppConfig):
    name = "facts"
    verbose_name = "Facts"

    def ready(self) -> None:
        from facts import handlers, portability  # noqa: F401  portability registers its file handlers
        from facts.selectors import fact_count
        from nekomem.browser.registry import LayerPage, register_layer_page

        handlers.register()
        register_layer_page(
            LayerPage(
                slug="facts",
                title="事实 Facts",
                url_name="browser-facts",
                order=20,
                count=lambda character_id: fact_count(character_id=character_id),
            )
        )
