from django.apps import AppConfig


class JournalConfig(AppConfig):
    name = "nekomem.journal"
    label = "journal"
    verbose_name = "Event log, outbox and jobs"

    def ready(self) -> None:
        from nekomem.journal import handlers, portability

        handlers.register()
        portability.register()
