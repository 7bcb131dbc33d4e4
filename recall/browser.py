"""The memory browser's recall playground: ask what ``/query_memory`` would answer, and see why.

The answer is ``recall_query``'s own with ``explain`` on, so the page shows exactly the ranking the chat
server gets: each path's rank and score, the fused score, the pool, and the time window used.
"""

from __future__ import annotations

import logging
from typing import Any

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from nekomem.browser.access import browser_page
from nekomem.browser.layer_views import character_or_404
from recall.engine import CONFIGS, DEFAULT
from recall.index_cache import RecallIndexBuilding
from recall.services import RecallRequest, recall_query

logger = logging.getLogger(__name__)

# Columns in this order; a path no result came through is left out.
PATH_LABELS = {
    "bm25:words": "BM25 词 words",
    "bm25:original": "BM25 原版 original",
    "cosine": "向量 Vector",
    "time": "时间 Time",
}
MODE_LABELS = {
    "hybrid": "混合检索 Hybrid (BM25 + vectors)",
    "hybrid+time": "先按时间窗口筛选，再混合检索 Filtered by the time window, then hybrid",
    "time": "只按时间：窗口内优先，再按距离 Time only: inside the window first, then by distance",
    "empty": "没有检索 Nothing searched",
}


class PlaygroundForm(forms.Form):
    q = forms.CharField(max_length=2000, required=False, strip=True)
    time = forms.CharField(max_length=200, required=False, strip=True)
    config = forms.ChoiceField(choices=[(name, name) for name in CONFIGS], required=False)


def _path_columns(results: list[dict[str, Any]]) -> list[tuple[str, str]]:
    seen = {path for row in results for path in row["explain"]["paths"]}
    known = [(path, label) for path, label in PATH_LABELS.items() if path in seen]
    return known + [(path, path) for path in sorted(seen - PATH_LABELS.keys())]


def _result_rows(results: list[dict[str, Any]], columns: list[tuple[str, str]]) -> list[dict[str, Any]]:
    return [
        {
            "rank": position,
            "row": row,
            "pool": row["explain"]["pool"],
            "fused": row["explain"]["fused"],
            "paths": [row["explain"]["paths"].get(path) for path, _ in columns],
        }
        for position, row in enumerate(results, start=1)
    ]


@require_GET
@browser_page
def recall_playground(request: HttpRequest, name: str) -> HttpResponse:
    character = character_or_404(name)
    form = PlaygroundForm(request.GET or None)
    context: dict[str, Any] = {"character": character, "active_tab": "recall", "form": form}
    if form.is_bound and form.is_valid() and (form.cleaned_data["q"] or form.cleaned_data["time"]):
        asked = RecallRequest(
            query=form.cleaned_data["q"],
            time=form.cleaned_data["time"] or None,
            explain=True,
            config=form.cleaned_data["config"] or None,
        )
        try:
            answer = recall_query(name=character.name, request=asked)
        except RecallIndexBuilding:
            messages.info(
                request,
                "回忆索引正在建立（导入之后），请稍后再试。The recall index is being built (after an import);"
                " try again in a moment.",
            )
        except Exception:
            # As /query_memory: a failing recall is reported, never a server error page.
            logger.exception("recall playground failed character=%s", character.name)
            messages.error(request, "回忆失败，详情见服务器日志。Recall failed; see the server log.")
        else:
            columns = _path_columns(answer["results"])
            context.update(
                answer=answer,
                columns=columns,
                rows=_result_rows(answer["results"], columns),
                mode_label=MODE_LABELS.get(answer["mode"], answer["mode"]),
                config_name=answer["config"],
            )
    elif form.is_bound and not form.is_valid():
        problems = "; ".join(f"{field}: {error}" for field, errors in form.errors.items() for error in errors)
        messages.error(request, f"查询无效 Invalid query: {problems}")
    context["default_config"] = DEFAULT.name
    return render(request, "browser/recall/playground.html", context)
