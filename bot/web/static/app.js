// gammond web client: plain JavaScript, no build step. Speaks docs/websocket-protocol.md (version 1).
// The server sends every board with the legal plays of the player to move; this page only lets those be
// entered (click a chequer, then where it goes, or drag it) and sends the whole play with "Done".
'use strict';

const PROTOCOL_VERSION = 1;
const SVGNS = 'http://www.w3.org/2000/svg';

// Board geometry (viewBox 650 x 490). Points are 40 wide; the bottom player moves 24 -> 1 into the bottom
// right quarter; the bar is in the middle, the tray (borne-off chequers) on the right, the cube on the left.
const G = {
  width: 650, height: 490, top: 16, bottom: 474, mid: 245, point: 40, length: 190, r: 18,
  left: 55, bar: 295, right: 335, tray: 585, trayWidth: 55, cubeX: 7, cube: 36,
};

const app = {
  ws: null,
  phase: 'connecting',
  me: null,
  lobby: null,
  board: null,
  matchId: null,
  closed: null, // match_closed of the match shown
  events: [],
  kibitzes: new Map(), // "game:index" -> kibitz
  invitations: new Map(), // inviter -> length
  partial: [], // steps entered so far
  selected: null, // source point picked
  dests: new Map(), // destination point -> steps to get there
  sent: false, // a request for this board is on its way
  boardTimes: {}, // seq -> Date.now() when the board was drawn (the spectator-latency check reads it)
  reconnectDelay: 500,
};
window.gammond = app;

const $ = (id) => document.getElementById(id);

function el(tag, attrs = {}, parent = null, text = null) {
  const node = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== null) node.textContent = text;
  if (parent) parent.appendChild(node);
  return node;
}

function html(tag, text = '', cls = '') {
  const node = document.createElement(tag);
  if (text) node.textContent = text;
  if (cls) node.className = cls;
  return node;
}

// -- connection ----------------------------------------------------------------------------------------------

function connect() {
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  const ws = new WebSocket(`${scheme}://${location.host}/ws`);
  app.ws = ws;
  ws.onopen = () => {
    app.reconnectDelay = 500;
    send({ type: 'hello', version: PROTOCOL_VERSION, client: 'gammond-page' });
  };
  ws.onmessage = (e) => {
    let msg;
    try { msg = JSON.parse(e.data); } catch { return; }
    const handler = HANDLERS[msg.type];
    if (handler) handler(msg);
  };
  ws.onclose = () => {
    if (app.ws !== ws) return;
    setPhase('connecting');
    $('conn').textContent = 'disconnected: reconnecting…';
    app.me = null;
    setTimeout(connect, app.reconnectDelay);
    app.reconnectDelay = Math.min(app.reconnectDelay * 2, 10000);
  };
}

function send(msg) {
  if (app.ws && app.ws.readyState === WebSocket.OPEN) app.ws.send(JSON.stringify(msg));
}

function setPhase(phase) {
  app.phase = phase;
  document.body.dataset.phase = phase;
}

function flash(text, isError = false) {
  const p = html('p', text, isError ? 'error' : '');
  $('messages').prepend(p);
  setTimeout(() => p.remove(), isError ? 8000 : 6000);
  while ($('messages').children.length > 4) $('messages').lastChild.remove();
}

// -- messages from the server --------------------------------------------------------------------------------

