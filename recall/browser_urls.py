from django.urls import path

from recall import browser

# This layer's memory-browser pages, under /browse/<name>/ (see nekomem.browser).
urlpatterns = [
    path("recall/", browser.recall_playground, name="browser-recall"),
]
