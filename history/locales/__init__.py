"""What the memory browser's history pages say, per locale (``TEXT``, the same keys and placeholders in
each): the timeline, a row's versions, and the messages of an undo or a restore."""
