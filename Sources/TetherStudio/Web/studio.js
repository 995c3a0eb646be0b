// Tether Studio's page. Everything a device says is untrusted: it reaches the page through
// textContent and attribute setters only, never as HTML.
"use strict";

const studio = {
  socket: null,
  retry: 0,
  scanning: false,
  peripherals: new Map(),   // id → last "peripheral" message
  phases: new Map(),        // id → last "phase" message
  screens: {},              // device → { build(section), render(state) } (gripfit.js, flock.js, …)
  offered: null,            // the device screens the server has (from "hello")
  states: {},               // device → last state
};

function $(id) { return document.getElementById(id); }

// Builds an element: `props` sets properties (className, type, title, …) and `data-*`/aria
// attributes; children are elements or strings, and strings become text, never HTML.
function el(tag, props, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null) continue;
    if (key.startsWith("data-") || key.startsWith("aria-") || key === "for" || key === "role") element.setAttribute(key, value);
    else element[key] = value;
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    element.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return element;
}

// Calls draw() only when `data` differs from what `element` last drew (tables rebuilt ten
// times a second would lose a click between mouse-down and mouse-up).
const drawn = new WeakMap();
function drawIfChanged(element, data, draw) {
  const key = JSON.stringify(data);
  if (drawn.get(element) === key) return;
  drawn.set(element, key);
  draw();
}

// Asks a device screen to do something; progress and results come back as its state.
function act(device, action, args) {
  send(Object.assign({}, args || {}, { type: "action", device: device, action: action }));
}

function showActionError(text) {
  const banner = $("action-error");
  banner.textContent = text;
  banner.hidden = false;
  clearTimeout(showActionError.timer);
  showActionError.timer = setTimeout(() => { banner.hidden = true; }, 8000);
}

// The screen named by the URL's fragment (#gripfit), Devices by default.
function showScreen() {
  const wanted = location.hash.slice(1);
  const known = document.getElementById(wanted);
  const name = known && known.classList.contains("screen") && !tabFor(wanted).hidden ? wanted : "devices";
  for (const section of document.querySelectorAll("main > section.screen")) section.hidden = section.id !== name;
  for (const tab of document.querySelectorAll("#tabs a")) tab.classList.toggle("current", tab.dataset.screen === name);
}

function tabFor(name) { return document.querySelector('#tabs a[data-screen="' + CSS.escape(name) + '"]'); }

function drawScreen(device, state) {
  const screen = studio.screens[device];
  const section = document.getElementById(device);
  if (!screen || !section) { console.warn("studio: no page for screen", device); return; }
  if (!section.dataset.built) {
    screen.build(section);
    section.dataset.built = "1";
  }
  studio.states[device] = state;
  screen.render(state);
}

function setPill(element, text, colour) {
  element.textContent = text;
  element.className = "pill " + colour;
}

function send(message) {
  if (studio.socket && studio.socket.readyState === WebSocket.OPEN) {
    studio.socket.send(JSON.stringify(message));
  } else {
    // Not lost without a word: the page says so (it reconnects by itself).
    showActionError("Not connected to the studio: that was not sent. The page reconnects by itself.");
  }
}

function connectSocket() {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  const socket = new WebSocket(scheme + "//" + location.host + "/ws");
  studio.socket = socket;
  socket.addEventListener("open", () => {
    studio.retry = 0;
    setPill($("link"), "server: connected", "green");
    document.body.classList.remove("offline");
    $("scan").disabled = false;
  });
  socket.addEventListener("message", (event) => {
    let message;
    try { message = JSON.parse(event.data); } catch (e) { console.warn("studio: not JSON", e); return; }
    receive(message);
  });
  socket.addEventListener("close", (event) => {
    $("scan").disabled = true;
    document.body.classList.add("offline");
    // Nothing can be asked for until the server is back (it then sends everything afresh).
    for (const button of document.querySelectorAll("#peripherals button")) button.disabled = true;
    setPill($("link"), "server: disconnected" + (event.reason ? " (" + event.reason + ")" : ""), "red");
    // Back off up to 5 s; the server may be restarting.
    studio.retry = Math.min(studio.retry + 1, 5);
    setTimeout(connectSocket, studio.retry * 1000);
  });
}

