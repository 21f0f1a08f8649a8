// One team as the page knows it: the fold of its event stream, in sequence order.
// The chat (turns streaming text and tool calls, messages, questions to the person), who
// is in a turn, the commands each member announced, usage per member, and the timeline
// are all rebuilt from the records alone, so a reload or a resumed stream gives the same
// page.

const BOOKKEEPING = new Set(["Received", "Processed", "State", "LlmMessageEvent"]);
export const isBookkeeping = (type) => BOOKKEEPING.has(type);

export class TeamModel {
  constructor(info) {
    this.info = info; // TeamInfo
    this.human = info.human || "@Human";
    this.members = []; // MemberInfo[] from GET /members
    this.chat = []; // chat items, in order
    this.turns = new Map(); // `${agent} ${turnId}` -> turn item
    this.open = new Map(); // agent -> its turn in progress
    this.questions = new Map(); // message id -> question part
    this.commands = new Map(); // member -> CommandDescriptor[]
    this.usage = new Map(); // member -> {inputTokens, outputTokens, requests, toolCalls, model}
    this.events = []; // every record, for the timeline
    this.senders = new Set();
    this.types = new Set();
    this.lastSeq = 0;
    this.changed = new Set(); // chat items touched since the last render
    this.flags = new Set(); // views to redraw: chat, roster, timeline, questions, commands
  }

  /** Agents still in a turn (only while the team runs). */
  busy() {
    return this.info.running ? [...this.open.keys()] : [];
  }

  pendingQuestions() {
    return [...this.questions.values()].filter((q) => !q.answer);
  }

  touch(item) {
    this.changed.add(item);
    this.flags.add("chat");
  }

  apply(event) {
    this.lastSeq = event.seq;
    this.events.push(event);
    if (event.sender) this.senders.add(event.sender);
    this.types.add(event.type);
    this.flags.add("timeline");
    const d = event.data || {};
    const handler = this[`on${event.type}`];
    if (handler) handler.call(this, event, d);
  }

  push(item) {
    this.chat.push(item);
    this.touch(item);
    return item;
  }

  turnOf(event) {
    const agent = event.sender;
    return this.open.get(agent) || null;
  }

  onStartResponse(event, d) {
    const turn = this.push({
      kind: "turn",
      agent: d.agent,
      turnId: d.turnId,
      seq: event.seq,
      time: event.time,
      parts: [],
      outcome: null,
      error: null,
      interruptedBy: null,
      answered: null,
    });
    this.turns.set(`${d.agent} ${d.turnId}`, turn);
    this.open.set(d.agent, turn);
    this.flags.add("roster");
  }

  onAppendText(event, d) {
    const turn = this.turnOf(event);
    if (!turn) return;
    const last = turn.parts[turn.parts.length - 1];
    if (last && last.kind === "text") {
      last.text += d.text;
      last.chunks += 1;
    } else {
      turn.parts.push({ kind: "text", text: d.text, chunks: 1 });
    }
    this.touch(turn);
  }

  // The turn's last d.chars characters of text (code points, as the server counts) were
  // an answer cut off or failed: dropped, the answer asked again (or a fallback's) follows.
  onRestartAnswer(event, d) {
    const turn = this.turnOf(event);
    if (!turn) return;
    let left = d.chars;
    while (left > 0) {
      const last = turn.parts[turn.parts.length - 1];
      if (!last || last.kind !== "text") break;
      const points = Array.from(last.text);
      if (points.length > left) {
        last.text = points.slice(0, points.length - left).join("");
        break;
      }
      left -= points.length;
      turn.parts.pop();
    }
    this.touch(turn);
  }

  onToolCall(event, d) {
    const turn = this.turnOf(event);
    if (!turn) return;
    turn.parts.push({ kind: "tool", id: d.id, name: d.toolName, args: d.arguments, result: null, open: false });
    this.touch(turn);
  }

  onToolResult(event, d) {
    const turn = this.turnOf(event);
    const call = turn?.parts.find((p) => p.kind === "tool" && p.id === d.toolCallId);
    if (!call) return;
    call.result = { success: d.success, outcome: d.outcome, content: d.content };
    this.touch(turn);
  }

