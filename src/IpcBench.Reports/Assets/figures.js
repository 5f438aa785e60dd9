// What every report page's charts share: a titled section with its note and a grid, and a captioned figure holding one
// Chart.js canvas (data-kind and aria-label name it for readers and tests). Text goes in through textContent only.
window.IpcBenchFigures = (function () {
  'use strict';
  function section(main, title, note, small) {
    const s = document.createElement('section');
    const h = document.createElement('h2');
    h.textContent = title;
    s.appendChild(h);
    if (note) {
      const p = document.createElement('p');
      p.className = 'note';
      p.textContent = note;
      s.appendChild(p);
    }
    const grid = document.createElement('div');
    grid.className = small ? 'grid small' : 'grid';
    s.appendChild(grid);
    main.appendChild(s);
    return grid;
  }

  function chart(grid, kind, title, config, height) {
    const figure = document.createElement('figure');
    const caption = document.createElement('figcaption');
    caption.textContent = title;
    const plot = document.createElement('div');
    plot.className = 'plot';
    if (height) plot.style.height = `${height}px`;
    const canvas = document.createElement('canvas');
    canvas.dataset.kind = kind;
    canvas.setAttribute('aria-label', title);
    plot.appendChild(canvas);
    figure.append(caption, plot);
    grid.appendChild(figure);
    return new Chart(canvas, config);
  }

  return { section, chart };
}());
