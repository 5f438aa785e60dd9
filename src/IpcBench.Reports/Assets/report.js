// Draws the report's charts from the JSON beside it (id report-data), with the Chart.js and error-bar plugin inlined
// above this script. Everything a user typed reaches the page through textContent only, never as markup.
(function () {
  'use strict';
  const doc = JSON.parse(document.getElementById('report-data').textContent);
  const EB = window.ChartErrorBars;
  Chart.register(EB.LineWithErrorBarsController, EB.BarWithErrorBarsController, EB.PointWithErrorBar, EB.BarWithErrorBar);
  // Drawn at once: no animation frame to wait for, and a screenshot shows the final picture.
  Chart.defaults.animation = false;
  Chart.defaults.maintainAspectRatio = false;

  const palette = {
    'channels': '#4e79a7', 'named-pipes': '#f28e2b', 'uds': '#59a14f', 'tcp': '#e15759', 'shm-ring': '#b07aa1',
    'iceoryx2': '#76b7b2', 'grpc-uds': '#edc948', 'zeromq': '#9c755f',
  };
  const extra = ['#bab0ac', '#ff9da7', '#1f77b4', '#2ca02c', '#d62728', '#9467bd'];
  const colour = (name, i) => palette[name] || extra[i % extra.length];
  const main = document.getElementById('charts');
  const drawn = [];

  const section = (title, note, small) => IpcBenchFigures.section(main, title, note, small);
  const chart = (grid, kind, title, config, height) => drawn.push(IpcBenchFigures.chart(grid, kind, title, config, height));

  const log = (title) => ({ type: 'logarithmic', title: { display: true, text: title } });
  const linear = (title) => ({ type: 'linear', title: { display: true, text: title } });
  const groupBy = (items, key) => {
    const map = new Map();
    for (const item of items) {
      const k = key(item);
      if (!map.has(k)) map.set(k, []);
      map.get(k).push(item);
    }
    return map;
  };

  const cells = doc.cells.filter((c) => c.summary.figures.repetitions > 0);
  // A chart per shape whatever the wait: each transport resolves its own default (uds block, shm-ring yield), and
  // transports are compared on one axis or not at all. A series is a transport and wait, coloured by the transport,
  // the wait drawn as its marker and dash and named in the legend.
  const shapes = groupBy(cells, (c) => c.key.chart_shape);
  const transportsOf = (list) => [...new Set(list.map((c) => c.key.transport))];
  const waitStyle = {
    default: { pointStyle: 'circle', borderDash: [] }, block: { pointStyle: 'circle', borderDash: [] },
    yield: { pointStyle: 'rectRot', borderDash: [6, 3] }, spin: { pointStyle: 'triangle', borderDash: [2, 2] },
  };
  const seriesName = (c) => c.key.series_name;
  const rowName = (c) => `${c.key.series_name} ${c.key.payload_text}`;
  const seriesStyle = (c, list) => {
    const col = colour(c.key.transport, transportsOf(list).indexOf(c.key.transport));
    return { borderColor: col, backgroundColor: col, pointRadius: 4, ...(waitStyle[c.key.wait] || waitStyle.default) };
  };
  const perSeries = (list, point) => [...groupBy(list, seriesName)].map(([label, own]) => ({ label, ...seriesStyle(own[0], list),
    data: [...own].sort((a, b) => a.key.payload_bytes - b.key.payload_bytes).map(point) }));
  // The legend draws each series' marker, so it tells the waits apart as the lines do.
  const markerLegend = { legend: { labels: { usePointStyle: true, boxHeight: 8 } } };
  // Ticks at the payloads measured and nowhere else, written as bytes: a log axis' own ticks (100, 150, 200, 300, …)
  // name sizes nobody ran and overlap. Half a step of margin keeps the end points off the frame.
  const payloadAxis = (list) => {
    const payloads = [...new Set(list.map((c) => c.key.payload_bytes))].sort((a, b) => a - b);
    const text = new Map(list.map((c) => [c.key.payload_bytes, c.key.payload_text]));
    return { ...log('payload'), min: payloads[0] / 2, max: payloads[payloads.length - 1] * 2,
      afterBuildTicks: (axis) => { axis.ticks = payloads.map((value) => ({ value })); },
      ticks: { autoSkip: false, callback: (value) => text.get(value) ?? '' } };
  };
  const spread = (s) => ({ y: s.median, yMin: s.min, yMax: s.max });

  // msg/s and MB/s against payload, a series per transport and wait, log-log, with the repetitions' min-max as error bars.
  const rates = section('Throughput and bandwidth against payload',
    'Median over the repetitions; error bars span min to max. Log-log: a transport that collapses with payload size bends down. ' +
    'Each transport in its wait strategy (legend): block ● solid, yield ◆ dashed, spin ▲ dotted.');
  for (const [shape, list] of shapes) {
    const xs = { x: payloadAxis(list) };
    chart(rates, 'throughput', `msg/s — ${shape}`, { type: 'lineWithErrorBars',
      data: { datasets: perSeries(list, (c) => ({ x: c.key.payload_bytes, ...spread(c.summary.figures.messages_per_second) })) },
      options: { scales: { ...xs, y: log(list[0].key.mode === 'round_trip' ? 'round trips/s' : 'msg/s') }, plugins: markerLegend } });
    chart(rates, 'bandwidth', `MB/s — ${shape}`, { type: 'lineWithErrorBars',
      data: { datasets: perSeries(list, (c) => {
        const b = c.summary.figures.bytes_per_second;
        return { x: c.key.payload_bytes, y: b.median / 1e6, yMin: b.min / 1e6, yMax: b.max / 1e6 };
      }) },
      options: { scales: { ...xs, y: log('MB/s (payload)') }, plugins: markerLegend } });
  }

  // HDR-style latency: the percentile axis is -log10(1 - p), so 90 %, 99 %, 99.9 %, 99.99 % are equally spaced.
  const nines = (p) => -Math.log10(1 - p / 100);
  const latency = section('Latency percentile distribution',
    'Medians over the repetitions of each percentile; one-way latency, or the round trip in round-trip cells.');
  for (const [shape, list] of shapes) {
    for (const [payload, own] of groupBy(list, (c) => c.key.payload_bytes)) {
      const f = (c) => c.summary.figures;
      const withSamples = own.filter((c) => f(c).latency_p50.median > 0);
      if (withSamples.length === 0) continue;
      chart(latency, 'latency', `Latency — ${shape}, ${own[0].key.payload_text}`, { type: 'line',
        data: { datasets: withSamples.map((c) => ({ label: seriesName(c), ...seriesStyle(c, list),
          data: [[50, f(c).latency_p50], [90, f(c).latency_p90], [99, f(c).latency_p99], [99.9, f(c).latency_p999], [99.99, f(c).latency_p9999]]
            .map(([p, s]) => ({ x: nines(p), y: s.median / 1e3 })) })) },
        options: { scales: {
          x: { type: 'linear', min: 0, max: 4, title: { display: true, text: 'percentile' },
            ticks: { stepSize: 1, callback: (v) => `${Number((100 - 100 / 10 ** v).toFixed(2))} %` } },
          y: log('µs') },
        plugins: markerLegend } });
    }
  }

  // Latency against offered load (rate sweeps and searches): p50, p99 and p99.9 per transport and wait on a log rate axis,
  // a search's sustainable rate as a vertical line in the transport's colour. The dash tells the percentiles apart here,
  // so the wait is the marker alone.
  if (doc.load.length > 0) {
    const load = section('Latency against load', 'Offered msg/s per publisher (log) against latency from intended send times: p50 solid, ' +
      'p99 dashed, p99.9 dotted, the marker the wait strategy (block ●, yield ◆, spin ▲); a thin vertical line marks a transport\'s ' +
      'sustainable rate. The table below lists every point.');
    for (const c of doc.load) {
      const datasets = [];
      const transports = [...new Set(c.series.map((s) => s.transport))];
      for (const s of c.series) {
        const col = colour(s.transport, transports.indexOf(s.transport));
        const { pointStyle } = waitStyle[s.wait] || waitStyle.default;
        for (const [name, field, dash] of [['p50', 'p50', []], ['p99', 'p99', [6, 3]], ['p99.9', 'p999', [2, 2]]]) {
          const data = s.points.filter((p) => p[field] > 0).map((p) => ({ x: p.offered_per_publisher, y: p[field] / 1e3 }));
          if (data.length > 0) datasets.push({ label: `${s.name} ${name}`, borderColor: col, backgroundColor: col, borderDash: dash, pointStyle, pointRadius: 4, data });
        }
        const ys = s.points.flatMap((p) => [p.p50, p.p999]).filter((v) => v > 0);
        if (s.sustainable_rate_per_publisher && ys.length > 0) {
          const x = s.sustainable_rate_per_publisher;
          datasets.push({ label: `${s.name} sustainable`, borderColor: col, backgroundColor: col, borderWidth: 1, pointRadius: 0,
            borderDash: [1, 3], data: [{ x, y: Math.min(...ys) / 1e3 }, { x, y: Math.max(...ys) / 1e3 }] });
        }
      }
      if (datasets.length === 0) continue;
      chart(load, 'load', `Latency against load — ${c.title}`, { type: 'line', data: { datasets },
        options: { scales: { x: log('offered msg/s per publisher'), y: log('µs') } } });
    }
  }

  // CPU per delivered message by process role: what a message costs the publishers' process and the subscribers' agents.
  const cpu = section('CPU per delivered message by process role',
    'CPU time (ns) per delivered message at the medians: daemon = publishers (and in-process subscribers), agents = subscriber processes.');
  for (const [shape, list] of shapes) {
    const s = (c) => c.summary;
    const value = (v) => (v > 0 ? v : null);
    chart(cpu, 'cpu', `CPU ns per message — ${shape}`, { type: 'bar',
      data: { labels: list.map(rowName), datasets: [
        { label: 'daemon (publishers)', data: list.map((c) => value(s(c).daemon_cpu_nanoseconds_per_message)), backgroundColor: '#4e79a7' },
        { label: 'agents (subscribers)', data: list.map((c) => value(s(c).agents_cpu_nanoseconds_per_message)), backgroundColor: '#f28e2b' },
      ] },
      options: { scales: { y: log('CPU ns / message') } } });
  }

  // Spread across repetitions: each cell's range as a share of its median, the 10 % threshold marked in red.
  const spreads = section('Spread across repetitions',
    'msg/s of each cell as % of its median: the bar is the median, error bars the min and max run. Red: spread above 10 %.');
  for (const [shape, list] of shapes) {
    chart(spreads, 'spread', `Run-to-run spread — ${shape}`, { type: 'barWithErrorBars',
      data: { labels: list.map(rowName), datasets: [{
        label: 'msg/s, % of median',
        data: list.map((c) => {
          const m = c.summary.figures.messages_per_second;
          return m.median > 0 ? { y: 100, yMin: (m.min / m.median) * 100, yMax: (m.max / m.median) * 100 } : { y: 0, yMin: 0, yMax: 0 };
        }),
        backgroundColor: list.map((c) => (c.summary.spread_exceeded ? '#e15759' : '#9fc5e8')),
      }] },
      options: { scales: { y: { ...linear('% of median'), suggestedMin: 80, suggestedMax: 120 } } } });
  }

  // Every repetition as a point, a row per cell, coloured by the placement class the report gave it (modality.placements,
  // drawn from the whole suite's core-to-core probes): a cell whose points fall in two groups of two colours moved with
  // the vCPUs, not with the transport.
  const placementColour = { near: '#59a14f', far: '#e15759', all: '#4e79a7', unknown: '#9c9c9c' };
  const strips = section('Every repetition, by placement', 'One point per successful repetition, jittered within its cell\'s row; ' +
    `≋ marks a cell whose msg/s repetitions form two or more modes${doc.placement ? `; ${doc.placement.description}` : ''}.`);
  for (const [shape, list] of shapes) {
    const rows = list.map((c) => `${rowName(c)}${c.modality.messages_per_second.kind === 'multimodal' ? ' ≋' : ''}`);
    const points = list.flatMap((c, row) => c.repetitions.map((r, i) => ({ r, row, placement: c.modality.placements[i],
      y: row + ((i % 7) - 3) * 0.06 })).filter((p) => !p.r.error));
    const datasets = Object.keys(placementColour).map((placement) => ({
      label: placement, backgroundColor: placementColour[placement], borderColor: placementColour[placement], pointRadius: 4,
      data: points.filter((p) => p.placement === placement)
        .map((p) => ({ x: p.r.messages_per_second, y: p.y, row: p.row, round: p.r.round, probe: p.r.probe_nanoseconds })),
    })).filter((d) => d.data.length > 0);
    chart(strips, 'strip', `Repetitions — ${shape}`, { type: 'scatter', data: { datasets },
      options: { scales: { x: log(list[0].key.mode === 'round_trip' ? 'round trips/s' : 'msg/s'),
        y: { type: 'linear', min: -0.5, max: rows.length - 0.5, reverse: true, grid: { display: false },
          afterBuildTicks: (axis) => { axis.ticks = rows.map((_, value) => ({ value })); },
          ticks: { autoSkip: false, callback: (value) => rows[value] ?? '' } } },
        plugins: { tooltip: { callbacks: { label: (item) => {
          const p = item.raw;
          return `${rows[p.row]}: round ${p.round}, ${Math.round(p.x)}/s, ${item.dataset.label}${p.probe ? `, probe ${Math.round(p.probe)} ns` : ''}`;
        } } } } } }, Math.max(200, 80 + 36 * rows.length));
  }

  // Published vs measured (presets): per unit, the published figure beside ours.
  if (doc.published.length > 0) {
    const pub = section('Published vs measured', 'Published figures (docs/published-figures.md) beside ours (median); the table below gives the ratio and the method differences.');
    for (const [unit, rows] of groupBy(doc.published.filter((r) => r.measured !== null), (r) => r.unit)) {
      // Horizontal bars labelled with both sides: one published figure can stand beside two of our cells
      // (HEADER_ONLY as published and FULL), and only the cell tells them apart.
      chart(pub, 'published', `Published vs measured — ${unit}`, { type: 'bar',
        data: { labels: rows.map((r) => [r.label, `ours: ${r.cell_label}`]), datasets: [
          { label: 'published', data: rows.map((r) => r.published), backgroundColor: '#bab0ac' },
          { label: 'measured here', data: rows.map((r) => r.measured), backgroundColor: '#4e79a7' },
        ] },
        options: { indexAxis: 'y', scales: { x: log(unit) } } }, Math.max(320, 90 + 40 * rows.length));
    }
  }

  // msg/s and CPU over time for each scenario: is the run stable, or did it drift, stall or warm up late?
  const timeline = section('msg/s and CPU over time', 'One line per repetition (scenario), from the start of its warmup; CPU is daemon + agents, % of one core.', true);
  for (const c of cells) {
    const datasets = [];
    c.repetitions.filter((r) => r.series.length > 0).forEach((r, i) => {
      const hue = extra[i % extra.length];
      datasets.push({ label: `msg/s, round ${r.round}`, yAxisID: 'y', borderColor: colour(c.key.transport, i), backgroundColor: colour(c.key.transport, i),
        data: r.series.map((p) => ({ x: p.elapsed_seconds, y: p.messages_per_second })) });
      datasets.push({ label: `CPU %, round ${r.round}`, yAxisID: 'cpu', borderDash: [4, 3], borderColor: hue, backgroundColor: hue,
        data: r.series.map((p) => ({ x: p.elapsed_seconds, y: p.daemon_cpu_percent + p.agents_cpu_percent })) });
    });
    if (datasets.length === 0) continue;
    chart(timeline, 'timeline', c.label, { type: 'line', data: { datasets },
      options: { scales: { x: linear('s'), y: { ...linear('msg/s'), beginAtZero: true },
        cpu: { ...linear('CPU %'), position: 'right', beginAtZero: true, grid: { drawOnChartArea: false } } },
        plugins: { legend: { labels: { boxWidth: 10, font: { size: 10 } } } } } });
  }

  // Compared with a baseline: each cell's msg/s change as a bar coloured by the cell's verdict (over all its metrics),
  // the threshold as a grey band around 0, so a regressed cell stands out even when its msg/s barely moved.
  const comparisonGrid = document.getElementById('comparison-chart');
  if (doc.comparison && comparisonGrid) {
    const c = doc.comparison;
    const verdictColour = { regressed: '#e15759', improved: '#59a14f', same: '#9fc5e8', inconclusive: '#f1ce63', unspecified: '#bab0ac' };
    const rows = c.cells.map((cell) => ({ cell, rate: cell.metrics.find((m) => m.metric === 'messages_per_second') }))
      .filter((r) => r.rate && Number.isFinite(Number(r.rate.change_percent)));
    if (rows.length > 0) {
      const t = Number(c.threshold_percent);
      const band = (sign, fill) => ({ type: 'line', label: `threshold ${sign > 0 ? '+' : '−'}${t} %`, data: rows.map(() => sign * t),
        borderColor: '#999', borderWidth: 1, borderDash: [4, 3], pointRadius: 0, fill, backgroundColor: 'rgba(150,150,150,0.18)' });
      chart(comparisonGrid, 'comparison', `msg/s change against baseline ${c.baseline_id}`, { type: 'bar',
        data: { labels: rows.map((r) => r.cell.label), datasets: [
          { label: 'msg/s change %', data: rows.map((r) => Number(r.rate.change_percent)),
            backgroundColor: rows.map((r) => verdictColour[r.cell.verdict] || '#bab0ac') },
          band(1, '+1'), band(-1, false),
        ] },
        options: { scales: { y: { ...linear('change of msg/s, %'), suggestedMin: -2 * t, suggestedMax: 2 * t } },
          plugins: { tooltip: { callbacks: { afterLabel: (item) => (item.datasetIndex === 0 ? `cell verdict: ${rows[item.dataIndex].cell.verdict}` : '') } } } } });
    }
  }

  // For tests and readers of the DOM: how many charts were drawn.
  document.body.dataset.charts = String(drawn.length);
})();
