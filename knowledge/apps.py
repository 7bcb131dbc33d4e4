from django.apps import AppConfig


class KnowledgeConfig(AppConfig):
    name = "knowledge"
    verbose_name = "Public knowledge packs"

    def ready(self) -> None:
        from knowledge import handlers
        from nekomem.browser.registry import SitePage, register_site_page

        handlers.register()
        register_site_page(
            SitePage(slug="knowledge", title="公共知识 Knowledge", url_name="browser-knowledge", order=10)
        )
