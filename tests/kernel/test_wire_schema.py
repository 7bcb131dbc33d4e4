"""The OpenAPI schema against the URLconf: every route the server answers is documented, none invented.

The walk covers every include (the layers' ``urls.py``, ``api_urls.py``, the DRF router). Only pages made
for a person's browser are left out, each prefix with its reason.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator

import pytest
from django.urls import URLPattern, URLResolver, get_resolver
from drf_spectacular.generators import SchemaGenerator

from nekomem import wire_schema
from nekomem.wire_schema import DuplicateWirePath, register

# Pages rendered for a person (HTML with CSRF-protected forms), not routes a program calls.
NOT_API_PREFIXES: dict[str, str] = {
    "/admin/": "Django's admin site",
    "/browse/": "the memory browser's per-character pages",
    "/knowledge/": "the memory browser's public-knowledge pages (the API is /internal/knowledge/)",
    "/api/v1/docs/": "the Swagger UI page that renders this schema",
}
NOT_API_PATHS: dict[str, str] = {"/": "the memory browser's front door"}

_CONVERTER = re.compile(r"<(?:\w+:)?(\w+)>")
_NAMED_GROUP = re.compile(r"\(\?P<(\w+)>[^)]*\)")


def _template(route: str) -> str:
    """A URL pattern as an OpenAPI path: ``<path:name>`` and ``(?P<name>…)`` become ``{name}``.

    drf-spectacular names a ``pk`` parameter ``id`` (its COERCE_PATH_PK setting), so this does too."""
    route = _NAMED_GROUP.sub(r"{\1}", route)  # the DRF router's regex routes
    route = _CONVERTER.sub(r"{\1}", route).replace("^", "").replace("$", "")
    return "/" + route.replace("{pk}", "{id}")


def _served(patterns: list[URLPattern | URLResolver], prefix: str = "") -> Iterator[str]:
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _served(pattern.url_patterns, prefix + str(pattern.pattern))
        else:
            yield _template(prefix + str(pattern.pattern))


def _is_api(path: str) -> bool:
    return path not in NOT_API_PATHS and not path.startswith(tuple(NOT_API_PREFIXES))


@pytest.fixture(scope="module")
def schema() -> dict:
    return SchemaGenerator().get_schema(request=None, public=True)


def served_api_paths() -> set[str]:
    return {path for path in _served(get_resolver().url_patterns) if _is_api(path)}


def test_every_served_route_is_in_the_schema(schema):
    undocumented = served_api_paths() - set(schema["paths"])
    assert not undocumented, sorted(undocumented)


def test_the_schema_invents_no_route(schema):
    invented = set(schema["paths"]) - served_api_paths()
    assert not invented, sorted(invented)


def test_the_walk_sees_the_routes_the_issue_found_missing():
    # The routes a hand-kept list had dropped, the DRF router's and the plain include()s' alike.
    served = served_api_paths()
    assert {
        "/followup_topics/{name}",
        "/record_surfaced/{name}",
        "/reflect/{name}",
        "/get_settings/{name}",
        "/get_persona/{name}",
        "/api/memory/funnel/{name}",
        "/internal/memory/reset_confirmed_at",
        "/internal/trust/profile",
        "/internal/identity/entities/forget",
        "/internal/memory/import_external_markdown",
        "/mcp/{name}",
        "/memory_browser",
        "/api/v1/characters/{name}/persona/corrections/{id}/resolve/",
        "/api/v1/jobs/{id}/",
        "/api/v1/characters/{name}/rename/",
    } <= served
    assert not any(path.startswith("/browse/") for path in served)


def test_operation_ids_are_unique(schema):
    ids = Counter(
        operation["operationId"]
        for item in schema["paths"].values()
        for method, operation in item.items()
        if method in {"get", "post", "put", "patch", "delete"}
    )
    assert [name for name, count in ids.items() if count > 1] == []


def test_every_reference_resolves(schema):
    components = schema["components"]["schemas"]
    references = set(re.findall(r"#/components/schemas/(\w+)", repr(schema["paths"])))
    assert references - set(components) == set()


def test_a_route_described_by_two_fragments_is_refused():
    wire_schema.wire_paths()  # every app's fragment registered
    with pytest.raises(DuplicateWirePath, match=r"/health"):
        register("tests.a_second_runtime", paths={"/health": {}})
    assert "tests.a_second_runtime" not in wire_schema._paths


def test_a_fragment_imported_again_replaces_its_own_entry():
    from recent import wire_schema as recent_fragment

    before = wire_schema.wire_paths()
    register(recent_fragment.__name__, paths=recent_fragment.PATHS, components=recent_fragment.COMPONENTS)
    assert wire_schema.wire_paths() == before
