"""Parsers of ``%template``, ``%volume``, ``%registry`` and ``%sshkey`` (argparse, one per
subcommand, with the conventions of ``%pod``: ``{var}`` expanded, ``-o NAME``, ``--help``)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from IPython.core.error import UsageError

from podbook.notebook.parsing import (
    MagicArgumentParser,
    Subcommand,
    add_output_argument,
    magic_parser,
)
from podbook.notebook.values import (
    COMMA_LIST,
    ENV,
    PERSISTENT,
    PORTS,
    POSITIVE_INT,
    value_type,
)

if TYPE_CHECKING:
    from podbook.api.base import RequestModel

M = TypeVar("M", bound="RequestModel")

CATEGORIES = ("NVIDIA", "AMD", "CPU")
VOLUME_TYPES = ("STANDARD", "HIGH_PERFORMANCE")


def _choice(options: tuple[str, ...]) -> Callable[[str], str]:
    def pick(text: str) -> str:
        value = text.strip().upper()
        if value not in options:
            raise ValueError(text)
        return value

    return value_type(pick, " or ".join(options))


def _env_var(text: str) -> str:
    if not text or not all(c.isalnum() or c == "_" for c in text) or text[0].isdigit():
        raise ValueError(text)
    return text


ENV_VAR = value_type(_env_var, "an environment variable name, e.g. REGISTRY_PASSWORD")


@dataclass(frozen=True)
class AccountCommand:
    """One parsed line: ``verb``, the target ``ident`` (if any), the ``fields`` of its request
    that the line gave (by their Python names; ``None``: not given), the fields it clears
    (sent as null), the other ``options``, where to store the result."""

    verb: str
    ident: str | None = None
    fields: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    output: str | None = None
    cleared: tuple[str, ...] = ()

    def request(self, model: type[M], **more: Any) -> M:
        """The ``model`` request of the line's fields and ``more`` (an
        :class:`~podbook.errors.InvalidRequest` for a value the service would refuse, before
        anything is sent)."""
        from podbook.notebook.request import request_model

        return request_model(model, cleared=self.cleared, **self.fields, **more)


def _ident(parser: argparse.ArgumentParser, what: str, listing: str) -> None:
    listing = listing.replace("%", "%%")  # argparse formats help with %
    parser.add_argument("ident", metavar="ID", help=f"the {what}'s ID (see {listing})")


# ---------------------------------------------------------------------------- %template


def _template_fields(parser: argparse.ArgumentParser, *, create: bool) -> None:
    group = parser.add_argument_group("template")
    group.add_argument("--name", required=create, help="the template's name")
    group.add_argument("--image", required=create, help="container image, e.g. runpod/pytorch")
    group.add_argument("--disk", type=POSITIVE_INT, metavar="GB", help="container disk in GB")
    group.add_argument("--ports", type=PORTS, metavar="P/PROTO,...", help="e.g. 8888/http,22/tcp")
    group.add_argument("--env", type=ENV, action="append", metavar="KEY=VALUE", help="repeatable")
    group.add_argument("--registry", metavar="CREDENTIAL_ID", help="registry credential ID")
    group.add_argument("--args", dest="container_args", metavar="ARGS", help="entrypoint args")
    group.add_argument("--cuda", type=COMMA_LIST, metavar="X.Y[,X.Y]", help="allowed CUDA")
    group.add_argument(
        "--persistent", type=PERSISTENT, metavar="SIZE:PATH", help="host-local mount"
    )
    group.add_argument("--category", type=_choice(CATEGORIES), metavar="|".join(CATEGORIES))
    kind = group.add_mutually_exclusive_group()
    kind.add_argument("--serverless", action="store_true", default=None, help="for endpoints")
    kind.add_argument("--pod", dest="serverless", action="store_false", help="for pods")
    group.add_argument("--public", action="store_true", default=None, help="visible to all")
    group.add_argument(
        "--ssh", action=argparse.BooleanOptionalAction, default=None, help="inject SSH keys"
    )
    group.add_argument(
        "--jupyter", action=argparse.BooleanOptionalAction, default=None, help="JUPYTER_PASSWORD"
    )


def _template_fields_given(ns: argparse.Namespace) -> dict[str, Any]:
    """The template request's fields that the line gave."""
    given = {
        "name": ns.name,
        "image": ns.image,
        "disk": ns.disk,
        "ports": ns.ports,
        "env": dict(ns.env) if ns.env else None,
        "registry": ns.registry,
        "args": ns.container_args,
        "allowed_cuda_versions": ns.cuda,
        "mounts": {"persistent": ns.persistent} if ns.persistent else None,
        "category": ns.category,
        "serverless": ns.serverless,
        "public": ns.public,
        "start_ssh": ns.ssh,
        "start_jupyter": ns.jupyter,
    }
    return {name: value for name, value in given.items() if value is not None}


