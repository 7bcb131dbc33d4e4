from django.urls import path

from persona.api import PersonaCorrectionViewSet, PersonaEntryViewSet, PowerfulMemorySwitchView

_BASE = "characters/<str:name>/persona/"

urlpatterns = [
    path("powerful_memory_config", PowerfulMemorySwitchView.as_view(), name="powerful-memory-config"),
    path(
        _BASE + "entries/",
        PersonaEntryViewSet.as_view({"get": "list", "post": "create"}),
        name="api-persona-entries",
    ),
    path(
        _BASE + "entries/<str:entry_id>/",
        PersonaEntryViewSet.as_view({"get": "retrieve", "patch": "partial_update", "delete": "destroy"}),
        name="api-persona-entry",
    ),
    path(
        _BASE + "entries/<str:entry_id>/restore/",
        PersonaEntryViewSet.as_view({"post": "restore"}),
        name="api-persona-entry-restore",
    ),
    path(
        _BASE + "corrections/",
        PersonaCorrectionViewSet.as_view({"get": "list"}),
        name="api-persona-corrections",
    ),
    path(
        _BASE + "corrections/<int:pk>/resolve/",
        PersonaCorrectionViewSet.as_view({"post": "resolve"}),
        name="api-persona-correction-resolve",
    ),
]
