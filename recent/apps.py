from django.apps import AppConfig


class RecentConfig(AppConfig):
    name = "recent"
    verbose_name = "Recent memory"

    def ready(self) -> None:
        from nekomem.browser.registry import LayerPage, register_layer_page
        from recent import (
            handlers,
            portability,  # noqa: F401  registers its import/export file handlers
        )
        from recent.selectors import recent_window_count

        handlers.register()  # the post-turn step, the compression and review jobs, idle maintenance
        register_layer_page(
            LayerPage(
                slug="recent",
                title="近期 Recent",
                url_name="browser-recent",
                order=10,
                count=lambda character_id: recent_window_count(character_id=character_id),
            )
        )
