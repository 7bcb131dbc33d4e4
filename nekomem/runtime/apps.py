from django.apps import AppConfig


class RuntimeConfig(AppConfig):
    name = "nekomem.runtime"
    label = "runtime"
    verbose_name = "Runtime state"

    def ready(self) -> None:
        from nekomem.characters.services import character_id_forget
        from nekomem.llm import reset_compat_cache
        from nekomem.runtime.caches import process_cache_register
        from nekomem.runtime.switches import switches_forget

        process_cache_register("character_ids", character_id_forget)
        process_cache_register("feature_switches", switches_forget)
        process_cache_register("llm_provider_downgrades", reset_compat_cache)

        from nekomem.language.counting import token_counter_warm_up
        from nekomem.runtime.warmups import register_warm_up, start_model_load, urlconf_warm_up

        # Before serving, in this order: the model starts loading on a thread of its own (the first
        # turns after a start are embedded, and the first queries ranked with vectors, seconds sooner
        # than when it waited for the background warm-ups), then the URLconf is imported (~0.8 s,
        # up to 4 s on a busy machine, that the first /cache or query paid inside its own request).
        register_warm_up("embedding-model", start_model_load, before_serving=True)
        register_warm_up("urlconf", urlconf_warm_up, before_serving=True)

        # In the background: its ~2 s would hold a starting worker's first requests.
        register_warm_up("token-counter", token_counter_warm_up)
