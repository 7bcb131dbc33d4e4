"""Memory-server routes (wire-compatible with the original), the /api/v1 API, admin and schema."""

from django.contrib import admin
from django.urls import URLPattern, URLResolver, include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.routers import SimpleRouter

from nekomem.characters.api import CharacterViewSet
from nekomem.journal.api import JobViewSet
from nekomem.runtime.api import StatusView

router = SimpleRouter()
router.register("characters", CharacterViewSet, basename="character")
router.register("jobs", JobViewSet, basename="job")

api_v1: list[URLPattern | URLResolver] = [
    path("", include("recent.api_urls")),
    path("", include("facts.api_urls")),
    path("", include("reflections.api_urls")),
    path("", include("persona.api_urls")),
    path("", include("history.api_urls")),
    path("", include(router.urls)),
    path("status/", StatusView.as_view(), name="api-status"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
]

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include(api_v1)),
    path("", include("nekomem.runtime.urls")),
    path("", include("nekomem.characters.urls")),
    path("", include("recent.urls")),
    path("", include("recall.urls")),
    path("", include("groupchat.urls")),
    path("", include("imports.urls")),
    path("", include("reflections.urls")),
    path("", include("persona.urls")),
    path("", include("knowledge.urls")),
    path("", include("mcp_server.urls")),
    # The memory browser: the front door, then each layer's pages under /browse/<name>/<layer>/.
    path("", include("nekomem.browser.urls")),
    # Pages about no one character (knowledge is shared by all of them).
    path("knowledge/", include("knowledge.browser_urls")),
    path("browse/<str:name>/", include("recent.browser_urls")),
    path("browse/<str:name>/", include("facts.browser_urls")),
    path("browse/<str:name>/", include("reflections.browser_urls")),
    path("browse/<str:name>/", include("persona.browser_urls")),
    path("browse/<str:name>/", include("recall.browser_urls")),
    path("browse/<str:name>/", include("groupchat.browser_urls")),
    path("browse/<str:name>/", include("imports.browser_urls")),
    path("browse/<str:name>/", include("nekomem.journal.browser_urls")),
    path("browse/<str:name>/", include("history.browser_urls")),
]

# The chat server's routes answer errors in JSON, browser pages keep Django's HTML (nekomem/http.py).
handler400 = "nekomem.http.bad_request"
handler403 = "nekomem.http.permission_denied"
handler404 = "nekomem.http.page_not_found"
handler500 = "nekomem.http.server_error"
