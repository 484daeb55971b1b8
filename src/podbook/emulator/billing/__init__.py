"""Billing computed from what the emulator's pods and serverless jobs really ran.

:mod:`.ledger` keeps each pod's closed RUNNING intervals (in the pod record while it exists,
in an archive table once it is terminated), :mod:`.window` resolves and aligns the query's
time window, :mod:`.compute` turns runs and jobs into per-bucket amounts.
"""
