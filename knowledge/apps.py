from django.apps import AppConfig


class KnowledgeConfig(AppConfig):
    name = "knowledge"
    verbose_name = "Public knowledge packs"

    def ready(self) -> None:
        from knowledge import handlers

        handlers.register()
