"""gunicorn settings for ``manage.py serve``: threaded workers, bound from NEKOMEM_HOST/PORT."""

import os

bind = f"{os.environ.get('NEKOMEM_HOST', '127.0.0.1')}:{os.environ.get('NEKOMEM_PORT', '48912')}"
workers = int(os.environ.get("NEKOMEM_WORKERS", "2"))
worker_class = "gthread"
threads = int(os.environ.get("NEKOMEM_THREADS", "8"))
# /renew may hold a request open across an LLM summary (up to the 110 s background timeout).
timeout = 150
graceful_timeout = 20
accesslog = None


def post_worker_init(worker):
    # Reconcile before this worker takes its first request, so it never serves an unsettled view.
    from nekomem.runtime.state import startup_run

    startup_run()
