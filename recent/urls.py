from django.urls import path

from recent import browser, views

urlpatterns = [
    path("memory_browser", browser.memory_browser, name="memory_browser"),
    path("cache/<str:name>", views.cache, name="cache"),
    path("process/<str:name>", views.process, name="process"),
    path("renew/<str:name>", views.renew, name="renew"),
    path("settle/<str:name>", views.settle, name="settle"),
    path("cancel_correction/<str:name>", views.cancel_correction, name="cancel_correction"),
    path("get_recent_history/<str:name>", views.get_recent_history, name="get_recent_history"),
    path("last_conversation_gap/<str:name>", views.last_conversation_gap, name="last_conversation_gap"),
]