const HANDLERS = {
  welcome(msg) {
    $('conn').textContent = `connected to ${msg.server}`;
    setPhase(app.me ? 'user' : 'guest');
  },
  lobby(msg) { app.lobby = msg; renderLobby(); },
  logged_in(msg) {
    app.me = msg;
    setPhase('user');
    $('me-name').textContent = msg.name;
    $('me-rating').textContent = `${msg.rating.toFixed(1)} · ${msg.experience} exp`;
    $('ready').checked = msg.ready;
    renderLobby();
  },
  logged_out(msg) {
    app.me = null;
    setPhase('guest');
    flash(`Logged out (${msg.reason}).`);
    if (app.board && app.board.player) showLobbyOnly();
    renderLobby();
  },
  error(msg) {
    app.sent = false;
    flash(msg.message, true);
    if (msg.request === 'move') { app.partial = []; renderBoard(); }
  },
  notice(msg) { flash(msg.text); },
  invitation(msg) {
    app.invitations.set(msg.inviter, msg.length);
    renderInvitations();
  },
  chat(msg) {
    const li = html('li');
    li.append(html('strong', `${msg.sender}`), ` ${msg.scope === 'say' ? '' : `(${msg.scope}) `}${msg.text}`);
    $('chat').append(li);
    li.scrollIntoView({ block: 'nearest' });
  },
  board(msg) {
    if (msg.match !== app.matchId) startMatchView(msg.match);
    const fresh = !app.board || app.board.seq !== msg.seq || app.board.seats[0] !== msg.seats[0];
    app.board = msg;
    if (fresh) {
      app.partial = [];
      app.selected = null;
      app.sent = false;
    }
    if (msg.player) app.invitations.clear();
    renderBoard();
    renderInvitations();
    if (!(msg.seq in app.boardTimes)) app.boardTimes[msg.seq] = Date.now();
  },
  event(msg) {
    if (msg.match !== app.matchId) return;
    app.events.push(msg);
    addMoveListEntry(msg);
  },
  kibitz(msg) {
    if (msg.match !== app.matchId) return;
    app.kibitzes.set(`${msg.game}:${msg.index}`, msg);
    markMove(msg);
    renderChart();
    renderKibitz(msg);
  },
  analysis(msg) {
    if (msg.match !== app.matchId) return;
    for (const k of msg.kibitzes) { app.kibitzes.set(`${k.game}:${k.index}`, k); markMove(k); }
    renderChart();
    if (msg.kibitzes.length) renderKibitz(msg.kibitzes[msg.kibitzes.length - 1]);
  },
  match_closed(msg) {
    if (msg.match !== app.matchId) return;
    app.closed = msg;
    renderBoard();
  },
};

// -- lobby ----------------------------------------------------------------------------------------------------

function renderLobby() {
  const lobby = app.lobby;
  if (!lobby) return;
  const me = app.me ? app.me.name : null;
  const players = $('players').tBodies[0];
  players.replaceChildren();
  for (const p of lobby.players) {
    const tr = players.insertRow();
    tr.dataset.player = p.name;
    const name = tr.insertCell();
    name.append(html('span', p.name));
    if (p.bot) name.append(html('span', 'bot', 'tag'));
    if (p.web) name.append(html('span', 'web', 'tag'));
    if (p.away) name.append(html('span', 'away', 'tag'));
    tr.insertCell().textContent = p.rating.toFixed(0);
    tr.insertCell().textContent = p.playing ? `playing ${p.playing}` : p.watching ? `watching ${p.watching}` : p.ready ? 'ready' : '';
    const cell = tr.insertCell();
    if (me && p.name !== me && p.ready && !p.playing) {
      const b = html('button', 'Invite');
      b.className = 'invite';
      b.onclick = () => {
        const length = Math.max(0, Math.min(99, parseInt($('invite-length').value || '1', 10) || 0));
        send({ type: 'invite', name: p.name, length });
      };
      cell.append(b);
    }
  }
  const matches = $('matches').tBodies[0];
  matches.replaceChildren();
  for (const m of lobby.matches) {
    const tr = matches.insertRow();
    tr.dataset.match = m.id;
    tr.insertCell().textContent = `${m.players[0]} – ${m.players[1]}`;
    tr.insertCell().textContent = `${m.score[0]}-${m.score[1]} of ${m.length || '∞'}`;
    tr.insertCell().textContent = m.watchers ? `${m.watchers} 👁` : '';
    const cell = tr.insertCell();
    if (!me || !m.players.includes(me)) {
      const b = html('button', 'Watch');
      b.className = 'watch';
      b.onclick = () => send({ type: 'watch', match: m.id, seat: 0 });
      cell.append(b);
    }
  }
  $('no-matches').hidden = lobby.matches.length > 0;
}

function renderInvitations() {
  const box = $('invitations');
  box.replaceChildren();
  for (const [inviter, length] of app.invitations) {
    const p = html('p', `${inviter} invites you to ${length === null ? 'resume your saved match' : length === 0 ? 'an unlimited match' : `a ${length}-point match`}. `);
    const b = html('button', 'Accept');
    b.className = 'primary';
    b.onclick = () => { app.invitations.delete(inviter); renderInvitations(); send({ type: 'accept_invitation', name: inviter }); };
    p.append(b);
    box.append(p);
  }
}

// -- the match view ------------------------------------------------------------------------------------------