def build_template_subcommands() -> dict[str, Subcommand]:
    """``%template create|list|show|update|delete``."""
    create = magic_parser("%template create", "Create a template (a preset for pods or endpoints).")
    _template_fields(create, create=True)
    add_output_argument(create)
    update = magic_parser("%template update", "Change some fields of one of your templates.")
    _ident(update, "template", "%template list")
    _template_fields(update, create=False)
    update.add_argument("--no-registry", action="store_true", help="drop the registry")
    add_output_argument(update)
    listing = magic_parser("%template list", "List your templates (or the public catalog's).")
    listing.add_argument("--public", action="store_true", help="the public catalog templates")
    add_output_argument(listing)

    def updated(ns: argparse.Namespace) -> AccountCommand:
        fields = _template_fields_given(ns)
        cleared = ("registry",) if ns.no_registry else ()
        if not fields and not cleared:
            raise UsageError(
                "%template update: nothing to change; add e.g. --image NEW or --name NEW."
            )
        return AccountCommand("update", ns.ident, fields, output=ns.output, cleared=cleared)

    commands = {
        "create": Subcommand(
            create,
            lambda ns: AccountCommand(
                "create", fields=_template_fields_given(ns), output=ns.output
            ),
            "create a template",
        ),
        "list": Subcommand(
            listing,
            lambda ns: AccountCommand("list", options={"public": ns.public}, output=ns.output),
            "list templates",
        ),
        "update": Subcommand(update, updated, "change a template"),
    }
    commands.update(_by_id("template", "%template list", ("show", "delete")))
    return commands


def _by_id(what: str, listing: str, verbs: tuple[str, ...]) -> dict[str, Subcommand]:
    commands = {}
    for verb in verbs:
        parser = magic_parser(f"%{what} {verb}", f"{verb.capitalize()} one {what}.")
        _ident(parser, what, listing)
        add_output_argument(parser)
        commands[verb] = Subcommand(
            parser,
            lambda ns, verb=verb: AccountCommand(verb, ns.ident, output=ns.output),
            f"{verb} a {what}",
        )
    return commands


# ---------------------------------------------------------------------------- %volume


def build_volume_subcommands() -> dict[str, Subcommand]:
    """``%volume create|list|show|update|delete``."""
    create = magic_parser("%volume create", "Create a network volume in one data center.")
    create.add_argument("--name", required=True, help="the volume's name")
    create.add_argument("--size", type=POSITIVE_INT, required=True, metavar="GB", help="10-4096")
    create.add_argument("--dc", required=True, metavar="DC_ID", help="data center, e.g. EU-RO-1")
    create.add_argument("--type", type=_choice(VOLUME_TYPES), metavar="|".join(VOLUME_TYPES))
    add_output_argument(create)
    update = magic_parser("%volume update", "Rename a volume or grow it (it never shrinks).")
    _ident(update, "volume", "%volume list")
    update.add_argument("--name", help="a new name")
    update.add_argument("--size", type=POSITIVE_INT, metavar="GB", help="a larger size")
    add_output_argument(update)
    listing = magic_parser("%volume list", "List your network volumes.")
    add_output_argument(listing)

    def created(ns: argparse.Namespace) -> AccountCommand:
        fields = {"name": ns.name, "size": ns.size, "data_center": ns.dc, "type": ns.type}
        return AccountCommand("create", fields=fields, output=ns.output)

    def updated(ns: argparse.Namespace) -> AccountCommand:
        if ns.name is None and ns.size is None:
            raise UsageError("%volume update: nothing to change; add --size GB or --name NEW.")
        fields = {"name": ns.name, "size": ns.size}
        return AccountCommand("update", ns.ident, fields, output=ns.output)

    commands = {
        "create": Subcommand(create, created, "create a network volume"),
        "list": Subcommand(
            listing, lambda ns: AccountCommand("list", output=ns.output), "list volumes"
        ),
        "update": Subcommand(update, updated, "rename or grow a volume"),
    }
    commands.update(_by_id("volume", "%volume list", ("show", "delete")))
    return commands


# ---------------------------------------------------------------------------- %registry

_PASSWORD_FIX = "leave it out to be asked (hidden), or use --password-env VAR"


class _NoEchoParser(MagicArgumentParser):
    """``%registry create``: its errors never repeat stray words (one may be a password)."""

    def error(self, message: str) -> NoReturn:
        if message.startswith("unrecognized arguments"):
            raise UsageError(
                f"{self.prog}: unexpected words on the line (not repeated: one may be a "
                f"password); a password is never typed into a cell: {_PASSWORD_FIX}. "
                f"See `{self.prog} --help`."
            )
        if message.startswith("argument --password-env"):
            raise UsageError(
                f"{self.prog}: --password-env takes the NAME of an environment variable that "
                "holds the password (e.g. REGISTRY_PASSWORD), not the password itself."
            )
        super().error(message)


