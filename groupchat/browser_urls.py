from django.urls import path

from groupchat import subject_browser

# Group chat's memory-browser action, under /browse/<name>/ (see nekomem.browser).
urlpatterns = [
    path("subjects/forget/", subject_browser.subject_forget, name="browser-subject-forget"),
]