function startMatchView(matchId) {
  app.matchId = matchId;
  app.closed = null;
  app.events = [];
  app.kibitzes = new Map();
  app.partial = [];
  app.selected = null;
  $('movelist').replaceChildren();
  $('kibitz').textContent = '';
  $('match').hidden = false;
  document.body.classList.add('in-match');
  renderChart();
}

function showLobbyOnly() {
  app.matchId = null;
  app.board = null;
  $('match').hidden = true;
  document.body.classList.remove('in-match');
}

function pointX(p) { // left edge of point p (bottom player's numbering)
  if (p <= 6) return G.right + (6 - p) * G.point;
  if (p <= 12) return G.left + (12 - p) * G.point;
  if (p <= 18) return G.left + (p - 13) * G.point;
  return G.right + (p - 19) * G.point;
}
const isTop = (p) => p >= 13;

function drawStatic(svg) {
  svg.replaceChildren();
  el('rect', { x: 0, y: 0, width: G.width, height: G.height, rx: 8, class: 'frame' }, svg);
  el('rect', { x: G.left, y: G.top, width: G.bar - G.left, height: G.bottom - G.top, class: 'felt' }, svg);
  el('rect', { x: G.right, y: G.top, width: 6 * G.point, height: G.bottom - G.top, class: 'felt' }, svg);
  el('rect', { x: G.bar, y: G.top, width: G.right - G.bar, height: G.bottom - G.top, class: 'bar' }, svg);
  el('rect', { x: G.tray, y: G.top, width: G.trayWidth, height: G.bottom - G.top, class: 'tray' }, svg);
  for (let p = 1; p <= 24; p++) {
    const x = pointX(p);
    const top = isTop(p);
    const base = top ? G.top : G.bottom;
    const tip = top ? G.top + G.length : G.bottom - G.length;
    el('polygon', { points: `${x},${base} ${x + G.point},${base} ${x + G.point / 2},${tip}`, class: p % 2 ? 'tri-a' : 'tri-b' }, svg);
    el('text', { x: x + G.point / 2, y: top ? G.top - 4 : G.bottom + 12, class: 'label' }, svg, String(p));
  }
  const dynamic = el('g', { id: 'dynamic' }, svg);
  const hits = el('g', { id: 'hits' }, svg);
  for (let p = 1; p <= 24; p++) {
    const top = isTop(p);
    el('rect', { x: pointX(p), y: top ? G.top : G.bottom - G.length, width: G.point, height: G.length, class: 'hit', 'data-point': p }, hits);
  }
  el('rect', { x: G.bar, y: G.top, width: G.right - G.bar, height: G.bottom - G.top, class: 'hit', 'data-point': 25 }, hits);
  el('rect', { x: G.tray, y: G.mid, width: G.trayWidth, height: G.bottom - G.mid, class: 'hit', 'data-point': 0 }, hits);
  svg.dataset.drawn = '1';
  return dynamic;
}

function chequer(parent, cx, cy, mine, count) {
  el('circle', { cx, cy, r: G.r - 1, class: mine ? 'chq-me' : 'chq-them' }, parent);
  if (count) el('text', { x: cx, y: cy, class: `chq-count ${mine ? 'me' : 'them'}` }, parent, String(count));
}

function drawStack(parent, p, n, mine) {
  const x = pointX(p) + G.point / 2;
  const top = isTop(p);
  const shown = Math.min(n, 5);
  for (let i = 0; i < shown; i++) {
    const y = top ? G.top + G.r + i * 2 * G.r : G.bottom - G.r - i * 2 * G.r;
    chequer(parent, x, y, mine, i === shown - 1 && n > 5 ? n : 0);
  }
}

function drawDie(parent, x, y, value, mine, used) {
  const g = el('g', {}, parent);
  el('rect', { x, y, width: 34, height: 34, rx: 6, class: `die${mine ? '' : ' them'}${used ? ' used' : ''}` }, g);
  const spots = { 1: [[17, 17]], 2: [[9, 9], [25, 25]], 3: [[9, 9], [17, 17], [25, 25]], 4: [[9, 9], [25, 9], [9, 25], [25, 25]],
    5: [[9, 9], [25, 9], [17, 17], [9, 25], [25, 25]], 6: [[9, 8], [25, 8], [9, 17], [25, 17], [9, 26], [25, 26]] }[value];
  for (const [dx, dy] of spots) el('circle', { cx: x + dx, cy: y + dy, r: 3.4, class: `pip${mine ? '' : ' them'}${used ? ' used' : ''}` }, g);
  g.setAttribute('data-die', String(value));
}

