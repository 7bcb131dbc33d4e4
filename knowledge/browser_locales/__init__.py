"""What the memory browser's Knowledge page tells the user when a pack is refused, per locale
(``TEXT``, the same keys in each): one plain sentence per reason code of reference §1.8."""
