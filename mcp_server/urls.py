from django.urls import path

from mcp_server import views

urlpatterns = [
    path("mcp/<path:name>", views.mcp_endpoint, name="mcp"),
]
