// The knowledge graph: #KnowledgeGraphTool's entities and relations drawn as a graph,
// searchable (name, type, description, observations). The list beside the drawing is the
// same graph for the keyboard and for screen readers; choosing an entity shows it in full.

import { clear, h, s } from "../dom.js";
import { counted, cut } from "../format.js";
import { forceLayout } from "../layout.js";

const PALETTE = ["#2f6fde", "#d9480f", "#2b8a3e", "#9c36b5", "#e67700", "#0b7285", "#c2255c", "#5c940d"];

function colour(type) {
  let hash = 0;
  for (const c of type || "") hash = (hash * 31 + c.charCodeAt(0)) >>> 0;
  return PALETTE[hash % PALETTE.length];
}

export function matches(entity, query) {
  if (!query) return true;
  const q = query.toLowerCase();
  return [entity.name, entity.entity_type, entity.description, ...(entity.observations || [])]
    .some((text) => (text || "").toLowerCase().includes(q));
}

export class GraphView {
  constructor(root) {
    this.svg = root.querySelector("#graph-svg");
    this.list = root.querySelector("#graph-list");
    this.details = root.querySelector("#graph-details");
    this.search = root.querySelector("#graph-search");
    this.counts = root.querySelector("#graph-counts");
    this.absent = root.querySelector("#graph-absent");
    this.positions = new Map();
    this.selected = null;
    this.search.addEventListener("input", () => this.update());
  }

  bind(mirror) {
    this.mirror = mirror;
    this.positions = new Map();
    this.selected = null;
    this.search.value = "";
    this.update();
  }

  select(name) {
    this.selected = name;
    this.update();
  }

  update() {
    if (!this.mirror) return;
    const absent = this.mirror.absent; // no #KnowledgeGraphTool: the line saying so, nothing else
    this.absent.hidden = !absent;
    this.search.parentElement.hidden = absent;
    this.svg.parentElement.hidden = absent;
    if (absent) return;
    const { entities, relations } = this.mirror.value;
    const names = [...entities.keys()].sort();
    const edges = [...relations.values()].map((r) => ({ source: r.from_entity, target: r.to_entity, type: r.relation_type }));
    this.positions = forceLayout(names, edges, this.positions);
    const query = this.search.value.trim();
    const hits = new Set(names.filter((name) => matches(entities.get(name), query)));
    this.counts.textContent = `${counted(entities.size, "entity", "entities")}, ${counted(relations.size, "relation")}${query ? `; ${hits.size} match “${query}”` : ""}`;
    this.draw(entities, edges, hits, query);
    this.drawList(names, entities, hits);
    this.drawDetails(entities, [...relations.values()]);
  }

  draw(entities, edges, hits, query) {
    clear(this.svg);
    const points = [...this.positions.values()];
    if (!points.length) {
      this.svg.setAttribute("viewBox", "0 0 400 120");
      this.svg.append(s("text", { x: 200, y: 60, "text-anchor": "middle", class: "empty" }, "No entity yet"));
      return;
    }
    const pad = 90;
    const xs = points.map((p) => p.x);
    const ys = points.map((p) => p.y);
    const minX = Math.min(...xs) - pad;
    const minY = Math.min(...ys) - pad / 2;
    const width = Math.max(Math.max(...xs) - minX + pad, 300);
    const height = Math.max(Math.max(...ys) - minY + pad / 2, 200);
    this.svg.setAttribute("viewBox", `${minX} ${minY} ${width} ${height}`);
    this.svg.append(s("defs", {}, s("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 18, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" },
      s("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "arrow" }))));
    const edgeLayer = s("g", { class: "edges" });
    for (const edge of edges) {
      const a = this.positions.get(edge.source);
      const b = this.positions.get(edge.target);
      if (!a || !b) continue;
      const dim = query && !(hits.has(edge.source) && hits.has(edge.target));
      edgeLayer.append(s("g", { class: dim ? "edge dim" : "edge" },
        s("line", { x1: a.x, y1: a.y, x2: b.x, y2: b.y, "marker-end": "url(#arrow)" }),
        s("text", { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 - 4, "text-anchor": "middle" }, edge.type)));
    }
    const nodeLayer = s("g", { class: "nodes" });
    for (const [name, p] of this.positions) {
      const entity = entities.get(name);
      const classes = ["node", query && !hits.has(name) ? "dim" : "", query && hits.has(name) ? "hit" : "", name === this.selected ? "selected" : "", entity.is_root ? "root" : ""];
      const node = s("g", { class: classes.filter(Boolean).join(" "), dataset: { entity: name }, transform: `translate(${p.x} ${p.y})` },
        s("circle", { r: entity.is_root ? 11 : 8, fill: colour(entity.entity_type) }),
        s("text", { y: -15, "text-anchor": "middle" }, cut(name, 28)),
        s("title", {}, `${name} (${entity.entity_type})`));
      node.addEventListener("click", () => this.select(name));
      nodeLayer.append(node);
    }
    this.svg.append(edgeLayer, nodeLayer);
  }

  drawList(names, entities, hits) {
    clear(this.list);
    for (const name of names.filter((n) => hits.has(n))) {
      const entity = entities.get(name);
      this.list.append(h("li", {},
        h("button", { type: "button", class: name === this.selected ? "link selected" : "link", "aria-pressed": name === this.selected ? "true" : "false", onclick: () => this.select(name) },
          h("span", { class: "dot", dataset: { colour: colour(entity.entity_type) } }), name, h("span", { class: "muted" }, ` ${entity.entity_type}`))));
    }
    for (const dot of this.list.querySelectorAll(".dot")) dot.style.background = dot.dataset.colour;
    if (!this.list.children.length) this.list.append(h("li", { class: "muted" }, entities.size ? "Nothing matches." : "The graph is empty."));
  }

  drawDetails(entities, relations) {
    clear(this.details);
    const entity = this.selected && entities.get(this.selected);
    if (!entity) {
      this.details.append(h("p", { class: "muted" }, "Choose an entity to see it in full."));
      return;
    }
    const touching = relations.filter((r) => r.from_entity === entity.name || r.to_entity === entity.name);
    this.details.append(h("div", {},
      h("h3", {}, entity.name, h("span", { class: "muted" }, ` (${entity.entity_type}${entity.is_root ? ", root" : ""})`)),
      entity.description ? h("p", {}, entity.description) : null,
      entity.observations?.length ? h("ul", {}, entity.observations.map((o) => h("li", {}, o))) : null,
      touching.length ? h("ul", { class: "relations" }, touching.map((r) => h("li", {}, `${r.from_entity} —${r.relation_type}→ ${r.to_entity}`))) : null,
    ));
  }
}
