from django.urls import path

from imports import views

urlpatterns = [
    path(
        "internal/memory/import_external_markdown",
        views.import_external_markdown,
        name="import_external_markdown",
    ),
]
