"use strict";
// The recent-window editor shared by /memory_browser and /browse/<name>/recent/.
// It reads and replaces the whole window through the REST API, sending back the fingerprint it read so
// that a window changed meanwhile (a new turn, a compression) answers 409 instead of being overwritten,
// and asks before unsaved edits are left behind. The page supplies the markup of
// templates/recent/window_editor.html and an element #status.

function createWindowEditor(api) {
  const $ = (id) => document.getElementById(id);
  let current = null, dirty = false, fingerprint = null;

  const status = (text) => { $("status").textContent = text; };

  async function request(path, options = {}) {
    const response = await fetch(api + path, { headers: { "Content-Type": "application/json" }, ...options });
    const body = response.headers.get("content-type")?.includes("json") ? await response.json() : null;
    if (!response.ok) throw new Error(body?.message || response.statusText);
    return body;
  }

  function setDirty(value) { dirty = value; $("save").disabled = !value; }

  function messageRow(type, text) {
    const row = document.createElement("div");
    row.className = "message " + type;
    const select = document.createElement("select");
    for (const option of ["human", "ai", "system"]) {
      const el = document.createElement("option"); el.value = option; el.textContent = option; el.selected = option === type; select.append(el);
    }
    const area = document.createElement("textarea"); area.value = text;
    const remove = document.createElement("button"); remove.type = "button"; remove.textContent = "×"; remove.title = "删除 Remove";
    select.onchange = () => { row.className = "message " + select.value; setDirty(true); };
    area.oninput = () => setDirty(true);
    remove.onclick = () => { row.remove(); setDirty(true); };
    row.append(select, area, remove);
    return row;
  }

  function contentText(content) {
    if (typeof content === "string") return content;
    if (Array.isArray(content)) return content.map((p) => typeof p === "string" ? p : (p.type === "text" ? p.text : "")).join("");
    return "";
  }

  const windowPath = () => `characters/${encodeURIComponent(current)}/recent/window/`;

  async function open(name) {
    current = name; setDirty(false);
    const window_ = await request(windowPath());
    fingerprint = window_.fingerprint;
    const box = $("messages"); box.replaceChildren();
    for (const message of window_.messages) box.append(messageRow(message.type, contentText(message.data.content)));
    status(`${window_.messages.length} 条消息 messages`);
  }

  // True when the window was saved; a failure (a stale fingerprint among them) keeps the edits on screen.
  async function save() {
    const chat = [...document.querySelectorAll("#messages .message")].map((row) => ({ role: row.querySelector("select").value, text: row.querySelector("textarea").value }));
    try {
      const result = await request(windowPath(), { method: "PUT", body: JSON.stringify({ chat, fingerprint }) });
      fingerprint = result.fingerprint; setDirty(false);
      status("已保存 Saved");
      return true;
    } catch (error) { status("保存失败 Save failed: " + error.message); return false; }
  }

  // Asks what to do with unsaved edits; true when the page may go on and leave them.
  async function confirmLeave() {
    if (!dirty) return true;
    const guard = $("guard");
    guard.showModal();
    const choice = await new Promise((resolve) => guard.addEventListener("close", () => resolve(guard.returnValue), { once: true }));
    if (choice === "save") return save();
    if (choice === "discard") { setDirty(false); return true; }
    return false;
  }

  // Links and forms elsewhere on the page go through the same question before they navigate away.
  function guardNavigation() {
    document.addEventListener("click", async (event) => {
      const link = event.target.closest("a[href]");
      const elsewhere = event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey;
      if (!dirty || !link || link.target || elsewhere || event.defaultPrevented) return;
      event.preventDefault();
      if (await confirmLeave()) location.href = link.href;
    }, true);
    document.addEventListener("submit", async (event) => {
      const form = event.target;
      if (!dirty || form.method === "dialog") return;
      event.preventDefault();
      if (await confirmLeave()) form.submit();
    }, true);
    window.addEventListener("beforeunload", (event) => { if (dirty) event.preventDefault(); });
  }

  $("add").onclick = () => { $("messages").append(messageRow("human", "")); setDirty(true); };
  $("save").onclick = save;

  return { request, status, open, save, confirmLeave, guardNavigation, current: () => current };
}
