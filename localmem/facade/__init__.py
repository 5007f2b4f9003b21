"""The public API of :class:`localmem.Memory`, by concern: :mod:`.writing` (add, update,
delete, restore, purge), :mod:`.reading` (get, list, history, links, search) and
:mod:`.sessions` (sessions of thoughts, procedures, consolidation). ``localmem/memory.py``
composes them with opening, closing and the store's plugins."""
