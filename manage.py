#!/usr/bin/env python
import os
import sys


def main() -> None:
    from nekomem.runtime.native_threads import single_threaded_here

    single_threaded_here()  # a qcluster started by hand too (before numpy loads)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "nekomem.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
