"""What the companion reads from recall, one module per locale with the same keys (``TEXT``) and the
locale's named days (``HOLIDAYS``: ``MM-DD`` for fixed dates, ``lunar:MM-DD`` for the lunar calendar)."""
