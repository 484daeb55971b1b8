"""Work on a pod from the notebook: ``%%pod exec`` / ``%pod attach`` run cells in the pod's
kernel, ``%%pod sh`` runs a shell script there, ``%pod push|pull|sync`` move files.

The magics parse (:mod:`.commands`) and delegate to :mod:`podbook.remote` (no IPython
there); :mod:`.kernels` keeps one remote kernel per pod for this notebook, :mod:`.show`
renders what the remote kernel sends through IPython's own display machinery,
:mod:`.attach` turns every following cell into a ``%%pod exec`` cell, and :mod:`.transfers`
shows a transfer's progress.
"""
