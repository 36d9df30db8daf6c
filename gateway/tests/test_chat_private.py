"""What chat sends to the LLM (and to search) has no private block (pure)."""

from __future__ import annotations

import pytest

from exocortex.api.chat import ChatRequest
from exocortex.core.errors import InvalidArgument
from exocortex.gateway.routers.chat import private_removed

SECRET = "tok-CHAT-9034"


def test_message_and_history_lose_their_private_blocks() -> None:
    body = ChatRequest.model_validate(
        {
            "message": f"What about <private>{SECRET}</private> the bus?",
            "history": [
                {"role": "user", "content": f"<private>{SECRET}</private>"},
                {"role": "assistant", "content": f"It uses NATS <PRIVATE x>{SECRET}"},
            ],
        }
    )
    message, history = private_removed(body)
    assert message == "What about  the bus?"
    assert history == [("assistant", "It uses NATS")]


def test_a_message_that_was_all_private_is_refused_by_name() -> None:
    body = ChatRequest.model_validate({"message": f"<private>{SECRET}"})
    with pytest.raises(InvalidArgument) as err:
        private_removed(body)
    assert err.value.field == "message"
