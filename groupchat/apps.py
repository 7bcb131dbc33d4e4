from django.apps import AppConfig


class GroupChatConfig(AppConfig):
    name = "groupchat"
    verbose_name = "Group chat"

    def ready(self) -> None:
        from groupchat.selectors import subjects_browse
        from nekomem.browser.subjects import register_subject_lister
        from nekomem.runtime.schedules import ScheduleSpec, register_schedule

        register_subject_lister(subjects_browse)
        register_schedule(
            ScheduleSpec(
                name="scoped-write-keys-prune",
                func="groupchat.tasks.scoped_write_keys_prune_task",
                minutes=24 * 60,
                description="forget group-chat idempotency keys older than a year",
            )
        )
