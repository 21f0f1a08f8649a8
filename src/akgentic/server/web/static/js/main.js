// The page: the team list, and one team at a time followed on its event stream.
// Everything comes from the server's public API; the address (#/teams/<id>/<view>)
// says which team and view, so a reload lands on the same page, rebuilt from the log.

import { Api, ApiError, team } from "./api.js";
import { $ } from "./dom.js";
import { TeamModel } from "./model.js";
import { TeamStream } from "./sse.js";
import { GRAPH, PLANNING, ToolMirror } from "./tools.js";
import { BoardView } from "./views/board.js";
import { ChatView } from "./views/chat.js";
import { GraphView } from "./views/graph.js";
import { RosterView } from "./views/roster.js";
import { TeamsView } from "./views/teams.js";
import { TimelineView } from "./views/timeline.js";

const VIEWS = ["chat", "board", "graph", "roster", "timeline"];
const TEAMS_EVERY = 15000; // ms between looks at the team list
const RETRY_EVERY = 2000; // ms between looks while the server cannot be reached
const OFFLINE = "cannot reach the server — retrying…";

const api = new Api();
let teams = [];
let session = null; // {id, model, stream, mirrors}
let view = "chat";
let streamStatus = ["", ""]; // the open team's stream: its status and why
let frame = 0;
const dirty = new Set();

// -- feedback ---------------------------------------------------------------------------
// The flash says why the last thing failed. The reason an action of the person's was
// refused stays until their next action succeeds: the page's own refreshes in the
// background (the team list, the roster, the tool states) answer nothing they did, so
// their success clears only a failure of their own (the server was unreachable...).
let flashed = null; // "action" or "background": whose failure the flash shows

function flash(message, by = null) {
  const box = $("#flash");
  box.textContent = message;
  box.hidden = !message;
  flashed = message ? by : null;
}

async function attempt(work, { background = false } = {}) {
  try {
    const result = await work();
    if (!(background && flashed === "action")) flash("");
    return result ?? true;
  } catch (error) {
    // a refresh that found no server: the connection line says so already; nor does a
    // refresh's failure replace the reason an action of the person's was refused
    if (background && (!api.reachable || flashed === "action")) return false;
    flash(error instanceof ApiError ? error.detail : String(error), background ? "background" : "action");
    return false;
  }
}

// -- the server out of reach --------------------------------------------------------------
// No answer at all (the server stopped, the network down): the page says so, claims no
// status it cannot know (the badges read "unknown"), and looks again every RETRY_EVERY
// ms — the open team's stream retries by itself — until an answer brings the statuses
// back.
let retrying = 0;

api.onReachable = (reachable) => {
  document.body.dataset.server = reachable ? "reachable" : "unreachable";
  teamsView.known = reachable;
  showConnection();
  clearInterval(retrying);
  retrying = 0;
  if (!reachable) {
    teamsView.render(teams, session?.id);
    if (session) showInfo(session.model.info);
    retrying = setInterval(() => loadTeams(), RETRY_EVERY);
    return;
  }
  // the statuses come back with the server's answers, not from what it said before
  if (flashed === "background") flash("");
  if (session) refreshInfo(session);
  else loadTeams();
};

function showConnection() {
  const [status, detail] = streamStatus;
  const words = {
    connecting: "connecting…",
    live: "live",
    reconnecting: "connection lost — reconnecting…",
    stopped: "the team is not running",
    deleted: "team deleted",
    closed: "",
  };
  const offline = !api.reachable;
  $("#connection").textContent = offline ? OFFLINE : (words[status] ?? status);
  $("#connection").title = offline ? "" : detail || "";
}

/** attempt() for what the page does by itself, not for something the person did. */
const refresh = (work) => attempt(work, { background: true });

// -- actions ----------------------------------------------------------------------------
const actions = {
  async create(card, name, model) {
    const info = await attempt(() => api.post("/teams", { card, name, model }));
    if (!info) return false;
    await loadTeams();
    location.hash = `#/teams/${info.team_id}/chat`;
    // ready to talk to: the focus goes to its message box (the route opening the same
    // team waits for this opening), not left on the form's button
    await openTeam(info.team_id);
    if (session?.id !== info.team_id) return true;
    showView("chat");
    $("#message").focus();
    return true;
  },
  send: (content, to) => attempt(() => api.post(team(session.id, "messages"), { content, to })),
  command: (command, to) => attempt(() => api.post(team(session.id, "commands"), { command, to })),
  answer: (replyTo, content) => attempt(() => api.post(team(session.id, "messages"), { content, reply_to: replyTo })),
  async interrupt() {
    const told = await attempt(() => api.post(team(session.id, "interrupt")));
    if (told && told.members) chat.tell(`Interrupt sent to ${told.members.join(", ") || "nobody"}.`);
  },
  chatWith(name) {
    location.hash = `#/teams/${session.id}/chat`;
    chat.chatWith(name);
  },
};

