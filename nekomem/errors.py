"""Domain errors that services raise and the API maps to HTTP in one place (nekomem/api.py)."""


class Conflict(Exception):
    """The change would overwrite state that moved since the caller read it (HTTP 409)."""
