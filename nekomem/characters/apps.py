from django.apps import AppConfig


class CharactersConfig(AppConfig):
    name = "nekomem.characters"
    label = "characters"
    verbose_name = "Characters"

    def ready(self) -> None:
        from nekomem.characters import portability
        from nekomem.runtime.schedules import ScheduleSpec, register_schedule

        portability.register()
        register_schedule(
            ScheduleSpec(
                name="memory-changes-prune",
                func="nekomem.characters.tasks.memory_changes_prune_task",
                minutes=60,
                description="keep each character's memory-change log to its last 10,000 versions and "
                "200,000 rows (recall readers further behind rebuild)",
            )
        )