// The board with the steps entered so far applied (hits included).
function currentView() {
  const b = app.board;
  const v = { points: b.points.slice(), bar: b.bar.slice(), off: b.off.slice() };
  for (const s of app.partial) applyStep(v, s);
  return v;
}

function applyStep(v, [src, dst]) {
  if (src === 25) v.bar[0] -= 1; else v.points[src - 1] -= 1;
  if (dst === 0) { v.off[0] += 1; return v; }
  if (v.points[dst - 1] === -1) { v.points[dst - 1] = 0; v.bar[1] += 1; }
  v.points[dst - 1] += 1;
  return v;
}

function copyView(v) { return { points: v.points.slice(), bar: v.bar.slice(), off: v.off.slice() }; }

function remainingSteps(play, partial) {
  const rest = play.slice();
  for (const [a, b] of partial) {
    const i = rest.findIndex(([c, d]) => c === a && d === b);
    if (i < 0) return null;
    rest.splice(i, 1);
  }
  return rest;
}

function stepPossible(v, [src, dst]) {
  if (v.bar[0] > 0 && src !== 25) return false;
  if (src === 25 ? v.bar[0] <= 0 : v.points[src - 1] <= 0) return false;
  if (dst === 0) {
    if (v.bar[0] > 0) return false;
    for (let p = 7; p <= 24; p++) if (v.points[p - 1] > 0) return false;
  }
  return true;
}

function moveChoices() {
  const b = app.board;
  if (!b || !b.actions.includes('move') || app.sent) return { sources: new Set(), complete: null };
  const v = currentView();
  const sources = new Set();
  let complete = null;
  for (const play of b.legal) {
    const rest = remainingSteps(play.steps, app.partial);
    if (!rest) continue;
    if (rest.length === 0) complete = play;
    for (const s of rest) if (stepPossible(v, s)) sources.add(s[0]);
  }
  return { sources, complete };
}

function destinationsFrom(src) {
  const out = new Map();
  const start = currentView();
  for (const play of app.board.legal) {
    const rest = remainingSteps(play.steps, app.partial);
    if (!rest) continue;
    const walk = (v, at, left, chain) => {
      left.forEach((s, i) => {
        if (s[0] !== at || !stepPossible(v, s)) return;
        const next = chain.concat([s]);
        const known = out.get(s[1]);
        if (!known || known.length > next.length) out.set(s[1], next);
        if (s[1] !== 0) walk(applyStep(copyView(v), s), s[1], left.filter((_, j) => j !== i), next);
      });
    };
    walk(start, src, rest, []);
  }
  return out;
}

function usedDice() {
  const b = app.board;
  if (!b.dice) return [];
  const dice = b.dice[0] === b.dice[1] ? [b.dice[0], b.dice[0], b.dice[0], b.dice[0]] : b.dice.slice();
  const used = dice.map(() => false);
  for (const [src, dst] of app.partial) {
    const need = dst === 0 ? src : src - dst;
    let i = dice.findIndex((d, j) => !used[j] && d === need);
    if (i < 0 && dst === 0) i = dice.findIndex((d, j) => !used[j] && d > need);
    if (i >= 0) used[i] = true;
  }
  return dice.map((d, j) => ({ value: d, used: used[j] }));
}