const teamsView = new TeamsView(document, actions);
const chat = new ChatView($("#panel-chat"), actions);
const roster = new RosterView($("#panel-roster"), actions);
const board = new BoardView($("#panel-board"));
const graph = new GraphView($("#panel-graph"));
const timeline = new TimelineView($("#panel-timeline"));

// -- drawing, once per frame ----------------------------------------------------------------
function schedule(...what) {
  what.forEach((w) => dirty.add(w));
  if (!frame) frame = requestAnimationFrame(draw);
}

function draw() {
  frame = 0;
  const model = session?.model;
  if (!model) return;
  for (const flag of model.flags) dirty.add(flag);
  model.flags.clear();
  if (["chat", "questions", "roster", "info"].some((flag) => dirty.has(flag))) {
    chat.update({ questions: dirty.has("questions") || dirty.has("info") });
  }
  if (dirty.has("info")) dirty.add("roster");
  if (dirty.has("teams")) teamsView.render(teams, session.id);
  dirty.delete("teams");
  for (const flag of ["chat", "questions", "commands", "info"]) dirty.delete(flag);
  // a hidden panel stays dirty and is drawn when it is shown
  const panels = { roster, board, graph, timeline };
  if (panels[view] && dirty.has(view)) {
    panels[view].update();
    dirty.delete(view);
  }
  document.body.dataset.seq = String(model.lastSeq);
}

// -- the team list ----------------------------------------------------------------------------
const TEAMS_PAGE = 200; // teams per request: the list follows the pages' cursor to the end

async function loadTeams() {
  const listed = await refresh(() => everyTeam());
  if (!listed) return;
  teams = listed;
  teamsView.render(teams, session?.id);
}

/** Every team, newest first: page after page by the server's cursor (`next`), so a team
 * older than the first page is listed too, and one created meanwhile moves no other. */
async function everyTeam() {
  const items = [];
  let after = null;
  do {
    const cursor = after === null ? "" : `&after=${encodeURIComponent(after)}`;
    const page = await api.get(`/teams?limit=${TEAMS_PAGE}${cursor}`);
    items.push(...page.items);
    after = page.next;
  } while (after);
  return items;
}

async function loadCards() {
  const cards = await refresh(() => api.get("/team-cards"));
  if (cards) teamsView.setCards(cards);
}

// -- one team ------------------------------------------------------------------------------------
function closeTeam() {
  session?.stream?.close();
  session = null;
  streamStatus = ["", ""];
  showConnection();
}

async function loadMembers(current) {
  const members = await refresh(() => api.get(team(current.id, "members")));
  if (!members || session !== current) return;
  current.model.members = members;
  chat.setMembers(members, current.model.info.entry_point);
  const names = new Set(members.map((member) => member.name));
  for (const [tool, panel] of [[PLANNING, "board"], [GRAPH, "graph"]]) {
    const mirror = current.mirrors[tool];
    if (mirror.present !== names.has(tool)) schedule(panel);
    mirror.present = names.has(tool);
  }
  schedule("roster", "chat");
}

async function refreshInfo(current) {
  const info = await refresh(() => api.get(team(current.id)));
  if (!info || session !== current) return;
  current.model.info = info;
  showInfo(info);
  schedule("info", "roster");
  loadMembers(current);
  loadTeams();
}

function showInfo(info) {
  $("#team-name").textContent = info.name;
  $("#team-title").textContent = info.name;
  document.title = `${info.name} · akgentic`;
  const status = $("#team-status");
  const known = api.reachable; // what the server said last may no longer hold
  const word = !known ? "unknown" : info.running ? "running" : info.status.toLowerCase();
  status.textContent = word;
  status.className = `badge ${word}`;
  status.title = known ? "" : "the server cannot be reached: the team's status is not known";
  $("#stop-team").hidden = !known || !info.running;
  $("#resume-team").hidden = !known || info.running || info.status === "DELETED";
  $("#delete-team").hidden = !known || info.status === "DELETED";
}

