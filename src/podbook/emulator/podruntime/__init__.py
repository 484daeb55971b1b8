"""The local pod runtime: pods of the emulator that run for real on this machine.

With ``podbook emulator --runtime local`` every pod that the emulator says is running gets a
sandbox (a directory tree under the emulator's home), its ``args`` as a real main process, real
loopback ports, an SSH server (``ssh.py``) and a Jupyter server (``jupyter.py``). Its processes
run as the emulator's user; every one ends with the pod (``confine.py``) and, where the kernel
has Landlock, none can reach the emulator's home and database (``landlock.py``). What holds
exactly: docs/local-runtime.md, Isolation.
"""
