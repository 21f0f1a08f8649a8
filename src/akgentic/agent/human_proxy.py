"""HumanProxy: the person in the team."""

from __future__ import annotations

from typing import ClassVar

from pydantic import ConfigDict

from akgentic.agent.messages import AgentMessage
from akgentic.core import ActorAddress, AddressError, BaseConfig, Message, UserMessage, address_name
from akgentic.core.user_proxy import UserProxy

__all__ = ["HumanProxy", "HumanProxyConfig"]


class HumanProxyConfig(BaseConfig):
    """``default_recipient`` receives what the person writes when it answers nothing."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    name: str = "@Human"
    role: str = "Human"
    default_recipient: str = ""


class HumanProxy(UserProxy):
    """Stands for a person: the team writes to it, the person answers through it.

    Messages to it are on the team stream (``SentMessage``), which is how a CLI or a web
    page shows them. :meth:`process_human_input` turns what the person typed into a
    ``UserMessage`` into the team: to the author of the message being answered, else to
    ``default_recipient``. Text starting with ``/`` is a command for that member.
    """

    config_class = HumanProxyConfig

    def on_start(self) -> None:
        self._last: Message | None = None

    def on_user_message(self, msg: Message) -> None:
        if isinstance(msg, AgentMessage | UserMessage) or hasattr(msg, "content"):
            self._last = msg

    def process_human_input(
        self, content: str, message: Message | None = None, to: str | None = None
    ) -> ActorAddress:
        """Send the person's words into the team; returns the recipient's address.

        ``message`` is the message being answered (its sender gets the reply); ``to`` a
        member name. Without either, the last message received is answered, else the
        configured ``default_recipient``.
        """
        target = self._recipient(message, to)
        self.send(target, UserMessage(content=content))
        return target

    def _recipient(self, message: Message | None, to: str | None) -> ActorAddress:
        from akgentic.core import Orchestrator

        name = to
        if name is None and message is not None and message.sender is not None:
            return self._live(message.sender)
        if name is None and self._last is not None and self._last.sender is not None:
            return self._live(self._last.sender)
        config = self.config
        if name is None and isinstance(config, HumanProxyConfig) and config.default_recipient:
            name = config.default_recipient
        if name is None or self.orchestrator is None:
            raise AddressError(
                "nobody to send this to: answer a message, name a member with to=, or set "
                "default_recipient"
            )
        wanted = address_name(name)
        member = self.proxy_ask(self.orchestrator, Orchestrator, timeout=10).get_team_member(wanted)
        if member is None:
            raise AddressError(f"{wanted} is not a member of this team")
        return member

    def _live(self, address: ActorAddress) -> ActorAddress:
        if address.is_alive():
            return address
        live = self.system.get_address(address.agent_id)
        if live is None:
            raise AddressError(f"{address.name} is no longer running")
        return live
