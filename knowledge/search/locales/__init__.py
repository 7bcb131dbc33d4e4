"""The answer block's text in the eight locales (``knowledge/search/locales/<code>.py``, the same keys in
each): the fence lines, the note, the card labels. The fences and labels are the original's, word for
word — the chat model and the main server read the same block from either server."""
