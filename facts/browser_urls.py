from django.urls import path

from facts import browser

# This layer's memory-browser pages, under /browse/<name>/ (see nekomem.browser).
urlpatterns = [
    path("facts/", browser.facts_page, name="browser-facts"),
    *(
        path(f"facts/{action}/", browser.fact_action, {"action": action}, name=f"browser-fact-{action}")
        for action in browser.FACT_ACTIONS
    ),
]
