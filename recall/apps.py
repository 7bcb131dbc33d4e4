from django.apps import AppConfig


class RecallConfig(AppConfig):
    name = "recall"
    verbose_name = "Recall and working context"

    def ready(self) -> None:
        from nekomem.runtime.caches import process_cache_register
        from nekomem.runtime.schedules import ScheduleSpec, register_schedule
        from recall import index_cache

        process_cache_register("recall_indexes", index_cache.clear, usage=index_cache.usage)

        from nekomem.characters.services import register_character_forget

        register_character_forget("recall_indexes", index_cache.character_forget)

        from nekomem.characters.services import register_memory_forgotten

        register_memory_forgotten("recall", index_cache.recall_forget_apply)

        from nekomem.journal.registry import register_raw_turns_hook
        from recall.turn_vectors import turns_arrived

        register_raw_turns_hook("recall-turn-vectors", turns_arrived)

        from nekomem.runtime.warmups import model_load_wait, register_warm_up
        from recall.engine.kernels import kernels_compile
        from recall.index_cache import recall_indexes_load_saved, recall_indexes_warm_up
        from recall.locale import warm_holiday_calendar

        register_warm_up("recall-saved-indexes", recall_indexes_load_saved, before_serving=True)
        register_warm_up("bm25-kernels", kernels_compile, before_serving=True)
        # Last before serving, so the model's load overlaps every other warm-up before it: a query
        # then never waits for the model inside its request (``RECALL_MODEL_WAIT_SECONDS`` is a bound
        # for the rare worker whose load outlasts this wait).
        register_warm_up("embedding-model-ready", model_load_wait, before_serving=True, last=True)
        register_warm_up("recall-indexes", recall_indexes_warm_up)
        # The lunar calendar's tables load on first use (~80 ms): not on the first /new_dialog.
        register_warm_up("holiday-calendar", warm_holiday_calendar)

        from nekomem.portability import register_import_hook
        from recall.index_cache import recall_indexes_prepare

        register_import_hook(recall_indexes_prepare)

        from nekomem.browser.registry import LayerPage, register_layer_page
        from nekomem.runtime.status import register_vector_counter
        from persona.selectors import persona_vector_coverage
        from recall.backfill import fact_vector_coverage, raw_turn_vector_coverage
        from reflections.selectors import reflection_vector_coverage

        register_vector_counter("persona entries", persona_vector_coverage)
        register_vector_counter("reflections", reflection_vector_coverage)
        register_vector_counter("facts", fact_vector_coverage)
        register_vector_counter("raw turns", raw_turn_vector_coverage)
        register_layer_page(
            LayerPage(slug="recall", title="回忆 Recall", url_name="browser-recall", order=50)
        )

        register_schedule(
            ScheduleSpec(
                name="recall-retention",
                func="recall.tasks.recall_retention_tick",
                minutes=24 * 60,
                description="clear the vectors of archived facts; delete saved indexes of removed "
                "characters, and a character's superseded ones after a day",
            )
        )
        register_schedule(
            ScheduleSpec(
                name="embedding-backfill",
                func="recall.tasks.embedding_backfill_tick",
                minutes=1,
                description=(
                    "embed missing or stale vectors (facts, then uncovered raw turns);"
                    " then queue cosine > 0.85 fact pairs"
                ),
            )
        )
