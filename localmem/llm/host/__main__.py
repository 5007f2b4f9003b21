"""``python -m localmem.llm.host``: the model host process (see :mod:`localmem.llm.host.child`)."""

import sys

from localmem.llm.host.child import main

sys.exit(main())
