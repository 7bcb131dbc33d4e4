from django.urls import path

from recall import views

urlpatterns = [
    path("new_dialog/<str:name>", views.new_dialog, name="new_dialog"),
]
