from django.urls import path

from facts.api import FactViewSet

urlpatterns = [
    path("characters/<str:name>/facts/", FactViewSet.as_view({"get": "list"}), name="api-facts"),
    path(
        "characters/<str:name>/facts/<str:fact_id>/",
        FactViewSet.as_view({"get": "retrieve", "patch": "partial_update", "delete": "destroy"}),
        name="api-fact",
    ),
]
