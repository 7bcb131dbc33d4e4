from django.urls import URLPattern

# This layer's memory-browser pages, under /browse/<name>/ (see nekomem.browser).
urlpatterns: list[URLPattern] = []