  onInterrupted(event, d) {
    const turn = this.turns.get(`${d.agent} ${d.turnId}`);
    if (!turn) return;
    turn.interruptedBy = d.by || "someone";
    this.touch(turn);
  }

  onError(event, d) {
    const turn = this.open.get(event.sender);
    if (turn && (!d.turnId || d.turnId === turn.turnId)) {
      turn.parts.push({ kind: "error", level: event.type, text: d.message });
      this.touch(turn);
    } else {
      this.push({ kind: "notice", level: event.type, from: event.sender, text: d.message, seq: event.seq });
    }
  }

  onWarning(event, d) {
    this.onError(event, d);
  }

  onEnd(event, d) {
    const turn = this.turns.get(`${d.agent} ${d.turnId}`);
    if (turn) {
      turn.outcome = d.outcome;
      turn.error = d.error;
      this.touch(turn);
    }
    if (this.open.get(d.agent) === turn) this.open.delete(d.agent);
    this.flags.add("roster");
  }

  onMessage(event, d) {
    if (typeof d.content !== "string") {
      // no words: a cancel, or another control message
      const what = d.kind === "CancelMessage" ? "asked to stop its turn" : d.kind;
      this.push({ kind: "notice", level: "info", text: `${d.to} ${what} (by ${d.from})`, seq: event.seq });
      return;
    }
    if (d.from === this.human) {
      const question = d.parentId ? this.questions.get(d.parentId) : null;
      const item = this.push({
        kind: "human",
        id: d.id,
        to: d.to,
        text: d.content ?? "",
        seq: event.seq,
        time: event.time,
        answers: question ? question.text : null,
      });
      if (question) {
        question.answer = item.text;
        this.touch(question.item);
        this.flags.add("questions");
      }
      return;
    }
    const asks = d.to === this.human && d.type === "request";
    const turn = this.open.get(d.from);
    const part = { kind: asks ? "question" : "message", id: d.id, from: d.from, to: d.to, type: d.type, text: d.content ?? `(${d.kind})`, answer: null, failed: Boolean(d.failed), hops: this.hops(d) };
    if (turn) {
      const said = turn.parts.filter((p) => p.kind === "text").map((p) => p.text).join("").trim();
      if (!asks && !turn.answered && said && said === part.text.trim()) {
        turn.answered = d.to; // the streamed text was the message itself
        turn.hops = part.hops;
      } else {
        turn.parts.push(part);
      }
      part.item = turn;
      this.touch(turn);
    } else {
      part.item = this.push({ kind: "message", part, seq: event.seq, time: event.time });
    }
    if (asks) {
      this.questions.set(d.id, part);
      this.flags.add("questions");
    }
  }

  /** "hop 12/30" for a message between agents: how many in a row it ends since the person
   * last wrote (agentHops), and the team's bound (max_agent_hops; null: no bound); null for
   * a message to or from the person. */
  hops(d) {
    if (!d.agentHops || d.to === this.human || d.from === this.human) return null;
    const limit = this.info.max_agent_hops;
    return limit ? `hop ${d.agentHops}/${limit}` : `hop ${d.agentHops}`;
  }

  onCommands(event, d) {
    this.commands.set(event.sender, d.commands || []);
    this.flags.add("commands");
  }

  onUsage(event, d) {
    const used = this.usage.get(event.sender) || { inputTokens: 0, outputTokens: 0, requests: 0, toolCalls: 0, model: "" };
    used.inputTokens += d.inputTokens || 0;
    used.outputTokens += d.outputTokens || 0;
    used.requests += d.requests || 0;
    used.toolCalls += d.toolCalls || 0;
    used.model = d.model || used.model;
    this.usage.set(event.sender, used);
    this.flags.add("roster");
  }

  onMemberStarted(event, d) {
    this.open.delete(d.name); // a restarted member is in no turn
    this.flags.add("members");
  }

  onMemberStopped(event, d) {
    this.open.delete(d.name);
    this.flags.add("members");
  }
}