function receive(message) {
  switch (message.type) {
    case "hello":
      // A new connection (the server may have restarted): what follows is the whole state.
      studio.peripherals.clear();
      studio.phases.clear();
      document.querySelector("#peripherals tbody").replaceChildren();
      $("empty").hidden = false;
      setPill($("driver"), "driver: " + message.driver, "grey");
      showBluetooth(message.bluetooth);
      studio.offered = message.screens;
      for (const tab of document.querySelectorAll("#tabs a")) {
        tab.hidden = tab.dataset.screen !== "devices" && !message.screens.includes(tab.dataset.screen);
      }
      showScreen();
      break;
    case "screen":
      drawScreen(message.device, message.state);
      break;
    case "actionFailed":
      showActionError(message.device + " — " + message.action + ": " + message.message);
      break;
    case "bluetooth":
      showBluetooth(message.state);
      break;
    case "scanning":
      studio.scanning = message.on;
      $("scan").textContent = message.on ? "Stop" : "Scan";
      $("scan-state").textContent = message.on ? "scanning…" : "not scanning";
      break;
    case "peripheral":
      studio.peripherals.set(message.id, message);
      drawPeripheral(message.id);
      break;
    case "phase":
      studio.phases.set(message.id, message);
      drawPeripheral(message.id);
      break;
    case "forgotten": {
      studio.peripherals.delete(message.id);
      studio.phases.delete(message.id);
      const row = document.querySelector('#peripherals tbody tr[data-id="' + CSS.escape(message.id) + '"]');
      if (row) row.remove();
      $("empty").hidden = studio.peripherals.size > 0;
      break;
    }
    case "error":
      showError(message.message);
      // The failed attempt's button may be pressed again.
      if (message.id !== null && studio.peripherals.has(message.id)) drawPeripheral(message.id);
      break;
    case "refused":
      showActionError("The studio refused a request: " + message.reason);
      break;
    default:
      console.warn("studio: unknown message type", message.type);
  }
}

function showBluetooth(state) {
  setPill($("bluetooth"), "Bluetooth: " + state, state === "poweredOn" ? "green" : "red");
}

function showError(text) {
  const element = $("error");
  element.textContent = text;
  element.hidden = false;
}

function rowFor(id) {
  const body = document.querySelector("#peripherals tbody");
  let row = body.querySelector('tr[data-id="' + CSS.escape(id) + '"]');
  if (row) return row;
  row = document.createElement("tr");
  row.dataset.id = id;
  for (const name of ["dot", "name", "device", "rssi", "signal", "services", "phase", "action"]) {
    const cell = document.createElement("td");
    cell.className = name;
    row.appendChild(cell);
  }
  const button = document.createElement("button");
  button.type = "button";
  button.addEventListener("click", () => {
    const phase = studio.phases.get(id);
    const linked = phase && phase.phase !== "idle";
    send({ type: linked ? "disconnect" : "connect", id: id });
    // Until the server answers with a phase, a second click would undo the first.
    button.disabled = true;
    $("error").hidden = true;
  });
  row.querySelector("td.action").appendChild(button);
  const dot = document.createElement("span");
  row.querySelector("td.dot").appendChild(dot);
  body.appendChild(row);
  $("empty").hidden = true;
  return row;
}

function drawPeripheral(id) {
  const row = rowFor(id);
  const peripheral = studio.peripherals.get(id);
  const phase = studio.phases.get(id);
  if (peripheral) {
    row.querySelector("td.name").textContent = peripheral.name === null ? "(unnamed)" : peripheral.name;
    row.querySelector("td.device").textContent = peripheral.device === null ? "—" : peripheral.device;
    row.querySelector("td.rssi").textContent = peripheral.rssi === null ? "unknown" : peripheral.rssi + " dBm";
    row.querySelector("td.services").textContent = peripheral.services.join(" ");
    drawSparkline(row.querySelector("td.signal"), peripheral.rssiHistory);
  }
  const dot = row.querySelector("td.dot span");
  const colour = phase ? phase.dot : "red";
  dot.className = "dot " + colour + (phase && colour === "yellow" && !phase.connected && phase.phase.startsWith("connect") ? " spinning" : "");
  dot.title = phase ? phase.phase : "idle";
  row.querySelector("td.phase").textContent = phase ? phase.phase : "idle";
  const linked = phase && phase.phase !== "idle";
  const button = row.querySelector("td.action button");
  button.textContent = linked ? "Disconnect" : "Connect";
  const open = studio.socket && studio.socket.readyState === WebSocket.OPEN;
  button.disabled = !open || (!linked && peripheral !== undefined && !peripheral.connectable);
}

function drawSparkline(cell, history) {
  const points = history.map((value, index) => [index, value]).filter(([, value]) => value !== null);
  const ns = "http://www.w3.org/2000/svg";
  let svg = cell.querySelector("svg");
  if (!svg) {
    svg = document.createElementNS(ns, "svg");
    svg.setAttribute("class", "spark");
    svg.setAttribute("viewBox", "0 0 60 24");
    svg.setAttribute("preserveAspectRatio", "none");
    svg.appendChild(document.createElementNS(ns, "polyline"));
    cell.appendChild(svg);
  }
  // −100 dBm at the bottom, −30 at the top.
  const y = (rssi) => Math.max(0, Math.min(24, 24 - ((rssi + 100) / 70) * 24));
  // The history fills the width (the oldest at the left), however long it is yet.
  const x = (index) => (history.length > 1 ? (index * 60) / (history.length - 1) : 30);
  svg.firstChild.setAttribute("points", points.map(([index, rssi]) => x(index).toFixed(1) + "," + y(rssi).toFixed(1)).join(" "));
}

$("scan").addEventListener("click", () => send({ type: "scan", on: !studio.scanning }));
window.addEventListener("hashchange", showScreen);
