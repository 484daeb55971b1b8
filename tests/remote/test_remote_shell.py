"""Shell commands in a pod over its direct SSH endpoint (``podbook.remote.ssh``), the SSH key
helper, and the one-line errors of a pod that cannot be reached.

Real pods of ``podbook emulator --runtime local`` (``local_emu`` of this folder's conftest),
with ``startSsh`` and ``22/tcp``; the key is made by podbook's own key helper in a temporary
home and registered on the account while the module runs.
"""

from __future__ import annotations

import dataclasses
import stat
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from processes import wait_for
from transfer_helpers import (  # noqa: F401 - fixtures, used by name
    client_fixture,
    conn_fixture,
    create_pod,
    key_fixture,
    new_key,
    pod_fixture,
    running,
)

from podbook import Client
from podbook.api.pods import Pod
from podbook.remote import loop
from podbook.remote.keys import (
    SshKeyPair,
    ensure_key_registered,
    find_key,
    is_registered,
    podbook_key_path,
)
from podbook.remote.ssh import PodConnection, RemoteError, connect, run

pytestmark = pytest.mark.timeout(120)


# ---------------------------------------------------------------- shell


def test_output_streams_in_order_as_it_arrives_and_the_exit_status_returns(
    conn: PodConnection,
) -> None:
    events: list[tuple[str, float, str, str]] = []

    def note(stream: str) -> Any:
        return lambda text: events.append(
            (stream, time.monotonic(), text, threading.current_thread().name)
        )

    script = (
        "echo one\n"
        "sleep 0.6\n"
        "echo two >&2\n"
        "printf 'caf\\303'; sleep 0.2; printf '\\251 three\\n'\n"  # é split across chunks
        'echo "pod=$RUNPOD_POD_ID"\n'
        "exit 7\n"
    )
    status = conn.run(script, on_stdout=note("out"), on_stderr=note("err"))
    ended = time.monotonic()
    assert status == 7
    out = "".join(text for stream, _, text, _ in events if stream == "out")
    err = "".join(text for stream, _, text, _ in events if stream == "err")
    assert out == f"one\ncafé three\npod={conn.pod_id}\n"
    assert err == "two\n"
    first = next(t for stream, t, text, _ in events if text.startswith("one"))
    assert ended - first >= 0.6, "the first line came only at the end, not as it was printed"
    assert {thread for *_, thread in events} == {threading.current_thread().name}


def test_cwd_env_and_a_signal_status(conn: PodConnection) -> None:
    out: list[str] = []
    status = conn.run(
        'pwd; echo "$GREETING"; kill -TERM $$',
        cwd="/",
        env={"GREETING": "it's me"},
        on_stdout=out.append,
        on_stderr=out.append,
    )
    assert status == 128 + 15
    lines = "".join(out).splitlines()
    assert lines[1] == "it's me"


def test_an_interrupted_script_ends_in_the_pod(conn: PodConnection) -> None:
    seen: list[str] = []

    def stop_at_start(text: str) -> None:
        seen.append(text)
        if "started" in text:
            raise KeyboardInterrupt

    script = (
        "echo $$ > interrupted.pid\n"
        "sleep 60 &\n"
        "echo $! > interrupted-child.pid\n"
        "trap '' INT\n"  # the script ignores SIGINT: SIGTERM ends it
        "echo started\n"
        "sleep 60\n"
        "echo never\n"
    )
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        conn.run(script, on_stdout=stop_at_start)
    assert time.monotonic() - started < loop.CANCEL_GRACE
    assert "never" not in "".join(seen)

    def gone() -> bool:
        out: list[str] = []
        conn.run(
            "for f in interrupted.pid interrupted-child.pid; do "
            'kill -0 "$(cat $f)" 2>/dev/null && echo alive; done; true',
            on_stdout=out.append,
        )
        return "alive" not in "".join(out)

    wait_for(gone, timeout=10, interval=0.2, what="the interrupted script and its child ended")


def test_run_by_pod_id_with_a_client(client: Client, pod: Pod, key: SshKeyPair) -> None:
    out: list[str] = []
    assert run(pod.id, "echo by-id", client=client, key=key, on_stdout=out.append) == 0
    assert out == ["by-id\n"]


def test_a_script_too_long_for_a_command_line_is_refused_in_one_line(conn: PodConnection) -> None:
    with pytest.raises(RemoteError) as info:
        conn.run("true\n" * 40_000)
    assert info.value.reason == "script-too-long"
    assert "\n" not in str(info.value)


# ---------------------------------------------------------------- keys


def test_the_key_helper_makes_one_key_with_tight_modes_and_registers_it(
    tmp_path: Path, client: Client
) -> None:
    home = tmp_path / "podbook-home"
    empty = tmp_path / "ssh"
    empty.mkdir()
    made = find_key(ssh_dir=empty, home=home)
    assert made.created and made.origin == "podbook"
    assert made.private == podbook_key_path(home) == home / "ssh" / "id_ed25519"
    assert stat.S_IMODE(made.private.stat().st_mode) == 0o600
    assert stat.S_IMODE(made.private.parent.stat().st_mode) == 0o700
    assert made.public.read_text().strip() == made.public_line
    again = find_key(ssh_dir=empty, home=home)
    assert not again.created and again.private == made.private
    assert again.public_line == made.public_line
    private_text = made.private.read_text()
    try:
        first = ensure_key_registered(client, made)
        assert first.added and is_registered(client, made)
        second = ensure_key_registered(client, made)
        assert not second.added
        for text in (str(first), str(second), repr(first), repr(made)):
            assert "\n" not in text.strip()
            assert "PRIVATE" not in text and private_text.split("\n")[1] not in text
        assert made.fingerprint in str(second)
        assert "registered" in str(first) and "older pods" in str(first)
    finally:
        keys = client.account.ssh_keys.get().keys
        client.account.ssh_keys.put(
            [k for k in keys if k.split()[:2] != made.public_line.split()[:2]]
        )


