"""A conversation through the real server and client: the turn protocol on the stream,
a failed turn, an interrupt mid-turn, answering a member, commands, tool state."""

from __future__ import annotations

import json
import threading
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from akgentic.agent.turn import TurnEndedEvent
from akgentic.client import RemoteTeam, ServerError, parse_sse
from akgentic.client.models import NO_TOOL_ACTOR
from akgentic.core import EventMessage, ReceivedMessage, TeamStoppingEvent
from akgentic.core.serialization import deserialize
from akgentic.server.protocol import protocol_of
from akgentic.storage import EventRecord
from akgentic.team import UnknownToolError
from akgentic.tool.knowledge_graph import GraphState
from akgentic.tool.planning import Plan, PlanningStateEvent, reduce_planning
from tests.server import gate_tool
from tests.server.conftest import Served, kind, until


def data(record: EventRecord) -> dict[str, Any]:
    assert record.message is not None
    return protocol_of(record.message)[1]


def ended(turn: object) -> Any:
    def check(record: EventRecord) -> bool:
        return kind(record) == "End" and data(record)["turnId"] == str(turn)

    return check


def test_a_turn_streams_start_text_tools_and_end(served: Served) -> None:
    team = served.client.create_team("research")
    message_id = team.send("why actors?")
    seen = until(
        team,
        lambda r: (
            kind(r) == "Message" and data(r)["type"] == "response" and data(r)["to"] == "@Human"
        ),
    )
    kinds = [kind(r) for r in seen]
    assert kinds.count("StartResponse") >= 3
    first = next(r for r in seen if kind(r) == "StartResponse")
    assert data(first)["turnId"] == str(message_id) and data(first)["agent"] == "@Manager"
    call = next(r for r in seen if kind(r) == "ToolCall")
    result = next(r for r in seen if kind(r) == "ToolResult")
    assert data(result)["toolCallId"] == data(call)["id"] != data(result)["id"]
    assert data(call)["toolName"] == data(result)["toolName"] == "use_skill"
    assert "three-points" in data(result)["content"]
    worker_text = "".join(
        data(r)["text"]
        for r in seen
        if kind(r) == "AppendText"
        and r.message
        and r.message.sender is not None
        and r.message.sender.name == "@Worker"
    )
    assert worker_text.startswith("[scripted] On why actors?: one")
    # text arrives gathered, not a row per word
    assert sum(1 for r in seen if kind(r) == "AppendText") < len(worker_text.split())
    assert [r.seq for r in seen] == list(range(1, len(seen) + 1))


def test_a_failed_turn_is_error_then_end_live_and_in_history(served: Served) -> None:
    team = served.client.create_team("turns")
    message_id = team.send("fail")
    live = until(team, ended(message_id))
    turn = [
        r
        for r in live
        if kind(r) in ("StartResponse", "Error", "End") and data(r).get("turnId") == str(message_id)
    ]
    assert [kind(r) for r in turn] == ["StartResponse", "Error", "End"]
    assert "no_such_tool" in data(turn[1])["message"]
    assert data(turn[2])["outcome"] == "failed" and "no_such_tool" in data(turn[2])["error"]
    history = team.history(limit=1000)
    assert [(r.seq, kind(r)) for r in history if r.seq in {t.seq for t in turn}] == [
        (t.seq, kind(t)) for t in turn
    ]
    # the team goes on: the next turn completes
    again = team.send("hello there")
    after = until(team, ended(again), from_seq=live[-1].seq + 1)
    assert data(after[-1])["outcome"] == "completed"


def test_an_interrupt_stops_a_turn_in_progress(served: Served) -> None:
    team = served.client.create_team("turns")
    message_id = team.send("wait for me")
    seen = until(team, lambda r: kind(r) == "ToolCall")
    assert gate_tool.ENTERED.wait(30)
    assert team.interrupt() == ["@Boss"]
    gate_tool.OPEN.set()
    rest = until(team, ended(message_id), from_seq=seen[-1].seq + 1)
    kinds = [kind(r) for r in rest]
    assert kinds.index("Interrupted") < len(kinds) - 1
    assert data(rest[-1])["outcome"] == "interrupted"
    interrupted = next(r for r in rest if kind(r) == "Interrupted")
    assert data(interrupted)["by"] == "@Human"
    assert "AppendText" not in kinds  # the model was not asked again
    assert isinstance(rest[-1].message, EventMessage)
    assert isinstance(rest[-1].message.event, TurnEndedEvent)


