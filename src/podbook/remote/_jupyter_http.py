"""jupyter_server's HTTP side, as :mod:`podbook.remote.kernel` uses it: the password login
(the ``/login`` form with its ``_xsrf`` cookie), the kernels and sessions REST API, and the
address and cookies of a kernel's WebSocket.

The password is held as a :class:`podbook.client.config.Secret` and sent only in the login
form; no message, repr or log line carries it or a cookie.
"""

from __future__ import annotations

import ipaddress
import logging
import time
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import httpx

from podbook.client.config import Secret
from podbook.errors import (
    JupyterAuthFailed,
    JupyterNotAnswering,
    KernelNotFound,
    RemoteKernelError,
)

__all__ = ["JupyterServer", "is_loopback_url"]

log = logging.getLogger("podbook.remote")

_XSRF = "_xsrf"


def is_loopback_url(url: str) -> bool:
    """Whether ``url``'s host is a loopback address (no proxy from the environment then)."""
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class JupyterServer:
    """A logged-in HTTP session with one Jupyter server.

    The session is its own httpx client (its cookies, the ``_xsrf`` token): a Jupyter server
    is not the service :class:`~podbook.client.Client` speaks to, so its calls do not go
    through the client.

    :param url: the server's base URL (``http://127.0.0.1:PORT/`` or the proxy address).
    :param password: the server's password.
    :param where: how errors name the server (``"pod abc123"``).
    :param password_source: how errors name where the password came from.
    """

    def __init__(
        self,
        url: str,
        password: Secret,
        *,
        where: str,
        password_source: str = "the password given",
        timeout: float = 10.0,
    ) -> None:
        self.url = url if url.endswith("/") else f"{url}/"
        self.where = where
        self._password = password
        self._password_source = password_source
        self._session = httpx.Client(
            base_url=self.url,
            timeout=timeout,
            trust_env=not is_loopback_url(self.url),
            follow_redirects=False,
            transport=httpx.HTTPTransport(retries=1, trust_env=not is_loopback_url(self.url)),
        )

    def __repr__(self) -> str:
        return f"JupyterServer(url={self.url!r}, where={self.where!r})"

    def close(self) -> None:
        """Close the HTTP connections."""
        self._session.close()

    # -- login ------------------------------------------------------------------------------

    def wait_and_login(self, server_timeout: float) -> None:
        """Wait up to ``server_timeout`` seconds for the login page, then log in.

        :raises JupyterNotAnswering: nothing answered in time.
        :raises JupyterAuthFailed: the password was refused.
        """
        deadline = time.monotonic() + server_timeout
        pause = 0.1
        while True:
            reason = self._login_page()
            if reason is None:
                break
            if time.monotonic() + pause > deadline:
                raise JupyterNotAnswering(self.where, self.url, server_timeout, reason)
            time.sleep(pause)
            pause = min(pause * 1.5, 1.0)
        self.login()

    def _login_page(self) -> str | None:
        """GET the login page (sets the ``_xsrf`` cookie); None once it is served, else why
        not (for the error message)."""
        try:
            response = self._session.get("login")
        except httpx.TransportError as exc:
            return type(exc).__name__ if not str(exc) else f"{type(exc).__name__}: {exc}"
        if response.status_code == 200 and self._xsrf():
            return None
        return f"HTTP {response.status_code} from {self.url}login"

    def login(self) -> None:
        """Log in with the password (the ``/login`` form); the cookies stay in this session.

        :raises JupyterAuthFailed: the password was refused.
        """
        xsrf = self._xsrf()
        if not xsrf and self._login_page() is None:
            xsrf = self._xsrf()
        response = self._request(
            "POST",
            "login",
            data={"password": self._password.get_secret_value(), _XSRF: xsrf or ""},
        )
        if response.status_code in (301, 302, 303):
            return
        if response.status_code in (401, 403):
            raise JupyterAuthFailed(self.where, self._password_source)
        raise RemoteKernelError(
            f"the Jupyter server of {self.where} answered its login with HTTP "
            f"{response.status_code}; check that {self.url} is a Jupyter server"
        )

    # -- REST -------------------------------------------------------------------------------

    def _request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        headers = kwargs.pop("headers", {})
        xsrf = self._xsrf()
        if xsrf:
            headers["X-XSRFToken"] = xsrf
        try:
            return self._session.request(method, path, headers=headers, **kwargs)
        except httpx.TransportError as exc:
            raise RemoteKernelError(
                f"the Jupyter server of {self.where} at {self.url} stopped answering "
                f"({type(exc).__name__}); check that the pod is still RUNNING"
            ) from None

    def api(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """A REST call (``api/...``), logging in again once if the server forgot the login."""
        response = self._request(method, path, **kwargs)
        if response.status_code == 403 or (
            response.status_code in (301, 302) and "login" in response.headers.get("location", "")
        ):
            self.login()
            response = self._request(method, path, **kwargs)
        return response

    def start_kernel(self, kernel_name: str) -> dict[str, Any]:
        """``POST /api/kernels``: a new kernel's model (``id``, ``name``, ``execution_state``)."""
        response = self.api("POST", "api/kernels", json={"name": kernel_name})
        return self._model(response, f"start a {kernel_name!r} kernel")

    def kernel(self, kernel_id: str) -> dict[str, Any]:
        """``GET /api/kernels/{id}``.

        :raises KernelNotFound: no such kernel.
        """
        response = self.api("GET", f"api/kernels/{quote(kernel_id, safe='')}")
        if response.status_code == 404:
            raise KernelNotFound(self.where, kernel_id)
        return self._model(response, f"read kernel {kernel_id}")

    def named_session(self, name: str, kernel_name: str) -> dict[str, Any]:
        """The session ``podbook/<name>`` (a console session, as JupyterLab lists them): the
        existing one, or a new one with a new kernel. Its ``kernel`` is "the" kernel of
        that name on this server."""
        body = {
            "path": f"podbook/{name}",
            "name": f"podbook {name}",
            "type": "console",
            "kernel": {"name": kernel_name},
        }
        response = self.api("POST", "api/sessions", json=body)
        return self._model(response, f"find or start the kernel named {name!r}")

    def delete_session(self, session_id: str) -> None:
        """``DELETE /api/sessions/{id}`` (shuts its kernel down)."""
        self.api("DELETE", f"api/sessions/{quote(session_id, safe='')}")

    def interrupt(self, kernel_id: str) -> None:
        """``POST /api/kernels/{id}/interrupt``."""
        response = self.api("POST", f"api/kernels/{quote(kernel_id, safe='')}/interrupt")
        if response.status_code == 404:
            raise KernelNotFound(self.where, kernel_id)

    def shutdown(self, kernel_id: str) -> None:
        """``DELETE /api/kernels/{id}`` (a kernel already gone is fine)."""
        self.api("DELETE", f"api/kernels/{quote(kernel_id, safe='')}")

    def _model(self, response: httpx.Response, what: str) -> dict[str, Any]:
        if response.status_code >= 400:
            raise RemoteKernelError(
                f"could not {what} on the Jupyter server of {self.where}: HTTP "
                f"{response.status_code} {_message(response)}".rstrip()
            )
        model = response.json()
        if not isinstance(model, dict):
            raise RemoteKernelError(f"could not {what}: the server's answer is not an object")
        return model

    # -- WebSocket --------------------------------------------------------------------------

    def channels_url(self, kernel_id: str, session_id: str) -> str:
        """``ws(s)://.../api/kernels/{id}/channels?session_id=...``."""
        parts = urlsplit(self.url)
        scheme = "wss" if parts.scheme == "https" else "ws"
        path = f"{parts.path}api/kernels/{quote(kernel_id, safe='')}/channels"
        return urlunsplit((scheme, parts.netloc, path, f"session_id={quote(session_id)}", ""))

    def cookie_header(self) -> str:
        """The login cookies as a ``Cookie`` header value (never logged)."""
        return "; ".join(f"{cookie.name}={cookie.value}" for cookie in self._session.cookies.jar)

    def ws_headers(self) -> dict[str, str]:
        """The WebSocket handshake's headers: the login cookies and the XSRF token."""
        headers = {"Cookie": self.cookie_header()}
        xsrf = self._xsrf()
        if xsrf:
            headers["X-XSRFToken"] = xsrf
        return headers

    def _xsrf(self) -> str | None:
        """The ``_xsrf`` cookie's value (the last one set, should there be several)."""
        found = None
        for cookie in self._session.cookies.jar:
            if cookie.name == _XSRF:
                found = cookie.value
        return found

    @property
    def trust_env(self) -> bool:
        """Whether proxies from the environment apply (not for loopback addresses)."""
        return not is_loopback_url(self.url)


def _message(response: httpx.Response) -> str:
    """The ``message`` of a jupyter_server error body, if any (one line)."""
    try:
        body = response.json()
    except ValueError:
        return ""
    text = body.get("message") if isinstance(body, dict) else None
    return f"({str(text).splitlines()[0]})" if text else ""