def test_the_users_own_key_wins_and_one_with_a_passphrase_or_no_pub_is_passed_over(
    tmp_path: Path,
) -> None:
    import asyncssh

    user = tmp_path / "ssh"
    user.mkdir()
    locked = asyncssh.generate_private_key("ssh-ed25519")
    locked.write_private_key(user / "id_ed25519", passphrase="secret")
    locked.write_public_key(user / "id_ed25519.pub")
    own = asyncssh.generate_private_key("ssh-rsa", key_size=2048)
    own.write_private_key(user / "id_rsa")
    (user / "id_ecdsa").write_text("no public half beside it\n")
    chosen = find_key(ssh_dir=user, home=tmp_path / "home")  # none of them is usable
    assert chosen.origin == "podbook" and chosen.created
    own.write_public_key(user / "id_rsa.pub")
    chosen = find_key(ssh_dir=user, home=tmp_path / "home")
    assert chosen.origin == "user" and chosen.private == user / "id_rsa" and not chosen.created
    assert chosen.public_line.split()[:2] == own.export_public_key().decode().split()[:2]


# ---------------------------------------------------------------- errors, one line each


def one_line(exc: RemoteError) -> str:
    text = str(exc)
    assert "\n" not in text and "Traceback" not in text
    return text


def test_an_unregistered_key_is_refused_with_the_fix(
    pod: Pod, client: Client, tmp_path: Path
) -> None:
    stranger = new_key(tmp_path)
    with pytest.raises(RemoteError) as info:
        connect(pod.id, client=client, key=stranger.private)
    text = one_line(info.value)
    assert info.value.reason == "key-refused"
    assert "%sshkey add" in text and str(stranger.public) in text
    assert stranger.fingerprint in text


def test_a_pod_without_22_tcp_a_pod_without_ssh_and_a_stopped_pod(
    client: Client, key: SshKeyPair
) -> None:
    no_port = create_pod(client, startSsh=True, ports=["8000/http"])
    no_server = create_pod(client, ports=["22/tcp"])  # no startSsh: no SSH server
    try:
        no_port = running(client, no_port, ssh=False)
        with pytest.raises(RemoteError) as info:
            connect(no_port, client=client, key=key)
        assert info.value.reason == "no-direct-ssh"
        assert "--ports ...,22/tcp --ssh" in one_line(info.value)
        assert "no SFTP" in str(info.value)

        no_server = running(client, no_server, ssh=False)
        with pytest.raises(RemoteError) as info:
            connect(no_server.id, client=client, key=key)
        assert info.value.reason == "unavailable"
        assert no_server.ssh.unavailable
        assert no_server.ssh.unavailable.rstrip(".") in one_line(info.value)

        client.pods.stop(no_port)
        client.pods.wait_for(no_port, "EXITED", timeout=30, poll_interval=0.05)
        with pytest.raises(RemoteError) as info:
            connect(no_port.id, client=client, key=key)
        assert info.value.reason == "not-running"
        assert f"pod {no_port.id} is EXITED, not RUNNING" in one_line(info.value)
    finally:
        client.pods.terminate(no_port.id)
        client.pods.terminate(no_server.id)


def test_a_closed_port_is_unreachable_in_one_line(pod: Pod, key: SshKeyPair) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        free = sock.getsockname()[1]
    assert pod.ssh.direct is not None
    direct = dataclasses.replace(pod.ssh.direct, port=free)
    closed = pod.model_copy(update={"ssh": dataclasses.replace(pod.ssh, direct=direct)})
    with pytest.raises(RemoteError) as info:
        connect(closed, key=key, timeout=5)
    assert info.value.reason == "unreachable"
    assert "refused the connection" in one_line(info.value)


def test_host_keys_of_other_hosts_are_accepted_new_then_checked(
    pod: Pod, key: SshKeyPair, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from podbook.remote import ssh

    monkeypatch.setattr(ssh, "is_loopback", lambda host: False)  # treat the pod as remote
    known = tmp_path / "ssh" / "known_hosts"
    connect(pod, key=key, known_hosts=known).close()
    assert pod.ssh.direct is not None
    pattern = f"[{pod.ssh.direct.host}]:{pod.ssh.direct.port}"
    recorded = known.read_text().splitlines()
    assert len(recorded) == 1 and recorded[0].startswith(f"{pattern} ssh-ed25519 ")
    connect(pod, key=key, known_hosts=known).close()  # the same key: accepted, not added again
    assert known.read_text().splitlines() == recorded

    import asyncssh

    other = asyncssh.generate_private_key("ssh-ed25519").export_public_key().decode().split()
    known.write_text(f"{pattern} {other[0]} {other[1]}\n")
    with pytest.raises(RemoteError) as info:
        connect(pod, key=key, known_hosts=known)
    assert info.value.reason == "host-key"
    assert str(known) in one_line(info.value) and pattern in str(info.value)


def test_loopback_pods_are_not_recorded(pod: Pod, key: SshKeyPair, tmp_path: Path) -> None:
    known = tmp_path / "known_hosts"
    connect(pod, key=key, known_hosts=known).close()
    assert not known.exists()
