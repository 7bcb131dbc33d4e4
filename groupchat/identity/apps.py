from django.apps import AppConfig


class IdentityConfig(AppConfig):
    name = "groupchat.identity"
    label = "identity"
    verbose_name = "Speaker identity and trust"

    def ready(self) -> None:
        from groupchat.identity import portability

        portability.register()
