"""Who may open the memory browser: anyone on loopback (the person at the machine), and off loopback
only a signed-in staff user (the admin's login). Every form in it carries Django's CSRF token."""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Callable
from typing import Any

from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.urls import reverse

View = Callable[..., HttpResponseBase]


def on_loopback(request: HttpRequest) -> bool:
    try:
        return ipaddress.ip_address(request.META.get("REMOTE_ADDR", "").split("%")[0]).is_loopback
    except ValueError:
        return False


def browser_page(view: View) -> View:
    """Serve ``view`` on loopback, or off it to a signed-in staff user; send anyone else to the login."""

    @functools.wraps(view)
    def guarded(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        user = getattr(request, "user", None)
        if on_loopback(request) or (user is not None and user.is_authenticated and user.is_staff):
            return view(request, *args, **kwargs)
        return redirect_to_login(request.get_full_path(), reverse("admin:login"))

    return guarded
