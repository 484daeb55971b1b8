"""Every magic fed hostile and random argument strings in a real IPython shell against a real
emulator: each call is a valid action or ONE line of error (``UsageError:`` /
``ServiceError:``, the service's ``errors[]`` items may follow as ``  - `` lines), never a
traceback, never a hang (each call runs under an alarm).

The shell talks to an emulator of its own, so that whatever a hostile line happens to do
(create, delete, replace SSH keys) cannot disturb the session emulator other tests share.
"""

from __future__ import annotations

import getpass
import signal
import time
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from IPython.core.interactiveshell import InteractiveShell
from nbhelpers import CellRun, run_cell

CALL_SECONDS = 60  # generous: two cores shared by several test runs

SUBCOMMANDS: dict[str, list[str]] = {
    "pod": ["create", "list", "logs", "show", "ssh", "start", "stop", "restart", "terminate"],
    "cluster": ["show"],
    "catalog": ["gpus", "cpus", "datacenters"],
    "template": ["create", "list", "update", "show", "delete"],
    "volume": ["create", "list", "update", "show", "delete"],
    "registry": ["create", "list", "delete", "delegate", "delegations", "revoke"],
    "sshkey": ["list", "add", "remove", "set"],
    "job": ["status", "cancel", "retry"],
    "endpoint": ["health", "purge", "serve", "create", "list", "show", "update", "delete"],
    "billing": [""],
    "runjob": [""],
    "chat": ["history", "reset", "%%"],
}
"""Subcommands by magic; ``runjob`` and ``chat`` ``%%`` are cell magics (a cell is given)."""
CELLS = {"runjob": "{'prompt': 'hi'}", "chat": "Hello"}

HOSTILE = [
    "",
    " ",
    "'",
    '"',
    "'unbalanced",
    'say "hi',
    "a\\",
    "\\",
    "\x00",
    "x\x00y --name \x00",
    "\t\r",
    "é ü 日本語 🚀 \u202e\u200b",
    "x" * 2500,
    # IPython's own {var} expansion of a magic line is quadratic (10,000 characters take half
    # a second before a magic sees them, 100,000 minutes): the huge argument stays at 2,500,
    # past what an error line may echo (assert_clean: under 2,000 characters).
    "--name " + "n" * 2500,
    "--",
    "-",
    "---",
    "--=",
    "--name=",
    "--name= --image=",
    "--gpu=",
    "--help",
    "-h",
    "--help --help",
    "; rm -rf / && echo pwned | cat `id` $(id) > /tmp/x",
    "$HOME ${HOME} %PATH% $(whoami)",
    "{1/0}",
    "{__import__('os')}",
    "{undefined_name}",
    "--count -1",
    "--count 0",
    "--count 99999999999999999999999999",
    "--disk -5",
    "--disk 1e309",
    "--last -7d",
    "--last 99999999999d",
    "--wait -1",
    "--wait 1e99",
    "--timeout nan",
    "--ttl inf",
    "--max-price -inf",
    "--min-vram NaN",
    "--tail -3",
    "--tail 10000000000",
    "--since not-a-date",
    "--env =",
    "--env ==",
    "--env KEY",
    "--ports 99999/tcp",
    "--ports 0/http",
    "--ports /",
    "--gpu :",
    "--gpu ::::",
    "--cpu :0",
    "--volume :",
    "--endpoint ''",
    "-o ''",
    "-o 1abc",
    "-o for",
    "-o __builtins__",
    "-o In",
    "-o get_ipython",
    "-o _",
    "nope123",
    "../../etc/passwd",
    "%00",
    "a b c d e f g h i j k l m n o p",
    "--key 'ssh-ed25519 AAAA' --key",
    "--from-home --from-home",
    "--password-env",
    "--password-env NO_SUCH_VAR_FOR_PODBOOK",
    "--sync --async",
    "--by year --kind nothing",
]

HOSTILE_CELLS = ["", "{", "{'a': }", "[1, 2", "None", "1/0", "\x00", "{'input': {x}}", "é" * 1000]


@pytest.fixture(scope="module")
def emulator(start_emulator: Any) -> Any:
    """This module's own emulator (overrides the session one for ``nb_env`` and ``ip``)."""
    return start_emulator()


