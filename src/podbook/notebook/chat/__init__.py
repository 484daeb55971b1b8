"""``%%chat`` and ``%chat``: chat with an endpoint's OpenAI-compatible route in a cell.

- :mod:`.commands` parses the lines; :mod:`.conversation` keeps each endpoint's messages;
- :mod:`.turn` sends one question and reads its streamed answer (through the client's
  ``endpoint.chat``); :mod:`.panel` is its live widget (view ``views/chat.js``) and
  :mod:`.static` its text/HTML forms; :mod:`.magic` ties them to the magics.
"""
