from django.apps import AppConfig


class CharactersConfig(AppConfig):
    name = "nekomem.characters"
    label = "characters"
    verbose_name = "Characters"

    def ready(self) -> None:
        from nekomem.characters import portability

        portability.register()
