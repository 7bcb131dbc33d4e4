from django.apps import AppConfig


class RuntimeConfig(AppConfig):
    name = "nekomem.runtime"
    label = "runtime"
    verbose_name = "Runtime state"
