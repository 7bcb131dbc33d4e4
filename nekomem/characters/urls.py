from django.urls import path

from nekomem.characters import views

urlpatterns = [
    path("prompt-locale/<path:name>", views.prompt_locale, name="prompt_locale"),
]