def test_answering_a_members_question_and_commands(served: Served) -> None:
    team = served.client.create_team("turns")
    team.send("ask colour")
    asked = until(team, lambda r: kind(r) == "Message" and data(r)["to"] == "@Human")[-1]
    assert data(asked)["content"] == "Which colour?"
    assert asked.message is not None
    question = asked.message.message  # type: ignore[attr-defined]
    reply_id = team.process_human_input("blue", question)
    answer = until(team, ended(reply_id), from_seq=asked.seq + 1)
    sent = next(r for r in answer if kind(r) == "Message" and data(r)["id"] == str(reply_id))
    assert (data(sent)["from"], data(sent)["to"], data(sent)["content"]) == (
        "@Human",
        "@Boss",
        "blue",
    )
    assert data(sent)["parentId"] == str(question.id)  # the answer names its question
    command_id = team.command("/nonsense")
    reply = until(
        team,
        lambda r: kind(r) == "Message" and data(r)["parentId"] == str(command_id),
        from_seq=answer[-1].seq + 1,
    )[-1]
    assert data(reply)["content"].startswith("Unknown command /nonsense. Commands: ")
    assert data(reply)["failed"] is True  # a client need not read the wording
    assert data(asked)["failed"] is False
    names = {m.name: m for m in team.members()}
    assert "stop" in names["@Boss"].commands and names["@Boss"].kind == "agent"
    assert names["@Boss"].usage["requests"] >= 1


def test_bad_recipients_and_answers_say_why(served: Served) -> None:
    team = served.client.create_team("turns")
    with pytest.raises(ServerError) as err:
        team.send_to("@Nobody", "hi")
    assert err.value.status == 422 and "@Nobody is not a member" in err.value.detail
    response = served.client.request  # raw calls: the server's own wording
    with pytest.raises(ServerError) as err:
        response(
            "POST",
            f"/teams/{team.team_id}/messages",
            json={"content": "x", "reply_to": "00000000-0000-4000-8000-000000000000"},
        )
    assert err.value.status == 422 and "no message" in err.value.detail


def test_tool_state_is_rebuilt_from_the_log(served: Served) -> None:
    team = served.client.create_team("analyst")
    message_id = team.send("study actors")
    until(team, ended(message_id))
    replayed = team.tool_state("#PlanningTool")
    plan = replayed.states["#PlanningTool"]
    titles = sorted(task.title for task in plan.tasks.values())
    assert titles == ["Collect facts on actors", "Summarise actors"]
    assert replayed.gaps == [] and replayed.last_seq["#PlanningTool"] >= 1
    with pytest.raises(UnknownToolError, match="has no tool actor #NoSuchTool"):
        team.tool_state("#NoSuchTool")


def test_a_tool_that_has_published_nothing_yet_answers_the_state_it_starts_from(
    served: Served,
) -> None:
    """A fresh team's #PlanningTool and #KnowledgeGraphTool: 200, an empty plan and graph,
    ``last_delta`` 0 (the stream's first delta folds on it); a stopped team's the same,
    from its log. A tool the team does not have stays a 404, in the API's error body."""
    team = served.client.create_team("analyst")
    get = served.client.request
    for tool, empty in (("#PlanningTool", Plan()), ("#KnowledgeGraphTool", GraphState())):
        view = get("GET", f"/teams/{team.team_id}/state/{quote(tool)}").json()
        assert view["tool_id"] == tool and view["last_delta"] == 0 and view["gaps"] == []
        assert deserialize(view["state"]) == empty
        assert team.tool_state(tool).last_seq == {tool: 0}

    turns = served.client.create_team("turns")  # no planning tool
    for team_id in (turns.team_id, team.team_id):
        answer = httpx.get(f"{served.url}/teams/{team_id}/state/%23NoSuchTool", timeout=30)
        assert answer.status_code == 404 and answer.json()["code"] == NO_TOOL_ACTOR
        assert answer.json()["detail"].startswith(
            f"team {team_id} has no tool actor #NoSuchTool: ask for one it has ("
        )
    with pytest.raises(UnknownToolError, match="it has none"):
        turns.tool_state("#PlanningTool")

    assert team.stop()  # not running here: the roster is read from its log
    view = get("GET", f"/teams/{team.team_id}/state/%23PlanningTool").json()
    assert view["last_delta"] == 0 and deserialize(view["state"]) == Plan()


def test_tool_state_deltas_are_plain_json_a_client_folds_onto_the_state(
    served: Served,
) -> None:
    team = served.client.create_team("analyst")
    until(team, ended(team.send("study actors")))
    page = served.client.request("GET", f"/teams/{team.team_id}/messages?limit=1000").json()
    deltas = [e["data"] for e in page["items"] if e["type"] == "ToolState"]
    planning = [d for d in deltas if d["toolId"] == "#PlanningTool"]
    assert [d["seq"] for d in planning] == [1]
    delta = planning[0]["delta"]
    assert "__model__" not in json.dumps(delta)  # plain JSON, for any language
    assert [t["title"] for t in delta["tasks_created"]] == [
        "Collect facts on actors",
        "Summarise actors",
    ]
    folded = reduce_planning(Plan(), PlanningStateEvent.model_validate(delta))
    assert folded.tasks == team.tool_state("#PlanningTool").states["#PlanningTool"].tasks
    graph = next(d for d in deltas if d["toolId"] == "#KnowledgeGraphTool")
    assert graph["kind"] == "KnowledgeGraphStateEvent"
    assert {e["name"] for e in graph["delta"]["entities_added"]} == {
        "actors",
        "actor model for actors",
    }


