"""Django's SQLite backend with write transactions queued in the kernel (the embedded default)."""
