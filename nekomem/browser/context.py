"""What every browser page's frame needs: the layer tabs."""

from __future__ import annotations

from django.http import HttpRequest

from nekomem.browser.registry import layer_pages


def browser_frame(request: HttpRequest) -> dict[str, object]:
    return {"layer_pages": layer_pages()}
