"""The MCP server of one character: its tools and resources, built on the official SDK's ``MCPServer``.

One server speaks for one character (the connection's path, ``/mcp/{name}``, or ``manage.py mcp
--character NAME``). Each tool validates its arguments by its signature (the SDK turns a bad argument
into a tool error), then runs the matching function of ``mcp_server.memory`` on a thread Django allows
to touch the database: the HTTP request's own thread behind the bridge, one shared thread under stdio.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar

from asgiref.sync import sync_to_async
from django.db import close_old_connections
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

from mcp_server import knowledge, memory
from mcp_server.memory import Connection, MemoryKind, MemoryToolError

T = TypeVar("T")

INSTRUCTIONS = (
    "Long-term memory of the character {name}. Call `working_context` at the start of a conversation, "
    "`recall` when something from the past might matter, and `remember` with each finished exchange "
    "(the user's message and your answer). Memories can be listed, read, corrected and forgotten by id."
)

READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)

Language = Annotated[
    str | None,
    Field(description="Language of the text (zh, zh-TW, en, ja, ko, ru, es, pt); default: the character's"),
]
MemoryId = Annotated[str, Field(min_length=1, max_length=200, description="A memory's id, as listed")]


class Message(BaseModel):
    """One message of the exchange."""

    role: Literal["user", "assistant", "system"]
    content: str = Field(min_length=1, max_length=100_000)


class Tools:
    """The tool bodies, bound to one connection; ``stdio`` closes stale database connections per call."""

    def __init__(self, connection: Connection, *, long_lived: bool) -> None:
        self.connection = connection
        self.long_lived = long_lived

    async def run(self, fn: Callable[..., T], **kwargs: Any) -> T:
        try:
            return await sync_to_async(self._call, thread_sensitive=True)(fn, **kwargs)
        except MemoryToolError as exc:
            raise ToolError(str(exc)) from exc

    def _call(self, fn: Callable[..., T], **kwargs: Any) -> T:
        # A process that lives for days outside Django's request cycle: what a request's end does for
        # a view (drop a connection the database closed, or one past its age) happens around each call.
        if self.long_lived:
            close_old_connections()
        try:
            return fn(self.connection, **kwargs)
        finally:
            if self.long_lived:
                close_old_connections()


def build_server(name: str, *, long_lived: bool = False) -> MCPServer:
    """The MCP server for character ``name`` (created on its first ``remember``, as ``/cache`` does)."""
    tools = Tools(Connection(name=name), long_lived=long_lived)
    server: MCPServer = MCPServer(
        name="nekomem",
        title=f"nekomem: {name}",
        instructions=INSTRUCTIONS.format(name=name),
        log_level="WARNING",
    )

    @server.tool(annotations=WRITES)
    async def remember(
        messages: Annotated[list[Message], Field(min_length=1, max_length=200)], language: Language = None
    ) -> dict[str, Any]:
        """Store a finished exchange (the user's messages and your answer), as the chat server does."""
        payload = [m.model_dump() for m in messages]
        return await tools.run(memory.remember, messages=payload, language=language)

    @server.tool(annotations=READ_ONLY)
    async def recall(
        query: Annotated[
            str, Field(max_length=2000, description="What to remember; may be empty with time")
        ] = "",
        time: Annotated[
            str | None,
            Field(max_length=200, description="A time expression: 'yesterday', '上周', '2024-05', ISO range"),
        ] = None,
        limit: Annotated[int, Field(ge=1, le=50)] = 10,
    ) -> dict[str, Any]:
        """Search long-term memory: each memory with its tier, its time and why it matched."""
        return await tools.run(memory.recall, query=query, time=time, limit=limit)

    @server.tool(annotations=READ_ONLY)
    async def working_context(language: Language = None) -> str:
        """What to know before talking: persona, reflections, the recent conversation and the time since."""
        return await tools.run(memory.working_context, language=language)

    @server.tool(annotations=READ_ONLY)
    async def list_memories(
        kind: Annotated[
            MemoryKind | None, Field(description="fact, reflection or persona; all if omitted")
        ] = None,
        contains: Annotated[str, Field(max_length=200, description="Only memories whose text has this")] = "",
        limit: Annotated[int, Field(ge=1, le=memory.LIST_LIMIT_MAX)] = 50,
    ) -> dict[str, Any]:
        """List stored facts, reflections and persona entries with their ids, newest first."""
        return await tools.run(memory.list_memories, kind=kind, contains=contains, limit=limit)

    @server.tool(annotations=READ_ONLY)
    async def get_memory(id: MemoryId) -> dict[str, Any]:
        """One fact, reflection or persona entry by id."""
        return await tools.run(memory.get_memory, memory_id=id)

    @server.tool(annotations=WRITES)
    async def update_memory(
        id: MemoryId, text: Annotated[str, Field(min_length=1, max_length=4000)]
    ) -> dict[str, Any]:
        """Correct a memory's text. Entries from the character card are read-only."""
        return await tools.run(memory.update_memory, memory_id=id, text=text)

    @server.tool(annotations=DESTRUCTIVE)
    async def forget_memory(id: MemoryId) -> dict[str, Any]:
        """Forget one memory: a fact or persona entry is deleted, a reflection archived."""
        return await tools.run(memory.forget_memory, memory_id=id)

    @server.tool(annotations=READ_ONLY)
    async def persona(language: Language = None) -> str:
        """The character's persona and standing reflections, as Markdown."""
        return await tools.run(memory.persona, language=language)

    @server.tool(annotations=DESTRUCTIVE)
    async def forget_everything_about(
        subject: Annotated[
            str, Field(max_length=200, description="Facts and reflections mentioning this")
        ] = "",
        time: Annotated[
            str | None, Field(max_length=200, description="Only those of this time range ('last week')")
        ] = None,
        dry_run: Annotated[bool, Field(description="Only list what would be forgotten")] = False,
    ) -> dict[str, Any]:
        """Forget every fact and reflection about a subject and/or from a time range."""
        return await tools.run(memory.forget_everything_about, subject=subject, time=time, dry_run=dry_run)

    @server.tool(annotations=READ_ONLY)
    async def query_public_knowledge(
        query: Annotated[
            str,
            Field(
                min_length=1,
                max_length=2000,
                description="A term, name or meme to look up; with mode 'sample', a tag ('domain:meme')",
            ),
        ],
        mode: Annotated[
            Literal["lookup", "sample"], Field(description="lookup: search; sample: random entries of a tag")
        ] = "lookup",
        material_type: Annotated[
            Literal["auto", "knowledge", "corpus"],
            Field(description="knowledge: facts and explanations; corpus: reply and style examples"),
        ] = "auto",
        limit: Annotated[int, Field(ge=1, le=10)] = 3,
        language: Language = None,
    ) -> dict[str, Any]:
        """Look up the reference packs the user imported (meme explanations, setting notes, encyclopedia
        entries, dialogue examples). Not memory: nothing here is about the user. Use `context` only when
        `result` is 'matched'."""
        return await tools.run(
            knowledge.query_public_knowledge,
            query=query,
            mode=mode,
            material_type=material_type,
            limit=limit,
            language=language,
        )

    @server.resource("nekomem://persona", name="persona", mime_type="text/markdown")
    async def persona_resource() -> str:
        """The character's persona as Markdown."""
        return await tools.run(memory.persona)

    @server.resource("nekomem://recent", name="recent", mime_type="text/plain")
    async def recent_resource() -> str:
        """The recent conversation window, one message a line."""
        return await tools.run(memory.recent_window)

    return server
