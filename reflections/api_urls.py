from django.urls import path

from reflections.api import ReflectionViewSet

_BASE = "characters/<str:name>/reflections/"

urlpatterns = [
    path(_BASE, ReflectionViewSet.as_view({"get": "list"}), name="api-reflections"),
    path(
        _BASE + "<str:reflection_id>/",
        ReflectionViewSet.as_view({"get": "retrieve", "patch": "partial_update", "delete": "destroy"}),
        name="api-reflection",
    ),
    *(
        path(
            _BASE + f"<str:reflection_id>/{verb}/",
            ReflectionViewSet.as_view({"post": verb}),
            name=f"api-reflection-{verb}",
        )
        for verb in ("confirm", "deny", "archive", "restore")
    ),
]
