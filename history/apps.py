from django.apps import AppConfig


class HistoryConfig(AppConfig):
    name = "history"
    verbose_name = "History and undo"

    def ready(self) -> None:
        from history import portability
        from history.selectors import layer_as_of
        from nekomem.browser.registry import LayerPage, register_layer_page
        from nekomem.journal.as_of import register_as_of_reader

        portability.register()  # history.ndjson, through the kernel's portability registry
        register_as_of_reader(
            lambda character_id, layer, at: layer_as_of(character_id=character_id, layer=layer, at=at)
        )
        register_layer_page(
            LayerPage(slug="history", title="历史 History", url_name="browser-history", order=65)
        )
