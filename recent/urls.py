from django.urls import path

from recent import browser, views

# Names are matched as paths so an encoded slash (``..%2Fetc``) reaches the name check and gets its
# JSON 400 instead of falling through to a 404.

urlpatterns = [
    path("memory_browser", browser.memory_browser, name="memory_browser"),
    path("cache/<path:name>", views.cache, name="cache"),
    path("process/<path:name>", views.process, name="process"),
    path("renew/<path:name>", views.renew, name="renew"),
    path("settle/<path:name>", views.settle, name="settle"),
    path("cancel_correction/<path:name>", views.cancel_correction, name="cancel_correction"),
    path("get_recent_history/<path:name>", views.get_recent_history, name="get_recent_history"),
    path("internal/memory/<str:name>/theater/stories", views.theater_stories_view, name="theater_stories"),
    path("internal/memory/<str:name>/theater/forget", views.theater_forget, name="theater_forget"),
    path("internal/memory/<str:name>/theater/retract", views.theater_retract, name="theater_retract"),
    path(
        "internal/memory/<str:name>/repetition_insights",
        views.repetition_insights,
        name="repetition_insights",
    ),
    path("last_conversation_gap/<path:name>", views.last_conversation_gap, name="last_conversation_gap"),
]
