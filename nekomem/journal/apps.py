from django.apps import AppConfig


class JournalConfig(AppConfig):
    name = "nekomem.journal"
    label = "journal"
    verbose_name = "Event log and outbox"
