"""The MCP server: nekomem's memory as Model Context Protocol tools and resources.

An adapter beside the wire routes, like them above every layer: it calls the layers' services and
selectors and owns no data. HTTP at ``/mcp/{name}`` (``views``, through ``bridge``), stdio through
``manage.py mcp --character NAME``.
"""
