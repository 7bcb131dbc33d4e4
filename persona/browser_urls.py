from django.urls import URLPattern, path

from persona import browser

# This layer's memory-browser pages, under /browse/<name>/ (see nekomem.browser).
urlpatterns: list[URLPattern] = [
    path("persona/", browser.persona_page, name="browser-persona"),
    path("persona/entries/add/", browser.entry_add, name="browser-persona-add"),
    path("persona/entries/<str:entry_id>/edit/", browser.entry_edit, name="browser-persona-edit"),
    path("persona/entries/<str:entry_id>/delete/", browser.entry_delete, name="browser-persona-delete"),
    path("persona/entries/<str:entry_id>/restore/", browser.entry_restore, name="browser-persona-restore"),
    path(
        "persona/corrections/<int:pk>/resolve/",
        browser.correction_resolve,
        name="browser-persona-correction-resolve",
    ),
]
