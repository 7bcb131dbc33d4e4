from django.urls import path

from nekomem.journal import browser, history_browser

# The jobs and history pages of the memory browser, under /browse/<name>/ (see nekomem.browser).
urlpatterns = [
    path("jobs/", browser.jobs_page, name="browser-jobs"),
    path("jobs/<int:job_id>/retry/", browser.job_retry_action, name="browser-job-retry"),
    path("history/", history_browser.changes_page, name="browser-history"),
    path("history/undo/", history_browser.changes_undo_action, name="browser-history-undo"),
    path("history/<str:layer>/<str:row_id>/", history_browser.row_history_page, name="browser-row-history"),
    path(
        "history/<str:layer>/<str:row_id>/restore/",
        history_browser.row_restore_action,
        name="browser-row-restore",
    ),
]
