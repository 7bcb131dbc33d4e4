"""What every browser page's frame needs: the layer tabs and the site's own pages."""

from __future__ import annotations

from django.http import HttpRequest

from nekomem.browser.registry import layer_pages, site_pages


def browser_frame(request: HttpRequest) -> dict[str, object]:
    return {"layer_pages": layer_pages(), "site_pages": site_pages()}
