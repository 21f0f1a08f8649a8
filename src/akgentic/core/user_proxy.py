"""UserProxy: the human member of a team."""

from __future__ import annotations

from typing import ClassVar

from akgentic.core.address import ActorAddress, AddressError
from akgentic.core.agent import Akgent
from akgentic.core.agent_config import BaseConfig
from akgentic.core.agent_state import BaseState
from akgentic.core.messages.message import Message, UserMessage

__all__ = ["UserProxy"]


class UserProxy(Akgent[BaseConfig, BaseState]):
    """Stands for a person: what the team sends it is what a CLI or web page shows.

    Its address has ``is_user_proxy`` set (for subclasses too). Every message sent to
    it is already on the team stream (``SentMessage``), which is how clients see it;
    override :meth:`on_user_message` to do more. The person answers with
    :meth:`reply`, which puts a ``UserMessage`` into the team.
    """

    _is_user_proxy: ClassVar[bool] = True

    def receiveMsg_Message(self, msg: Message, sender: ActorAddress | None) -> None:
        self.on_user_message(msg)

    def on_user_message(self, msg: Message) -> None:
        """Hook for a message addressed to the person; the default does nothing more."""

    def reply(self, to: Message, content: str) -> None:
        """Answer ``to`` (a message this proxy received) with the person's words.

        ``to`` may be the copy a client got from the event stream: its sender is then
        a snapshot, resolved here to the running actor.
        """
        if to.sender is None:
            raise ValueError("cannot reply to a message that has no sender")
        target = to.sender
        if not target.is_alive():
            live = self.system.get_address(target.agent_id)
            if live is None:
                raise AddressError(f"cannot reply: {target.name} is no longer running")
            target = live
        self.send(target, UserMessage(content=content))
