// The dashboard's live updates: one EventSource per page, each message the whole picture (the list, or one set's
// view and timeline), written into the page with textContent only. Chart.js draws the timeline.
(function () {
  "use strict";
  var live = document.getElementById("live");
  var list = document.getElementById("sets");
  var set = document.getElementById("set");
  var source = (list || set || {}).dataset ? (list || set).dataset.stream : null;
  if (!source) { return; }
  // A revision's colour is its place among the revisions the timeline met (timeline.py), so a segment keeps the
  // colour of the revision its pod ran then, whatever the set's update revision is now; pale while not available.
  var REVISION_COLOURS = ["#8a96a3", "#2f7ed8", "#2e9e44", "#8e44ad", "#e8710a", "#16a085", "#c0392b", "#b7950b"];
  var MISSING_COLOUR = "#f1d4d2";
  var chart = null;

  function age(seconds) {
    if (seconds === null || seconds === undefined) { return "-"; }
    var s = Math.floor(seconds);
    if (s < 60) { return s + "s"; }
    if (s < 3600) { return s < 600 ? Math.floor(s / 60) + "m" + (s % 60) + "s" : Math.floor(s / 60) + "m"; }
    if (s < 86400) { return Math.floor(s / 3600) + "h" + Math.floor((s % 3600) / 60) + "m"; }
    return Math.floor(s / 86400) + "d";
  }
  // When an event happened, as the page first served it (app.py's "stamp"): RFC 3339 in UTC, whole seconds.
  function stamp(at) {
    if (at === null || at === undefined) { return "-"; }
    return new Date(Math.floor(at) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
  }
  function cell(row, text, cls) {
    var td = document.createElement("td");
    td.textContent = text;
    if (cls) { td.className = cls; }
    row.appendChild(td);
    return td;
  }
  function setText(id, text) { var el = document.getElementById(id); if (el) { el.textContent = text; } }

  function renderList(sets) {
    var body = list.tBodies[0];
    body.textContent = "";
    if (!sets.length) {
      var empty = body.insertRow();
      empty.className = "empty";
      cell(empty, "No StatefulSets (of apps/v1 or apps.rollwise.dev) in view.").colSpan = 10;
    }
    sets.forEach(function (s) {
      var row = body.insertRow();
      row.className = "state-" + s.state.toLowerCase();
      cell(row, s.icon, "icon");
      var link = document.createElement("a");
      link.href = s.href;
      link.textContent = s.name;
      cell(row, "").appendChild(link);
      cell(row, s.kind); cell(row, s.namespace); cell(row, s.state);
      cell(row, s.updated + "/" + s.desired); cell(row, s.ready + "/" + s.desired);
      cell(row, s.available + "/" + s.desired); cell(row, s.strategy); cell(row, s.message, "why");
    });
  }

  function renderSet(data) {
    var v = data.view;
    var icon = document.getElementById("icon");
    icon.textContent = v.icon;
    icon.className = "icon state-" + v.state.toLowerCase();
    document.getElementById("state").className = "state state-" + v.state.toLowerCase();
    setText("state-word", v.state);
    setText("message", v.message);
    var strategy = v.strategy + (v.budget ? " · maxUnavailable " + v.budget : "") +
      (v.partition ? " · partition " + v.partition : "") + " · " + v.pod_management;
    setText("strategy", strategy);
    setText("replicas", "desired " + v.desired + " · current " + v.current + " · updated " + v.updated +
      " · ready " + v.ready + " · available " + v.available);
    var revs = [];
    [["current", v.current_revision], ["update", v.update_revision]].forEach(function (pair) {
      if (pair[1]) { revs.push(pair[0] + " " + pair[1].name + " " + pair[1].images.join(", ")); }
    });
    setText("revisions", revs.join("   "));
    var canary = v.canary;  // where a canary stands (projection/canary.py); null without steps
    document.getElementById("canary").hidden = !canary;
    setText("canary-step", canary ? canary.step : "");
    setText("canary-stable", canary ? (canary.stable || "-") : "");
    document.getElementById("canary-abort-row").hidden = !(canary && canary.abort);
    setText("canary-abort", canary && canary.abort ? canary.abort : "");
    var body = document.getElementById("pods").tBodies[0];
    body.textContent = "";
    v.pods.forEach(function (p) {
      var row = body.insertRow();
      row.className = (p.waited_on ? "waited " : "") + "tag-" + (p.tag || "none");
      row.dataset.pod = p.name;
      cell(row, p.icon, "icon"); cell(row, p.name, "name");
      cell(row, p.revision ? p.revision + " " + p.tag : "-", "name"); cell(row, p.role || "-"); cell(row, p.status);
      cell(row, p.ready ? "yes" : "no"); cell(row, p.available ? "yes" : "no"); cell(row, String(p.restarts));
      cell(row, age(p.age_seconds)); cell(row, (p.waited_on ? "rollout waits here: " : "") + p.why, "why");
    });
    var conditions = document.getElementById("conditions");
    conditions.textContent = "";
    v.conditions.forEach(function (c) {
      var li = document.createElement("li");
      var strong = document.createElement("strong");
      strong.textContent = c.type + "=" + c.status;
      li.appendChild(strong);
      li.appendChild(document.createTextNode(" " + c.reason + (c.message ? ": " + c.message : "")));
      conditions.appendChild(li);
    });
    var events = document.getElementById("events");
    events.textContent = "";
    v.events.slice().reverse().forEach(function (e) {
      var li = document.createElement("li");
      li.className = "event-" + e.type.toLowerCase();
      var when = document.createElement("time");
      when.textContent = stamp(e.at);
      li.appendChild(when);
      li.appendChild(document.createTextNode(" "));
      var strong = document.createElement("strong");
      strong.textContent = e.reason;
      li.appendChild(strong);
      li.appendChild(document.createTextNode(" " + e.object + ": " + e.message));
      events.appendChild(li);
    });
    renderTimeline(v, data.timeline);
  }

  function renderTimeline(v, timeline) {
    if (typeof Chart === "undefined") { return; }
    var pods = v.pods.map(function (p) { return p.name; });
    timeline.segments.forEach(function (s) { if (pods.indexOf(s.pod) < 0) { pods.push(s.pod); } });
    var tags = {};
    [["current", v.current_revision], ["update", v.update_revision]].forEach(function (pair) {
      if (pair[1]) { tags[pair[1].name] = tags[pair[1].name] ? tags[pair[1].name] + "+" + pair[0] : pair[0]; }
    });
    var keys = [];
    timeline.segments.forEach(function (s) {
      var key = s.band === "missing" ? "missing" : s.revision + "|" + s.band;
      if (keys.indexOf(key) < 0) { keys.push(key); }
    });
    var datasets = keys.map(function (key) {
      var parts = key.split("|");
      var rev = parts.length > 1 ? parts[0] : "";
      var band = parts.length > 1 ? parts[1] : key;
      var colour = MISSING_COLOUR;
      var label = timeline.bands[band];
      if (rev) {
        colour = REVISION_COLOURS[timeline.revisions.indexOf(rev) % REVISION_COLOURS.length];
        if (band === "unavailable") { colour += "59"; }  // the same hue, pale
        label = rev + (tags[rev] ? " (" + tags[rev] + ")" : "") + ", " + label;
      }
      return {
        label: label, grouped: false, borderSkipped: false, barPercentage: 0.8, backgroundColor: colour,
        data: timeline.segments.filter(function (s) {
          return (s.band === "missing" ? "missing" : s.revision + "|" + s.band) === key;
        }).map(function (s) { return { x: [s.from, Math.max(s.to, s.from + 0.2)], y: s.pod, rev: s.revision }; })
      };
    });
    var config = {
      type: "bar",
      data: { labels: pods, datasets: datasets },
      options: {
        indexAxis: "y", animation: false, responsive: true, maintainAspectRatio: false,
        scales: {
          x: { type: "linear", min: 0, max: Math.max(timeline.now, 1),
               title: { display: true, text: "seconds since the first pod shown" } },
          y: { type: "category", labels: pods }
        },
        plugins: {
          legend: { position: "bottom" },
          tooltip: { callbacks: { label: function (ctx) {
            var r = ctx.raw; return ctx.dataset.label + ": " + r.x[0].toFixed(1) + "–" +
              r.x[1].toFixed(1) + " s"; } } }
        }
      }
    };
    if (chart === null) {
      chart = new Chart(document.getElementById("timeline"), config);
    } else {
      chart.data = config.data;
      chart.options.scales = config.options.scales;
      chart.update("none");
    }
  }

  var updates = 0;
  var events = new EventSource(source);
  events.onopen = function () { live.textContent = "live"; };
  events.onerror = function () { live.textContent = "reconnecting…"; };
  events.addEventListener("gone", function () { live.textContent = "this set is gone"; events.close(); });
  events.onmessage = function (message) {
    var data = JSON.parse(message.data);
    if (list) { renderList(data); } else { renderSet(data); }
    updates += 1;
    document.body.dataset.updates = String(updates);
    live.textContent = "live · updated " + new Date().toLocaleTimeString();
  };
}());
