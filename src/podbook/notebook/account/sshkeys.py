"""Reading SSH public keys for ``%sshkey``: from named files, from ``~/.ssh/*.pub`` (only when
asked), or given as lines; and picking keys to remove by number or comment."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from IPython.core.error import UsageError

_PRIVATE_MARK = "PRIVATE KEY"


def read_key_file(path: str | Path) -> list[str]:
    """The key lines of a public key file; a usage error for a private key or a missing file."""
    file = Path(path).expanduser()
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"%sshkey: no file {str(file)!r}; give the path of a .pub file.") from None
    except (OSError, ValueError) as err:  # ValueError: a NUL in the path, or not UTF-8
        raise UsageError(f"%sshkey: cannot read {str(file)!r} ({err}); give a .pub file.") from None
    if _PRIVATE_MARK in text:
        raise UsageError(
            f"%sshkey: {str(file)!r} is a private key; give its public half ({file.name}.pub)."
        )
    return [line.strip() for line in text.splitlines() if line.strip()]


def home_keys(home: Path | None = None) -> list[str]:
    """Every key line of ``~/.ssh/*.pub``; a usage error naming the fix when there is none."""
    folder = (home or Path.home()) / ".ssh"
    files = sorted(folder.glob("*.pub"))
    keys = [line for file in files for line in read_key_file(file)]
    if not keys:
        raise UsageError(
            f"%sshkey: no public key in {folder}/*.pub; create one with "
            "`ssh-keygen -t ed25519`, or give --key LINE."
        )
    return keys


def gather(files: Iterable[str], lines: Iterable[str], from_home: bool) -> list[str]:
    """The key lines named by a ``%sshkey add|set`` line, in order, without repeats."""
    keys = [key for file in files for key in read_key_file(file)]
    keys += [line.strip() for line in lines if line.strip()]
    if from_home:
        keys += home_keys()
    return unique(keys)


def unique(keys: Iterable[str]) -> list[str]:
    """``keys`` without repeats (the same key type and body count as one)."""
    seen: set[tuple[str, ...]] = set()
    result = []
    for key in keys:
        identity = tuple(key.split()[:2])
        if identity not in seen:
            seen.add(identity)
            result.append(key)
    return result


def comment(key: str) -> str:
    """The comment of a key line (``user@host``), or ``""``."""
    parts = key.split(None, 2)
    return parts[2] if len(parts) > 2 else ""


def remaining(keys: list[str], which: Iterable[str]) -> list[str]:
    """``keys`` less those named by number (1-based, as listed) or by exact comment."""
    drop: set[int] = set()
    for item in which:
        if item.isdigit() and 1 <= int(item) <= len(keys):
            drop.add(int(item) - 1)
            continue
        matches = {i for i, key in enumerate(keys) if comment(key) == item}
        if not matches:
            raise UsageError(
                f"%sshkey remove: no key {item!r}; use a number or comment from %sshkey list."
            )
        drop |= matches
    return [key for i, key in enumerate(keys) if i not in drop]
