from django.urls import path

from recent import browser

# This layer's memory-browser pages, under /browse/<name>/ (see nekomem.browser).
urlpatterns = [
    path("recent/", browser.recent_page, name="browser-recent"),
]
