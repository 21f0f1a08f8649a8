"""A small actor team, offline, to see the core at work.

@Human (a UserProxy) hands a text to @Editor. The editor splits it into sentences and
delegates them round-robin to two writers. Each writer records its word count on the
team's shared #WordCount tool actor (bound with getChildrenOrCreate, one per team),
then answers. When every sentence is back, the editor sends the human one result.
A subscriber prints the team stream as it happens; the team then stops gracefully:
members first, the #WordCount tool actor last.

Run: ``python examples/relay_team.py ["Your text. With sentences."]``
"""

from __future__ import annotations

import sys
import threading
from uuid import UUID

from akgentic.core import (
    ActorAddress,
    ActorSystem,
    Akgent,
    BaseConfig,
    BaseState,
    EventMessage,
    Message,
    Orchestrator,
    ResultMessage,
    SentMessage,
    StopMessage,
    UserMessage,
    UserProxy,
)


class Sentence(Message):
    """The editor asks a writer to polish one sentence."""

    index: int
    text: str


class Polished(Message):
    """A writer's answer."""

    index: int
    text: str
    words: int


class Tally(BaseState):
    words_by_writer: dict[str, int] = {}


class WordCount(Akgent[BaseConfig, Tally]):
    """#WordCount: the team's shared tally. One actor, so no locks."""

    def add(self, writer: str, words: int) -> int:
        self.state.words_by_writer[writer] = self.state.words_by_writer.get(writer, 0) + words
        self.state.notify_state_change()
        return sum(self.state.words_by_writer.values())


class Writer(Akgent[BaseConfig, BaseState]):
    def on_start(self) -> None:
        assert self.orchestrator is not None
        orchestrator = self.proxy_ask(self.orchestrator, Orchestrator, timeout=5)
        self.tally = orchestrator.getChildrenOrCreate(WordCount, BaseConfig(name="#WordCount"))

    def receiveMsg_Sentence(self, msg: Sentence, sender: ActorAddress | None) -> None:
        assert sender is not None
        text = msg.text.strip().capitalize()
        words = len(text.split())
        self.proxy_ask(self.tally, WordCount, timeout=5).add(self.config.name, words)
        self.send(sender, Polished(index=msg.index, text=text, words=words))


class EditorState(BaseState):
    pending: dict[int, str] = {}
    expected: int = 0


class Editor(Akgent[BaseConfig, EditorState]):
    def on_start(self) -> None:
        self.writers = [
            self.createActor(Writer, config=BaseConfig(name=f"@Writer-{i}", role="Writer"))
            for i in (1, 2)
        ]
        self.human: ActorAddress | None = None

    def receiveMsg_UserMessage(self, msg: UserMessage, sender: ActorAddress | None) -> None:
        self.human = sender
        sentences = [s.strip() for s in msg.content.split(".") if s.strip()]
        self.state.expected = len(sentences)
        self.state.pending = {}
        for i, sentence in enumerate(sentences):
            self.send(self.writers[i % len(self.writers)], Sentence(index=i, text=sentence))

    def receiveMsg_Polished(self, msg: Polished, sender: ActorAddress | None) -> None:
        self.state.pending[msg.index] = msg.text
        self.state.notify_state_change()
        if len(self.state.pending) == self.state.expected and self.human is not None:
            text = ". ".join(self.state.pending[i] for i in sorted(self.state.pending)) + "."
            self.send(self.human, ResultMessage(content=text))


class Human(UserProxy):
    def on_start(self) -> None:
        self.answered = threading.Event()
        self.answer = ""

    def on_user_message(self, msg: Message) -> None:
        if isinstance(msg, ResultMessage):
            self.answer = msg.content
            self.answered.set()


class Printer:
    """An EventSubscriber that prints the team stream, one line per event."""

    def on_message(self, msg: Message) -> None:
        who = msg.sender.name if msg.sender else "?"
        if isinstance(msg, SentMessage):
            inner = msg.message
            to = msg.recipient.name if msg.recipient else "?"
            detail = getattr(inner, "content", None) or getattr(inner, "text", "")
            print(f"  {who:>11} -> {to:<11} {type(inner).__name__:<14} {detail}".rstrip())
        elif isinstance(msg, StopMessage):
            print(f"  {who:>11} stopped")
        elif isinstance(msg, EventMessage):
            print(f"  {who:>11} event {type(msg.event).__name__}")

    def set_restoring(self, team_id: UUID, restoring: bool) -> None:
        pass

    def on_stop_request(self, team_id: UUID) -> None:
        print("  -- graceful stop requested --")

    def on_stop(self, team_id: UUID) -> None:
        print("  -- team stopped --")


def main(text: str) -> str:
    system = ActorSystem()
    orchestrator = system.createActor(Orchestrator)
    team = orchestrator.team_id
    system.proxy_ask(orchestrator, Orchestrator, timeout=5).subscribe(Printer())
    print("team stream:")
    editor = system.createActor(Editor, config=BaseConfig(name="@Editor"), team_id=team)
    human = system.createActor(Human, config=BaseConfig(name="@Human"), team_id=team)
    human_actor = system.get_actor(human)
    assert isinstance(human_actor, Human)
    system.proxy_ask(human, Human, timeout=5).send(editor, UserMessage(content=text))
    if not human_actor.answered.wait(10):
        raise SystemExit("the team did not answer within 10 seconds")
    tally = system.proxy_ask(orchestrator, Orchestrator, timeout=5).get_team_member("#WordCount")
    assert tally is not None
    words = system.proxy_ask(tally, WordCount, timeout=5).state.words_by_writer
    system.proxy_tell(orchestrator, Orchestrator).stop(5.0)
    system.wait_stopped(orchestrator, 10)
    system.shutdown(5)
    print(f"\nresult: {human_actor.answer}")
    print(f"words per writer (#WordCount): {dict(sorted(words.items()))}")
    return human_actor.answer


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "actors talk. tools remember. teams last.")
