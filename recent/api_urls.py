from django.urls import path

from recent.api import (
    RawForgetView,
    RawMessageViewSet,
    RecentMessageViewSet,
    RecentWindowView,
    ReviewConfigView,
)

urlpatterns = [
    path("characters/<str:name>/recent/", RecentMessageViewSet.as_view({"get": "list"}), name="api-recent"),
    path("characters/<str:name>/raw/", RawMessageViewSet.as_view({"get": "list"}), name="api-raw"),
    path("characters/<str:name>/raw/forget/", RawForgetView.as_view(), name="api-raw-forget"),
    path("characters/<str:name>/recent/window/", RecentWindowView.as_view(), name="api-recent-window"),
    path("review_config", ReviewConfigView.as_view(), name="api-review-config"),
]
