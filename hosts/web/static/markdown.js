// Text-safe markdown: a small subset (paragraphs, line breaks, "- " lists, "#" headings,
// fenced code, `code`, **bold**, *emphasis*) built as DOM nodes. Every piece of text goes in
// through textContent / createTextNode, never innerHTML, so "<script>" shows as characters.
"use strict";

const Markdown = (() => {
  const INLINE = /(`[^`\n]+`|\*\*[^*\n]+\*\*|\*[^*\n]+\*)/;

  function inline(parent, text) {
    for (const piece of text.split(INLINE)) {
      if (!piece) continue;
      let node;
      if (piece.length > 2 && piece.startsWith("`") && piece.endsWith("`")) {
        node = document.createElement("code");
        node.textContent = piece.slice(1, -1);
      } else if (piece.length > 4 && piece.startsWith("**") && piece.endsWith("**")) {
        node = document.createElement("strong");
        node.textContent = piece.slice(2, -2);
      } else if (piece.length > 2 && piece.startsWith("*") && piece.endsWith("*")) {
        node = document.createElement("em");
        node.textContent = piece.slice(1, -1);
      } else {
        node = document.createTextNode(piece);
      }
      parent.appendChild(node);
    }
  }

  function lines(parent, rows) {
    rows.forEach((row, index) => {
      if (index) parent.appendChild(document.createElement("br"));
      inline(parent, row);
    });
  }

  // Render `text` into a new <div class="md">.
  function render(text) {
    const root = document.createElement("div");
    root.className = "md";
    const rows = String(text ?? "").replace(/\r\n?/g, "\n").split("\n");
    let i = 0;
    while (i < rows.length) {
      const row = rows[i];
      if (!row.trim()) { i += 1; continue; }
      if (row.startsWith("```")) {
        const code = [];
        i += 1;
        while (i < rows.length && !rows[i].startsWith("```")) code.push(rows[i++]);
        i += 1;
        const pre = document.createElement("pre");
        const el = document.createElement("code");
        el.textContent = code.join("\n");
        pre.appendChild(el);
        root.appendChild(pre);
        continue;
      }
      if (/^\s*[-*] /.test(row)) {
        const list = document.createElement("ul");
        while (i < rows.length && /^\s*[-*] /.test(rows[i])) {
          const item = document.createElement("li");
          inline(item, rows[i].replace(/^\s*[-*] /, ""));
          list.appendChild(item);
          i += 1;
        }
        root.appendChild(list);
        continue;
      }
      const heading = /^(#{1,6})\s+(.*)$/.exec(row);
      if (heading) {
        const p = document.createElement("p");
        p.className = "md-heading";
        const strong = document.createElement("strong");
        inline(strong, heading[2]);
        p.appendChild(strong);
        root.appendChild(p);
        i += 1;
        continue;
      }
      const para = [];
      while (i < rows.length && rows[i].trim() && !rows[i].startsWith("```") &&
             !/^\s*[-*] /.test(rows[i]) && !/^#{1,6}\s/.test(rows[i])) {
        para.push(rows[i++]);
      }
      const p = document.createElement("p");
      lines(p, para);
      root.appendChild(p);
    }
    return root;
  }

  return { render };
})();
