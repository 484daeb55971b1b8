"""Registry credential rules: naming one, and deleting one.

1. A pod, template or endpoint names one of its account's credentials (``registry``): 404
   otherwise.
2. A credential a pod of the account still pulls with (its ``registry``) cannot be deleted:
   400 naming the pod.
3. Templates that name it are no obstacle: they lose the reference (``registry: null``).
"""

from __future__ import annotations

from podbook.emulator.problems import Problem
from podbook.emulator.store import Store


def check_registry(
    store: Store,
    account_id: str,
    registry_id: str | None,
    instead: str = "omit registry for a public image",
) -> None:
    """404 unless ``registry_id`` (when set) is one of the account's registry credentials;
    ``instead`` ends the message (what the request may send in its place).

    Another account's credential gets the same answer as an unknown one.
    """
    if registry_id is not None and store.registries.get(account_id, registry_id) is None:
        raise Problem(
            404,
            f"registry credential {registry_id!r} not found; name one of your credentials "
            f"(GET /v2/registries) or {instead}",
            errors=[f"$.registry: registry credential {registry_id!r} not found"],
        )


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