function onStatus(current, status, detail) {
  if (session !== current) return;
  document.body.dataset.stream = status;
  streamStatus = [status, detail];
  showConnection();
  if (status === "deleted") {
    current.model.info = { ...current.model.info, status: "DELETED", running: false };
    showInfo(current.model.info);
    schedule("info", "roster");
    loadTeams();
    return;
  }
  if (status === "stopped" || (status === "live" && !current.model.info.running && current.model.lastSeq)) {
    refreshInfo(current);
  }
}

function onRecord(current, record) {
  if (session !== current) return;
  const model = current.model;
  model.apply(record);
  if (record.type === "ToolState") current.mirrors[record.data.toolId]?.apply(record.data);
  const listed = teams.find((t) => t.team_id === current.id);
  if (listed) {
    listed.last_activity = record.time;
    dirty.add("teams");
  }
  if (model.flags.has("members")) {
    model.flags.delete("members");
    clearTimeout(current.membersTimer);
    current.membersTimer = setTimeout(() => loadMembers(current), 300);
  }
  schedule();
}

let opening = null; // {id, done}: a team being opened, so a second route() waits for it

function openTeam(id) {
  if (session?.id === id) return Promise.resolve();
  if (opening?.id === id) return opening.done;
  const done = loadTeam(id).finally(() => {
    if (opening?.done === done) opening = null;
  });
  opening = { id, done };
  return done;
}

async function loadTeam(id) {
  closeTeam();
  const info = await attempt(() => api.get(team(id)));
  if (!info) {
    location.hash = "";
    return;
  }
  $("#no-team-note").textContent = "";
  const model = new TeamModel(info);
  const current = (session = { id, model, stream: null, mirrors: {} });
  current.mirrors[PLANNING] = new ToolMirror(api, id, PLANNING, () => schedule("board"));
  current.mirrors[GRAPH] = new ToolMirror(api, id, GRAPH, () => schedule("graph"));
  showInfo(info);
  $("#no-team").hidden = true;
  $("#team").hidden = false;
  chat.bind(model);
  roster.bind(model);
  timeline.bind(model);
  board.bind(current.mirrors[PLANNING]);
  graph.bind(current.mirrors[GRAPH]);
  teamsView.render(teams, id);
  // the tool states first: the stream's deltas are folded onto them. Only a tool the
  // roster lists has a state to ask for (a team without #PlanningTool has no board: asking
  // would be a 404); a mirror not loaded folds the stream's deltas from the first.
  await loadMembers(current);
  if (session !== current) return;
  await Promise.all(
    [PLANNING, GRAPH].filter((tool) => current.mirrors[tool].present).map((tool) => refresh(() => current.mirrors[tool].load())),
  );
  if (session !== current) return;
  current.stream = new TeamStream({
    api,
    path: team(id, "events"),
    onRecord: (record) => onRecord(current, record),
    onStatus: (status, detail) => onStatus(current, status, detail),
  });
  current.stream.start(1);
}

// -- views and the address ----------------------------------------------------------------------
function showView(name) {
  view = VIEWS.includes(name) ? name : "chat";
  for (const tab of document.querySelectorAll("[role=tab]")) {
    const selected = tab.dataset.view === view;
    tab.setAttribute("aria-selected", String(selected));
    tab.tabIndex = selected ? 0 : -1;
    $(`#panel-${tab.dataset.view}`).hidden = !selected;
  }
  // drawn before the panel is seen: no flash of what it showed last time
  dirty.add(view);
  if (frame) cancelAnimationFrame(frame);
  draw();
}

async function route() {
  const [, kind, id, name] = location.hash.split("/");
  if (kind === "teams" && id) {
    await openTeam(id);
    showView(name);
    document.body.classList.remove("nav-open");
    $("#nav-toggle").setAttribute("aria-expanded", "false");
  } else {
    closeTeam();
    $("#no-team").hidden = false;
    $("#team").hidden = true;
    $("#team-title").textContent = "";
    document.title = "akgentic";
    teamsView.render(teams, null);
  }
}

function go(name) {
  if (session) location.hash = `#/teams/${session.id}/${name}`;
}

