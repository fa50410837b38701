// Mandate dashboard: small enhancements over pages that work without it.
// Times are shown in the viewer's timezone; live tables and the approval
// queue follow the event stream (/ui/events, the API's /v1/events behind
// the sign-in cookie). Rows and cards are rendered by the server and
// fetched with htmx: this script never builds markup from event data.
(function () {
  "use strict";

  function localTimes(root) {
    root.querySelectorAll("time[datetime]").forEach(function (el) {
      if (el.dataset.local) return;
      var d = new Date(el.getAttribute("datetime"));
      if (isNaN(d)) return;
      el.title = el.textContent;
      el.textContent = d.toLocaleString();
      el.dataset.local = "1";
    });
  }

  function status(text) {
    var el = document.getElementById("live-status");
    if (el) el.textContent = text;
  }

  // A live decision table: each decision event fetches its row, which the
  // server renders (or leaves out, 204, when the page's filter does).
  function followFeed(feed) {
    var src = new EventSource(feed.dataset.live);
    src.addEventListener("open", function () { status("Live: decisions appear here as they are made."); });
    src.addEventListener("error", function () { status("Reconnecting to the event stream…"); });
    src.addEventListener("reset", function () { window.location.reload(); });
    src.addEventListener("decision", function (ev) {
      var d;
      try { d = JSON.parse(ev.data); } catch (e) { return; }
      if (!d || typeof d.decision_id !== "string") return;
      if (document.getElementById("d-" + d.decision_id)) return;
      var url = feed.dataset.row.replace("{id}", encodeURIComponent(d.decision_id));
      htmx.ajax("GET", url, { target: feed, swap: "afterbegin" }).then(function () {
        var empty = feed.querySelector("tr.empty");
        if (empty) empty.remove();
        while (feed.rows.length > 500) feed.deleteRow(feed.rows.length - 1);
      });
    });
  }

  // The approval queue: refreshed from the server when an approval is
  // asked or answered — unless the person is typing a note in it.
  function followQueue(queue) {
    var src = new EventSource(queue.dataset.live);
    var stale = false;
    function refresh() {
      var a = document.activeElement;
      if (a && queue.contains(a) && a.tagName === "INPUT" && a.value !== "") {
        stale = true;
        return;
      }
      stale = false;
      htmx.ajax("GET", queue.dataset.refresh, { target: queue, swap: "innerHTML" });
    }
    ["approval", "approval.answered", "reset"].forEach(function (t) { src.addEventListener(t, refresh); });
    // The page was rendered before the stream was subscribed: an ask made in
    // between has no event of its own here, so every (re)connection starts
    // with a refresh. Without it a busy server left the queue empty forever.
    src.addEventListener("open", refresh);
    queue.addEventListener("focusout", function () { if (stale) setTimeout(refresh, 0); });
  }

  document.addEventListener("DOMContentLoaded", function () {
    localTimes(document);
    if (!window.EventSource || !window.htmx) return;
    document.querySelectorAll("tbody[data-live][data-row]").forEach(followFeed);
    document.querySelectorAll("[data-live][data-refresh]").forEach(followQueue);
  });
  document.addEventListener("htmx:afterSwap", function (ev) { localTimes(ev.target.parentNode || document); });
})();
