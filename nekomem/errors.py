"""Domain errors that services raise and the API maps to HTTP in one place (nekomem/api.py)."""


class Conflict(Exception):
    """The change would overwrite state that moved since the caller read it (HTTP 409)."""


def storage_unavailable(exc: BaseException | None) -> bool:
    """The database (or the broker) cannot be reached right now: a passing outage, not a bug.

    Such requests are answered 503 and recover by themselves once the service is back; nothing is
    half-written, because every write is one transaction.
    """
    from django.db import InterfaceError, OperationalError

    if isinstance(exc, OperationalError | InterfaceError):
        return True
    try:
        from redis.exceptions import ConnectionError as RedisConnectionError
    except ImportError:  # pragma: no cover - redis is a dependency
        return False
    return isinstance(exc, RedisConnectionError)
