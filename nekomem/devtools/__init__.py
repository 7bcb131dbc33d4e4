"""Developer tooling: checks run by `make lint`, not imported at run time."""