def test_a_team_says_when_it_last_did_something(served: Served) -> None:
    team = served.client.create_team("turns")
    until(team, ended(team.send("hello")))

    def time_of(seq: int) -> object:
        return team.history(after=seq - 1, limit=1)[0].timestamp

    info = served.client.get_team(team.team_id).info
    assert info.last_seq >= 1 and info.last_activity == time_of(info.last_seq)
    listed = next(t for t in served.client.list_teams() if t.team_id == team.team_id)
    assert listed.last_activity == time_of(listed.last_seq)


def test_stop_then_resume_through_the_api(served: Served) -> None:
    team = served.client.create_team("turns")
    assert team.info.first_seq == 1  # its run began the log
    first = team.send("hello")
    until(team, ended(first))
    assert team.stop() is True
    assert team.info.first_seq is None  # no run here
    with pytest.raises(ServerError) as err:
        team.send("anyone?")
    assert err.value.status == 409 and f"POST /teams/{team.team_id}/resume" in err.value.detail
    records = list(team.follow())  # a stopped team: the whole log, then the end
    assert records and records[-1].seq == served.storage.events.last_seq(team.team_id)
    resumed = served.client.resume_team(team.team_id)
    assert resumed.info.running and resumed.info.status == "RUNNING"
    assert resumed.info.first_seq == records[-1].seq + 1  # the resumed run's first record
    again = resumed.send("hello again")
    done = until(resumed, ended(again), from_seq=records[-1].seq + 1)
    assert data(done[-1])["outcome"] == "completed"
    with pytest.raises(ServerError) as err:
        served.client.resume_team(team.team_id)
    assert err.value.status == 409 and "already running" in err.value.detail


def test_follow_ends_when_stop_is_set(served: Served) -> None:
    team = served.client.create_team("turns")
    stop = threading.Event()
    got: list[EventRecord] = []

    def read() -> None:
        for record in team.follow(stop=stop):
            got.append(record)
            if kind(record) == "Commands":
                stop.set()

    reader = threading.Thread(target=read)
    reader.start()
    reader.join(30)
    assert not reader.is_alive() and kind(got[-1]) == "Commands"


def _sender(team: RemoteTeam) -> str:
    return team.card.entry_point


def test_a_stop_lets_the_turn_in_flight_answer_the_person(served: Served) -> None:
    """``POST /teams/{id}/stop`` while a turn waits in a tool call: the turn finishes and
    its answer reaches @Human before the team has stopped (the human proxy stops last)."""
    team = served.client.create_team("turns")
    team.send("wait for me")
    assert gate_tool.ENTERED.wait(30)
    stopping = threading.Thread(target=team.stop)
    stopping.start()
    seen = until(
        team,
        lambda r: (
            isinstance(r.message, EventMessage) and isinstance(r.message.event, TeamStoppingEvent)
        ),
    )
    gate_tool.OPEN.set()
    stopping.join(60)
    assert not stopping.is_alive() and not team.is_running()
    history = team.history(after=seen[-1].seq, limit=1000)
    [answer] = [r for r in history if kind(r) == "Message" and data(r)["to"] == "@Human"]
    assert data(answer)["content"] == "[scripted] done: for me"
    received = [
        r.message
        for r in history
        if isinstance(r.message, ReceivedMessage)
        and str(r.message.message_id) == data(answer)["id"]
    ]
    assert [m.sender.name for m in received if m.sender is not None] == ["@Human"]


def test_compact_on_the_research_examples_worker_summarises_instead_of_replaying_a_turn(
    served: Served,
) -> None:
    team = served.client.create_team("research")
    seen: list[EventRecord] = []
    for n in range(5):  # the worker's history: five turns, each with a tool call
        team.send(f"topic {n}")
        seen = until(
            team,
            lambda r: kind(r) == "Message" and data(r)["content"].startswith("Here is what"),
            from_seq=seen[-1].seq + 1 if seen else 1,
        )
    command_id = team.command("/compact", to="@Worker")
    answer = until(
        team,
        lambda r: kind(r) == "Message" and data(r)["parentId"] == str(command_id),
        from_seq=seen[-1].seq + 1,
    )
    assert "Error" not in [kind(r) for r in answer]  # the scripted model's ScenarioError
    assert data(answer[-1])["content"].startswith("Compacted ")
    assert data(answer[-1])["failed"] is False


