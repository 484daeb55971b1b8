"""``%template``, ``%volume``, ``%registry`` and ``%sshkey``: the account's resources.

:mod:`.commands` parses a line into a small command, :mod:`.handlers` calls the client and
shows the result, :mod:`.views` draws the static tables, :mod:`.sshkeys` reads key files,
:mod:`.magic` ties them together (``PodMagics`` delegates here).
"""
