from django.urls import path

from nekomem.browser import views

urlpatterns = [
    path("", views.front_door, name="front_door"),
    path("browse/<str:name>/", views.character_overview, name="browser-character"),
]
