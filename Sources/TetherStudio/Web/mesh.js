// The MeshCore screen (PocketMesh's): radios, the connection dot, contacts and channels, a
// chat with delivery ticks, the radio's settings and battery, adverts.
"use strict";

studio.screens.mesh = (() => {
  const D = "mesh";
  const ui = {};
  const ticks = { sent: "✓", delivered: "✓✓", failed: "✗ not delivered", received: "" };

  function build(section) {
    ui.dot = el("span", { className: "dot", id: "mesh-dot" });
    ui.connection = el("span", { id: "mesh-connection" }, "—");
    ui.scan = el("button", { type: "button", id: "mesh-scan", onclick: () => act(D, "scan", { on: !ui.state.scanning }) }, "Scan");
    ui.disconnect = el("button", { type: "button", id: "mesh-disconnect", onclick: () => act(D, "disconnect") }, "Disconnect");
    ui.radios = el("span", { id: "mesh-radios", className: "row" });
    ui.error = el("p", { className: "error", id: "mesh-error", role: "alert", hidden: true });
    section.append(el("div", { className: "toolbar" }, el("h2", {}, "MeshCore"), ui.dot, ui.connection, ui.scan, ui.disconnect, ui.radios), ui.error);

    ui.contacts = el("ul", { className: "picker", id: "mesh-contacts" });
    ui.channels = el("ul", { className: "picker", id: "mesh-channels" });
    const lists = el("div", { className: "card" },
      el("h3", {}, "Channels"), ui.channels,
      el("h3", {}, "Contacts ", el("span", { className: "muted", id: "mesh-contact-count" })), ui.contacts);
    ui.messages = el("div", { className: "chat", id: "mesh-messages" });
    ui.text = el("input", { type: "text", id: "mesh-text", maxLength: 160, placeholder: "Message", autocomplete: "off" });
    const sendMessage = () => {
      if (!ui.text.value.trim()) return;
      act(D, "send", { text: ui.text.value });
      ui.text.value = "";
    };
    // Enter sends, unless it ends an input method's composition.
    ui.text.addEventListener("keydown", (e) => { if (e.key === "Enter" && !e.isComposing && e.keyCode !== 229) { e.preventDefault(); sendMessage(); } });
    const chat = el("div", { className: "card span2", id: "mesh-chat" },
      el("h3", { id: "mesh-chat-title" }, "Pick a contact or a channel"),
      ui.messages,
      el("div", { className: "row" }, ui.text, el("button", { type: "button", id: "mesh-send", onclick: sendMessage }, "Send")),
      el("p", { className: "error", id: "mesh-action-error", hidden: true }));
    ui.settings = el("dl", { className: "settings", id: "mesh-settings" });
    const radio = el("div", { className: "card" },
      el("h3", {}, "Radio ", el("button", { type: "button", id: "mesh-battery", onclick: () => act(D, "battery") }, "Battery")),
      ui.settings,
      el("p", { id: "mesh-battery-text", className: "muted" }),
      el("h3", {}, "Adverts heard"), el("ul", { id: "mesh-adverts", className: "plain" }),
      el("div", { id: "mesh-simulator", hidden: true },
        el("h3", {}, "Simulator"),
        el("div", { className: "row" },
          el("input", { type: "text", id: "mesh-sim-name", maxLength: 31, placeholder: "a node's name", value: "Hiker" }),
          el("button", { type: "button", id: "mesh-sim-advert", onclick: () => act(D, "simulateNode", { name: $("mesh-sim-name").value }) }, "Advertise a new node"))));
    section.append(el("div", { className: "grid" }, lists, chat, radio));
  }

  function item(label, detail, selected, onclick, props) {
    return el("li", Object.assign({ className: selected ? "selected" : "", onclick: onclick }, props || {}),
      el("span", { className: "name" }, label), el("span", { className: "muted" }, detail));
  }

  function render(s) {
    ui.state = s;
    ui.dot.className = "dot " + s.dot + (s.dot === "yellow" ? " spinning" : "");
    ui.connection.textContent = s.connection + (s.radio ? " · " + (s.radio.name ?? s.radio.id) : "");
    ui.scan.textContent = s.scanning ? "Stop" : "Scan";
    ui.disconnect.hidden = s.connection === "disconnected";
    drawIfChanged(ui.radios, [s.radios, s.connection], () => ui.radios.replaceChildren(...(s.connection !== "disconnected" ? [] : s.radios.map((r) =>
      el("button", { type: "button", className: "mesh-connect", "data-id": r.id, onclick: () => act(D, "connect", { id: r.id }) },
        "Connect " + (r.name ?? "(unnamed)") + (r.rssi === undefined ? "" : " (" + r.rssi + " dBm)"))))));
    ui.error.hidden = !s.error;
    ui.error.textContent = s.error || "";
    const selectedContact = s.chat && s.chat.contact, selectedChannel = s.chat && s.chat.channel;
    drawIfChanged(ui.channels, [s.channels, s.chat], () => ui.channels.replaceChildren(...s.channels.map((c) =>
      item(c.name || "(channel " + c.index + ")", c.messages ? String(c.messages) : "", String(c.index) === selectedChannel,
        () => act(D, "select", { channel: c.index }), { "data-channel": String(c.index) }))));
    drawIfChanged(ui.contacts, [s.contacts, s.chat], () => ui.contacts.replaceChildren(...s.contacts.map((c) =>
      item(c.name, c.type + (c.hops === undefined ? "" : " · " + (c.hops === 0 ? "direct" : c.hops + " hops")) + (c.messages ? " · " + c.messages : ""),
        c.key === selectedContact, () => act(D, "select", { contact: c.key }), { "data-key": c.key, "data-name": c.name }))));
    $("mesh-contact-count").textContent = s.contactCount > s.contacts.length ? "(" + s.contacts.length + " of " + s.contactCount + ")" : "(" + s.contactCount + ")";
    $("mesh-chat-title").textContent = s.chatTitle || "Pick a contact or a channel";
    drawIfChanged(ui.messages, s.messages, () => {
      ui.messages.replaceChildren(...s.messages.map((m) => el("div", { className: "bubble " + m.direction + " " + m.status, "data-status": m.status },
        m.direction === "incoming" && m.sender ? el("span", { className: "sender" }, m.sender + ": ") : null,
        el("span", { className: "text" }, m.text),
        el("span", { className: "meta" }, new Date(m.timestamp * 1000).toLocaleTimeString() +
          (m.direction === "outgoing" ? " " + ticks[m.status] + (m.roundTrip ? " " + m.roundTrip + " ms" : "") : "")))));
      ui.messages.scrollTop = ui.messages.scrollHeight;
    });
    $("mesh-send").disabled = !s.chat || s.connection !== "ready";
    const actionError = $("mesh-action-error");
    actionError.hidden = !s.actionError;
    actionError.textContent = s.actionError || "";
    drawIfChanged(ui.settings, s.selfInfo, () => ui.settings.replaceChildren(...(s.selfInfo
      ? s.selfInfo.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)])
      : [el("dd", { className: "muted" }, "not connected")])));
    $("mesh-battery-text").textContent = s.battery ? "Battery " + (s.battery.millivolts / 1000).toFixed(2) + " V" +
      (s.battery.totalKilobytes ? " · storage " + s.battery.usedKilobytes + " of " + s.battery.totalKilobytes + " KB" : "") : "";
    drawIfChanged($("mesh-adverts"), s.adverts, () => $("mesh-adverts").replaceChildren(...(s.adverts.length
      ? s.adverts.map((a) => el("li", {}, a)) : [el("li", { className: "muted" }, "none yet")])));
    $("mesh-simulator").hidden = !s.simulated;
  }

  return { build, render };
})();
