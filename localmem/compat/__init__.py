"""Other memory libraries' APIs over localmem, so an application switches by its import:
:mod:`localmem.compat.mem0` (mem0's open-source ``Memory``)."""
