from django.apps import AppConfig


class InstallConfig(AppConfig):
    name = "install"
    label = "install"
    verbose_name = "N.E.K.O. install"

    def ready(self) -> None:
        from install import handlers

        handlers.register()