def _registry_create(ns: argparse.Namespace) -> AccountCommand:
    if ns.typed_password is not None:
        raise UsageError(
            "%registry create: --password is refused (a password typed into a cell stays in "
            f"the notebook and its history); {_PASSWORD_FIX}."
        )
    return AccountCommand(
        "create",
        fields={"name": ns.name, "username": ns.username},
        options={"password_env": ns.password_env},
        output=ns.output,
    )


def build_registry_subcommands() -> dict[str, Subcommand]:
    """``%registry create|list|delete`` (the password is never on the line)."""
    create = _NoEchoParser(
        prog="%registry create",
        description="Store a registry credential. The password is asked for (hidden), or read "
        "from the environment variable named by --password-env; it is never typed into a cell.",
    )
    create.add_argument("--name", required=True, help="the credential's name")
    create.add_argument("--username", required=True, help="the registry user name")
    create.add_argument(
        "--password-env", type=ENV_VAR, metavar="VAR", help="read the password from $VAR"
    )
    create.add_argument("--password", dest="typed_password", help=argparse.SUPPRESS)
    add_output_argument(create)
    listing = magic_parser("%registry list", "List your registry credentials (names only).")
    add_output_argument(listing)
    delegate = magic_parser(
        "%registry delegate",
        "Let the service pull from a private Amazon ECR repository (no password stored).",
    )
    delegate.add_argument(
        "--resource",
        required=True,
        metavar="ARN",
        help="arn:aws:ecr:REGION:ACCOUNT:repository/NAME[:TAG]",
    )
    delegate.add_argument("--name", help="a name for the delegation")
    add_output_argument(delegate)
    delegations = magic_parser("%registry delegations", "List your ECR delegations.")
    add_output_argument(delegations)
    revoke = magic_parser("%registry revoke", "Revoke one ECR delegation.")
    _ident(revoke, "ECR delegation", "%registry delegations")
    add_output_argument(revoke)
    return {
        "create": Subcommand(create, _registry_create, "store a credential"),
        "list": Subcommand(
            listing, lambda ns: AccountCommand("list", output=ns.output), "list credentials"
        ),
        **_by_id("registry", "%registry list", ("delete",)),
        "delegate": Subcommand(
            delegate,
            lambda ns: AccountCommand(
                "delegate",
                fields={"resource": ns.resource, "name": ns.name},
                output=ns.output,
            ),
            "register an ECR delegation",
        ),
        "delegations": Subcommand(
            delegations,
            lambda ns: AccountCommand("delegations", output=ns.output),
            "list ECR delegations",
        ),
        "revoke": Subcommand(
            revoke,
            lambda ns: AccountCommand("revoke", ns.ident, output=ns.output),
            "revoke an ECR delegation",
        ),
    }


# ---------------------------------------------------------------------------- %sshkey


def build_sshkey_subcommands() -> dict[str, Subcommand]:
    """``%sshkey list|add|remove|set``."""
    listing = magic_parser("%sshkey list", "List the account's SSH public keys.")
    add_output_argument(listing)
    add = magic_parser("%sshkey add", "Register public keys: files, --key LINE, or --from-home.")
    remove = magic_parser("%sshkey remove", "Remove keys by number (from %sshkey list) or comment.")
    replace = magic_parser(
        "%sshkey set", "Replace all keys with these (files, --key or --from-home)."
    )
    for parser in (add, replace):
        parser.add_argument("files", nargs="*", metavar="PATH", help="public key files (.pub)")
        parser.add_argument("--key", action="append", metavar="LINE", help="a key line")
        parser.add_argument(
            "--from-home", action="store_true", help="every ~/.ssh/*.pub of this machine"
        )
        add_output_argument(parser)
    remove.add_argument("which", nargs="+", metavar="N|COMMENT", help="key number or comment")
    add_output_argument(remove)

    def sources(verb: str) -> Callable[[argparse.Namespace], AccountCommand]:
        def build(ns: argparse.Namespace) -> AccountCommand:
            options = {"files": ns.files, "keys": ns.key or [], "from_home": ns.from_home}
            if verb == "add" and not (ns.files or ns.key or ns.from_home):
                raise UsageError(
                    "%sshkey add: name a key: a PATH to a .pub file, --key 'ssh-ed25519 ...', "
                    "or --from-home."
                )
            return AccountCommand(verb, options=options, output=ns.output)

        return build

    return {
        "list": Subcommand(
            listing, lambda ns: AccountCommand("list", output=ns.output), "list keys"
        ),
        "add": Subcommand(add, sources("add"), "register keys"),
        "remove": Subcommand(
            remove,
            lambda ns: AccountCommand("remove", options={"which": ns.which}, output=ns.output),
            "remove keys",
        ),
        "set": Subcommand(replace, sources("set"), "replace all keys"),
    }


SUBCOMMANDS: dict[str, Callable[[], dict[str, Subcommand]]] = {
    "template": build_template_subcommands,
    "volume": build_volume_subcommands,
    "registry": build_registry_subcommands,
    "sshkey": build_sshkey_subcommands,
}
