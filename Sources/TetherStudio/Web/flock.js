// The FlockFinder screen: live detections, the confidence filter, the debug stream, history,
// counts by type, a map of where detections were made, and exports.
"use strict";

studio.screens.flock = (() => {
  const D = "flock";
  const ui = {};
  const time = (ms) => new Date(ms).toLocaleTimeString();
  const percent = (v) => Math.round(v * 100) + "%";
  // A place needs two finite numbers (a non-finite value arrives as a string).
  const placed = (d) => Number.isFinite(d.latitude) && Number.isFinite(d.longitude);

  function build(section) {
    ui.dot = el("span", { className: "dot", id: "flock-dot" });
    ui.connection = el("span", { id: "flock-connection" }, "—");
    ui.rssi = el("span", { id: "flock-rssi", className: "muted" });
    ui.scan = el("button", { type: "button", id: "flock-scan", onclick: () => act(D, "scan", { on: ui.state.connection !== "Scanning..." }) }, "Scan");
    ui.disconnect = el("button", { type: "button", id: "flock-disconnect", onclick: () => act(D, "disconnect") }, "Disconnect");
    ui.devices = el("span", { id: "flock-devices", className: "row" });
    ui.error = el("p", { className: "error", id: "flock-error", role: "alert", hidden: true });
    section.append(el("div", { className: "toolbar" }, el("h2", {}, "FlockFinder"), ui.dot, ui.connection, ui.rssi, ui.scan, ui.disconnect, ui.devices), ui.error);

    ui.filter = el("input", { type: "range", id: "flock-min-confidence", min: 0, max: 1, step: 0.05, value: 0,
      oninput: () => { ui.filterValue.textContent = percent(Number(ui.filter.value)); },
      onchange: () => act(D, "filter", { minimum: Number(ui.filter.value) }) });
    ui.filterValue = el("span", { id: "flock-min-confidence-value" }, "0%");
    ui.threshold = el("input", { type: "number", id: "flock-threshold", min: 0, max: 1, step: 0.05 });
    ui.stream = el("input", { type: "checkbox", id: "flock-stream", onchange: () => act(D, "stream", { on: ui.stream.checked }) });
    ui.simulator = el("div", { className: "row", hidden: true }, el("span", { className: "muted" }, "Simulator:"),
      el("button", { type: "button", id: "flock-sim-drive", onclick: () => act(D, "simulateDriveBy") }, "Drive past cameras"));
    ui.live = el("tbody", { id: "flock-live" });
    const live = el("div", { className: "card wide" },
      el("h3", {}, "Detections ", el("span", { id: "flock-live-count", className: "muted" })),
      el("div", { className: "row" },
        el("label", { for: "flock-min-confidence" }, "Minimum confidence"), ui.filter, ui.filterValue,
        el("label", {}, ui.stream, " debug stream"),
        ...["PING", "STATUS", "RESET"].map((c) => el("button", { type: "button", id: "flock-cmd-" + c.toLowerCase(), onclick: () => act(D, "command", { command: c }) }, c)),
        el("button", { type: "button", id: "flock-clear", onclick: () => act(D, "clear") }, "Clear")),
      ui.simulator,
      el("p", { id: "flock-command-error", className: "error", hidden: true }),
      el("div", { className: "counts", id: "flock-counts" }),
      el("table", { className: "list" },
        el("thead", {}, el("tr", {}, ...["Time", "Type", "Proximity", "RSSI", "Confidence", "MAC", "SSID", "Stored"].map((t) => el("th", {}, t)))),
        ui.live),
      el("p", { id: "flock-live-empty", className: "muted" }, "No detections yet."));
    ui.streamView = el("div", { className: "stream", id: "flock-stream-view" });
    const stream = el("div", { className: "card" }, el("h3", {}, "Debug stream"), ui.streamView,
      el("p", { className: "muted", id: "flock-parse-errors" }));
    ui.history = el("tbody", { id: "flock-history" });
    const history = el("div", { className: "card span2" },
      el("h3", {}, "History ",
        el("a", { href: "export/flock/detections.csv", id: "flock-export-csv" }, "CSV"), " · ",
        el("a", { href: "export/flock/detections.json", id: "flock-export-json" }, "JSON")),
      el("div", { className: "row" }, el("label", { for: "flock-threshold" }, "Store detections at or above"), ui.threshold,
        el("button", { type: "button", id: "flock-set-threshold", onclick: () => act(D, "threshold", { minimum: Number(ui.threshold.value) }) }, "Set")),
      el("div", { className: "counts", id: "flock-stored-counts" }),
      el("p", { id: "flock-history-error", className: "error", hidden: true }),
      el("div", { id: "flock-map" }),
      el("table", { className: "list" },
        el("thead", {}, el("tr", {}, ...["Received", "Type", "RSSI", "Confidence", "MAC", "SSID", "Place"].map((t) => el("th", {}, t)))),
        ui.history));
    section.append(el("div", { className: "grid" }, live, stream, history));
  }

  function counts(container, byType) {
    const entries = Object.entries(byType).sort((a, b) => b[1] - a[1]);
    container.replaceChildren(...(entries.length === 0 ? [el("span", { className: "muted" }, "none")]
      : entries.map(([type, count]) => el("span", {}, el("span", { className: "badge" }, type), " " + count))));
  }

  function render(s) {
    ui.state = s;
    ui.dot.className = "dot " + s.dot + (s.dot === "yellow" ? " spinning" : "");
    ui.connection.textContent = s.connection;
    ui.rssi.textContent = s.rssi === undefined ? "" : s.rssi + " dBm";
    ui.scan.textContent = s.connection === "Scanning..." ? "Stop" : "Scan";
    ui.disconnect.hidden = !(s.dot !== "red");
    drawIfChanged(ui.devices, [s.devices, s.dot], () => ui.devices.replaceChildren(...(s.dot !== "red" ? [] : s.devices.map((d) =>
      el("button", { type: "button", className: "flock-connect", "data-id": d.id, onclick: () => act(D, "connect", { id: d.id }) },
        "Connect " + (d.name ?? "(unnamed)") + (d.rssi === undefined ? "" : " (" + d.rssi + " dBm)"))))));
    ui.error.hidden = !s.lastError;
    ui.error.textContent = s.lastError || "";
    if (document.activeElement !== ui.filter) {
      ui.filter.value = s.minimumConfidence;
      ui.filterValue.textContent = percent(s.minimumConfidence);
    }
    if (document.activeElement !== ui.threshold) ui.threshold.value = s.recordingThreshold;
    ui.stream.checked = s.streaming;
    ui.simulator.hidden = !s.simulated;
    const commandError = $("flock-command-error");
    commandError.hidden = !s.commandError;
    commandError.textContent = s.commandError || "";
    $("flock-live-count").textContent = "(" + s.liveCount + " shown)";
    $("flock-live-empty").hidden = s.live.length > 0;
    counts($("flock-counts"), s.countsByType);
    drawIfChanged(ui.live, s.live, () => ui.live.replaceChildren(...s.live.map((d) => el("tr", { className: "detection", "data-type": d.type },
      el("td", {}, time(d.receivedAt)), el("td", {}, el("span", { className: "badge" }, d.type)),
      el("td", {}, d.proximity + " (" + d.distance + ")"), el("td", {}, d.rssi + " dBm"), el("td", {}, percent(d.confidence)),
      el("td", { className: "mono" }, d.mac ?? "—"), el("td", {}, d.ssid ?? "—"),
      el("td", {}, d.stored ? "yes" : (d.storageFailure ? "failed: " + d.storageFailure : "no (below threshold)"))))));
    drawIfChanged(ui.streamView, [s.stream, s.streaming], () => ui.streamView.replaceChildren(...(s.stream.length === 0 ? [el("div", {}, s.streaming ? "waiting for scan data…" : "turn on the debug stream to see scan data")]
      : s.stream.map((e) => el("div", {}, "[" + e.ts + "] " + e.evt + " " + e.text)))));
    $("flock-parse-errors").textContent = s.parseErrors > 0 ? s.parseErrors + " notification(s) could not be read" : "";
    counts($("flock-stored-counts"), s.storedCounts);
    const historyError = $("flock-history-error");
    historyError.hidden = !s.historyError;
    historyError.textContent = s.historyError || "";
    drawIfChanged(ui.history, s.history, () => ui.history.replaceChildren(...s.history.slice(0, 100).map((d) => el("tr", {},
      el("td", {}, new Date(d.receivedAt).toLocaleString()), el("td", {}, el("span", { className: "badge" }, d.type)),
      el("td", {}, d.rssi + " dBm"), el("td", {}, percent(d.confidence)), el("td", { className: "mono" }, d.mac ?? "—"),
      el("td", {}, d.ssid ?? "—"),
      el("td", { className: "mono" }, placed(d) ? d.latitude.toFixed(5) + ", " + d.longitude.toFixed(5) : "—")))));
    drawIfChanged($("flock-map"), s.history.map((d) => d.id), () =>
      drawMap(s.history.filter(placed)));
  }

  // Where detections were made: a plain plot of longitude against latitude (no map tiles).
  function drawMap(spots) {
    const box = $("flock-map");
    if (spots.length === 0) {
      box.replaceChildren(el("p", { className: "muted" }, "No locations known: detections made with a location show here."));
      return;
    }
    const width = 440, height = 240, pad = 16;
    const lats = spots.map((d) => d.latitude), lons = spots.map((d) => d.longitude);
    let latMin = Math.min(...lats), latMax = Math.max(...lats), lonMin = Math.min(...lons), lonMax = Math.max(...lons);
    const span = Math.max(latMax - latMin, lonMax - lonMin, 0.0005);
    const cx = (lonMin + lonMax) / 2, cy = (latMin + latMax) / 2;
    const scale = Math.min(width - 2 * pad, height - 2 * pad) / span;
    const x = (lon) => width / 2 + (lon - cx) * scale, y = (lat) => height / 2 - (lat - cy) * scale;
    const svg = svgEl("svg", { viewBox: "0 0 " + width + " " + height, class: "map", id: "flock-map-svg", role: "img", "aria-label": "where detections were made" });
    const ordered = spots.slice().sort((a, b) => a.receivedAt - b.receivedAt);
    svg.appendChild(svgEl("polyline", { class: "track", points: ordered.map((d) => x(d.longitude).toFixed(1) + "," + y(d.latitude).toFixed(1)).join(" ") }));
    const colours = ["#c62828", "#0071e3", "#2e7d32", "#af52de", "#ff9f0a", "#5ac8fa"];
    const types = [...new Set(spots.map((d) => d.type))];
    for (const d of spots) {
      const dot = svgEl("circle", { cx: x(d.longitude).toFixed(1), cy: y(d.latitude).toFixed(1), r: 5, fill: colours[types.indexOf(d.type) % colours.length] });
      const title = svgEl("title");
      title.textContent = d.type + " · " + new Date(d.receivedAt).toLocaleTimeString() + " · " + d.rssi + " dBm";
      dot.appendChild(title);
      svg.appendChild(dot);
    }
    box.replaceChildren(svg, legend(types.map((t, i) => ["", t])));
    const swatches = box.querySelectorAll(".legend .swatch");
    swatches.forEach((swatch, i) => { swatch.style.background = colours[i % colours.length]; });
  }

  return { build, render };
})();
