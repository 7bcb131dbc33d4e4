from django.apps import AppConfig


class IdentityConfig(AppConfig):
    name = "nekomem.identity"
    label = "identity"
    verbose_name = "Speaker identity and trust"

    def ready(self) -> None:
        from nekomem.identity import portability

        portability.register()
