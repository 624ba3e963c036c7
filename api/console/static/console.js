/* The console's one script (the Content-Security-Policy allows no inline script): the usage
   chart (Chart.js, vendored), live progress bars on the collections page, copy buttons, and
   the batch/crawl and extract switches of the new-collection form. Every page works without
   it, but the chart and the live bars. */
"use strict";

const SERIES_COLOURS = {
  scrape: "#1f77b4", contacts: "#ff7f0e", products: "#2ca02c", video: "#d62728", map: "#8c564b",
  search: "#9467bd", collections: "#17becf",
};
const POLL_MS = 1500;

function drawChart() {
  const canvas = document.getElementById("usage-chart");
  const source = document.getElementById("usage-data");
  if (!canvas || !source || typeof Chart === "undefined") return;
  const data = JSON.parse(source.textContent);
  const muted = getComputedStyle(document.body).getPropertyValue("color");
  canvas.chart = new Chart(canvas, {
    type: "bar",
    data: {
      labels: data.days.map((day) => day.slice(5)),
      datasets: Object.entries(data.series).map(([name, values]) => ({
        label: name, data: values, backgroundColor: SERIES_COLOURS[name] || "#7f7f7f",
      })),
    },
    options: {
      maintainAspectRatio: false, animation: false,
      scales: {
        x: { stacked: true, ticks: { color: muted } },
        y: { stacked: true, beginAtZero: true, ticks: { color: muted, precision: 0 },
             title: { display: true, text: "credits", color: muted } },
      },
      plugins: { legend: { labels: { color: muted } } },
    },
  });
  canvas.dataset.drawn = "yes";
}

function showCollection(item, body) {
  const progress = body.progress;
  const set = (field, value) => {
    const node = item.querySelector(`[data-field="${field}"]`);
    if (node) node.textContent = String(value);
  };
  for (const field of ["done", "total", "succeeded", "failed", "robots_blocked"]) {
    set(field, progress[field]);
  }
  set("credits_used", body.credits_used);
  set("percent", `${progress.total ? Math.round((progress.done * 100) / progress.total) : 0} %`);
  const status = item.querySelector('[data-field="status"]');
  status.textContent = body.status;
  status.className = `status status-${body.status}`;
  const bar = item.querySelector("progress");
  bar.max = progress.total || 1;
  bar.value = progress.done;
  const live = body.status === "queued" || body.status === "running";
  item.dataset.live = live ? "yes" : "no";
  if (!live) {
    const cancel = item.querySelector("form.cancel");
    if (cancel) cancel.remove();
  }
}

function followCollections() {
  const list = document.getElementById("collections");
  if (!list) return;
  const tick = async () => {
    const live = [...list.querySelectorAll('.collection[data-live="yes"]')];
    if (!live.length) return;
    const ids = live.map((item) => item.dataset.id).join(",");
    let wait = POLL_MS;
    try {
      const answer = await fetch(`${list.dataset.liveUrl}?ids=${encodeURIComponent(ids)}`,
                                 { headers: { Accept: "application/json" } });
      if (answer.status === 401) { window.location.reload(); return; }
      if (answer.status === 429) {  // each poll counts against the plan's rate: wait it out
        wait = Math.max(POLL_MS, 1000 * (Number(answer.headers.get("Retry-After")) || 5));
      }
      if (answer.ok) {
        for (const body of (await answer.json()).collections) {
          const item = list.querySelector(`.collection[data-id="${CSS.escape(body.id)}"]`);
          if (item) showCollection(item, body);
        }
      }
    } catch (error) { /* the next tick tries again */ }
    window.setTimeout(tick, wait);
  };
  window.setTimeout(tick, POLL_MS);
}

function copyButtons() {
  // The field named by data-copy: an input's value, or a block's text (a result's format).
  for (const button of document.querySelectorAll("button.copy")) {
    button.addEventListener("click", async () => {
      const field = document.getElementById(button.dataset.copy);
      const isInput = "value" in field;
      if (isInput) field.select();
      else window.getSelection().selectAllChildren(field);
      try {
        await navigator.clipboard.writeText(isInput ? field.value : field.textContent);
      } catch (error) {
        document.execCommand("copy");
      }
      button.textContent = "Copied";
    });
  }
}

function modeSwitch() {
  // The batch or crawl fields, and the page options with extract page only.
  const form = document.getElementById("new-collection");
  if (!form) return;
  const show = () => {
    form.dataset.mode = form.elements.mode.value || "batch";
    form.dataset.extract = form.elements.extract.value;
  };
  for (const radio of form.querySelectorAll('input[name="mode"]')) {
    radio.addEventListener("change", show);
  }
  form.elements.extract.addEventListener("change", show);
  show();
}

function confirmations() {
  // Forms that cannot be undone ask first (data-confirm); without this script they just go.
  for (const form of document.querySelectorAll("form[data-confirm]")) {
    form.addEventListener("submit", (event) => {
      if (!window.confirm(form.dataset.confirm)) event.preventDefault();
    });
  }
}

function oneSubmitEach() {
  // A second click while the first is on its way sends nothing (the server refuses a form
  // sent twice all the same).
  for (const form of document.querySelectorAll('form[method="post"]')) {
    form.addEventListener("submit", (event) => {
      if (event.defaultPrevented) return;
      for (const button of form.querySelectorAll("button[type=submit]")) button.disabled = true;
    });
  }
}

document.addEventListener("DOMContentLoaded", () => {
  confirmations();
  oneSubmitEach();
  drawChart();
  followCollections();
  copyButtons();
  modeSwitch();
});
