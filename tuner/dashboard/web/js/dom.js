// Element helpers. Text from the database (compiler messages, configs) is only ever set as text
// (h() makes text nodes), never parsed as HTML.

// An element: attributes (`class`, `on<event>` listeners, others as attributes; null, undefined and
// false are left out) and children (nodes, or anything else as text; arrays are flattened).
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    el.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// A right-aligned number cell; data-value holds the raw value (the tests read it).
export function numCell(value, text) {
  return h('td', { class: 'num', 'data-value': value === null || value === undefined ? '' : value }, text);
}

// Sets an element's text when it differs (no needless layout work on each poll).
export function setText(el, text) {
  const s = String(text);
  if (el.textContent !== s) el.textContent = s;
}

// A figure card: `.v` holds the value, set with setText(card.value, ...).
export function card(label, id, title) {
  const value = h('div', { class: 'v' }, '…');
  const el = h('div', { class: 'card', id: id || null, title: title || null }, value, h('div', { class: 'k' }, label));
  return { el, value };
}

// A table whose rows are updated in place: update(rows) keeps the <tr> of each key, rebuilds the
// cells of a row only when its data changed, adds new rows and drops gone ones, in the rows' order.
// With no rows it shows `empty` instead. The wrapper (`el`) carries `id`.
export class Table {
  // columns: [[title, class?]]; rowKey(row): a stable key; cells(row): its <td>s; rowAttrs(row):
  // attributes of a new <tr> (constant for a key).
  constructor({ id, columns, rowKey, cells, rowAttrs, empty }) {
    this.rowKey = rowKey;
    this.cells = cells;
    this.rowAttrs = rowAttrs || (() => ({}));
    this.body = h('tbody', {});
    this.table = h(
      'table',
      {},
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          columns.map(([title, cls]) => h('th', { class: cls || null }, title)),
        ),
      ),
      this.body,
    );
    this.empty = h('p', { class: 'muted', hidden: true }, empty || '');
    this.el = h('div', { class: 'table-wrap', id: id || null }, this.empty, this.table);
    this.rows = new Map(); // key -> <tr>
    this.data = new WeakMap(); // <tr> -> the JSON of the row it shows
  }

  update(rows) {
    const next = new Map();
    rows.forEach((row, i) => {
      let key = String(this.rowKey(row));
      if (next.has(key)) key += '#' + i;
      const json = JSON.stringify(row);
      let tr = this.rows.get(key);
      if (!tr) tr = h('tr', this.rowAttrs(row));
      if (this.data.get(tr) !== json) {
        tr.replaceChildren(...this.cells(row));
        this.data.set(tr, json);
      }
      next.set(key, tr);
      const at = this.body.children[i];
      if (at !== tr) this.body.insertBefore(tr, at || null);
    });
    while (this.body.children.length > rows.length) this.body.lastElementChild.remove();
    this.rows = next;
    const none = rows.length === 0 && Boolean(this.empty.textContent);
    this.empty.hidden = !none;
    this.table.hidden = none;
  }
}

// The banner at the bottom: an error's message, or hidden for null.
export function showError(err) {
  const banner = document.getElementById('error-banner');
  if (!err) {
    banner.hidden = true;
    return;
  }
  banner.hidden = false;
  setText(banner, String(err.message || err));
}

// The header's "updated HH:MM:SS".
export function setLive(text) {
  setText(document.getElementById('live'), text);
}
