from django.urls import path

from recall import views

urlpatterns = [
    path("new_dialog/<str:name>", views.new_dialog, name="new_dialog"),
    path("query_memory/<str:name>", views.query_memory, name="query_memory"),
]
