from django.urls import path

from imports import browser

# The import panel, under /browse/<name>/ (see nekomem.browser).
urlpatterns = [
    path("markdown-import/", browser.markdown_import_panel, name="browser-markdown-import"),
]
