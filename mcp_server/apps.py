import logging

from django.apps import AppConfig

# The SDK logs each HTTP request's transport start and stop at INFO; every request starts one here.
_CHATTY_SDK_LOGGERS = ("mcp.server.streamable_http_manager", "mcp.server.streamable_http")


class McpServerConfig(AppConfig):
    name = "mcp_server"
    verbose_name = "MCP server"

    def ready(self) -> None:
        for name in _CHATTY_SDK_LOGGERS:
            logging.getLogger(name).setLevel(logging.WARNING)