def test_the_answer_names_the_member_a_message_went_to(served: Served) -> None:
    team = served.client.create_team("turns")
    post = served.client.request
    sent = post("POST", f"/teams/{team.team_id}/messages", json={"content": "hi", "to": "Boss"})
    assert sent.status_code == 202 and sent.json()["to"] == "@Boss"
    message = until(
        team, lambda r: kind(r) == "Message" and data(r)["id"] == sent.json()["message_id"]
    )
    assert data(message[-1])["to"] == "@Boss"
    command = post("POST", f"/teams/{team.team_id}/commands", json={"command": "/x", "to": "Boss"})
    assert command.status_code == 202 and command.json()["to"] == "@Boss"


@pytest.mark.parametrize("content", ["", "   ", "\n\t "])
def test_a_message_with_no_text_is_refused(served: Served, content: str) -> None:
    team = served.client.create_team("turns")
    response = httpx.post(
        f"{served.url}/teams/{team.team_id}/messages", json={"content": content}, timeout=30
    )
    assert response.status_code == 422
    assert "content: " in response.json()["detail"]
    assert "send some text" in response.json()["detail"]
    history = served.storage.events.read(team.team_id)
    assert not [r for r in history if kind(r) == "Message" and data(r)["from"] == "@Human"]


def test_a_lone_surrogate_in_a_message_or_command_is_answered_and_resumed(
    served: Served,
) -> None:
    """``"\\udce9"`` in a body's JSON (or given to the client) is a lone surrogate, which
    nothing can encode: it arrives as U+FFFD, so the turn is answered, its run is in the
    log, and the team resumes from that log and goes on."""
    team = served.client.create_team("turns")

    def post(tail: str, body: bytes) -> httpx.Response:  # the JSON as written, escapes kept
        headers = {"content-type": "application/json"}
        url = f"{served.url}/teams/{team.team_id}{tail}"
        return httpx.post(url, content=body, headers=headers, timeout=30)

    posted = post("/messages", b'{"content": "caf\\udce9 ok"}')
    assert posted.status_code == 202, posted.text
    first = until(team, ended(posted.json()["message_id"]))
    assert data(first[-1])["outcome"] == "completed"
    assert "Error" not in [kind(r) for r in first]  # every event was built and kept
    said = [data(r)["content"] for r in first if kind(r) == "Message"]
    assert said[0] == "caf\ufffd ok" and said[-1].startswith("[scripted] you said caf\ufffd ok")
    command = post("/commands", b'{"command": "/help \\udce9"}')
    assert command.status_code == 202, command.text
    sent = team.send("d\udce9j\xe0 vu")  # the client: no encoding error
    second = until(team, ended(sent), from_seq=first[-1].seq + 1)
    assert data(second[-1])["outcome"] == "completed"
    assert "Error" not in [kind(r) for r in second]
    hosted = served.manager.get_team(team.team_id)  # in process: the same words
    assert hosted is not None
    third = until(team, ended(hosted.send("na\udcefve")), from_seq=second[-1].seq + 1)
    assert data(third[-1])["outcome"] == "completed"
    assert "Error" not in [kind(r) for r in third]
    assert team.stop() is True
    resumed = served.client.resume_team(team.team_id)
    again = resumed.send("hello again")
    done = until(resumed, ended(again), from_seq=third[-1].seq + 1)
    assert data(done[-1])["outcome"] == "completed"
    assert "Error" not in [kind(r) for r in done]


def test_a_message_frame_carries_its_agent_hops_and_the_team_its_bound(served: Served) -> None:
    """A watching client sees how many messages between agents in a row each ends (0 for
    the person's), on the stream as it is sent, and the bound in the team's info."""
    team = served.client.create_team("research")
    team.send("why actors?")
    frames: list[dict[str, Any]] = []
    url = f"{served.url}/teams/{team.team_id}/events"
    with httpx.stream("GET", url, params={"heartbeat": 0.5}, timeout=60) as response:
        for event in parse_sse(response.iter_lines()):
            if event.event != "Message":
                continue
            frames.append(json.loads(event.data)["data"])
            if frames[-1]["to"] == "@Human" and frames[-1]["type"] == "response":
                break
    hops = [(f["from"], f["to"], f["agentHops"]) for f in frames]
    assert hops[0] == ("@Human", "@Manager", 0)
    assert ("@Manager", "@Worker", 1) in hops  # sent on the person's message
    assert ("@Worker", "@Manager", 2) in hops  # the answer to that one
    assert hops[-1] == ("@Manager", "@Human", 3)  # the answer the Worker's answer led to
    assert served.client.info(team.team_id).max_agent_hops == 30  # the card's default
