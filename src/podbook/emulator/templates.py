"""Templates: the account's own (stored) and the public catalog's, and the seed's rules.

1. A template is resolved at creation into image, args, disk, ports, env, registry,
   persistent mount, startSsh, startJupyter and allowedCudaVersions.
2. Explicit body fields override the template's, except ``env``, merged per key (body wins).
3. Sending ``allowedCudaVersions`` or ``minCudaVersion`` replaces the template's CUDA
   constraint entirely; CPU pods ignore the template's CUDA constraint and persistent mount.
4. The pod keeps a copy: later template edits do not affect it (and ``template`` stays null).
5. Unknown or another account's template → 404; a serverless template → 422.

Serverless endpoints (reference ``CreateEndpointRequest``/``UpdateEndpointRequest``) take the
mirror rule: ``templateId`` must name a serverless template (a pod template → 422). Image,
args, disk, ports, env and registry come from it unless the body gives them (``env`` merged
per key, body wins); on create its ``allowedCudaVersions`` seeds ``gpu.allowedCudaVersions``
when the body has a ``gpu`` block naming neither CUDA field. startSsh/startJupyter are
ignored, and no link to the template is kept.
"""

from __future__ import annotations

from typing import Any

from podbook.emulator import catalog_data
from podbook.emulator.problems import Problem, not_found
from podbook.emulator.store import Store

Template = dict[str, Any]

_DEFAULTS: dict[str, Any] = {
    "args": "",
    "disk": 20,
    "mounts": {},
    "ports": [],
    "env": {},
    "registry": None,
    "serverless": False,
    "public": False,
    "category": "NVIDIA",
    "startSsh": False,
    "startJupyter": False,
    "allowedCudaVersions": [],
}


def normalize_template(raw: dict[str, Any]) -> Template:
    """A complete template record (reference ``Template`` shape) from a partial one."""
    template = {key: raw.get(key, default) for key, default in _DEFAULTS.items()}
    template["id"] = str(raw["id"])
    template["name"] = str(raw.get("name") or raw["id"])
    template["image"] = str(raw["image"])
    if "isServerless" in raw:
        template["serverless"] = bool(raw["isServerless"])
    return template


def public_templates() -> list[Template]:
    """The built-in public catalog templates."""
    return [normalize_template(t) for t in catalog_data.public_templates()]


def find_template(
    store: Store, account_id: str, template_id: str, *, serverless: bool = False
) -> Template:
    """The caller's own template or a public one of the wanted kind (pod by default).

    Unknown or another account's → 404; a template of the other kind → 422.
    """
    template = store.templates.get(account_id, template_id)
    if template is None:
        template = next((t for t in public_templates() if t["id"] == template_id), None)
    if template is None:
        raise not_found("template", template_id)
    if bool(template.get("serverless")) != serverless:
        if serverless:
            raise Problem(
                422,
                f"template {template_id!r} is a pod template and cannot configure a serverless "
                "endpoint; pick a serverless template (isServerless)",
                errors=[f"$.templateId: template {template_id!r} is for pods"],
            )
        raise Problem(
            422,
            f"template {template_id!r} is a serverless template and cannot create a pod; "
            "pick a pod template",
            errors=[f"$.templateId: template {template_id!r} is for serverless endpoints"],
        )
    return template


_CONTAINER_FIELDS = ("image", "args", "disk", "ports", "registry")


def apply_endpoint_template(
    template: Template, body: dict[str, Any], *, create: bool
) -> dict[str, Any]:
    """Merge a serverless ``template`` under an endpoint create or update ``body``.

    The answer has no ``templateId``: the endpoint keeps the settings, not a link.
    """
    merged = {key: value for key, value in body.items() if key != "templateId"}
    for name in _CONTAINER_FIELDS:
        if name not in body:
            merged[name] = template.get(name)
    merged["env"] = {**(template.get("env") or {}), **(body.get("env") or {})}
    cuda = template.get("allowedCudaVersions")
    if create and cuda and isinstance(body.get("gpu"), dict):
        gpu = dict(body["gpu"])
        if "allowedCudaVersions" not in gpu and "minCudaVersion" not in gpu:
            merged["gpu"] = {**gpu, "allowedCudaVersions": list(cuda)}
    return merged


def apply_template(template: Template, body: dict[str, Any], *, cpu: bool) -> dict[str, Any]:
    """Merge ``template`` under a create ``body`` (wire names) following the seed's rules."""
    merged = dict(body)
    for name in ("image", "args", "disk", "ports", "registry"):
        if name not in body:
            merged[name] = template.get(name)
    merged["env"] = {**(template.get("env") or {}), **(body.get("env") or {})}
    for flag in ("startSsh", "startJupyter"):
        if flag not in body:
            merged[flag] = bool(template.get(flag))
    persistent = (template.get("mounts") or {}).get("persistent")
    if "mounts" not in body and persistent and not cpu:
        merged["mounts"] = {"persistent": dict(persistent)}
    if not cpu and template.get("allowedCudaVersions"):
        gpu = dict(merged.get("gpu") or {})
        if "allowedCudaVersions" not in gpu and "minCudaVersion" not in gpu:
            gpu["allowedCudaVersions"] = list(template["allowedCudaVersions"])
            merged["gpu"] = gpu
    return merged
