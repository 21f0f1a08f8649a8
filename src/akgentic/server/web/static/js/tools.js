// Tool actors' state on the page: a snapshot from GET /teams/{id}/state/{tool}, then the
// ToolState deltas of the stream folded onto it, the same way the server's reducers
// (reduce_planning, reduce_graph) rebuild it. A delta numbered past the next one means
// one was missed: the mirror asks for a fresh snapshot instead of guessing.

import { team } from "./api.js";

export const PLANNING = "#PlanningTool";
export const GRAPH = "#KnowledgeGraphTool";

const plain = (row) => {
  const { __model__, ...rest } = row;
  return rest;
};

export const relationKey = (r) => JSON.stringify([r.from_entity, r.relation_type, r.to_entity]);

export function emptyPlan() {
  return { tasks: new Map(), nextId: 1 };
}

export function planFromState(state) {
  const plan = emptyPlan();
  if (!state) return plan;
  for (const task of Object.values(state.tasks || {})) plan.tasks.set(task.id, plain(task));
  plan.nextId = state.next_id || 1;
  return plan;
}

/** reduce_planning: created, then updated, then deleted; a delta that does not fit throws. */
export function reducePlan(plan, delta) {
  const tasks = new Map(plan.tasks);
  let nextId = plan.nextId;
  for (const task of delta.tasks_created || []) {
    if (tasks.has(task.id)) throw new Error(`delta creates task ${task.id}, which exists`);
    tasks.set(task.id, plain(task));
    nextId = Math.max(nextId, task.id + 1);
  }
  for (const task of delta.tasks_updated || []) {
    if (!tasks.has(task.id)) throw new Error(`delta updates task ${task.id}, which does not exist`);
    tasks.set(task.id, plain(task));
  }
  for (const id of delta.tasks_deleted || []) {
    if (!tasks.delete(id)) throw new Error(`delta deletes task ${id}, which does not exist`);
  }
  return { tasks, nextId };
}

export function emptyGraph() {
  return { entities: new Map(), relations: new Map() };
}

export function graphFromState(state) {
  const graph = emptyGraph();
  if (!state) return graph;
  for (const entity of Object.values(state.entities || {})) {
    graph.entities.set(entity.name, plain(entity));
  }
  for (const relation of Object.values(state.relations || {})) {
    graph.relations.set(relationKey(relation), plain(relation));
  }
  return graph;
}

/** reduce_graph: removals first, then additions; a delta that does not fit throws. */
export function reduceGraph(graph, delta) {
  const entities = new Map(graph.entities);
  const relations = new Map(graph.relations);
  for (const relation of delta.relations_removed || []) {
    if (!relations.delete(relationKey(relation))) throw new Error("delta removes a missing relation");
  }
  for (const name of delta.entities_removed || []) {
    if (!entities.delete(name)) throw new Error(`delta removes entity ${name}, which does not exist`);
  }
  for (const entity of delta.entities_added || []) {
    if (entities.has(entity.name)) throw new Error(`delta adds entity ${entity.name}, which exists`);
    entities.set(entity.name, plain(entity));
  }
  for (const entity of delta.entities_modified || []) {
    if (!entities.has(entity.name)) throw new Error(`delta modifies a missing entity ${entity.name}`);
    entities.set(entity.name, plain(entity));
  }
  for (const relation of delta.relations_added || []) {
    const key = relationKey(relation);
    if (relations.has(key)) throw new Error("delta adds a relation that exists");
    if (!entities.has(relation.from_entity) || !entities.has(relation.to_entity)) {
      throw new Error("delta adds a relation to a missing entity");
    }
    relations.set(key, plain(relation));
  }
  return { entities, relations };
}

const KINDS = {
  [PLANNING]: { empty: emptyPlan, fromState: planFromState, reduce: reducePlan },
  [GRAPH]: { empty: emptyGraph, fromState: graphFromState, reduce: reduceGraph },
};

/** One tool's state on the page: load() the snapshot, then apply() each ToolState event. */
export class ToolMirror {
  constructor(api, teamId, toolId, onChange) {
    Object.assign(this, { api, teamId, toolId, onChange });
    this.kind = KINDS[toolId];
    this.value = this.kind.empty();
    this.lastDelta = 0;
    this.present = null; // the roster lists the tool actor: true, false, or null (not read yet)
    this.pending = []; // deltas that arrive while a snapshot is on its way
    this.loading = null;
    this.snapshots = 0;
  }

  load() {
    this.loading = (async () => {
      try {
        const view = await this.api.get(team(this.teamId, "state", this.toolId));
        this.value = this.kind.fromState(view.state);
        this.lastDelta = view.last_delta;
      } catch (error) {
        // 404: the team has the tool no more (a tool with no delta yet answers its empty state)
        if (error.status !== 404) throw error;
        this.value = this.kind.empty();
        this.lastDelta = 0;
      } finally {
        this.snapshots += 1;
        this.loading = null;
      }
      const waiting = this.pending;
      this.pending = [];
      waiting.forEach((data) => this.apply(data));
      this.onChange(this);
    })();
    return this.loading;
  }

  /** The team has no such tool and none of its deltas came: its view says so. */
  get absent() {
    return this.present === false && this.lastDelta === 0;
  }

  /** Fold one ToolState event's data ({toolId, seq, kind, delta}). */
  apply(data) {
    if (this.loading) {
      this.pending.push(data);
      return;
    }
    if (data.seq <= this.lastDelta) return; // already in the snapshot
    try {
      if (data.seq !== this.lastDelta + 1 || !data.delta) throw new Error("a delta was missed");
      this.value = this.kind.reduce(this.value, data.delta);
      this.lastDelta = data.seq;
      this.resyncs = 0;
    } catch {
      // missed or diverged: start again from the server's state (a few times, not forever)
      if ((this.resyncs = (this.resyncs || 0) + 1) <= 3) {
        this.pending.push(data);
        this.load();
      }
      return;
    }
    this.onChange(this);
  }
}