function renderBoard() {
  const b = app.board;
  if (!b) return;
  const svg = $('board');
  const layer = svg.dataset.drawn ? $('dynamic') : drawStatic(svg);
  layer.replaceChildren();
  svg.dataset.seq = String(b.seq);
  const v = currentView();
  for (let p = 1; p <= 24; p++) {
    const n = v.points[p - 1];
    if (n) drawStack(layer, p, Math.abs(n), n > 0);
  }
  const barX = (G.bar + G.right) / 2;
  for (let i = 0; i < Math.min(v.bar[0], 4); i++) chequer(layer, barX, G.mid - 40 - i * 2 * G.r, true, i === 3 && v.bar[0] > 4 ? v.bar[0] : 0);
  for (let i = 0; i < Math.min(v.bar[1], 4); i++) chequer(layer, barX, G.mid + 40 + i * 2 * G.r, false, i === 3 && v.bar[1] > 4 ? v.bar[1] : 0);
  for (let i = 0; i < v.off[0]; i++) el('rect', { x: G.tray + 6, y: G.bottom - 11 - i * 11, width: G.trayWidth - 12, height: 9, rx: 2, class: 'chq-me' }, layer);
  for (let i = 0; i < v.off[1]; i++) el('rect', { x: G.tray + 6, y: G.top + 2 + i * 11, width: G.trayWidth - 12, height: 9, rx: 2, class: 'chq-them' }, layer);
  if (v.off[0]) el('text', { x: G.tray + G.trayWidth / 2, y: G.bottom - 18 - v.off[0] * 11, class: 'offtext' }, layer, String(v.off[0]));
  if (v.off[1]) el('text', { x: G.tray + G.trayWidth / 2, y: G.top + 14 + v.off[1] * 11, class: 'offtext' }, layer, String(v.off[1]));
  // cube: centred in the middle, else at its owner's edge; an offered cube shows the value offered
  const cubeY = b.doubled ? G.mid - G.cube / 2 : b.cube_owner === 0 ? G.bottom - G.cube - 4 : b.cube_owner === 1 ? G.top + 4 : G.mid - G.cube / 2;
  el('rect', { x: G.cubeX, y: cubeY, width: G.cube, height: G.cube, rx: 5, class: `cube${b.doubled ? ' offered' : ''}` }, layer);
  const cubeValue = b.doubled ? b.cube * 2 : b.cube_owner < 0 && b.cube === 1 ? 64 : b.cube;
  el('text', { x: G.cubeX + G.cube / 2, y: cubeY + G.cube / 2, class: 'cube-text' }, layer, String(cubeValue));
  // dice in the half of the player on roll
  if (b.dice) {
    const dice = usedDice();
    const mine = b.on_roll === 0;
    const centre = mine ? G.right + 3 * G.point : G.left + 3 * G.point;
    const startX = centre - (dice.length * 40 - 6) / 2;
    dice.forEach((d, i) => drawDie(layer, startX + i * 40, G.mid - 17, d.value, mine, d.used));
  }
  // highlights for entering a move
  const { sources, complete } = moveChoices();
  if (app.selected !== null && !sources.has(app.selected)) app.selected = null;
  app.dests = app.selected !== null ? destinationsFrom(app.selected) : new Map();
  for (const rect of $('hits').children) {
    const p = Number(rect.dataset.point);
    rect.classList.toggle('source', app.selected === null && sources.has(p));
    rect.classList.toggle('selected', app.selected === p);
    rect.classList.toggle('dest', app.dests.has(p));
  }
  renderInfo(complete);
}

function sideName(side) { return app.board.names[side]; }

function statusText() {
  const b = app.board;
  const a = b.actions;
  if (app.closed && app.closed.reason === 'saved') return 'The match was saved: it can be resumed later.';
  if (b.state === 'over') {
    const w = b.winner;
    const text = `${sideName(w)} ${b.player && w === 0 ? 'win' : 'wins'} the match ${b.score[w]}-${b.score[1 - w]}`;
    return b.player && w === 0 ? `You win the match ${b.score[0]}-${b.score[1]}!` : text + '.';
  }
  if (b.state === 'between') {
    const last = [...app.events].reverse().find((e) => e.kind === 'game_end');
    const head = last ? `${last.name} won ${last.points} point${last.points === 1 ? '' : 's'}. ` : '';
    return head + (a.includes('next_game') ? 'Ready for the next game?' : 'Waiting for the next game.');
  }
  const dice = b.dice ? ` ${b.dice[0]}-${b.dice[1]}` : '';
  if (a.includes('move')) return `Your move:${dice}`;
  if (a.includes('roll')) return 'Your turn: roll or double.';
  if (a.includes('take')) return `${sideName(1)} doubles to ${b.cube * 2}: take or pass?`;
  if (a.includes('accept_resign')) return `${sideName(1)} offers to resign: ${['', 'single', 'gammon', 'backgammon'][b.resigned]} (${b.resigned * b.cube} points).`;
  const actor = b.to_act === null ? '' : sideName(b.to_act);
  if (b.doubled) return `${sideName(b.on_roll)} doubles: ${actor} to answer.`;
  if (b.resigned) return `${sideName(1 - b.to_act)} offers to resign: ${actor} to answer.`;
  if (b.player) return `Waiting for ${actor}${b.dice ? ` (rolled${dice})` : ''}.`;
  return `${actor} to play${dice}.`;
}

