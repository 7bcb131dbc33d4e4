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
        from nekomem.runtime.warmups import register_warm_up

        # In the background: its ~2 s would hold a starting worker's first requests.
        register_warm_up("token-counter", token_counter_warm_up)
