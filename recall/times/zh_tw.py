"""Chinese as written in Taiwan (and Hong Kong). Traditional spellings of the Simplified vocabulary
(上週, 上個月, 這週, 禮拜, 幾天前) are folded by ``windows.fold`` and read by the ``zh`` rules; this module
adds the words Taiwan uses where the mainland says something else."""

from __future__ import annotations

import re

from recall.times.windows import Context, TimeWindow, a_while_ago, recently, rule, units_ago


@rule(r"(?:這陣子|這些天|這些日子|近期)")
def _recently(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return recently(ctx)


@rule(r"(?:前陣子|前一陣子|之前那陣子|好一陣子前)")
def _a_while_ago(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return a_while_ago(ctx)


@rule(r"大前天")
def _three_days_ago(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return units_ago("day", 3, ctx)