@pytest.fixture
def hip(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> Iterator[InteractiveShell]:
    """The ``ip`` shell; no password prompt can block (``getpass`` answers as a user who
    pressed Enter) and ``~`` is an empty temporary folder."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setattr(getpass, "getpass", lambda prompt="", stream=None: "")
    before = dict(ip.user_ns)
    yield ip
    # `-o NAME` may have stored results under any name (even `len`): put the namespace back,
    # except IPython's own output-cache names (`_`, `_i`, ...: its display hook keeps them).
    for name in [n for n in ip.user_ns if n not in before and not n.startswith("_")]:
        del ip.user_ns[name]
    ip.user_ns.update({k: v for k, v in before.items() if not k.startswith("_")})


class Hung(BaseException):
    """Raised by the alarm: a magic call did not return in time."""


def _alarm(signum: int, frame: Any) -> None:
    raise Hung()


def call(shell: InteractiveShell, magic: str, line: str, cell: str | None = None) -> CellRun:
    """Run one magic call as a cell would (IPython's own ``{var}`` expansion included)."""
    if cell is not None:
        source = f"get_ipython().run_cell_magic({magic!r}, {line!r}, {cell!r})"
    else:
        source = f"get_ipython().run_line_magic({magic!r}, {line!r})"
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(CALL_SECONDS)
    started = time.monotonic()
    try:
        return run_cell(shell, source)
    except Hung:
        pytest.fail(f"%{magic} {line[:80]!r} did not return within {CALL_SECONDS} s")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        took = time.monotonic() - started
        assert took < CALL_SECONDS, f"%{magic} {line[:80]!r} took {took:.0f} s (a hang)"


def assert_clean(run: CellRun, magic: str, line: str) -> None:
    """A valid action, or one line of error; never a traceback."""
    where = f"%{magic} {line[:120]!r}"
    assert "Traceback" not in run.text, (where, run.text[-3000:])
    assert not isinstance(run.error, Hung), where
    if run.success:
        return
    lines = [text for text in run.text.splitlines() if text.strip()]
    assert lines, (where, "failed without a message")
    assert lines[0].startswith(("UsageError:", "ServiceError:")), (where, run.text[-2000:])
    assert all(text.startswith("  - ") for text in lines[1:]), (where, run.text[-2000:])
    assert len(lines[0]) < 2000, (where, "the error line echoes a huge argument")


@pytest.mark.timeout(1200)
def test_curated_hostile_arguments_on_every_subcommand(hip: InteractiveShell) -> None:
    hip.user_ns["nbtest_value"] = "x"
    for magic, subcommands in SUBCOMMANDS.items():
        for sub in subcommands:
            for hostile in HOSTILE:
                cell = CELLS[magic] if magic == "runjob" or sub == "%%" else None
                line = f"{sub} {hostile}".strip() if sub and sub != "%%" else hostile
                assert_clean(call(hip, magic, line, cell), magic, line)
    # no line clobbered what the shell needs (`-o __builtins__` once broke every later cell)
    after = run_cell(hip, "nbtest_ok = len([1]) + sum(In[-1:] and [0])")
    assert after.success, after.text[-2000:]


@pytest.mark.timeout(600)
def test_runjob_with_hostile_lines_and_cells(hip: InteractiveShell) -> None:
    for line in ["echo --sync", "echo --async", "", "echo --wait 5 --sync", *HOSTILE[:20]]:
        for cell in HOSTILE_CELLS:
            assert_clean(call(hip, "runjob", line, cell), "runjob", line)


WORDS = st.sampled_from(
    ["--name", "--image", "--gpu", "--cpu", "--count", "--endpoint", "-o", "--help", "=", "'"]
)
TEXT = st.text(max_size=40)
LINES = st.lists(WORDS | TEXT, max_size=6).map(" ".join)


@pytest.mark.timeout(900)
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    magic=st.sampled_from(sorted(SUBCOMMANDS)),
    data=st.data(),
)
def test_random_argument_strings(hip: InteractiveShell, magic: str, data: Any) -> None:
    sub = data.draw(st.sampled_from(SUBCOMMANDS[magic]))
    rest = data.draw(LINES)
    line = f"{sub} {rest}".strip() if sub and sub != "%%" else rest
    cell = data.draw(TEXT) if magic == "runjob" or sub == "%%" else None
    assert_clean(call(hip, magic, line, cell), magic, line)
