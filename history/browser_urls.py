from django.urls import path

from history import browser

# The history pages of the memory browser, under /browse/<name>/ (see nekomem.browser).
urlpatterns = [
    path("history/", browser.changes_page, name="browser-history"),
    path("history/undo/", browser.changes_undo_action, name="browser-history-undo"),
    path("history/<str:layer>/<str:row_id>/", browser.row_history_page, name="browser-row-history"),
    path(
        "history/<str:layer>/<str:row_id>/restore/",
        browser.row_restore_action,
        name="browser-row-restore",
    ),
]
