from django.apps import AppConfig


class InstallConfig(AppConfig):
    name = "nekomem.install"
    label = "install"
    verbose_name = "N.E.K.O. install"

    def ready(self) -> None:
        from nekomem.install.folder import install_folder_reread_answer
        from nekomem.runtime.startup import register_reread_hook

        register_reread_hook("install_folder", install_folder_reread_answer)