function renderInfo(complete) {
  const b = app.board;
  $('name-bottom').textContent = b.names[0] + (b.player ? ' (you)' : '');
  $('name-top').textContent = b.names[1];
  $('score-bottom').textContent = String(b.score[0]);
  $('score-top').textContent = String(b.score[1]);
  $('pips-bottom').textContent = `pips ${b.pips[0]}`;
  $('pips-top').textContent = `pips ${b.pips[1]}`;
  $('match-info').textContent = `${b.length ? `${b.length}-point match` : 'unlimited'} · game ${b.game}${b.crawford ? ' · Crawford' : ''}`;
  $('position-id').textContent = b.position_id;
  $('match-id').textContent = b.match_id;
  $('status').textContent = statusText();
  const actions = new Set(b.actions);
  for (const button of document.querySelectorAll('#actions [data-action]')) {
    if (button.id === 'btn-resign') continue;
    button.hidden = !actions.has(button.dataset.action) || !!app.closed;
    button.disabled = app.sent;
  }
  $('resign-box').hidden = !actions.has('resign') || !!app.closed;
  $('btn-resign').disabled = app.sent;
  const moving = actions.has('move') && !app.closed;
  $('board').classList.toggle('moving', moving);
  $('btn-done').hidden = !moving;
  $('btn-done').disabled = !complete || app.sent;
  $('btn-undo').hidden = !moving;
  $('btn-undo').disabled = app.partial.length === 0 || app.sent;
  $('btn-flip').hidden = b.player || !!app.closed;
  $('btn-unwatch').hidden = b.player || !!app.closed;
  $('btn-lobby').hidden = !app.closed;
  $('chart-who').textContent = `(${b.names[0]})`;
  document.body.dataset.matchState = app.closed ? 'closed' : b.state;
}

// -- entering a move -----------------------------------------------------------------------------------------

function pointAt(clientX, clientY) {
  const target = document.elementFromPoint(clientX, clientY);
  return target && target.dataset && target.dataset.point !== undefined ? Number(target.dataset.point) : null;
}

function take(dest) {
  const steps = app.dests.get(dest);
  if (!steps) return false;
  app.partial = app.partial.concat(steps);
  app.selected = null;
  renderBoard();
  return true;
}

let dragFrom = null;

function onPointerDown(e) {
  const p = pointAt(e.clientX, e.clientY);
  if (p === null || !app.board) return;
  const { sources } = moveChoices();
  dragFrom = null;
  if (app.selected !== null && app.dests.has(p)) { take(p); return; }
  if (sources.has(p)) {
    app.selected = app.selected === p ? null : p;
    dragFrom = app.selected;
    renderBoard();
  }
}

function onPointerUp(e) {
  if (dragFrom === null) return;
  const p = pointAt(e.clientX, e.clientY);
  if (p !== null && p !== dragFrom && app.dests.has(p)) take(p);
  dragFrom = null;
}

function done() {
  const { complete } = moveChoices();
  if (!complete) return;
  app.sent = true;
  send({ type: 'move', steps: complete.steps });
  renderBoard();
}

// -- move list, kibitz, chart --------------------------------------------------------------------------------

const CUBE_WORDS = { double: 'doubles to', beaver: 'beavers to' };

function addMoveListEntry(e) {
  let text = null;
  let cls = '';
  switch (e.kind) {
    case 'game_start': text = `Game ${e.game}: ${e.name} opens with ${e.dice[0]}-${e.dice[1]}`; cls = 'game'; break;
    case 'move': text = `${e.name} ${diceText(e.dice)}: ${e.text || '(no move)'}`; break;
    case 'double': case 'beaver': text = `${e.name} ${CUBE_WORDS[e.kind]} ${e.cube}`; break;
    case 'take': text = `${e.name} takes`; break;
    case 'drop': text = `${e.name} passes`; break;
    case 'resign': text = `${e.name} offers to resign (${['', 'single', 'gammon', 'backgammon'][e.level]})`; break;
    case 'accept_resign': text = `${e.name} accepts the resignation`; break;
    case 'reject_resign': text = `${e.name} rejects the resignation`; break;
    case 'game_end': text = `${e.name} wins ${e.points} point${e.points === 1 ? '' : 's'}: ${scoreText(e)}`; cls = 'game'; break;
    case 'match_end': text = `${e.name} wins the match ${scoreText(e)}`; cls = 'game'; break;
    default: return;
  }
  const li = html('li', text, cls);
  if (e.kind === 'move') li.dataset.key = `${e.game}:${e.index}`;
  $('movelist').append(li);
  li.scrollIntoView({ block: 'nearest' });
  const k = app.kibitzes.get(`${e.game}:${e.index}`);
  if (k) markMove(k);
}

