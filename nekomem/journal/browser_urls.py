from django.urls import path

from nekomem.journal import browser

# The jobs pages of the memory browser, under /browse/<name>/ (see nekomem.browser).
urlpatterns = [
    path("jobs/", browser.jobs_page, name="browser-jobs"),
    path("jobs/<int:job_id>/retry/", browser.job_retry_action, name="browser-job-retry"),
]
