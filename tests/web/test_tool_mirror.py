"""The page folds tool-state deltas itself: its reducers (tools.js, run in the browser)
agree with the server's reduce_planning and reduce_graph on creates, updates, deletes
and removals, refuse what the server's refuse, and a missed delta makes the page take a
fresh snapshot instead of guessing."""

from __future__ import annotations

from typing import Any

import pytest

from akgentic.tool.knowledge_graph import GraphState, KnowledgeGraphStateEvent, reduce_graph
from akgentic.tool.knowledge_graph.models import Entity, Relation
from akgentic.tool.planning import Plan, PlanningStateEvent, Task, TaskStatus, reduce_planning
from tests.server.conftest import Served
from tests.web.conftest import Tab

PLAN = [
    PlanningStateEvent(
        tasks_created=[
            Task(id=1, title="collect"),
            Task(id=2, title="write", owner="@Helper"),
            Task(id=3, title="drop me"),
        ]
    ),
    PlanningStateEvent(
        tasks_updated=[
            Task(id=2, title="write", owner="@Helper", status=TaskStatus.DONE, output="ok")
        ],
        tasks_deleted=[3],
    ),
    PlanningStateEvent(tasks_created=[Task(id=4, title="review", dependencies=(1, 2))]),
]
A, B, C = (Entity(name=n, entity_type="thing") for n in "ABC")
GRAPH = [
    KnowledgeGraphStateEvent(
        entities_added=[A, B, C],
        relations_added=[
            Relation(from_entity="A", to_entity="B", relation_type="uses"),
            Relation(from_entity="B", to_entity="C", relation_type="feeds"),
        ],
    ),
    KnowledgeGraphStateEvent(
        entities_modified=[Entity(name="B", entity_type="thing", observations=("seen",))],
        entities_removed=["C"],
        relations_removed=[Relation(from_entity="B", to_entity="C", relation_type="feeds")],
    ),
    KnowledgeGraphStateEvent(
        relations_added=[Relation(from_entity="B", to_entity="A", relation_type="knows")]
    ),
]

FOLD = """async ({plan, graph}) => {
  const t = await import("/web/js/tools.js");
  let p = t.emptyPlan();
  for (const d of plan) p = t.reducePlan(p, d);
  let g = t.emptyGraph();
  for (const d of graph) g = t.reduceGraph(g, d);
  return {tasks: [...p.tasks.values()].sort((a, b) => a.id - b.id), nextId: p.nextId,
          entities: [...g.entities.values()], relations: [...g.relations.values()]};
}"""


def dump(deltas: list[Any]) -> list[dict[str, Any]]:
    """As the stream sends them: ToolState's ``data.delta``."""
    return [d.model_dump(mode="json") for d in deltas]


@pytest.fixture
def page(site: Served, open_tab: Any) -> Any:
    tab: Tab = open_tab()
    tab.page.goto(site.url)
    return tab.page


def test_the_page_folds_deltas_as_the_server_does(page: Any) -> None:
    plan = Plan()
    for delta in PLAN:
        plan = reduce_planning(plan, delta)
    graph = GraphState()
    for change in GRAPH:
        graph = reduce_graph(graph, change)
    folded = page.evaluate(FOLD, {"plan": dump(PLAN), "graph": dump(GRAPH)})
    assert folded["tasks"] == [plan.tasks[i].model_dump(mode="json") for i in sorted(plan.tasks)]
    assert folded["nextId"] == plan.next_id == 5
    assert sorted(e["name"] for e in folded["entities"]) == sorted(graph.entities) == ["A", "B"]
    assert folded["entities"][1]["observations"] == ["seen"]
    assert sorted(
        (r["from_entity"], r["relation_type"], r["to_entity"]) for r in folded["relations"]
    ) == sorted((r.from_entity, r.relation_type, r.to_entity) for r in graph.relations.values())


def test_the_page_refuses_a_delta_that_does_not_fit(page: Any) -> None:
    bad = PlanningStateEvent(tasks_updated=[Task(id=9, title="nowhere")])
    with pytest.raises(ValueError, match="does not exist"):
        reduce_planning(Plan(), bad)
    refused = page.evaluate(
        """async (delta) => {
          const t = await import("/web/js/tools.js");
          try { t.reducePlan(t.emptyPlan(), delta); return null; } catch (e) { return e.message; }
        }""",
        bad.model_dump(mode="json"),
    )
    assert refused is not None and "does not exist" in refused


def test_a_missed_delta_makes_the_page_take_a_fresh_snapshot(page: Any) -> None:
    task = {"id": 1, "title": "one", "status": "todo", "owner": ""}
    third = {"id": 3, "title": "three", "status": "todo", "owner": ""}
    result = page.evaluate(
        """async ({task, third}) => {
          const t = await import("/web/js/tools.js");
          const snapshots = [
            {state: {tasks: {"1": task}, next_id: 2}, last_delta: 5},
            {state: {tasks: {"1": task, "3": third}, next_id: 4}, last_delta: 8},
          ];
          const asked = [];
          const api = {
            get: async (path) => { asked.push(path); return snapshots[asked.length - 1]; },
          };
          const changes = [];
          const changed = (m) => changes.push(m.lastDelta);
          const mirror = new t.ToolMirror(api, "team-id", t.PLANNING, changed);
          await mirror.load();
          mirror.apply({seq: 5, delta: {tasks_created: [task]}}); // in the snapshot: skipped
          mirror.apply({seq: 6, delta: {tasks_created: [{...task, id: 2}]}});
          const afterSix = [...mirror.value.tasks.keys()];
          mirror.apply({seq: 8, delta: {tasks_created: [third]}});      // 7 was missed
          await mirror.loading;
          const ids = [...mirror.value.tasks.keys()];
          return {asked, afterSix, ids, last: mirror.lastDelta, changes};
        }""",
        {"task": task, "third": third},
    )
    assert result["afterSix"] == [1, 2]
    assert result["asked"] == ["/teams/team-id/state/%23PlanningTool"] * 2
    assert (result["ids"], result["last"]) == ([1, 3], 8)
    assert result["changes"] == [5, 6, 8]
