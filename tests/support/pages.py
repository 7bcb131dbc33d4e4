"""Reading the memory browser's server-rendered pages in Django-client tests."""

from __future__ import annotations

import re
from urllib.parse import quote

from django.test import Client


def front_door_row(client: Client, name: str) -> dict[str, str]:
    """The front door's characters table, as {column title: cell text} for ``name``'s row."""
    body = client.get("/").content.decode()
    table = body.split('data-testid="characters"', 1)[1].split("</table>", 1)[0]
    titles = re.findall(r"<th>(.*?)</th>", table)
    row = next(tr for tr in table.split("<tr>") if f"/browse/{quote(name)}/" in tr)
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row, flags=re.S)
    return dict(zip(titles, cells, strict=True))
