// The conversation: what the person said, each member's turn as it streams (text word by
// word, tool calls and their results inline and collapsible, messages it sent), the
// questions members ask the person (answered in place), and the composer with its
// recipient, its /commands palette and the interrupt button.

import { clear, h } from "../dom.js";
import { clock, json } from "../format.js";
import { Palette } from "./palette.js";

const OUTCOME = { completed: "done", failed: "failed", interrupted: "interrupted" };

export class ChatView {
  constructor(root, actions) {
    this.root = root;
    this.actions = actions; // {send, command, answer, interrupt}
    this.log = root.querySelector("#chat-log");
    this.questions = root.querySelector("#questions");
    this.form = root.querySelector("#composer");
    this.input = root.querySelector("#message");
    this.recipient = root.querySelector("#recipient");
    this.interrupt = root.querySelector("#interrupt");
    this.notice = root.querySelector("#composer-note");
    this.nodes = new Map(); // chat item -> its <li>
    this.told = ""; // what the page said about the person's last action, until their next
    this.palette = new Palette(this.input, root.querySelector("#palette"), () => this.commands());
    root.querySelector("#commands-button").addEventListener("click", () => this.palette.toggle());
    this.input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        this.form.requestSubmit();
      }
    });
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.submit();
    });
    this.interrupt.addEventListener("click", () => this.actions.interrupt());
  }

  bind(model) {
    this.model = model;
    this.nodes.clear();
    clear(this.log);
    clear(this.questions);
    this.input.value = "";
    this.told = "";
    this.update({ all: true });
  }

  commands() {
    const member = this.recipient.value;
    return { member, commands: this.model?.commands.get(member) || [] };
  }

  async submit() {
    if (!this.model) return;
    this.told = "";
    const to = this.recipient.value || undefined;
    await sendFrom(this.input, (text) => (text.startsWith("/") ? this.actions.command(text, to) : this.actions.send(text, to)));
    this.input.focus();
  }

  /** Recipients: every agent of the roster, the entry point first. */
  setMembers(members, entryPoint) {
    const agents = members.filter((m) => m.kind === "agent").map((m) => m.name);
    if (entryPoint && !agents.includes(entryPoint)) agents.unshift(entryPoint);
    agents.sort((a, b) => (a === entryPoint ? -1 : b === entryPoint ? 1 : a.localeCompare(b)));
    const current = this.recipient.value || entryPoint;
    clear(this.recipient);
    for (const name of agents) {
      this.recipient.append(h("option", { value: name }, name === entryPoint ? `${name} (entry point)` : name));
    }
    this.recipient.value = agents.includes(current) ? current : entryPoint || agents[0] || "";
  }

  /** Say what came of an action under the composer (the interrupt: whom it reached); it
   * stays while the team's records stream in, until the person sends something. */
  tell(text) {
    this.told = text;
    if (this.model) this.renderState();
  }

  chatWith(name) {
    this.recipient.value = name;
    this.input.focus();
  }

  update({ all = false, questions = false } = {}) {
    const model = this.model;
    if (!model) return;
    const nearBottom = this.log.scrollHeight - this.log.scrollTop - this.log.clientHeight < 80;
    const items = all ? model.chat : [...model.changed];
    model.changed.clear();
    for (const item of items) {
      const fresh = this.render(item);
      const old = this.nodes.get(item);
      if (old) replaceKeepingFocus(old, fresh);
      else this.log.append(fresh);
      this.nodes.set(item, fresh);
    }
    if (all || questions) this.renderQuestions();
    this.renderState();
    if (nearBottom || all) this.log.scrollTop = this.log.scrollHeight;
  }

  renderState() {
    const model = this.model;
    const running = model.info.running;
    const busy = model.busy();
    this.interrupt.disabled = !running || !busy.length;
    this.interrupt.textContent = busy.length ? `Interrupt (${busy.join(", ")})` : "Interrupt";
    for (const control of [this.input, this.recipient, this.form.querySelector("[type=submit]")]) {
      control.disabled = !running;
    }
    const status = model.info.status.toLowerCase();
    this.notice.textContent = running
      ? this.told
      : status === "deleted"
        ? "This team is deleted."
        : `This team is ${status}: resume it to talk to it.`;
  }

  renderQuestions() {
    clear(this.questions);
    for (const question of this.model.pendingQuestions()) {
      const field = h("input", { type: "text", dir: "auto", required: true, "aria-label": `Your answer to ${question.from}`, autocomplete: "off" });
      const form = h("form", {
        class: "question-form",
        dataset: { question: question.id },
        onsubmit: async (event) => {
          event.preventDefault();
          await sendFrom(field, (text) => this.actions.answer(question.id, text));
        },
      },
        h("p", {}, h("strong", {}, question.from), " asks you: ", h("span", { class: "question-text", dir: "auto" }, question.text)),
        h("div", { class: "row" }, field, h("button", { type: "submit" }, "Answer")),
      );
      this.questions.append(form);
    }
  }

  render(item) {
    switch (item.kind) {
      case "human":
        return h("li", { class: "msg human", dataset: { seq: item.seq } },
          h("div", { class: "who" }, `You → ${item.to}`, item.answers ? h("span", { class: "muted" }, ` answering “${item.answers}”`) : null,
            h("time", { datetime: item.time }, clock(item.time))),
          h("div", { class: item.text.startsWith("/") ? "text command" : "text", dir: "auto" }, item.text));
      case "turn":
        return this.renderTurn(item);
      case "message":
        return h("li", { class: "msg member", dataset: { seq: item.seq } },
          h("div", { class: "who" }, `${item.part.from} → ${item.part.to}`, h("time", { datetime: item.time }, clock(item.time))),
          this.renderPart(item.part));
      default:
        return item.level === "info"
          ? h("li", { class: "notice info", dataset: { seq: item.seq } }, item.text)
          : h("li", { class: `notice ${item.level.toLowerCase()}`, role: "alert" }, `${item.from || ""} ${item.level}: ${item.text}`);
    }
  }

  renderTurn(turn) {
    const state = turn.outcome
      ? turn.outcome === "interrupted" && turn.interruptedBy
        ? `interrupted by ${turn.interruptedBy}`
        : OUTCOME[turn.outcome] || turn.outcome
      : "working…";
    return h("li", {
      class: `turn ${turn.outcome ? `ended ${turn.outcome}` : "live"}`,
      dataset: { agent: turn.agent, turn: turn.turnId, outcome: turn.outcome || "running" },
      "aria-busy": turn.outcome ? "false" : "true",
    },
      h("div", { class: "who" }, h("strong", {}, turn.agent), turn.answered ? ` → ${turn.answered}` : "",
        turn.hops ? h("span", { class: "hops" }, turn.hops) : null,
        h("span", { class: `badge ${turn.outcome || "live"}` }, state),
        h("time", { datetime: turn.time }, clock(turn.time))),
      turn.parts.map((part) => this.renderPart(part)),
      turn.error && turn.outcome === "failed" ? h("div", { class: "error" }, turn.error) : null);
  }

  renderPart(part) {
    switch (part.kind) {
      case "text":
        return h("div", { class: "text", dir: "auto", dataset: { chunks: part.chunks } }, part.text);
      case "tool": {
        const status = part.result ? part.result.outcome : "running…";
        const details = h("details", { class: `tool ${part.result ? (part.result.success ? "ok" : "failed") : "running"}`, open: part.open, dataset: { tool: part.name } },
          h("summary", {}, h("code", {}, part.name), h("span", { class: "badge" }, status)),
          h("div", { class: "tool-body" },
            h("h4", {}, "Arguments"), h("pre", {}, json(part.args)),
            part.result ? [h("h4", {}, "Result"), h("pre", {}, part.result.content ?? "")] : null));
        details.addEventListener("toggle", () => (part.open = details.open));
        return details;
      }
      case "question":
        return h("div", { class: "question", dataset: { question: part.id } },
          h("span", { class: "muted" }, `asks ${part.to}: `), h("span", { class: "question-text", dir: "auto" }, part.text),
          part.answer ? h("div", { class: "answered" }, "You answered: ", h("q", { dir: "auto" }, part.answer)) : h("div", { class: "muted" }, "Waiting for your answer below."));
      case "message":
        // the answer to an unknown or failed /command is marked failed by the agent
        return h("div", { class: part.failed ? "sent failed" : "sent", role: part.failed ? "alert" : null },
          h("span", { class: "muted" }, `→ ${part.to}${part.type ? ` (${part.type})` : ""}: `), h("bdi", {}, part.text),
          part.hops ? h("span", { class: "hops" }, part.hops) : null);
      case "error":
        return h("div", { class: "error", role: "alert" }, `${part.level}: ${part.text}`);
      default:
        return null;
    }
  }
}

/** Send what a field holds, emptying it at once: a second Enter while the request is on
 * its way finds nothing to send (no message twice), and the person can type the next one.
 * A refused text comes back into the field (before anything typed since), to be fixed. */
async function sendFrom(field, send) {
  const typed = field.value;
  const text = typed.trim();
  if (!text) return;
  field.value = "";
  if (!(await send(text))) field.value = field.value ? `${typed}\n${field.value}` : typed;
}

const FOCUSABLE = "summary, button, input, a[href], [tabindex]";

/** Swap a re-rendered item in without losing the keyboard focus inside it. */
function replaceKeepingFocus(old, fresh) {
  const active = document.activeElement;
  const index = old.contains(active) ? [...old.querySelectorAll(FOCUSABLE)].indexOf(active) : -1;
  old.replaceWith(fresh);
  if (index >= 0) fresh.querySelectorAll(FOCUSABLE)[index]?.focus();
}
