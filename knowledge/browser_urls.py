from django.urls import path

from knowledge import browser

# The memory browser's Knowledge page, under /knowledge/ (shared by every character, so under none).
urlpatterns = [
    path("", browser.knowledge_page, name="browser-knowledge"),
    path("preview/", browser.knowledge_preview, name="browser-knowledge-preview"),
    path("import/", browser.knowledge_import, name="browser-knowledge-import"),
    path("settings/", browser.knowledge_settings, name="browser-knowledge-settings"),
    path("jobs/<str:action>/", browser.knowledge_job_action, name="browser-knowledge-job"),
    path("packs/<str:action>/", browser.knowledge_pack_action, name="browser-knowledge-pack"),
    path("entry/", browser.knowledge_entry_page, name="browser-knowledge-entry"),
    path("entry/disabled/", browser.knowledge_entry_disabled, name="browser-knowledge-entry-disabled"),
]
