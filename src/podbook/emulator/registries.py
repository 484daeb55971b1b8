"""Registry credential rules on delete.

1. A credential a pod of the account still pulls with (its ``registry``) cannot be deleted:
   400 naming the pod.
2. Templates that name it are no obstacle: they lose the reference (``registry: null``).
"""

from __future__ import annotations

from podbook.emulator.problems import Problem
from podbook.emulator.store import Store


def refuse_delete_in_use(store: Store, account_id: str, registry_id: str) -> None:
    """400 naming the first pod that uses ``registry_id``."""
    pod = next((p for p in store.pods.all_of(account_id) if p.get("registry") == registry_id), None)
    if pod is not None:
        raise Problem(
            400,
            f"registry credential {registry_id!r} is in use by pod {pod['id']!r} "
            f"({pod.get('name')}); terminate that pod first",
        )


def drop_from_templates(store: Store, account_id: str, registry_id: str) -> None:
    """Set ``registry`` to null on every template of the account that names ``registry_id``."""
    for template in store.templates.all_of(account_id):
        if template.get("registry") == registry_id:
            store.templates.put(account_id, {**template, "registry": None})
