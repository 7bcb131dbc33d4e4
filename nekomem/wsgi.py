import os

from nekomem.runtime.native_threads import serving_threads
from nekomem.runtime.worker_signals import hold_stop_signals_while_loading

serving_threads()  # before anything imports numpy; for any server that loads this module
hold_stop_signals_while_loading()  # a stop that comes while the rest loads is kept for granian

from django.core.wsgi import get_wsgi_application  # noqa: E402

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "nekomem.settings")

application = get_wsgi_application()

# Startup work (migrations checked, events reconciled) runs in every server process as it loads the
# application, so none serves a request from an unsettled view; until it succeeds, restricted mode
# answers 409.
from nekomem.runtime.startup import startup_run  # noqa: E402
from nekomem.runtime.warmups import warm_ups_before_serving, warm_ups_start  # noqa: E402

if startup_run():
    # Saved recall indexes before the first request (a fraction of a second each), the model and
    # anything to build after it, in the background (see recall.apps).
    warm_ups_before_serving()
    warm_ups_start()

# What is alive now (Django, the URLconf, the models, settings) lives as long as the process. Frozen,
# it is left out of the collector's full passes, which otherwise walked all of it and held the GIL
# for over 100 ms in the middle of requests (19 ms once frozen, measured in-process).
from nekomem.runtime.long_lived import freeze_loaded  # noqa: E402

freeze_loaded()
