// SPDX-License-Identifier: MIT
// app.js - the ledgerfs console's page (ledgerctl(1) CONSOLE).  Served
// from the binary under `default-src 'self'`: no inline script, no
// outside asset.  Every string from a ledger is set with textContent or
// an SVG attribute, never parsed as HTML.
'use strict';
(function () {
  const SVGNS = 'http://www.w3.org/2000/svg';
  const PAGE = 100;
  const main = document.getElementById('main');
  const live = document.getElementById('live');
  let source = null;
  let generation = 0;

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function svg(tag, attrs) {
    const e = document.createElementNS(SVGNS, tag);
    for (const k in attrs) e.setAttribute(k, String(attrs[k]));
    return e;
  }

  function get(url) {
    return fetch(url, { credentials: 'same-origin', cache: 'no-store' })
      .then(function (r) {
        if (!r.ok) throw new Error(r.status + ' ' + url);
        return r.json();
      });
  }

  function clear(e) {
    while (e.firstChild) e.removeChild(e.firstChild);
  }

  function listen(url, event, onNews) {
    if (source) source.close();
    source = new EventSource(url);
    source.addEventListener(event, onNews);
    source.addEventListener('open', function () {
      live.textContent = 'live';
      live.className = 'live on';
    });
    source.addEventListener('error', function () {
      live.textContent = 'reconnecting';
      live.className = 'live';
    });
  }

  function showError(where, err) {
    clear(where);
    where.appendChild(el('p', 'error', String(err && err.message || err)));
  }

  function verifyCell(v) {
    const td = el('td');
    if (!v) return td;
    const s = el('span', 'verify-' + v.status, v.status);
    td.appendChild(s);
    td.title = v.reason || ('chain checked to row ' + v.rows_checked +
      (v.macs_checked ? ', MACs checked' : ', MACs ' + (v.macs_note || 'not checked')));
    return td;
  }

  function modeCounts(counts) {
    const c = counts || {};
    return (c.pass || 0) + ' / ' + (c.mock || 0) + ' / ' + (c.block || 0);
  }

  function pager(total, offset, size, go) {
    const p = el('div', 'pager');
    const first = el('button', null, '\u00ab first');
    const prev = el('button', null, '\u2039 previous');
    const next = el('button', null, 'next \u203a');
    const last = el('button', null, 'last \u00bb');
    const lastOffset = total > 0 ? Math.floor((total - 1) / size) * size : 0;
    first.disabled = prev.disabled = offset <= 0;
    next.disabled = last.disabled = offset >= lastOffset;
    first.addEventListener('click', function () { go(0); });
    prev.addEventListener('click', function () { go(Math.max(0, offset - size)); });
    next.addEventListener('click', function () { go(offset + size); });
    last.addEventListener('click', function () { go(lastOffset); });
    const shown = total ? (offset + 1) + '\u2013' + Math.min(total, offset + size) : '0';
    p.append(first, prev, el('span', 'muted', shown + ' of ' + total), next, last);
    return p;
  }

  // --- the case list ---------------------------------------------------

  function showList(offset) {
    const gen = ++generation;
    clear(main);
    main.appendChild(el('h1', null, 'Cases'));
    const body = el('div');
    main.appendChild(body);
    function load() {
      return get('/api/cases?offset=' + offset + '&limit=' + PAGE).then(function (d) {
        if (gen !== generation) return;
        document.getElementById('keyfp').textContent = d.key_fingerprint
          ? 'host key ' + d.key_fingerprint : 'host key not read: chain checks only';
        clear(body);
        body.appendChild(pager(d.total, offset, PAGE, function (o) { location.hash = '#/?offset=' + o; }));
        const t = el('table', 'cases');
        t.id = 'cases';
        const hr = el('tr');
        ['Case', 'State', 'Rows', 'Calls pass / mock / block', 'Missing', 'Last activity', 'Verify']
          .forEach(function (h, i) { hr.appendChild(el('th', i === 2 || i === 4 ? 'num' : null, h)); });
        t.appendChild(el('thead')).appendChild(hr);
        const tb = el('tbody');
        t.appendChild(tb);
        d.cases.forEach(function (c) {
          const tr = el('tr', 'case');
          const a = el('a', null, c.name);
          a.href = '#/case/' + encodeURIComponent(c.name);
          tr.appendChild(el('td')).appendChild(a);
          tr.appendChild(el('td', null, c.state));
          tr.appendChild(el('td', 'num', c.rows));
          tr.appendChild(el('td', null, modeCounts(c.counts)));
          tr.appendChild(el('td', 'num', c.counts ? c.counts.missing : ''));
          tr.appendChild(el('td', null, c.last_activity || ''));
          tr.appendChild(verifyCell(c.verify));
          tb.appendChild(tr);
        });
        body.appendChild(t);
      }).catch(function (e) { showError(body, e); });
    }
    load();
    listen('/api/events?offset=' + offset + '&limit=' + PAGE, 'cases', load);
  }

  // --- one case ----------------------------------------------------------

  function summary(dl, s, st) {
    clear(dl);
    function row(k, v, cls) {
      dl.appendChild(el('dt', null, k));
      const dd = el('dd', cls, v);
      dl.appendChild(dd);
      return dd;
    }
    const v = s.verify || {};
    row('state', s.state);
    row('rows', s.rows).id = 'case-rows';
    row('calls pass / mock / block', modeCounts(s.counts));
    row('missing results', s.counts ? s.counts.missing : 0);
    row('refused writes', s.counts ? s.counts.refused : 0);
    row('turn', s.turn);
    row('first / last activity', (s.first_activity || '\u2013') + '  \u2192  ' + (s.last_activity || '\u2013'));
    if (s.reason) row('reason', s.reason);
    row('verify', v.status + (v.reason ? ': ' + v.reason : ''), 'verify-' + v.status).id = 'case-verify';
    row('chain head', 'row ' + v.rows_checked + ': ' + v.head);
    row('MACs', v.macs_checked ? 'checked with host key ' + v.key_fingerprint : v.macs_note);
    if (v.ledger_key_fingerprint) row('ledger key', v.ledger_key_fingerprint);
    if (st && st.policy_error) row('policy error', st.policy_error, 'error');
  }

  function axes(g, w, h, pad, ymax, span, unit) {
    g.appendChild(svg('line', { x1: pad, y1: h - pad, x2: w - 8, y2: h - pad, class: 'axis' }));
    g.appendChild(svg('line', { x1: pad, y1: 8, x2: pad, y2: h - pad, class: 'axis' }));
    g.appendChild(svg('line', { x1: pad, y1: 8, x2: w - 8, y2: 8, class: 'grid' }));
    const top = svg('text', { x: pad - 4, y: 12, 'text-anchor': 'end', class: 'label' });
    top.textContent = (Math.round(ymax * 10) / 10) + unit;
    g.appendChild(top);
    const zero = svg('text', { x: pad - 4, y: h - pad, 'text-anchor': 'end', class: 'label' });
    zero.textContent = '0';
    g.appendChild(zero);
    const end = svg('text', { x: w - 8, y: h - pad + 14, 'text-anchor': 'end', class: 'label' });
    end.textContent = Math.round(span) + ' s';
    g.appendChild(end);
    const start = svg('text', { x: pad, y: h - pad + 14, class: 'label' });
    start.textContent = '0 s';
    g.appendChild(start);
  }

  function plotRate(box, d) {
    const w = 520, h = 160, pad = 34;
    const bins = d.bins, n = Math.max(bins.length, 1), bw = d.bin_seconds;
    const rates = bins.map(function (b) { return (b[0] + b[1] + b[2]) / bw; });
    const ymax = Math.max(1, Math.max.apply(null, rates.concat([0])));
    const s = svg('svg', { viewBox: '0 0 ' + w + ' ' + h, width: w, height: h, id: 'plot-rate', role: 'img' });
    const t = svg('title', {}); t.textContent = 'calls per second'; s.appendChild(t);
    axes(s, w, h, pad, ymax, n * bw, '/s');
    const xs = function (i) { return pad + (w - 8 - pad) * (n > 1 ? i / (n - 1) : 0.5); };
    const ys = function (r) { return h - pad - (h - pad - 8) * r / ymax; };
    let line = '';
    rates.forEach(function (r, i) { line += (i ? 'L' : 'M') + xs(i).toFixed(1) + ' ' + ys(r).toFixed(1); });
    if (rates.length) {
      s.appendChild(svg('path', { d: line + 'L' + xs(n - 1).toFixed(1) + ' ' + (h - pad) + 'L' + xs(0).toFixed(1) + ' ' + (h - pad) + 'Z', class: 'rate-area' }));
      s.appendChild(svg('path', { d: line, class: 'rate' }));
    }
    s.setAttribute('data-drawn', String(d.calls));
    box.appendChild(s);
  }

  function plotModes(box, d) {
    const w = 520, h = 160, pad = 34;
    const bins = d.bins, n = Math.max(bins.length, 1);
    const tot = bins.map(function (b) { return b[0] + b[1] + b[2]; });
    const ymax = Math.max(1, Math.max.apply(null, tot.concat([0])));
    const s = svg('svg', { viewBox: '0 0 ' + w + ' ' + h, width: w, height: h, id: 'plot-modes', role: 'img' });
    const t = svg('title', {}); t.textContent = 'decisions by mode'; s.appendChild(t);
    axes(s, w, h, pad, ymax, n * d.bin_seconds, '');
    const slot = (w - 8 - pad) / n;
    const bw = Math.max(1, slot * 0.8);
    const cls = ['bar-pass', 'bar-mock', 'bar-block'];
    bins.forEach(function (b, i) {
      let y = h - pad;
      for (let m = 0; m < 3; m++) {
        if (!b[m]) continue;
        const bh = (h - pad - 8) * b[m] / ymax;
        y -= bh;
        s.appendChild(svg('rect', { x: (pad + i * slot + (slot - bw) / 2).toFixed(1), y: y.toFixed(1), width: bw.toFixed(1), height: bh.toFixed(1), class: cls[m] }));
      }
    });
    s.setAttribute('data-drawn', String(d.calls));
    box.appendChild(s);
  }

  function plots(box, d) {
    clear(box);
    const a = el('div', 'plot');
    a.appendChild(el('h3', null, 'Calls per second (bins of ' + (Math.round(d.bin_seconds * 10) / 10) + ' s)'));
    plotRate(a, d);
    const b = el('div', 'plot');
    b.appendChild(el('h3', null, 'Decisions by mode'));
    plotModes(b, d);
    const lg = el('div', 'legend');
    ['pass', 'mock', 'block'].forEach(function (m) {
      const s = el('span');
      s.appendChild(el('span', 'sw sw-' + m));
      s.appendChild(document.createTextNode(m));
      lg.appendChild(s);
    });
    b.appendChild(lg);
    box.append(a, b);
  }

  // A row never changes once written: fetch each once per page visit,
  // so live re-drawing does not refetch (or blank) an open call.
  function rowJson(name, row, pre, cache) {
    if (cache.has(row)) {
      pre.textContent = cache.get(row);
      return;
    }
    get('/api/cases/' + encodeURIComponent(name) + '?offset=' + (row - 1) + '&limit=1')
      .then(function (d) {
        const text = JSON.stringify(d.rows[0], null, 2);
        cache.set(row, text);
        pre.textContent = text;
      })
      .catch(function (e) { pre.textContent = String(e.message || e); });
  }

  function callRows(name, tb, calls, open, cache) {
    let turn = null;
    calls.forEach(function (c) {
      if (c.turn !== turn) {
        turn = c.turn;
        const tr = el('tr', 'turn');
        const td = el('td', null, 'turn ' + turn);
        td.colSpan = 9;
        tr.appendChild(td);
        tb.appendChild(tr);
      }
      const missing = c.completion_status === 'missing';
      const tr = el('tr', 'call' + (missing ? ' missing' : ''));
      tr.appendChild(el('td', 'num', c.sequence));
      tr.appendChild(el('td', null, c.call_id));
      tr.appendChild(el('td', null, c.tool));
      tr.appendChild(el('td', 'mode mode-' + c.mode, c.mode));
      tr.appendChild(el('td', null, c.matched));
      tr.appendChild(el('td', null, c.result_source));
      tr.appendChild(el('td', null, c.result_authoritative ? 'yes' : 'no'));
      tr.appendChild(el('td', 'completion', c.completion_status + (missing ? ' (no result)' : '')));
      tr.appendChild(el('td', 'num', c.decision_row + (c.end_row ? ', ' + c.end_row : '')));
      tb.appendChild(tr);
      const detail = el('tr', 'detail');
      const td = el('td');
      td.colSpan = 9;
      detail.appendChild(td);
      function expand() {
        clear(td);
        [c.decision_row, c.end_row].forEach(function (r) {
          if (!r) return;
          td.appendChild(el('div', 'muted', 'row ' + r));
          const pre = el('pre');
          td.appendChild(pre);
          rowJson(name, r, pre, cache);
        });
        tr.after(detail);
      }
      tr.addEventListener('click', function () {
        if (open.has(c.sequence)) { open.delete(c.sequence); detail.remove(); } else { open.add(c.sequence); expand(); }
      });
      if (open.has(c.sequence)) expand();
    });
  }

  function showCase(name, offset) {
    const gen = ++generation;
    const open = new Set();
    const cache = new Map();
    const base = '/api/cases/' + encodeURIComponent(name);
    clear(main);
    const back = el('a', null, '\u2190 all cases');
    back.href = '#/';
    main.appendChild(back);
    main.appendChild(el('h1', null, name));
    const dl = el('dl', 'summary');
    const plotBox = el('div', 'plots');
    const callsBox = el('div');
    main.append(dl, el('h2', null, 'Over the case\'s life'), plotBox, el('h2', null, 'Calls in attempt order'), callsBox);
    function loadCalls() {
      return get(base + '/calls?offset=' + offset + '&limit=' + PAGE).then(function (d) {
        if (gen !== generation) return;
        clear(callsBox);
        callsBox.appendChild(pager(d.total, offset, PAGE, function (o) {
          location.hash = '#/case/' + encodeURIComponent(name) + '/' + o;
        }));
        const t = el('table', 'calls');
        t.id = 'calls';
        const hr = el('tr');
        ['#', 'Call id', 'Tool', 'Mode', 'Matched rule', 'Result source', 'Authoritative', 'Completion', 'Rows']
          .forEach(function (h) { hr.appendChild(el('th', null, h)); });
        t.appendChild(el('thead')).appendChild(hr);
        const tb = el('tbody');
        t.appendChild(tb);
        callRows(name, tb, d.calls, open, cache);
        callsBox.appendChild(t);
      });
    }
    function load() {
      return Promise.all([get(base + '?offset=0&limit=0'), get(base + '/series')]).then(function (r) {
        if (gen !== generation) return;
        summary(dl, r[0].summary, r[0].status);
        plots(plotBox, r[1]);
        return loadCalls();
      }).catch(function (e) { showError(callsBox, e); });
    }
    load();
    listen('/api/events?case=' + encodeURIComponent(name), 'case', load);
  }

  function route() {
    const h = location.hash;
    const m = /^#\/case\/([^/]+)(?:\/(\d+))?$/.exec(h);
    let name = null;
    try { name = m && decodeURIComponent(m[1]); } catch (e) { name = null; }
    if (name) {
      showCase(name, m[2] ? parseInt(m[2], 10) : 0);
      return;
    }
    const l = /^#\/\?offset=(\d+)$/.exec(h);
    showList(l ? parseInt(l[1], 10) : 0);
  }

  window.addEventListener('hashchange', route);
  route();
})();
