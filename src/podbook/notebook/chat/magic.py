"""The bodies of ``%%chat`` and ``%chat history|reset`` (``PodMagics.chat`` delegates here).

``%%chat ENDPOINT``: the cell is the user's message. With a live front end the turn's panel
streams the reply while the cell has already returned (so its Stop button is heard); without
one (terminal IPython, or ``PodMagics.show_panels = False``) the reply is printed as it
arrives and the cell returns when it has ended. Either way the result is the
:class:`~podbook.notebook.chat.turn.ChatTurn`.
"""

from __future__ import annotations

import sys
from functools import cache
from typing import Any

from IPython.core.error import UsageError

from podbook.notebook import parsing
from podbook.notebook.chat import commands
from podbook.notebook.chat.conversation import ChatHistory, Conversation, for_session
from podbook.notebook.chat.turn import ChatTurn
from podbook.notebook.dispatch import store_output
from podbook.notebook.display import PanelDisplay, StaticView
from podbook.notebook.errors import user_facing_errors

_chat_parser = cache(commands.build_chat_parser)
_subcommands = cache(commands.build_conversation_subcommands)


def live_front_end(session: Any) -> bool:
    """True when a panel can stream the reply: panels are on and a kernel's front end
    renders widgets (terminal IPython has no kernel)."""
    return session.panels_on() and getattr(session.shell, "kernel", None) is not None


def _wait_for(conversation: Conversation) -> None:
    """Wait for the reply still streaming on this endpoint (Ctrl-C stops it instead)."""
    pending = conversation.pending
    if pending is None:
        return
    try:
        pending.wait_quietly()
    except KeyboardInterrupt:
        pending.stop()
        raise


def chat(magics: Any, line: str, cell: str | None) -> Any:
    """``%%chat ENDPOINT [flags]`` with a cell; ``%chat history|reset`` without."""
    if cell is None:
        return conversation_command(magics, line)
    return chat_cell(magics, line, cell)


def chat_cell(magics: Any, line: str, cell: str) -> Any:
    """``%%chat ENDPOINT [--model M] [--system TEXT] [--temperature T] [--max-tokens N]``."""
    try:
        command = commands.parse_chat_line(line, _chat_parser())
    except parsing.HelpShown:
        return None
    prompt = magics.shell.var_expand(cell).strip()
    if not prompt:
        raise UsageError(
            "%%chat: the cell is empty; write your message in the cell, below the %%chat line."
        )
    session = magics.session
    conversations = for_session(session)
    conversation = conversations.get(command.endpoint_id)
    _wait_for(conversation)
    if command.system is not None:
        conversation.system = command.system or None
    with user_facing_errors("chat"), magics.forget_a_stopped_emulator():
        stream = session.client.endpoint(command.endpoint_id).chat(
            conversation.request_messages(prompt), model=command.model, **command.params
        )
    turn = ChatTurn(conversation, prompt, stream)
    conversations.last = command.endpoint_id

    def view(shown: ChatTurn) -> Any:  # also for the turn shown again in a later cell
        if shown.panel is not None and session.panels_on():
            return PanelDisplay(shown.panel)
        return turn_static(shown)

    session.presenter.hook(ChatTurn, view)
    if live_front_end(session):
        from podbook.notebook.chat.panel import ChatPanel

        turn.panel = ChatPanel(turn).start()
        session.presenter.present(turn, view(turn))
    else:
        _print_reply(turn)
        session.presenter.mark_shown(turn)  # printed: the cell's result adds nothing
    return store_output(magics.shell, command.output, turn)


def _print_reply(turn: Any) -> None:
    """Print the reply as it arrives, then its timings (no front end to show a panel)."""
    from podbook.notebook.chat.static import stats_text

    def write(piece: str) -> None:
        sys.stdout.write(piece)
        sys.stdout.flush()

    try:
        with user_facing_errors("chat"):
            turn.read_printing(write)
    finally:
        print()
    timing = stats_text(turn.stats())
    if turn.status == "STOPPED":
        timing = "stopped" + (f" · {timing}" if timing else "")
    if timing:
        print(f"[{timing}]")


def turn_static(turn: Any) -> StaticView:
    """The static form of a turn (no widget)."""
    from podbook.notebook.chat.static import turn_html, turn_text

    args = (turn.endpoint_id, turn.prompt, turn.text, turn.status, turn.stats(), turn.error)
    return StaticView(turn_text(*args), turn_html(*args))


def history_static(history: ChatHistory) -> StaticView:
    """The static form of a conversation."""
    from podbook.notebook.chat.static import history_html, history_text

    return StaticView(
        history_text(history.endpoint_id, list(history)),
        history_html(history.endpoint_id, list(history)),
    )


def conversation_command(magics: Any, line: str) -> Any:
    """``%chat history [ENDPOINT]`` and ``%chat reset [ENDPOINT | --all]``."""
    try:
        name, command = parsing.parse_line("chat", line, _subcommands())
    except parsing.HelpShown:
        return None
    conversations = for_session(magics.session)
    if command.all and command.endpoint_id:
        raise UsageError("%chat reset: give ENDPOINT or --all, not both.")
    if command.all:
        targets = conversations.known()
    else:
        endpoint_id = command.endpoint_id or conversations.last
        if endpoint_id is None:
            raise UsageError(
                f"%chat {name}: no conversation yet; start one with `%%chat ENDPOINT` "
                "(or name the endpoint)."
            )
        targets = [conversations.get(endpoint_id)]
    if name == "reset":
        for conversation in targets:
            count = len(conversation)
            conversation.reset()
            print(f"Forgot the conversation with {conversation.endpoint_id} ({count} messages).")
        return None
    conversation = targets[0]
    _wait_for(conversation)
    history = conversation.history()
    magics.session.show(history, live=history_static)
    return store_output(magics.shell, command.output, history)
