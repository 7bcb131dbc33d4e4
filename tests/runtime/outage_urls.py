"""A URLconf whose views fail the way a database or broker outage makes real views fail."""

from django.db import OperationalError
from django.urls import path
from redis.exceptions import ConnectionError as RedisConnectionError

from nekomem.http import conversation_route
from nekomem.urls import handler500  # noqa: F401  (the server's own 500 handler)


def database_gone(request):
    raise OperationalError("server closed the connection unexpectedly")


def broker_gone(request):
    raise RedisConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")


def plain_bug(request):
    raise ZeroDivisionError


urlpatterns = [
    path("database_gone", database_gone),
    path("broker_gone", broker_gone),
    path("plain_bug", plain_bug),
    path("cache_during_outage", conversation_route(database_gone)),
]
