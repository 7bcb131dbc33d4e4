"""Speaker identity and trust (reference §1.6 "Trust fields", §2.15 ``speaker_trust.json``).

One ledger for the whole server, not per character: trust is what a person is like, not how they
relate to one companion. Accounts (``<platform>:<actor>``) belong to one entity (a person); an
entity links at most 8 accounts per platform. Each account keeps its server-derived trust source,
its legacy adjustment and its activity, counted once per event id.

A sub-app of ``groupchat`` that keeps its own app label (``identity``), so its migrations and tables
are those it always had. It knows no layer: what also reaches a layer's rows (forgetting an entity,
reconciling from facts, stranded rows) is in ``groupchat.services.identity``.
"""
