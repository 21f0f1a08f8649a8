// A small force-directed layout (Fruchterman–Reingold) for the knowledge graph.
// Deterministic — no randomness, so the same graph is drawn the same way — and
// incremental: nodes keep the place they had, new ones start beside a neighbour.

const GOLDEN = Math.PI * (3 - Math.sqrt(5));

/**
 * @param ids       node ids
 * @param edges     [{source, target}]
 * @param previous  Map id -> {x, y} of an earlier layout
 * @returns Map id -> {x, y}, in a square of side `size` centred on 0
 */
export function forceLayout(ids, edges, previous = new Map(), size = 600) {
  const n = ids.length;
  const pos = new Map();
  if (!n) return pos;
  const k = size / Math.sqrt(n + 1);
  const neighbours = new Map(ids.map((id) => [id, []]));
  for (const { source, target } of edges) {
    if (source === target || !neighbours.has(source) || !neighbours.has(target)) continue;
    neighbours.get(source).push(target);
    neighbours.get(target).push(source);
  }
  let fresh = 0;
  ids.forEach((id, i) => {
    const old = previous.get(id);
    if (old) return pos.set(id, { x: old.x, y: old.y });
    fresh += 1;
    const placed = neighbours.get(id).map((m) => previous.get(m)).find(Boolean);
    const angle = i * GOLDEN;
    const r = placed ? k * 0.6 : (k * Math.sqrt(i + 0.5)) / 2;
    pos.set(id, { x: (placed?.x ?? 0) + r * Math.cos(angle), y: (placed?.y ?? 0) + r * Math.sin(angle) });
  });
  // settle: fewer rounds when only a few nodes are new
  const rounds = fresh === n ? 300 : fresh ? 120 : 0;
  let temperature = fresh === n ? size / 8 : k / 2;
  const cool = temperature / (rounds + 1);
  const list = ids.map((id) => pos.get(id));
  const index = new Map(ids.map((id, i) => [id, i]));
  for (let round = 0; round < rounds; round += 1) {
    const shift = list.map(() => ({ x: 0, y: 0 }));
    for (let i = 0; i < n; i += 1) {
      for (let j = i + 1; j < n; j += 1) {
        let dx = list[i].x - list[j].x;
        let dy = list[i].y - list[j].y;
        let d2 = dx * dx + dy * dy;
        if (d2 < 0.01) {
          dx = 0.1 * ((i % 3) - 1 || 1);
          dy = 0.1 * ((j % 3) - 1 || 1);
          d2 = dx * dx + dy * dy;
        }
        const f = (k * k) / d2; // repulsion k²/d, along the unit vector (dx/d)
        shift[i].x += dx * f;
        shift[i].y += dy * f;
        shift[j].x -= dx * f;
        shift[j].y -= dy * f;
      }
    }
    for (const { source, target } of edges) {
      const i = index.get(source);
      const j = index.get(target);
      if (i === undefined || j === undefined || i === j) continue;
      const dx = list[i].x - list[j].x;
      const dy = list[i].y - list[j].y;
      const d = Math.sqrt(dx * dx + dy * dy) || 0.01;
      const f = d / k; // attraction d²/k, along the unit vector
      shift[i].x -= dx * f;
      shift[i].y -= dy * f;
      shift[j].x += dx * f;
      shift[j].y += dy * f;
    }
    for (let i = 0; i < n; i += 1) {
      // a weak pull to the centre keeps separate pieces of the graph on screen
      shift[i].x -= list[i].x * 0.02;
      shift[i].y -= list[i].y * 0.02;
      const length = Math.sqrt(shift[i].x ** 2 + shift[i].y ** 2) || 1;
      const step = Math.min(length, temperature);
      list[i].x += (shift[i].x / length) * step;
      list[i].y += (shift[i].y / length) * step;
    }
    temperature = Math.max(temperature - cool, 1);
  }
  return pos;
}
