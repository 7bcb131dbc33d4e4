"""Group chat (reference §1.6): the scoped routes, the keyed-write protocol, the trust ledger and linked
accounts (``groupchat.identity``). It sits above the memory layers and beside recall: a subject's
memories stay fields of each layer's rows, written and read through the layers' services and selectors.
"""
