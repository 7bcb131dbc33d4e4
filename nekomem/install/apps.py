from django.apps import AppConfig


class InstallConfig(AppConfig):
    name = "nekomem.install"
    label = "install"
    verbose_name = "N.E.K.O. install"
