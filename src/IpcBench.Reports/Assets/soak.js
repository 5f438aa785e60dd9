// Draws a soak's page from the JSON beside it (id soak-data), with Chart.js inlined above this script: throughput and
// latency p99 of every scenario against hours, and every process's memory per scenario. Text reaches the page through
// textContent only.
(function () {
  'use strict';
  const doc = JSON.parse(document.getElementById('soak-data').textContent);
  Chart.defaults.animation = false;
  Chart.defaults.maintainAspectRatio = false;
  const palette = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#b07aa1', '#76b7b2', '#edc948', '#9c755f', '#bab0ac', '#ff9da7'];
  const main = document.getElementById('charts');

  let drawn = 0;
  const section = (title, note) => IpcBenchFigures.section(main, title, note);
  function chart(grid, kind, title, datasets, yAxis) {
    IpcBenchFigures.chart(grid, kind, title, {
      type: 'line',
      data: { datasets },
      options: {
        parsing: false,
        elements: { point: { radius: 0 }, line: { borderWidth: 1.5 } },
        scales: { x: { type: 'linear', title: { display: true, text: 'hours of measured time' } }, y: yAxis },
        plugins: { legend: { position: 'bottom' } },
      },
    });
    drawn += 1;
  }

  const line = (label, colour, data, dash) => ({ label, data, borderColor: colour, backgroundColor: colour, borderDash: dash || [] });
  const over = doc.scenarios;
  const time = section('Throughput and latency over time',
    'One point per soak point (IpcBench:SoakPointSeconds): its mean delivered msg/s and the p99 of the latencies it recorded.');
  chart(time, 'throughput', 'Delivered msg/s', over.map((s, i) =>
    line(s.label, palette[i % palette.length], s.points.map((p) => ({ x: p.hours, y: p.rate })))),
  { type: 'linear', beginAtZero: true, title: { display: true, text: 'msg/s' } });
  chart(time, 'p99', 'Latency p99 (µs)', over.map((s, i) =>
    line(s.label, palette[i % palette.length], s.points.filter((p) => p.p99 !== null).map((p) => ({ x: p.hours, y: p.p99 / 1000 })))),
  { type: 'logarithmic', title: { display: true, text: 'µs' } });

  const memory = section('Memory per process',
    'RSS (solid), what the GC holds from the OS (dotted) and the live heap after the latest gen2 collection (dashed) of the daemon and every agent, in MiB.');
  over.forEach((s) => {
    const names = [...new Set(s.processes.map((p) => p.name))];
    const sets = s.processes.map((p) => line(`${p.name} ${p.resource}`, palette[names.indexOf(p.name) % palette.length],
      p.points.map(([x, y]) => ({ x, y })), { heap: [5, 4], committed: [1, 3] }[p.resource]));
    chart(memory, 'memory', s.label, sets, { type: 'linear', beginAtZero: true, title: { display: true, text: 'MiB' } });
  });
  // What a browser test waits for: every chart is drawn.
  document.body.dataset.charts = String(drawn);
}());
