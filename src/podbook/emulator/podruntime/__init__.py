"""The local pod runtime: pods of the emulator that run for real on this machine.

With ``podbook emulator --runtime local`` every pod that the emulator says is running gets a
sandbox (a directory tree under the emulator's home), its ``args`` as a real main process, real
loopback ports, an SSH server (``ssh.py``) and a Jupyter server (``jupyter.py``). The sandbox is
NOT a security boundary: the processes run as the emulator's user and see the host's files.
"""
