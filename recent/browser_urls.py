from django.urls import path

from recent import browser

# This layer's memory-browser pages, under /browse/<name>/ (see nekomem.browser).
urlpatterns = [
    path("recent/", browser.recent_page, name="browser-recent"),
    path("recent/forget/", browser.raw_forget, name="browser-raw-forget"),
    path(
        "recent/theater/<int:capsule_id>/forget/",
        browser.theater_capsule_forget,
        name="browser-theater-forget",
    ),
]
