"""``python -m podbook`` runs the command-line interface."""

from podbook.cli import main

raise SystemExit(main())
