from django.urls import URLPattern, path

from reflections import browser

# This layer's memory-browser pages, under /browse/<name>/ (see nekomem.browser).
urlpatterns: list[URLPattern] = [
    path("reflections/", browser.reflections_page, name="browser-reflections"),
    path(
        "reflections/<str:reflection_id>/edit/",
        browser.reflection_edit_text,
        name="browser-reflection-edit",
    ),
    *(
        path(
            f"reflections/<str:reflection_id>/{verb}/",
            browser.reflection_act,
            {"verb": verb},
            name=f"browser-reflection-{verb}",
        )
        for verb in browser.ACTIONS
    ),
]
