"""Serverless endpoints in the notebook: ``%endpoint``, ``%%runjob``, ``%job`` and their
panels.

- :mod:`.magic`: the three magics' bodies (``PodMagics`` delegates here).
- :mod:`.manage`: ``%endpoint create|list|show|update|delete|logs`` (parsers, tables,
  handlers; create and update build the API's request models).
- :mod:`.cellbody`: the ``%%runjob`` cell body (JSON or a Python dict, ``{var}`` expansion).
- :mod:`.commands`: parsers of ``%%runjob``, ``%job`` and ``%endpoint health|purge|serve``.
- :mod:`.handlers`: what each job command does (client call, panel, returned object);
  :mod:`.serving` and :mod:`.lbserve`: ``%endpoint serve`` (hot reload, ``--lb`` apps).
- :mod:`.book`: the session's job and health panels; :mod:`.errors`: their one-line failures.
- :mod:`.records`: job records and stream chunks as the panels hold them.
- :mod:`.rate`: tokens/s, chunks/s and the latest seed ``metrics`` of a stream.
- :mod:`.pump` / :mod:`.streambuffer`: the background thread that reads a job's stream and
  batches it to the view.
- :mod:`.panel` / :mod:`.health` / :mod:`.timeline`: JobPanel and HealthPanel (anywidget,
  Python side); :mod:`.static`: their text/plain and text/html forms.
- :mod:`.polling`: what the one refresher thread does for job and health panels.

Nothing here is imported by ``%load_ext``; the magics import it on first use.
"""
