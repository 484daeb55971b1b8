"""Serverless jobs in the notebook: ``%%runjob``, ``%job``, ``%endpoint`` and their panels.

- :mod:`.cellbody`: the ``%%runjob`` cell body (JSON or a Python dict, ``{var}`` expansion).
- :mod:`.commands`: argparse parsers of the three magics, parsed into small commands.
- :mod:`.handlers`: what each command does (client call, panel, returned object).
- :mod:`.records`: job records and stream chunks as the panels hold them.
- :mod:`.rate`: tokens/s, chunks/s and the latest seed ``metrics`` of a stream.
- :mod:`.pump`: the background thread that reads a job's stream and batches it to the view.
- :mod:`.panel` / :mod:`.health`: JobPanel and HealthPanel (anywidget, Python side).
- :mod:`.static`: their text/plain and text/html forms.
- :mod:`.polling`: what the one refresher thread does for job and health panels.

Nothing here is imported by ``%load_ext``; the magics import it on first use.
"""
