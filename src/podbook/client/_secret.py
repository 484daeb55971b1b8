"""Secret strings that never show: the API key as the configuration holds it.

Standard library only (no pydantic), like :mod:`podbook.client.config`, which re-exports
these names.
"""

from __future__ import annotations

from typing import Protocol

from podbook.errors import ConfigError

__all__ = ["Secret", "SecretLike", "reveal"]


class SecretLike(Protocol):
    """Anything that holds a secret string: :class:`Secret`, pydantic's ``SecretStr``."""

    def get_secret_value(self) -> str:
        """The secret itself."""
        ...


class Secret:
    """A secret string that never shows: ``str()`` and ``repr()`` are masked.

    ``get_secret_value()`` reveals it, as with pydantic's ``SecretStr`` (which the client
    also accepts as an argument); this class exists so that the configuration needs no
    pydantic import. Two secrets are equal when their values are.
    """

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def get_secret_value(self) -> str:
        """The secret itself (for the ``Authorization`` header only)."""
        return self._value

    def __str__(self) -> str:
        return "**********" if self._value else ""

    def __repr__(self) -> str:
        return f"Secret('{self}')"

    def __len__(self) -> int:
        return len(self._value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


def reveal(secret: str | SecretLike | None) -> str | None:
    """The plain value of ``secret``: a ``str``, a :class:`Secret`, or any object with
    ``get_secret_value()`` (pydantic's ``SecretStr``); ``None`` stays ``None``."""
    if secret is None or isinstance(secret, str):
        return secret
    getter = getattr(secret, "get_secret_value", None)
    if getter is None:
        raise ConfigError(
            f"api_key must be a string or a secret string, not {type(secret).__name__}"
        )
    value = getter()
    if not isinstance(value, str):
        raise ConfigError(f"api_key must hold a string, not {type(value).__name__}")
    return value
