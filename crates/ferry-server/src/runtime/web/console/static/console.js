// Ferry's web console: what the server-rendered pages need in the browser.
// - htmx shows refusals (4xx, 5xx) in place, and a lost session sends the browser to the
//   login page (a refused login is shown in the form);
// - every element with class "chart" gets two live uPlot charts (put and get rates,
//   depth) of the queue named by its data-queue attribute (all queues when empty), fed by
//   polling /ibmmq/console/api/stats every 2 seconds; rates are the counters' differences
//   between two polls.
"use strict";

document.addEventListener("htmx:beforeSwap", function (event) {
  const status = event.detail.xhr.status;
  const loggingIn = event.detail.requestConfig.path === "/ibmmq/console/login";
  if (status === 401 && !loggingIn) {
    window.location.assign("/ibmmq/console/login");
  } else if (status >= 400) {
    event.detail.shouldSwap = true;
    event.detail.isError = false;
  }
});

const POLL_MS = 2000;
const POINTS = 90;

function chartWidth(element) {
  return Math.max(320, Math.min(element.clientWidth || 640, 900) / 2 - 16);
}

function makeChart(element, title, series) {
  const holder = document.createElement("div");
  holder.className = "plot";
  element.appendChild(holder);
  const options = {
    title: title,
    width: chartWidth(element),
    height: 220,
    scales: {
      // At least the last minute, however few points there are yet.
      x: {
        time: true,
        range: (u, min, max) => {
          const end = max ?? Date.now() / 1000;
          return [Math.min(min ?? end, end - 60), end];
        },
      },
      y: { range: (u, min, max) => [0, Math.max(1, (max ?? 0) * 1.1)] },
    },
    series: [{}].concat(series),
    axes: [{}, { size: 60 }],
  };
  const data = [[]].concat(series.map(() => []));
  return { plot: new uPlot(options, data, holder), data: data };
}

function startCharts(element) {
  const queue = element.dataset.queue || "";
  const rates = makeChart(element, (queue || "All queues") + ": messages per second", [
    { label: "put", stroke: "#2f6fb3", width: 2 },
    { label: "got", stroke: "#c2571a", width: 2 },
  ]);
  const depth = makeChart(element, (queue || "All queues") + ": depth", [
    { label: "depth", stroke: "#2d8a4e", width: 2, fill: "rgba(45,138,78,0.12)" },
  ]);
  let last = null;
  function push(chart, values, time) {
    chart.data[0].push(time);
    values.forEach((v, i) => chart.data[i + 1].push(v));
    if (chart.data[0].length > POINTS) chart.data.forEach((s) => s.shift());
    chart.plot.setData(chart.data);
  }
  async function poll() {
    try {
      const answer = await fetch("/ibmmq/console/api/stats", { credentials: "same-origin" });
      if (answer.status === 401) {
        window.location.assign("/ibmmq/console/login");
        return;
      }
      if (!answer.ok) return;
      const stats = await answer.json();
      const chosen = stats.queues.filter((q) => queue === "" || q.name === queue);
      const sum = (key) => chosen.reduce((total, q) => total + q[key], 0);
      const now = { time: stats.time, puts: sum("puts"), gets: sum("gets"), depth: sum("depth") };
      if (last !== null && now.time > last.time) {
        const seconds = now.time - last.time;
        push(rates, [Math.max(0, now.puts - last.puts) / seconds, Math.max(0, now.gets - last.gets) / seconds], now.time);
      }
      push(depth, [now.depth], now.time);
      last = now;
      element.dataset.polls = String(Number(element.dataset.polls || "0") + 1);
    } catch (e) {
      // The server is away for a moment: the next poll tries again.
    }
  }
  poll();
  setInterval(poll, POLL_MS);
}

document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll(".chart").forEach(startCharts);
});
