from django.apps import AppConfig


class JournalConfig(AppConfig):
    name = "nekomem.journal"
    label = "journal"
    verbose_name = "Event log, outbox and jobs"

    def ready(self) -> None:
        from nekomem.browser.registry import LayerPage, register_layer_page
        from nekomem.journal import handlers, portability
        from nekomem.journal.selectors import job_unfinished_count

        handlers.register()
        handlers.runtime_hooks_register()
        portability.register()
        register_layer_page(
            LayerPage(
                slug="jobs",
                title="任务 Jobs",
                url_name="browser-jobs",
                order=60,
                count=lambda character_id: job_unfinished_count(character_id=character_id),
            )
        )
