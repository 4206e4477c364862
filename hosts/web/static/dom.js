// What every view of the page builds its elements with: `Dom.el(tag, attrs, text)` (text set
// with textContent, never parsed as markup) and `Dom.when(iso)` (a <time> in local time).
"use strict";

const Dom = (() => {
  function el(tag, attrs = {}, text) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs)) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "className") node.className = value;
      else node.setAttribute(key, value === true ? "" : value);
    }
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function when(iso) {
    const time = el("time", { datetime: iso });
    const date = new Date(iso);
    time.textContent = Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
    return time;
  }

  return { el, when };
})();
