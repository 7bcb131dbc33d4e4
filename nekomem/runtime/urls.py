from django.urls import path

from nekomem.runtime import views

urlpatterns = [
    path("health", views.health, name="health"),
    path("shutdown", views.shutdown, name="shutdown"),
    path("reload", views.reload, name="reload"),
    path("release_character/<path:name>", views.release_character, name="release_character"),
    path("internal/storage/startup/block", views.storage_startup_block, name="storage_block"),
    path("internal/storage/startup/continue", views.storage_startup_continue, name="storage_continue"),
]
