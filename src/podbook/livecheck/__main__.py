"""``python -m podbook.livecheck``: the same as ``podbook live-check``."""

from podbook.livecheck.run import main

raise SystemExit(main())
