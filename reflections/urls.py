from django.urls import path

from reflections import views

urlpatterns = [
    path("reflect/<str:name>", views.reflect, name="reflect"),
    path("followup_topics/<str:name>", views.followup, name="followup_topics"),
    path("record_surfaced/<str:name>", views.record_surfaced, name="record_surfaced"),
    path("api/memory/funnel/<str:name>", views.funnel, name="memory_funnel"),
]
