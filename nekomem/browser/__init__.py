"""The memory browser's frame: the front door, one page per layer and character, and who may see them.

The kernel knows no layer: each layer registers its page (title, URL name, a row count for the front
door) from its AppConfig.ready, and serves the page from its own ``browser.py`` under
``/browse/<name>/<slug>/`` (its ``browser_urls.py``).
"""
