"""The knowledge store's folder (``registry.json`` + ``packs/``) kept in step with the database: the
install's ``knowledge/`` in install mode (taken in at start, written back on every change, so the
original and nekomem can replace each other on one install), ``var/knowledge/`` standalone (written
only), and the ``knowledge/`` of a whole ``export_memory`` / ``import_memory`` folder."""
