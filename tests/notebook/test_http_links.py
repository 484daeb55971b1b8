"""The panels' HTTP port links: the service's proxy address, or the local runtime's loopback
mapping from ``runtime.ports`` (the same rule as ``portUrl`` in js/src/pod.js)."""

from __future__ import annotations

from podbook.notebook.panels.data import http_links


def test_the_service_proxy_link_without_a_loopback_mapping() -> None:
    pod = {"id": "abc", "ports": ["8888/http", "22/tcp"], "runtime": None}
    assert http_links(pod) == {"8888/http": "https://abc-8888.proxy.runpod.net"}
    remote = {
        "id": "abc",
        "ports": ["8888/http"],
        "runtime": {"ports": [{"private": 8888, "public": 8888, "ip": "0.0.0.0"}]},
    }
    assert http_links(remote) == {"8888/http": "https://abc-8888.proxy.runpod.net"}


def test_the_local_runtime_link_is_its_loopback_port() -> None:
    pod = {
        "id": "abc",
        "ports": ["8888/http", "8080/http", "22/tcp"],
        "runtime": {
            "ports": [
                {"private": 8888, "public": 41234, "type": "http", "ip": "127.0.0.1"},
                {"private": 8080, "public": None, "type": "http", "ip": "127.0.0.1"},
                {"private": 22, "public": 40022, "type": "tcp", "ip": "127.0.0.1"},
            ]
        },
    }
    assert http_links(pod) == {
        "8888/http": "http://127.0.0.1:41234/",
        "8080/http": "https://abc-8080.proxy.runpod.net",
    }
