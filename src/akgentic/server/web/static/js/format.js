// How times, numbers and events read on the page.

export function clock(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  return d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false });
}

export function ago(iso, now = Date.now()) {
  if (!iso) return "no activity yet";
  const seconds = Math.max(0, Math.round((now - new Date(iso).getTime()) / 1000));
  if (seconds < 60) return `${seconds}s ago`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 48) return `${hours} h ago`;
  return new Date(iso).toLocaleDateString();
}

export function count(n) {
  return (n || 0).toLocaleString();
}

/** `n` (thousands separated) and `noun`, in the plural unless `n` is 1: `noun` + "s",
 * or `plural` for a noun that does not take an "s" (as akgentic.core.words.counted). */
export function counted(n, noun, plural) {
  return `${count(n)} ${n === 1 ? noun : plural ?? `${noun}s`}`;
}

export function cut(text, max = 160) {
  const flat = String(text ?? "").replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export function json(value) {
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}

/** One line saying what a wire event is, for the timeline. */
export function summary(event) {
  const d = event.data || {};
  switch (event.type) {
    case "Message":
      return `${d.from ?? "?"} → ${d.to ?? "?"}${d.type ? ` (${d.type})` : ""}: ${cut(d.content ?? d.kind)}`;
    case "StartResponse":
      return `${d.agent} starts a turn`;
    case "AppendText":
      return cut(d.text);
    case "RestartAnswer":
      return `answer cut off (${d.chars} characters dropped): it starts again`;
    case "ToolCall":
      return `${d.toolName}(${cut(JSON.stringify(d.arguments ?? {}), 120)})`;
    case "ToolResult":
      return `${d.toolName} → ${d.outcome}: ${cut(d.content, 120)}`;
    case "Interrupted":
      return `${d.agent} interrupted${d.by ? ` by ${d.by}` : ""}`;
    case "End":
      return `${d.agent}: ${d.outcome}${d.error ? ` — ${cut(d.error)}` : ""}`;
    case "Error":
    case "Warning":
      return cut(d.message);
    case "ToolState":
      return `${d.toolId} delta ${d.seq} (${d.kind})`;
    case "Commands":
      return (d.commands || []).map((c) => `/${c.name}`).join(" ");
    case "Usage":
      return `${d.model}: ${count(d.inputTokens)} in, ${count(d.outputTokens)} out, ${counted(d.requests, "request")}`;
    case "MemberStarted":
    case "MemberStopped":
      return `${d.name} (${d.role})`;
    case "Corrupt":
      return event.error || "a record that does not decode";
    default:
      return d.kind || "";
  }
}
