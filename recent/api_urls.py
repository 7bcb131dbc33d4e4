from django.urls import path

from recent.api import RawMessageViewSet, RecentMessageViewSet

urlpatterns = [
    path("characters/<str:name>/recent/", RecentMessageViewSet.as_view({"get": "list"}), name="api-recent"),
    path("characters/<str:name>/raw/", RawMessageViewSet.as_view({"get": "list"}), name="api-raw"),
]