const tabs = $(".tabs");
tabs.addEventListener("click", (event) => {
  const tab = event.target.closest("[role=tab]");
  if (tab) go(tab.dataset.view);
});
tabs.addEventListener("keydown", (event) => {
  const index = VIEWS.indexOf(view);
  const moves = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: VIEWS.length - 1 };
  if (!(event.key in moves)) return;
  event.preventDefault();
  const next = VIEWS[(moves[event.key] + VIEWS.length) % VIEWS.length];
  go(next);
  $(`#tab-${next}`).focus();
});
document.addEventListener("keydown", (event) => {
  if (event.altKey && /^[1-5]$/.test(event.key)) {
    event.preventDefault();
    go(VIEWS[Number(event.key) - 1]);
  } else if (event.key === "Escape" && document.body.classList.contains("nav-open")) {
    toggleNav(false);
  }
});

function toggleNav(open = !document.body.classList.contains("nav-open")) {
  document.body.classList.toggle("nav-open", open);
  $("#nav-toggle").setAttribute("aria-expanded", String(open));
  if (open) $("#new-card").focus();
}
$("#nav-toggle").addEventListener("click", () => toggleNav());

/** Stop or resume the open team. The button is disabled until the server answers and the
 * status is read back: a double click asks once (a second resume would be refused, a
 * second stop would wait its grace again). The button then hides; the keyboard's focus,
 * which was on it, goes to what comes next (`then`), not back to the top of the page. */
async function teamAction(button, path, then) {
  const current = session;
  if (!current) return;
  button.disabled = true;
  try {
    if (await attempt(() => api.post(path(current.id)))) await refreshInfo(current);
  } finally {
    button.disabled = false;
  }
  const lost = document.activeElement === button || document.activeElement === document.body;
  if (session === current && button.hidden && lost) then().focus();
}
$("#stop-team").addEventListener("click", (event) =>
  teamAction(event.currentTarget, (id) => `${team(id, "stop")}?grace=10`, () => $("#resume-team")),
);
$("#resume-team").addEventListener("click", (event) =>
  teamAction(event.currentTarget, (id) => team(id, "resume"), () => {
    chat.renderState(); // the composer enabled now, not at the next frame
    return $("#message");
  }),
);

// -- deleting a team --------------------------------------------------------------------------------
// Delete asks first (the dialog says what it does), then purges the team: the server stops
// it if it runs here and removes it with its records. A refusal — a team another live
// process runs is a 409 naming that process — flashes the server's words and leaves the
// team as it was. Deleted, the team leaves the list and the page goes back to no team.
const deleteDialog = $("#delete-dialog");
let asked = null; // the session the dialog names: only that team is deleted
$("#delete-team").addEventListener("click", () => {
  if (!session) return;
  asked = session;
  $("#delete-name").textContent = session.model.info.name;
  deleteDialog.returnValue = "";
  deleteDialog.showModal();
});
deleteDialog.addEventListener("close", () => {
  if (deleteDialog.returnValue === "delete" && asked === session) deleteTeam(asked);
  asked = null;
});

async function deleteTeam(current) {
  const button = $("#delete-team");
  button.disabled = true;
  const deleted = await attempt(() => api.delete(`${team(current.id)}?purge=true`));
  button.disabled = false;
  if (!deleted) {
    if (session === current) button.focus();
    return;
  }
  teams = teams.filter((t) => t.team_id !== current.id);
  $("#no-team-note").textContent = `The team “${current.model.info.name}” was deleted.`;
  if (session === current) {
    location.hash = ""; // route() closes it and shows no team
    $("#main").focus();
  } else {
    teamsView.render(teams, session?.id);
  }
  await loadTeams();
}

// -- the token -----------------------------------------------------------------------------------
const dialog = $("#token-dialog");
api.onUnauthorized = () => {
  if (!dialog.open) dialog.showModal();
};
$("#token-button").addEventListener("click", () => dialog.showModal());
$("#token-cancel").addEventListener("click", () => dialog.close());
$("#token-form").addEventListener("submit", () => {
  api.setToken($("#token-input").value.trim());
  $("#token-input").value = "";
  const id = session?.id;
  closeTeam();
  start(id);
});

async function start() {
  await Promise.all([loadCards(), loadTeams()]);
  await route();
}

window.addEventListener("hashchange", route);
setInterval(() => document.hidden || loadTeams(), TEAMS_EVERY);
start();
