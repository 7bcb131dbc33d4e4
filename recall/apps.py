from django.apps import AppConfig


class RecallConfig(AppConfig):
    name = "recall"
    verbose_name = "Recall and working context"

    def ready(self) -> None:
        from nekomem.runtime.schedules import ScheduleSpec, register_schedule

        register_schedule(
            ScheduleSpec(
                name="embedding-backfill",
                func="recall.tasks.embedding_backfill_tick",
                minutes=1,
                description="embed facts whose vectors are missing or stale; queue cosine > 0.85 pairs",
            )
        )
