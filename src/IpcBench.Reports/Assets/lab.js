// Draws the lab report's machines chart from the JSON beside it (LabHtmlReport): msg/s per cell, one bar per machine,
// on a log axis (cells differ by orders of magnitude), so machines are compared cell by cell at a glance.
(function () {
  const data = JSON.parse(document.getElementById('lab-chart-data').textContent);
  const canvas = document.getElementById('machines-chart');
  const palette = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];
  canvas.dataset.kind = 'machines';
  canvas.setAttribute('aria-label', 'msg/s per cell, one bar per machine');
  new Chart(canvas, {
    type: 'bar',
    data: {
      labels: data.cells,
      datasets: data.machines.map((m, i) => ({
        label: m.name,
        // A cell a machine did not run is a gap, not a zero (a log axis has no zero).
        data: m.messages_per_second.map((v) => (v > 0 ? v : null)),
        backgroundColor: palette[i % palette.length],
      })),
    },
    options: {
      animation: false,
      responsive: false,
      plugins: { title: { display: true, text: 'msg/s per cell (median over the repetitions), by machine' } },
      scales: { y: { type: 'logarithmic', title: { display: true, text: 'msg/s' } } },
    },
  });
  document.body.dataset.charts = String(Object.keys(Chart.instances).length);
})();
