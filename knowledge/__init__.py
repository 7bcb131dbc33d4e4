"""Public knowledge packs (reference §1.8): reference material the user imports, shared by every
character. Not memory: no layer imports this app and it imports no layer but recall's engine."""
