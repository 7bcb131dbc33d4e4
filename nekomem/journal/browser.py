"""The memory browser's jobs page: a character's background jobs, why they wait, what died, and retry."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, QueryDict
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from nekomem.browser.access import browser_page
from nekomem.browser.layer_views import character_or_404
from nekomem.journal.jobs import job_retry
from nekomem.journal.models import WorkStatus
from nekomem.journal.selectors import job_kinds_of, job_list, job_of_character
from nekomem.runtime.status import waiting_reason_text

JOBS_PER_PAGE = 50
RETRYABLE = (WorkStatus.DEAD, WorkStatus.WAITING)
STATUS_LABELS = {
    WorkStatus.PENDING: "排队 Queued",
    WorkStatus.RUNNING: "运行中 Running",
    WorkStatus.WAITING: "等待 Waiting",
    WorkStatus.DONE: "完成 Done",
    WorkStatus.DEAD: "失败 Dead",
}
FILTERS = ("status", "kind")


class JobFilterForm(forms.Form):
    status = forms.ChoiceField(choices=[("", ""), *WorkStatus.choices], required=False)
    kind = forms.CharField(max_length=60, required=False)


def _filters(query: QueryDict) -> dict[str, str]:
    """The valid filters of a query string (an invalid value is ignored, never an error page)."""
    form = JobFilterForm(query)
    form.is_valid()
    return {key: value for key in FILTERS if (value := form.cleaned_data.get(key))}


@require_GET
@browser_page
def jobs_page(request: HttpRequest, name: str) -> HttpResponse:
    character = character_or_404(name)
    filters = _filters(request.GET)
    jobs = job_list(character_id=character.pk, kind=filters.get("kind"), status=filters.get("status"))
    page = Paginator(jobs, JOBS_PER_PAGE).get_page(request.GET.get("page"))
    rows = [
        {
            "job": job,
            "status_label": STATUS_LABELS.get(WorkStatus(job.status), job.status),
            "reason_label": waiting_reason_text(job.waiting_reason) if job.waiting_reason else "",
            "retryable": job.status in RETRYABLE,
        }
        for job in page.object_list
    ]
    kept = QueryDict(mutable=True)
    kept.update(filters)
    return render(
        request,
        "browser/journal/jobs.html",
        {
            "character": character,
            "active_tab": "jobs",
            "page": page,
            "rows": rows,
            "filters": filters,
            "filter_query": kept.urlencode(),
            "statuses": [(status, STATUS_LABELS[WorkStatus(status)]) for status in WorkStatus.values],
            "kinds": job_kinds_of(character_id=character.pk),
        },
    )


@require_POST
@browser_page
def job_retry_action(request: HttpRequest, name: str, job_id: int) -> HttpResponse:
    """Retry one dead or waiting job of this character through the admin's own service."""
    character = character_or_404(name)
    job = job_of_character(character_id=character.pk, job_id=job_id)
    if job is None:
        raise Http404(f"no job {job_id} of {name!r}")
    if job_retry(job_id=job.pk):
        messages.success(request, f"已重试任务 Retried job #{job.pk} ({job.kind})")
    else:
        messages.error(
            request,
            f"任务 #{job.pk} 不能重试：它已不再失败或等待 Job #{job.pk} cannot be retried: "
            "it is no longer dead or waiting",
        )
    back = QueryDict(mutable=True)
    back.update(_filters(QueryDict(request.POST.get("filters", ""))))
    if request.POST.get("page", "").isdigit():
        back["page"] = request.POST["page"]
    url = reverse("browser-jobs", kwargs={"name": character.name})
    return HttpResponseRedirect(f"{url}?{back.urlencode()}" if back else url)
