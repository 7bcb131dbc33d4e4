from django.urls import path

from persona import views
from persona.api import PowerfulMemorySwitchView

urlpatterns = [
    path("get_settings/<str:name>", views.get_settings, name="get_settings"),
    path("get_persona/<str:name>", views.get_persona, name="get_persona"),
    path("internal/memory/reset_confirmed_at", views.reset_confirmed_at, name="reset_confirmed_at"),
    path(
        "api/memory/powerful_memory_config",
        PowerfulMemorySwitchView.as_view(),
        name="memory-powerful-memory-config",
    ),
]