function scoreText(e) { // the score after a game, the winner's first
  const w = e.player;
  return `${e.score[w]}-${e.score[1 - w]}`;
}

function diceText(dice) { return `${Math.max(...dice)}${Math.min(...dice)}`; }

function markMove(k) {
  const li = document.querySelector(`#movelist li[data-key="${k.game}:${k.index}"]`);
  if (!li) return;
  li.classList.toggle('blunder', k.equity_lost >= 0.08);
  li.classList.toggle('error', k.equity_lost >= 0.02 && k.equity_lost < 0.08);
  li.title = `best ${k.best} · lost ${k.equity_lost.toFixed(3)}`;
}

function pct(x) { return `${(100 * x).toFixed(1)}%`; }

function renderKibitz(k) {
  const lost = k.equity_lost >= 0.0005 ? `best ${k.best} (lost ${k.equity_lost.toFixed(3)})` : 'the best move';
  const [w, wg] = k.probs;
  $('kibitz').textContent = `${k.name} ${diceText(k.dice)}: ${k.played}: ${lost}. ${k.name} now wins ${pct(w)} (gammon ${pct(wg)}).`;
}

function renderChart() {
  const svg = $('chart');
  svg.replaceChildren();
  el('line', { x1: 0, y1: 50, x2: 300, y2: 50, class: 'chart-mid' }, svg);
  const b = app.board;
  const list = [...app.kibitzes.values()].sort((a, c) => a.game - c.game || a.index - c.index);
  if (!list.length || !b) return;
  const seat = b.seats[0];
  const value = (k) => {
    const v = k.mwc === null ? k.win : k.mwc;
    return seat === 0 ? v : 1 - v;
  };
  const step = 300 / Math.max(1, list.length - 1);
  let game = list[0].game;
  const points = list.map((k, i) => {
    if (k.game !== game) {
      game = k.game;
      el('line', { x1: i * step, y1: 0, x2: i * step, y2: 100, class: 'chart-game' }, svg);
    }
    return `${(i * step).toFixed(1)},${(100 - 100 * value(k)).toFixed(1)}`;
  });
  el('polyline', { points: points.join(' '), class: 'chart-line' }, svg);
}

// -- wiring -----------------------------------------------------------------------------------------------------

function init() {
  $('login-form').addEventListener('submit', (e) => {
    e.preventDefault();
    send({ type: 'login', name: $('login-name').value.trim(), password: $('login-password').value });
  });
  $('btn-register').addEventListener('click', () => {
    send({ type: 'register', name: $('login-name').value.trim(), password: $('login-password').value });
  });
  $('btn-logout').addEventListener('click', () => send({ type: 'logout' }));
  $('ready').addEventListener('change', (e) => send({ type: 'ready', on: e.target.checked }));
  for (const button of document.querySelectorAll('#actions [data-action]')) {
    button.addEventListener('click', () => {
      const action = button.dataset.action;
      if (action === 'resign') send({ type: 'resign', level: $('resign-level').value });
      else send({ type: action });
      if (action !== 'leave') { app.sent = true; renderBoard(); }
    });
  }
  $('btn-done').addEventListener('click', done);
  $('btn-undo').addEventListener('click', () => { app.partial = []; app.selected = null; renderBoard(); });
  $('btn-flip').addEventListener('click', () => {
    if (app.board) send({ type: 'watch', match: app.board.match, seat: app.board.seats[1] });
  });
  $('btn-unwatch').addEventListener('click', () => { send({ type: 'unwatch' }); showLobbyOnly(); });
  $('btn-lobby').addEventListener('click', showLobbyOnly);
  $('chat-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const text = $('chat-text').value.trim();
    if (!text) return;
    send({ type: 'chat', text, scope: $('chat-scope').value });
    $('chat-text').value = '';
  });
  const svg = $('board');
  svg.addEventListener('pointerdown', onPointerDown);
  svg.addEventListener('pointerup', onPointerUp);
  connect();
}

document.addEventListener('DOMContentLoaded', init);
