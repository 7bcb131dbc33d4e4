from django.urls import path

from recall import views

# Names are matched as paths so an encoded slash (``..%2Fetc``) reaches the name check and gets its
# JSON 400 instead of falling through to a 404.

urlpatterns = [
    path("new_dialog/<path:name>", views.new_dialog, name="new_dialog"),
    path("query_memory/<path:name>", views.query_memory, name="query_memory"),
    path("search_for_memory/<str:name>/<path:query>", views.search_for_memory, name="search_for_memory"),
]
