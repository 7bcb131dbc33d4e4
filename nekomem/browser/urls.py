from django.urls import path

from nekomem.browser import portability_views, views

urlpatterns = [
    path("", views.front_door, name="front_door"),
    path("browse/<str:name>/", views.character_overview, name="browser-character"),
    path("browse/<str:name>/language/", views.character_language_view, name="browser-character-language"),
    path("browse/<str:name>/rename/", views.character_rename_view, name="browser-character-rename"),
    path("browse/<str:name>/delete/", views.character_delete_view, name="browser-character-delete"),
    path("browse/<str:name>/export.zip", portability_views.export_archive, name="browser-character-export"),
    path("browse/<str:name>/import/", portability_views.import_archive, name="browser-character-import"),
]
