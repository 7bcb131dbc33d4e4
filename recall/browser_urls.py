from django.urls import path

from recall import browser, import_browser, subject_browser

# This layer's memory-browser pages, under /browse/<name>/ (see nekomem.browser).
urlpatterns = [
    path("recall/", browser.recall_playground, name="browser-recall"),
    path("markdown-import/", import_browser.markdown_import_panel, name="browser-markdown-import"),
    path("subjects/forget/", subject_browser.subject_forget, name="browser-subject-forget"),
]
