"""Bearer authentication: which account a request acts for, and with which scope."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from podbook.emulator import podkeys
from podbook.emulator.problems import Problem
from podbook.emulator.store import Store

FULL = "full"
READONLY = "readonly"
POD_SCOPE = "pod:"  # a pod-scoped key: ``pod:<pod id>`` (see podkeys.py)

_FIX = "send 'Authorization: Bearer <API_KEY>' with a key of this emulator"


@dataclass(frozen=True)
class Caller:
    """The authenticated caller: an account and the scope of the key used."""

    account_id: str
    scope: str

    @property
    def can_write(self) -> bool:
        """Whether the key may change state (a pod-scoped key: its own pod only)."""
        return self.scope == FULL or self.pod_id is not None

    @property
    def pod_id(self) -> str | None:
        """The pod a pod-scoped key is good for; None for an account key."""
        return self.scope[len(POD_SCOPE) :] if self.scope.startswith(POD_SCOPE) else None


def parse_key(authorization: str | None, *, allow_bare: bool = False) -> str | None:
    """The key of an ``Authorization`` header value (``Bearer KEY``, or a bare ``KEY`` when
    ``allow_bare``); None when it is missing or malformed."""
    scheme, _, token = (authorization or "").strip().partition(" ")
    if token and scheme.lower() == "bearer":
        token = token.strip()
    elif allow_bare and not token:
        token = scheme
    else:
        return None
    if not token or any(ch.isspace() for ch in token):
        return None
    return token


def extract_key(
    authorization: str | None,
    *,
    allow_bare: bool = False,
    refuse: Callable[[int, str], Exception] = Problem,
) -> str:
    """The key of an ``Authorization`` header value, or a 401 (``refuse(401, detail)``: a
    :class:`Problem` unless the caller answers in another shape).

    The header value is never put into any message.
    """
    key = parse_key(authorization, allow_bare=allow_bare)
    if key is None:
        fault = "malformed" if authorization else "missing"
        raise refuse(401, f"{fault} Authorization header; {_FIX}")
    return key


def find_caller(store: Store, authorization: str | None) -> Caller | None:
    """The caller a ``Bearer`` key names, or None (for answers that need no key)."""
    key = parse_key(authorization)
    return _caller_of(store, key) if key is not None else None


def _caller_of(store: Store, key: str) -> Caller | None:
    found = store.lookup_key(key)
    if found is not None:
        return Caller(account_id=found[0], scope=found[1])
    pod = podkeys.resolve(store, key) if key.startswith(podkeys.PREFIX) else None
    if pod is not None:
        return Caller(account_id=pod[0], scope=POD_SCOPE + pod[1])
    return None


def authenticate(store: Store, authorization: str | None, *, allow_bare: bool = False) -> Caller:
    """Resolve the caller of a request, or raise a 401 :class:`Problem`."""
    caller = _caller_of(store, extract_key(authorization, allow_bare=allow_bare))
    if caller is None:
        raise Problem(401, f"invalid API key; {_FIX}")
    return caller


def require_write(caller: Caller) -> None:
    """403 unless the caller's key may change state."""
    if not caller.can_write:
        raise Problem(
            403,
            "this API key is read-only and cannot change resources; use a full-access key",
        )
