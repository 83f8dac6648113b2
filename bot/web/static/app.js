// gammond web client: plain JavaScript, no build step. Speaks docs/websocket-protocol.md (version 1).
// The server sends every board with the legal plays of the player to move; this page only lets those be
// entered (click a chequer, then where it goes, drag it, or type the play) and sends the whole play.
'use strict';

const PROTOCOL_VERSION = 1;
const SVGNS = 'http://www.w3.org/2000/svg';

// Board geometry (viewBox 650 x 490). Points are 40 wide; the bottom player moves 24 -> 1 into the bottom
// right quarter; the bar is in the middle, the tray (borne-off chequers) on the right, the cube on the left.
const G = {
  width: 650, height: 490, top: 16, bottom: 474, mid: 245, point: 40, length: 190, r: 18,
  left: 55, bar: 295, right: 335, tray: 585, trayWidth: 55, cubeX: 7, cube: 36,
};
const STEP_MS = 320; // one chequer's flight when a move is animated
const LEVELS = ['', 'single', 'gammon', 'backgammon'];

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
  cubes: new Map(), // "game:index:action" -> cube_kibitz
  invitations: new Map(), // inviter -> length
  pendingInvite: null, // {name, length} while an invitation of ours waits for an answer
  wasLoggedIn: false, // logged in when the connection was lost: say so if no saved login brings us back
  partial: [], // steps entered so far, one die each
  selected: null, // source point picked
  dests: new Map(), // destination point -> steps to get there
  sent: false, // a request for this board is on its way
  lastMove: null, // {side, steps (bottom numbering), dice, text, name, game, index}: marked on the board
  movesSinceBoard: [], // move events since the last board (the animation plays them)
  animating: false,
  animationToken: 0,
  playsSent: 0,
  settings: { autocommit: false, animate: true },
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

function reducedMotion() {
  return window.matchMedia && window.matchMedia('(prefers-reduced-motion: reduce)').matches;
}

// -- settings (kept in this browser) -------------------------------------------------------------------------

function loadSettings() {
  try {
    Object.assign(app.settings, JSON.parse(localStorage.getItem('gammond.settings') || '{}'));
  } catch { /* a broken entry: the defaults */ }
  $('set-autocommit').checked = !!app.settings.autocommit;
  $('set-animate').checked = app.settings.animate !== false;
}

function saveSettings() {
  app.settings.autocommit = $('set-autocommit').checked;
  app.settings.animate = $('set-animate').checked;
  try { localStorage.setItem('gammond.settings', JSON.stringify(app.settings)); } catch { /* private mode */ }
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
    if (app.me) app.wasLoggedIn = true;
    app.me = null;
    setTimeout(connect, app.reconnectDelay);
    app.reconnectDelay = Math.min(app.reconnectDelay * 2, 10000);
  };
}

// The saved login of logged_in: kept in this tab's sessionStorage (gone with the tab; another tab, which
// would take the account over, does not see it), sent only to this server in a resume; logging out forgets
// it here and ends it at the server.
function savedLogin() {
  try {
    const saved = JSON.parse(sessionStorage.getItem('gammond.login') || 'null');
    return saved && typeof saved.name === 'string' && typeof saved.token === 'string' ? saved : null;
  } catch { return null; }
}

function saveLogin(saved) {
  try {
    if (saved) sessionStorage.setItem('gammond.login', JSON.stringify(saved));
    else sessionStorage.removeItem('gammond.login');
  } catch { /* storage refused: no saved login */ }
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
  if (isError) p.setAttribute('role', 'alert');
  $('messages').prepend(p);
  setTimeout(() => p.remove(), isError ? 9000 : 5000);
  while ($('messages').children.length > 3) $('messages').lastChild.remove();
}

// -- messages from the server --------------------------------------------------------------------------------

const HANDLERS = {
  welcome(msg) {
    $('conn').textContent = `connected to ${msg.server}`;
    setPhase(app.me ? 'user' : 'guest');
    const saved = savedLogin();
    if (!app.me && saved) send({ type: 'resume', name: saved.name, token: saved.token }); // back in after a restart
    else if (!app.me && app.wasLoggedIn) flash('The connection was lost and this browser keeps no saved login: log in again.', true);
    app.wasLoggedIn = false;
  },
  lobby(msg) { app.lobby = msg; renderLobby(); },
  logged_in(msg) {
    if (msg.token) saveLogin({ name: msg.name, token: msg.token });
    app.me = msg;
    setPhase('user');
    $('me-name').textContent = msg.name;
    $('me-rating').textContent = `${msg.rating.toFixed(1)} · ${msg.experience} exp`;
    $('ready').checked = msg.ready;
    renderLobby();
  },
  logged_out(msg) {
    app.me = null;
    app.pendingInvite = null;
    setPhase('guest');
    flash(`Logged out (${msg.reason}).`);
    if (app.board && app.board.player) showLobbyOnly();
    renderLobby();
    renderInvitations();
  },
  error(msg) {
    app.sent = false;
    if (msg.request === 'resume') saveLogin(null); // ended (logged out elsewhere, unused for long): ask again
    flash(msg.message, true);
    if (msg.request === 'invite') { app.pendingInvite = null; renderInvitations(); }
    if (msg.request === 'move') { app.partial = []; renderBoard(); }
    if (msg.request === 'ready') renderLobby();
  },
  notice(msg) {
    if (app.pendingInvite && /^You invited /.test(msg.text)) return; // the pending line says it
    flash(msg.text);
  },
  invitation(msg) {
    app.invitations.set(msg.inviter, msg.length);
    const pending = app.pendingInvite;
    if (pending && pending.name === msg.inviter) { // the answer to ours: another invitation
      app.pendingInvite = null;
      if (msg.length === null) flash(`${msg.inviter} wants to resume your saved match first: press Resume to play it on.`);
    }
    renderInvitations();
  },
  chat(msg) {
    const li = html('li');
    li.append(html('strong', `${msg.sender}`), ` ${msg.scope === 'say' ? '' : `(${msg.scope}) `}${msg.text}`);
    const box = $('chat');
    box.append(li);
    box.scrollTop = box.scrollHeight; // inside its own box: the page never scrolls
  },
  board(msg) {
    if (msg.match !== app.matchId) startMatchView(msg.match);
    const previous = app.board;
    const fresh = !previous || previous.seq !== msg.seq || previous.seats[0] !== msg.seats[0];
    if (previous && previous.seats[0] !== msg.seats[0]) { app.lastMove = null; app.movesSinceBoard = []; }
    app.board = msg;
    if (fresh) {
      app.partial = [];
      app.selected = null;
      app.sent = false;
    }
    if (msg.player) { app.invitations.clear(); app.pendingInvite = null; }
    if (!previous) renderChart();
    const moves = app.movesSinceBoard;
    app.movesSinceBoard = [];
    renderInvitations();
    if (!(msg.seq in app.boardTimes)) app.boardTimes[msg.seq] = Date.now();
    if (previous && fresh && moves.length && previous.seats[0] === msg.seats[0]) animateMoves(previous, moves);
    else renderBoard();
  },
  event(msg) {
    if (msg.match !== app.matchId) return;
    app.events.push(msg);
    addMoveListEntry(msg);
    if (msg.kind === 'move' && app.board) {
      const side = msg.player === app.board.seats[0] ? 0 : 1;
      const mine = app.board.player && side === 0;
      const lastMove = { side, steps: (msg.steps || []).map((s) => boardStep(side, s)), dice: msg.dice, text: msg.text || '(no move)', name: msg.name, game: msg.game, index: msg.index, mine };
      if (!mine) app.lastMove = lastMove; // your own play needs no marking
      else if (app.lastMove && app.lastMove.game === msg.game) app.lastMove.stale = true;
      if (!mine && msg.steps && msg.steps.length) app.movesSinceBoard.push(lastMove);
    }
    if (msg.kind === 'game_start') app.lastMove = null;
  },
  kibitz(msg) {
    if (msg.match !== app.matchId) return;
    const atEnd = moveListAtEnd();
    app.kibitzes.set(`${msg.game}:${msg.index}`, msg);
    markMove(msg);
    renderChart();
    renderKibitz(msg);
    if (atEnd) scrollMoveList();
  },
  cube_kibitz(msg) {
    if (msg.match !== app.matchId) return;
    const atEnd = moveListAtEnd();
    app.cubes.set(`${msg.game}:${msg.index}:${msg.action}`, msg);
    markCube(msg);
    renderCubeKibitz(msg);
    if (atEnd) scrollMoveList();
  },
  analysis(msg) {
    if (msg.match !== app.matchId) return;
    const atEnd = moveListAtEnd();
    for (const k of msg.kibitzes) { app.kibitzes.set(`${k.game}:${k.index}`, k); markMove(k); }
    for (const c of msg.cubes || []) { app.cubes.set(`${c.game}:${c.index}:${c.action}`, c); markCube(c); }
    renderChart();
    if (msg.kibitzes.length) renderKibitz(msg.kibitzes[msg.kibitzes.length - 1]);
    const cubes = msg.cubes || [];
    if (cubes.length) renderCubeKibitz(cubes[cubes.length - 1]);
    if (atEnd) scrollMoveList();
  },
  match_closed(msg) {
    if (msg.match !== app.matchId) return;
    app.closed = msg;
    renderBoard();
    scrollMoveList(); // the last rows (the result) in view
  },
};

// -- lobby ----------------------------------------------------------------------------------------------------

function eyeIcon() { // the watchers' icon, drawn: no emoji font needed
  const svg = el('svg', { viewBox: '0 0 16 10', class: 'eye', 'aria-hidden': 'true' });
  el('path', { d: 'M1 5 Q8 -2.5 15 5 Q8 12.5 1 5 Z' }, svg);
  el('circle', { cx: 8, cy: 5, r: 2.3 }, svg);
  return svg;
}

function acceptsText(a) {
  const span = a.min_length === a.max_length ? `${a.min_length}` : `${a.min_length}–${a.max_length}`;
  return `plays ${span} pt${a.unlimited ? ', unlimited' : ''}`;
}

function lengthAccepted(a, length) {
  if (!a) return true;
  if (length === 0) return a.unlimited;
  return length >= a.min_length && length <= a.max_length;
}

function inviteLength() {
  return Math.max(0, Math.min(99, parseInt($('invite-length').value || '1', 10) || 0));
}

function renderLobby() {
  const lobby = app.lobby;
  if (!lobby) return;
  const me = app.me ? app.me.name : null;
  const mine = me && lobby.players.find((p) => p.name === me);
  if (mine) { // the rating after a match reaches the header with the lobby
    Object.assign(app.me, { rating: mine.rating, experience: mine.experience });
    $('me-rating').textContent = `${mine.rating.toFixed(1)} · ${mine.experience} exp`;
  }
  const players = $('players').tBodies[0];
  players.replaceChildren();
  for (const p of lobby.players) {
    const tr = players.insertRow();
    tr.dataset.player = p.name;
    const name = tr.insertCell();
    name.append(html('span', p.name));
    if (p.bot) name.append(html('span', 'bot', 'tag'));
    if (p.accepts) name.append(html('span', acceptsText(p.accepts), 'tag accepts'));
    if (p.web) name.append(html('span', 'web', 'tag'));
    if (p.away) name.append(html('span', 'away', 'tag'));
    name.append(' ', html('span', p.rating.toFixed(0), 'muted small rating'));
    const doing = p.playing ? `playing ${p.playing}` : p.watching ? `watching ${p.watching}` : p.ready ? 'ready' : '';
    if (doing) name.append(html('div', doing, 'doing small'));
    const cell = tr.insertCell();
    if (me && p.name === me) $('ready').checked = p.ready; // the checkbox follows the list, never the reverse
    if (me && p.name !== me && p.ready && !p.playing) {
      const b = html('button', 'Invite');
      b.className = 'invite';
      b.setAttribute('aria-label', `invite ${p.name}`);
      b.onclick = () => invite(p);
      cell.append(b);
    }
  }
  const matches = $('matches').tBodies[0];
  matches.replaceChildren();
  for (const m of lobby.matches) {
    const tr = matches.insertRow();
    tr.dataset.match = m.id;
    tr.insertCell().textContent = `${m.players[0]} – ${m.players[1]}`;
    const score = tr.insertCell();
    score.className = 'score';
    score.textContent = `${m.score[0]}-${m.score[1]} of ${m.length || '∞'}`;
    const watchers = tr.insertCell();
    if (m.watchers) {
      watchers.append(eyeIcon(), ` ${m.watchers}`);
      watchers.setAttribute('aria-label', `${m.watchers} watching`);
      watchers.title = `${m.watchers} watching`;
    }
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

function invite(player) {
  const length = inviteLength();
  if (!lengthAccepted(player.accepts, length)) {
    flash(`${player.name} does not play ${length ? `${length}-point matches` : 'unlimited matches'} (it ${acceptsText(player.accepts)}).`, true);
    return;
  }
  app.pendingInvite = { name: player.name, length };
  renderInvitations();
  send({ type: 'invite', name: player.name, length });
}

function renderInvitations() {
  const box = $('invitations');
  box.replaceChildren();
  for (const [inviter, length] of app.invitations) {
    const p = html('p', `${inviter} ${length === null ? 'wants to resume your saved match' : `invites you to ${length === 0 ? 'an unlimited match' : `a ${length}-point match`}`}. `);
    const b = html('button', length === null ? 'Resume' : 'Accept');
    b.className = 'primary';
    b.onclick = () => { app.invitations.delete(inviter); renderInvitations(); send({ type: 'accept_invitation', name: inviter }); };
    p.append(b);
    box.append(p);
  }
  if (app.pendingInvite) {
    const { name, length } = app.pendingInvite;
    box.append(html('p', `Invited ${name} to ${length ? `a ${length}-point match` : 'an unlimited match'}: waiting for the answer…`, 'pending'));
  }
  box.hidden = box.children.length === 0;
}

// -- the match view ------------------------------------------------------------------------------------------

function resetMatchView() {
  app.closed = null;
  app.events = [];
  app.kibitzes = new Map();
  app.cubes = new Map();
  app.partial = [];
  app.selected = null;
  app.lastMove = null;
  app.movesSinceBoard = [];
  app.animationToken += 1;
  app.animating = false;
  const list = $('movelist');
  for (const body of [...list.tBodies]) body.remove();
  app.moveRows = null;
  for (const id of ['kibitz', 'cube-kibitz', 'lastmove', 'status', 'board-text']) $(id).textContent = '';
  $('board-text').hidden = true;
  $('btn-describe').setAttribute('aria-expanded', 'false');
  $('chat').replaceChildren();
  const svg = $('board');
  svg.replaceChildren();
  delete svg.dataset.drawn;
  delete svg.dataset.seq;
}

function startMatchView(matchId) {
  closeViewer(); // a live match takes the place of an archived one
  resetMatchView();
  app.matchId = matchId;
  $('match').hidden = false;
  document.body.classList.add('in-match');
  window.scrollTo(0, 0); // the board starts in view; nothing scrolls the page afterwards
  renderChart();
}

function showLobbyOnly() {
  resetMatchView();
  app.matchId = null;
  app.board = null;
  $('match').hidden = true;
  $('move-form').hidden = true;
  document.body.classList.remove('in-match');
  delete document.body.dataset.matchState;
  if (document.readyState !== 'loading') loadArchive(); // a match just over may be in the archive now
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
  const defs = el('defs', {}, svg);
  const marker = el('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 7, refY: 5, markerWidth: 4, markerHeight: 4, orient: 'auto-start-reverse' }, defs);
  el('path', { d: 'M0 0 L10 5 L0 10 Z', class: 'arrow-head' }, marker);
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
  el('g', { id: 'marks' }, svg);
  el('g', { id: 'dynamic' }, svg);
  const hits = el('g', { id: 'hits' }, svg);
  for (let p = 1; p <= 24; p++) {
    const top = isTop(p);
    el('rect', { x: pointX(p), y: top ? G.top : G.bottom - G.length, width: G.point, height: G.length, class: 'hit', 'data-point': p }, hits);
  }
  el('rect', { x: G.bar, y: G.top, width: G.right - G.bar, height: G.bottom - G.top, class: 'hit', 'data-point': 25 }, hits);
  el('rect', { x: G.tray, y: G.mid, width: G.trayWidth, height: G.bottom - G.mid, class: 'hit', 'data-point': 0 }, hits);
  el('g', { id: 'flying' }, svg);
  svg.dataset.drawn = '1';
}

function chequer(parent, cx, cy, mine, count) {
  el('circle', { cx, cy, r: G.r - 1, class: mine ? 'chq-me' : 'chq-them' }, parent);
  if (count) el('text', { x: cx, y: cy, class: `chq-count ${mine ? 'me' : 'them'}` }, parent, String(count));
}

function stackY(p, i) { // centre of the i-th chequer (from the edge) on point p
  const slot = Math.min(i, 4);
  return isTop(p) ? G.top + G.r + slot * 2 * G.r : G.bottom - G.r - slot * 2 * G.r;
}

function drawStack(parent, p, n, mine) {
  const x = pointX(p) + G.point / 2;
  const shown = Math.min(n, 5);
  for (let i = 0; i < shown; i++) chequer(parent, x, stackY(p, i), mine, i === shown - 1 && n > 5 ? n : 0);
}

const BAR_X = (G.bar + G.right) / 2;
function barY(side, i) { return side === 0 ? G.mid - 40 - Math.min(i, 3) * 2 * G.r : G.mid + 40 + Math.min(i, 3) * 2 * G.r; }
function offY(side, i) { return side === 0 ? G.bottom - 6 - i * 11 : G.top + 7 + i * 11; }

// Where the n-th chequer of a side sits (n from 0) on a board point (25 = that side's bar, 0 = off).
function slotXY(side, point, n) {
  if (point === 25) return [BAR_X, barY(side, n)];
  if (point === 0) return [G.tray + G.trayWidth / 2, offY(side, n)];
  return [pointX(point) + G.point / 2, stackY(point, n)];
}

function countAt(v, side, point) {
  if (point === 25) return v.bar[side];
  if (point === 0) return v.off[side];
  const n = v.points[point - 1];
  return side === 0 ? Math.max(n, 0) : Math.max(-n, 0);
}

function drawView(layer, v) {
  for (let p = 1; p <= 24; p++) {
    const n = v.points[p - 1];
    if (n) drawStack(layer, p, Math.abs(n), n > 0);
  }
  for (let i = 0; i < Math.min(v.bar[0], 4); i++) chequer(layer, BAR_X, barY(0, i), true, i === 3 && v.bar[0] > 4 ? v.bar[0] : 0);
  for (let i = 0; i < Math.min(v.bar[1], 4); i++) chequer(layer, BAR_X, barY(1, i), false, i === 3 && v.bar[1] > 4 ? v.bar[1] : 0);
  for (let i = 0; i < v.off[0]; i++) el('rect', { x: G.tray + 6, y: G.bottom - 11 - i * 11, width: G.trayWidth - 12, height: 9, rx: 2, class: 'chq-me' }, layer);
  for (let i = 0; i < v.off[1]; i++) el('rect', { x: G.tray + 6, y: G.top + 2 + i * 11, width: G.trayWidth - 12, height: 9, rx: 2, class: 'chq-them' }, layer);
  if (v.off[0]) el('text', { x: G.tray + G.trayWidth / 2, y: G.bottom - 18 - v.off[0] * 11, class: 'offtext' }, layer, String(v.off[0]));
  if (v.off[1]) el('text', { x: G.tray + G.trayWidth / 2, y: G.top + 14 + v.off[1] * 11, class: 'offtext' }, layer, String(v.off[1]));
}

function drawDie(parent, x, y, value, mine, cls = '') {
  const g = el('g', { 'data-die': String(value) }, parent);
  el('rect', { x, y, width: 34, height: 34, rx: 6, class: `die${mine ? '' : ' them'}${cls ? ` ${cls}` : ''}` }, g);
  const spots = { 1: [[17, 17]], 2: [[9, 9], [25, 25]], 3: [[9, 9], [17, 17], [25, 25]], 4: [[9, 9], [25, 9], [9, 25], [25, 25]],
    5: [[9, 9], [25, 9], [17, 17], [9, 25], [25, 25]], 6: [[9, 8], [25, 8], [9, 17], [25, 17], [9, 26], [25, 26]] }[value];
  for (const [dx, dy] of spots) el('circle', { cx: x + dx, cy: y + dy, r: 3.4, class: `pip${mine ? '' : ' them'}` }, g);
  if (cls.includes('used')) g.style.opacity = '.35';
  return g;
}

// -- positions: the board's numbers as a view, and steps applied to it ---------------------------------------

function boardView(b) { return { points: b.points.slice(), bar: b.bar.slice(), off: b.off.slice() }; }
function copyView(v) { return { points: v.points.slice(), bar: v.bar.slice(), off: v.off.slice() }; }
function sameView(a, b) {
  return a.points.every((n, i) => n === b.points[i]) && a.bar[0] === b.bar[0] && a.bar[1] === b.bar[1] && a.off[0] === b.off[0] && a.off[1] === b.off[1];
}

// A step in the mover's numbering as board points (bottom numbering; 25 = the mover's bar, 0 = off).
function boardStep(side, [src, dst]) {
  if (side === 0) return [src, dst];
  return [src === 25 ? 25 : 25 - src, dst === 0 ? 0 : 25 - dst];
}

// Move one chequer of ``side`` from board point src to dst (board numbering), hitting a blot there.
function applyBoardStep(v, side, [src, dst]) {
  const sign = side === 0 ? 1 : -1;
  if (src === 25) v.bar[side] -= 1; else v.points[src - 1] -= sign;
  if (dst === 0) { v.off[side] += 1; return v; }
  if (v.points[dst - 1] === -sign) { v.points[dst - 1] = 0; v.bar[1 - side] += 1; }
  v.points[dst - 1] += sign;
  return v;
}

function applyStep(v, s) { return applyBoardStep(v, 0, s); }

// The board with the steps entered so far applied (hits included).
function currentView() {
  const v = boardView(app.board);
  for (const s of app.partial) applyStep(v, s);
  return v;
}

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
  if (!b || !b.actions.includes('move') || app.sent || app.animating || app.closed) return { sources: new Set(), complete: null };
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

// -- the opponent's last move: animated, then marked -----------------------------------------------------------

function sleep(ms) { return new Promise((resolve) => setTimeout(resolve, ms)); }

async function animateMoves(previous, moves) {
  const token = ++app.animationToken;
  const target = boardView(app.board);
  let v = boardView(previous);
  const frames = [];
  for (const m of moves) {
    for (const s of m.steps) {
      frames.push({ before: copyView(v), side: m.side, step: s });
      applyBoardStep(v, m.side, s);
    }
  }
  // only when the steps lead from the board before to this one (no board was missed)
  const fits = sameView(v, target);
  if (!fits || !app.settings.animate || reducedMotion() || document.hidden) { renderBoard(); return; }
  app.animating = true;
  try {
    for (const f of frames) {
      if (token !== app.animationToken) return;
      const [src, dst] = f.step;
      const lifted = copyView(f.before);
      const from = slotXY(f.side, src, countAt(lifted, f.side, src) - 1);
      if (src === 25) lifted.bar[f.side] -= 1; else lifted.points[src - 1] -= f.side === 0 ? 1 : -1;
      const after = applyBoardStep(copyView(f.before), f.side, f.step);
      const to = slotXY(f.side, dst, countAt(after, f.side, dst) - 1);
      renderBoard(lifted);
      const fly = $('flying');
      fly.replaceChildren();
      const g = el('g', { class: 'mover' }, fly);
      chequer(g, from[0], from[1], f.side === 0, 0);
      const anim = g.animate([{ transform: 'translate(0px, 0px)' }, { transform: `translate(${to[0] - from[0]}px, ${to[1] - from[1]}px)` }], { duration: STEP_MS, easing: 'ease-in-out', fill: 'forwards' });
      await Promise.race([anim.finished, sleep(STEP_MS + 200)]);
      fly.replaceChildren();
    }
  } finally {
    if (token === app.animationToken) {
      app.animating = false;
      renderBoard();
    }
  }
}

function drawLastMove(marks, layer, b) {
  const m = app.lastMove;
  if (!m || m.stale) return;
  const fromPts = new Set();
  const toPts = new Set();
  for (const [src, dst] of m.steps) { fromPts.add(src); toPts.add(dst); }
  for (const p of fromPts) if (!toPts.has(p)) markPoint(marks, p, 'last-from', m.side);
  for (const p of toPts) markPoint(marks, p, 'last-to', m.side);
  // one arrow per step, from where the chequer left to where it landed
  for (const [src, dst] of m.steps) { // bowed towards the middle, so that steps along one row stay apart
    const a = pointCentre(src, m.side);
    const z = pointCentre(dst, m.side);
    const cx = (a[0] + z[0]) / 2;
    const cy = (a[1] + z[1]) / 2 + (G.mid - (a[1] + z[1]) / 2) * 0.45 + (a[1] === z[1] ? (a[1] < G.mid ? 40 : -40) : 0);
    el('path', { d: `M${a[0]},${a[1]} Q${cx},${cy} ${z[0]},${z[1]}`, class: 'last-arrow', 'marker-end': 'url(#arrow)' }, layer);
  }
  // the dice it played stay on its half of the board until the next roll covers them
  const theirHalf = m.side === 0 ? G.right + 3 * G.point : G.left + 3 * G.point;
  const rolledThere = b.dice && b.on_roll === m.side;
  if (m.dice && !rolledThere) {
    const dice = m.dice;
    const startX = theirHalf - (2 * 40 - 6) / 2;
    const g = el('g', { class: 'played-dice', 'aria-hidden': 'true' }, layer);
    dice.forEach((d, i) => drawDie(g, startX + i * 40, G.mid - 17, d, m.side === 0, 'played'));
    el('text', { x: theirHalf, y: G.mid + 32, class: 'dice-label' }, g, `${m.name} played`);
  }
}

function pointCentre(p, side) {
  if (p === 25) return [BAR_X, side === 0 ? G.mid - 40 : G.mid + 40];
  if (p === 0) return [G.tray + G.trayWidth / 2, side === 0 ? G.bottom - 40 : G.top + 40];
  return [pointX(p) + G.point / 2, isTop(p) ? G.top + 60 : G.bottom - 60];
}

function markPoint(marks, p, cls, side) {
  let node;
  if (p === 25) node = el('rect', { x: G.bar + 2, y: side === 0 ? G.top + 2 : G.mid + 2, width: G.right - G.bar - 4, height: G.mid - G.top - 4, rx: 4, class: cls }, marks);
  else if (p === 0) node = el('rect', { x: G.tray + 2, y: side === 0 ? G.mid + 2 : G.top + 2, width: G.trayWidth - 4, height: G.mid - G.top - 4, rx: 4, class: cls }, marks);
  else {
    const x = pointX(p);
    const top = isTop(p);
    const base = top ? G.top : G.bottom;
    const tip = top ? G.top + G.length : G.bottom - G.length;
    node = el('polygon', { points: `${x + 1.5},${base} ${x + G.point - 1.5},${base} ${x + G.point / 2},${tip}`, class: cls }, marks);
  }
  node.dataset.point = String(p);
  return node;
}

// -- drawing the board -----------------------------------------------------------------------------------------

function renderBoard(view = null) {
  const b = app.board;
  if (!b) return;
  const svg = $('board');
  if (!svg.dataset.drawn) drawStatic(svg);
  const layer = $('dynamic');
  const marks = $('marks');
  layer.replaceChildren();
  marks.replaceChildren();
  svg.dataset.seq = String(b.seq);
  const animating = view !== null;
  const v = view || currentView();
  if (!animating) drawLastMove(marks, layer, b);
  drawView(layer, v);
  // cube: centred in the middle, else at its owner's edge; an offered cube shows the value offered
  const cubeY = b.doubled ? G.mid - G.cube / 2 : b.cube_owner === 0 ? G.bottom - G.cube - 4 : b.cube_owner === 1 ? G.top + 4 : G.mid - G.cube / 2;
  el('rect', { x: G.cubeX, y: cubeY, width: G.cube, height: G.cube, rx: 5, class: `cube${b.doubled ? ' offered' : ''}` }, layer);
  const cubeValue = b.doubled ? b.cube * 2 : b.cube_owner < 0 && b.cube === 1 ? 64 : b.cube;
  el('text', { x: G.cubeX + G.cube / 2, y: cubeY + G.cube / 2, class: 'cube-text' }, layer, String(cubeValue));
  // dice in the half of the player on roll
  if (b.dice && !animating) {
    const dice = usedDice();
    const mine = b.on_roll === 0;
    const centre = mine ? G.right + 3 * G.point : G.left + 3 * G.point;
    const startX = centre - (dice.length * 40 - 6) / 2;
    dice.forEach((d, i) => drawDie(layer, startX + i * 40, G.mid - 17, d.value, mine, d.used ? 'used' : ''));
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
  svg.setAttribute('aria-label', boardSummary());
  renderInfo(complete);
  if (!$('board-text').hidden) describeBoard();
}

function sideName(side) { return app.board.names[side]; }

function gameInfo(b) {
  const length = b.length ? `${b.length}-point match` : 'unlimited';
  if (b.state === 'between') return `${length} · game ${b.game} over · next: game ${b.game + 1}${b.crawford ? ' (Crawford)' : ''}`;
  if (b.state === 'over') return `${length} · over after ${b.game} game${b.game === 1 ? '' : 's'}`;
  return `${length} · game ${b.game}${b.crawford ? ' · Crawford' : ''}`;
}

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
  if (a.includes('move')) return app.animating ? `${sideName(1)} moves…` : `Your move:${dice}`;
  if (a.includes('roll')) return a.includes('double') ? 'Your turn: roll or double.' : 'Your turn: roll.';
  if (a.includes('take')) return `${sideName(1)} doubles to ${b.cube * 2}: take or pass?`;
  if (a.includes('accept_resign')) return `${sideName(1)} offers to resign: ${LEVELS[b.resigned]} (${b.resigned * b.cube} points).`;
  const actor = b.to_act === null ? '' : sideName(b.to_act);
  if (b.doubled) return `${sideName(b.on_roll)} doubles: ${actor} to answer.`;
  if (b.resigned) return `${sideName(1 - b.to_act)} offers to resign: ${actor} to answer.`;
  if (b.player) return `Waiting for ${actor}${b.dice ? ` (rolled${dice})` : ''}.`;
  return `${actor} to play${dice}.`;
}

function cubeText(b) {
  if (b.cube_owner < 0) return b.cube === 1 ? 'cube centred' : `cube ${b.cube} centred`;
  return `cube ${b.cube}: ${sideName(b.cube_owner)}`;
}

function renderInfo(complete) {
  const b = app.board;
  $('name-bottom').textContent = b.names[0];
  $('chip-bottom').title = b.player ? `${b.names[0]} (you)` : b.names[0];
  $('name-top').textContent = b.names[1];
  $('score-bottom').textContent = String(b.score[0]);
  $('score-top').textContent = String(b.score[1]);
  $('score-bottom').setAttribute('aria-label', `score ${b.score[0]}`);
  $('score-top').setAttribute('aria-label', `score ${b.score[1]}`);
  for (const [id, n] of [['pips-bottom', b.pips[0]], ['pips-top', b.pips[1]]]) {
    if ($(id).dataset.n === String(n)) continue;
    $(id).dataset.n = String(n);
    $(id).replaceChildren(String(n), html('span', ' pips', 'pw'));
    $(id).setAttribute('aria-label', `${n} pips`);
  }
  $('cube-bottom').textContent = b.cube_owner === 0 ? `cube ${b.cube}` : '';
  $('cube-top').textContent = b.cube_owner === 1 ? `cube ${b.cube}` : '';
  $('chip-bottom').classList.toggle('to-act', b.to_act === 0);
  $('chip-top').classList.toggle('to-act', b.to_act === 1);
  const cube = b.state !== 'playing' || b.crawford ? '' : ` · ${cubeText(b)}`;
  $('match-info').textContent = gameInfo(b) + cube;
  $('position-id').textContent = b.position_id;
  $('match-id').textContent = b.match_id;
  const status = statusText();
  if ($('status').textContent !== status) $('status').textContent = status;
  renderLastMoveLine();
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
  $('btn-done').disabled = !complete || app.sent || app.animating;
  $('btn-undo').hidden = !moving;
  $('btn-undo').disabled = app.partial.length === 0 || app.sent;
  $('move-form').hidden = !moving;
  $('btn-flip').hidden = b.player || !!app.closed;
  $('btn-unwatch').hidden = b.player || !!app.closed;
  $('btn-lobby').hidden = !app.closed;
  $('chart-who').textContent = `(${b.names[0]})`;
  $('chart-title').firstChild.textContent = b.length ? 'Match winning chances ' : 'Winning chances ';
  $('col-0').textContent = b.names[b.seats[0] === 0 ? 0 : 1];
  $('col-1').textContent = b.names[b.seats[0] === 0 ? 1 : 0];
  document.body.dataset.matchState = app.closed ? 'closed' : b.state;
}

function renderLastMoveLine() {
  const m = app.lastMove;
  const line = $('lastmove');
  const text = m && !m.stale ? `${m.name} played ${diceText(m.dice)}: ${m.text}` : '';
  if (line.textContent === text) return;
  line.replaceChildren();
  if (text) line.append(`${m.name} played `, html('strong', `${diceText(m.dice)}: ${m.text}`));
}

// -- screen readers: a summary in the board's label, the whole board in text on request ---------------------

function boardSummary() {
  const b = app.board;
  return `backgammon board. ${b.names[0]} ${b.score[0]}, ${b.pips[0]} pips; ${b.names[1]} ${b.score[1]}, ${b.pips[1]} pips. ${cubeText(b)}. ${statusText()}`;
}

function listSide(v, side) {
  const parts = [];
  for (let own = 24; own >= 1; own--) { // in that side's own numbering, from its 24 point down
    const n = countAt(v, side, side === 0 ? own : 25 - own);
    if (n) parts.push(`${n} on ${own}`);
  }
  if (v.bar[side]) parts.push(`${v.bar[side]} on the bar`);
  if (v.off[side]) parts.push(`${v.off[side]} borne off`);
  return parts.join(', ') || 'none left';
}

function describeBoard() {
  const b = app.board;
  const box = $('board-text');
  box.replaceChildren();
  if (!b) return;
  const v = currentView();
  const you = b.player ? 'you' : 'bottom';
  box.append(
    html('p', `${b.names[0]} (${you}, light chequers, moving from 24 down to 1): ${listSide(v, 0)}. Score ${b.score[0]}, ${b.pips[0]} pips.`),
    html('p', `${b.names[1]} (top, dark chequers, points counted from their side): ${listSide(v, 1)}. Score ${b.score[1]}, ${b.pips[1]} pips.`),
    html('p', `${gameInfo(b)}; ${cubeText(b)}${b.dice ? `; dice ${b.dice[0]}-${b.dice[1]}` : ''}.`),
  );
  if (app.lastMove && !app.lastMove.stale) box.append(html('p', `Last move: ${app.lastMove.name} ${diceText(app.lastMove.dice)}: ${app.lastMove.text}.`));
  box.append(html('p', statusText()));
  if (b.actions.includes('move') && b.legal.length) {
    const some = b.legal.slice(0, 5).map((p) => p.text).join('; ');
    box.append(html('p', `Legal plays include: ${some}${b.legal.length > 5 ? ` (${b.legal.length} in all)` : ''}. Type one in the move box.`));
  }
}

// -- entering a move -----------------------------------------------------------------------------------------

function pointAt(clientX, clientY) {
  const target = document.elementFromPoint(clientX, clientY);
  return target && target.dataset && target.dataset.point !== undefined && target.closest('#hits') ? Number(target.dataset.point) : null;
}

function take(dest) {
  const steps = app.dests.get(dest);
  if (!steps) return false;
  app.partial = app.partial.concat(steps);
  app.selected = null;
  renderBoard();
  if (app.settings.autocommit && moveChoices().complete) done();
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

function undo() { // one step back, not the whole play
  if (!app.partial.length) return;
  app.partial = app.partial.slice(0, -1);
  app.selected = null;
  renderBoard();
}

function done() {
  const { complete } = moveChoices();
  if (!complete) return;
  sendPlay(complete);
}

function sendPlay(play) {
  app.sent = true;
  app.playsSent += 1;
  app.partial = play.steps.slice();
  send({ type: 'move', steps: play.steps });
  renderBoard();
}

// Typed moves: gnubg or FIBS notation in the player's own numbering ("8/5 6/5", "bar/22* 13/11",
// "6/off(2)", "13-7"), matched against the legal plays by where the player's chequers end up.
function parseNotation(text) {
  const tokens = text.trim().toLowerCase().replace(/,/g, ' ').split(/\s+/).filter(Boolean);
  if (!tokens.length) throw new Error('Type a move, e.g. 8/5 6/5.');
  const moves = [];
  for (const token of tokens) {
    const m = token.match(/^([0-9a-z*/-]+?)(?:\((\d)\))?$/);
    if (!m) throw new Error(`"${token}" is not a move (write from/to, e.g. 13/7).`);
    const parts = m[1].split(/[/-]/);
    if (parts.length < 2) throw new Error(`"${token}" is not a move (write from/to, e.g. 13/7).`);
    const points = parts.map((part) => {
      const hit = part.endsWith('*');
      const name = hit ? part.slice(0, -1) : part;
      let p;
      if (name === 'bar' || name === 'b') p = 25;
      else if (name === 'off' || name === 'o') p = 0;
      else if (/^\d{1,2}$/.test(name) && +name >= 1 && +name <= 24) p = +name;
      else throw new Error(`"${part}" is not a point (1-24, bar or off).`);
      return { p, hit };
    });
    const times = m[2] ? +m[2] : 1;
    for (let t = 0; t < times; t++) {
      for (let i = 0; i + 1 < points.length; i++) {
        const from = points[i].p;
        const to = points[i + 1].p;
        if (from === 0 || to === 25 || (to !== 0 && to >= from)) throw new Error(`${token}: chequers move from higher to lower points.`);
        moves.push({ from, to, hit: points[i + 1].hit });
      }
    }
  }
  return moves;
}

function ownKey(v) { return `${v.points.map((n) => Math.max(n, 0)).join(',')}|${v.bar[0]}|${v.off[0]}`; }

function findTypedPlay(text) {
  const b = app.board;
  const moves = parseNotation(text);
  const start = boardView(b);
  const mine = copyView(start);
  const hits = new Set();
  for (const { from, to, hit } of moves) {
    if (countAt(mine, 0, from) <= 0) throw new Error(`You have no chequer on ${from === 25 ? 'the bar' : from} to move.`);
    applyStep(mine, [from, to]);
    if (hit) hits.add(to);
  }
  const want = ownKey(mine);
  let found = b.legal.filter((play) => ownKey(play.steps.reduce((v, s) => applyStep(v, s), copyView(start))) === want);
  if (found.length > 1) { // the same chequers moved, hitting on different ways: the * marks decide
    const marked = found.filter((play) => {
      const v = copyView(start);
      const hit = new Set();
      for (const s of play.steps) { if (s[1] && v.points[s[1] - 1] === -1) hit.add(s[1]); applyStep(v, s); }
      return hit.size === hits.size && [...hit].every((p) => hits.has(p));
    });
    if (marked.length) found = marked;
  }
  if (found.length === 0) {
    const examples = b.legal.slice(0, 3).map((p) => p.text).join(', ');
    throw new Error(`${text.trim()} is not a legal play with ${b.dice[0]}-${b.dice[1]} (for example: ${examples}).`);
  }
  if (found.length > 1) throw new Error(`${text.trim()} is ambiguous: ${found.map((p) => p.text).join(' or ')}? Mark hits with *.`);
  return found[0];
}

function onTypedMove(e) {
  e.preventDefault();
  if (!app.board || !app.board.actions.includes('move') || app.sent) return;
  const input = $('move-text');
  try {
    const play = findTypedPlay(input.value);
    input.value = '';
    input.removeAttribute('aria-invalid');
    sendPlay(play);
  } catch (err) {
    input.setAttribute('aria-invalid', 'true');
    flash(err.message, true);
  }
}

// -- move list, kibitz, chart --------------------------------------------------------------------------------

// One table body per game; a row is a full move: the left column is seat 0, the right seat 1 (gnubg's layout).
function moveCell(e, text) {
  const list = $('movelist');
  let rows = app.moveRows;
  if (!rows || rows.game !== e.game) {
    const body = list.createTBody();
    const head = body.insertRow();
    head.className = 'game';
    const cell = head.insertCell();
    cell.colSpan = 3;
    cell.textContent = `Game ${e.game}`;
    rows = app.moveRows = { game: e.game, body, row: null, n: 0 };
  }
  const col = e.player;
  let row = rows.row;
  if (!row || row.cells[1 + col].dataset.used || (col === 0 && row.cells[2].dataset.used)) {
    row = rows.body.insertRow();
    rows.n += 1;
    const num = row.insertCell();
    num.className = 'num';
    num.textContent = `${rows.n}.`;
    row.insertCell();
    row.insertCell();
    rows.row = row;
  }
  const cell = row.cells[1 + col];
  cell.dataset.used = '1';
  cell.append(html('span', text, 'v'));
  return cell;
}

function addMoveListEntry(e) {
  const CUBE = { double: (x) => `Doubles to ${x.cube}`, beaver: (x) => `Beavers to ${x.cube}`, take: () => 'Takes', drop: () => 'Passes',
    resign: (x) => `Resigns ${LEVELS[x.level]}`, accept_resign: () => 'Accepts', reject_resign: () => 'Rejects' };
  let cell = null;
  if (e.kind === 'move') {
    cell = moveCell(e, `${diceText(e.dice)}: ${e.text || '(no move)'}`);
    cell.classList.add('mv');
    cell.dataset.key = `${e.game}:${e.index}`;
    cell.tabIndex = 0;
    for (const old of document.querySelectorAll('#movelist td.last')) old.classList.remove('last');
    cell.classList.add('last');
    const k = app.kibitzes.get(`${e.game}:${e.index}`);
    if (k) markMove(k);
    for (const c of app.cubes.values()) if (c.game === e.game && c.index === e.index) markCube(c);
  } else if (CUBE[e.kind]) {
    cell = moveCell(e, CUBE[e.kind](e));
    cell.dataset.cubeKey = `${e.game}:${e.index}:${e.kind}`;
    cell.classList.add('mv'); // opens its verdict, a right one too
    cell.tabIndex = 0;
    const c = app.cubes.get(cell.dataset.cubeKey);
    if (c) markCube(c);
  } else if (e.kind === 'game_end' || e.kind === 'match_end') {
    const rows = app.moveRows;
    if (!rows) return;
    const row = rows.body.insertRow();
    row.className = 'game';
    const c = row.insertCell();
    c.colSpan = 3;
    c.textContent = e.kind === 'game_end' ? `${e.name} wins ${e.points} point${e.points === 1 ? '' : 's'}: ${scoreText(e)}` : `${e.name} wins the match ${scoreText(e)}`;
    rows.row = null;
  } else {
    return;
  }
  scrollMoveList();
}

function scrollMoveList() {
  const box = $('movebox');
  box.scrollTop = box.scrollHeight; // the list scrolls inside its own box, never the page
}

function moveListAtEnd() { // verdicts lengthen the rows: a list shown to its end stays so
  const box = $('movebox');
  return box.scrollHeight - box.scrollTop - box.clientHeight < 8;
}

function scoreText(e) { // the score after a game, the winner's first
  const w = e.player;
  return `${e.score[w]}-${e.score[1 - w]}`;
}

function diceText(dice) { return dice ? `${Math.max(...dice)}${Math.min(...dice)}` : ''; }

function signed(x) { return `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(3)}`; }

function kibitzLine(cell, text) {
  let k = cell.querySelector('.k');
  if (!k) { k = html('span', '', 'k'); cell.append(k); }
  k.textContent = text;
}

function markMove(k) {
  const cell = document.querySelector(`#movelist td[data-key="${k.game}:${k.index}"]`);
  if (!cell) return;
  cell.classList.toggle('blunder', k.equity_lost >= 0.08);
  cell.classList.toggle('error', k.equity_lost >= 0.02 && k.equity_lost < 0.08);
  const text = k.equity_lost >= 0.0005 ? `best ${k.best} (${signed(-k.equity_lost)})` : 'best move';
  kibitzLine(cell, text);
  cell.title = text;
  cell.setAttribute('aria-label', `${cell.querySelector('.v').textContent}: ${text}`);
}

const CUBE_WORDS = { no_double: 'no double', double: 'double', take: 'take', drop: 'pass', beaver: 'beaver' };

function markCube(c) {
  const selector = c.action === 'no_double' ? `#movelist td[data-key="${c.game}:${c.index}"]` : `#movelist td[data-cube-key="${c.game}:${c.index}:${c.action}"]`;
  const cell = document.querySelector(selector);
  if (!cell) return;
  if (c.action === 'no_double' && c.equity_lost < 0.02) return; // a right no-double needs no comment
  const text = c.equity_lost >= 0.0005 ? `${c.action === 'no_double' ? 'missed double: ' : ''}${c.verdict} (${signed(-c.equity_lost)})` : c.verdict;
  const line = html('span', text, 'k');
  cell.append(line);
  cell.classList.toggle('blunder', cell.classList.contains('blunder') || c.equity_lost >= 0.08);
  cell.classList.toggle('error', !cell.classList.contains('blunder') && c.equity_lost >= 0.02);
}

function pct(x) { return `${(100 * x).toFixed(1)}%`; }

function renderKibitz(k) {
  const lost = k.equity_lost >= 0.0005 ? `best ${k.best} (lost ${k.equity_lost.toFixed(3)})` : 'the best move';
  let chances;
  if (k.mwc !== null && k.mwc !== undefined) { // match play: the match, not the game, is what counts
    const mine = k.player === 0 ? k.mwc : 1 - k.mwc;
    chances = `${k.name}'s match winning chances now ${pct(mine)}`;
  } else {
    chances = `${k.name} now wins ${pct(k.probs[0])} (gammon ${pct(k.probs[1])})`;
  }
  $('kibitz').textContent = `${k.name} ${diceText(k.dice)}: ${k.played}: ${lost}. ${chances}.`;
}

function renderCubeKibitz(c) {
  const box = $('cube-kibitz');
  box.replaceChildren();
  const did = CUBE_WORDS[c.action];
  const right = c.equity_lost < 0.02;
  const head = html('span', `Cube: ${c.name} — ${did}. `, right ? 'verdict-ok' : 'verdict-bad');
  const verdict = html('strong', `${c.verdict}`);
  const eq = ` (no double ${signed(c.no_double)}, double/take ${signed(c.double_take)}, double/pass ${signed(c.double_pass)})`;
  box.append(head, 'Verdict: ', verdict, eq, right ? '' : `; ${did} loses ${c.equity_lost.toFixed(3)}.`);
  box.dataset.action = c.action;
}

function renderChart() {
  const svg = $('chart');
  svg.replaceChildren();
  const L = 34; const R = 314; const T = 10; const B = 108;
  const y = (v) => B - (B - T) * v;
  el('rect', { x: L, y: T, width: R - L, height: B - T, class: 'chart-bg' }, svg);
  for (const [v, label] of [[1, '100%'], [0.5, '50%'], [0, '0%']]) {
    el('line', { x1: L, y1: y(v), x2: R, y2: y(v), class: v === 0.5 ? 'chart-mid' : 'chart-grid' }, svg);
    el('text', { x: L - 4, y: y(v) + 3.5, 'text-anchor': 'end', class: 'chart-text' }, svg, label);
  }
  el('text', { x: (L + R) / 2, y: 128, 'text-anchor': 'middle', class: 'chart-text' }, svg, 'moves →');
  const b = app.board;
  const list = [...app.kibitzes.values()].sort((a, c) => a.game - c.game || a.index - c.index);
  if (!list.length && b && b.player && !app.closed) {
    el('text', { x: (L + R) / 2, y: (T + B) / 2 + 16, 'text-anchor': 'middle', class: 'chart-text' }, svg, 'the engine’s view comes when the match is over');
  }
  if (!list.length || !b) return;
  const seat = b.seats[0];
  const value = (k) => {
    const v = k.mwc === null || k.mwc === undefined ? k.win : k.mwc;
    return seat === 0 ? v : 1 - v;
  };
  const step = (R - L) / Math.max(1, list.length - 1);
  let game = list[0].game;
  const points = list.map((k, i) => {
    const x = L + i * step;
    if (k.game !== game) {
      game = k.game;
      el('line', { x1: x, y1: T, x2: x, y2: B, class: 'chart-game' }, svg);
      el('text', { x: x + 2, y: T + 9, class: 'chart-text' }, svg, `G${k.game}`);
    }
    return `${x.toFixed(1)},${y(value(k)).toFixed(1)}`;
  });
  el('text', { x: L, y: 120, class: 'chart-text' }, svg, '1');
  el('text', { x: R, y: 120, 'text-anchor': 'end', class: 'chart-text' }, svg, String(list.length));
  el('polyline', { points: points.join(' '), class: 'chart-line' }, svg);
  const last = list[list.length - 1];
  svg.setAttribute('aria-label', `${b.length ? 'match' : 'game'} winning chances of ${b.names[0]}: ${pct(value(last))} after ${list.length} moves`);
}

// -- the archive: finished matches and their analysis (docs/websocket-protocol.md, "HTTP: the archive") ------

const viewer = { name: null, data: null, list: [], at: 0, errors: [] };
const ARCHIVE_POLL_MS = 20000; // how often the lobby asks again while a match waits for its analysis
app.viewer = viewer;
const MARK_CLASS = { doubtful: 'doubtful', bad: 'bad', 'very bad': 'verybad' };
const MARK_SIGN = { doubtful: '?!', bad: '?', 'very bad': '??' };
const LUCK_SIGN = { 'very lucky': '++', lucky: '+', unlucky: '−', 'very unlucky': '−−' };
const CUBE_ERRORS = {
  'missed-double-below-cp': 'missed double', 'missed-double-above-cp': 'missed double (too good is wrong)',
  'wrong-double-below-dp': 'wrong double (too early)', 'wrong-double-above-tg': 'wrong double (too good to double)',
  'wrong-take': 'wrong take', 'wrong-pass': 'wrong pass',
};

async function fetchJSON(url) {
  const r = await fetch(url, { cache: 'no-store' });
  let body = null;
  try { body = await r.json(); } catch { /* not JSON: the status says it */ }
  if (!r.ok) throw new Error((body && body.error) || `${r.status} ${r.statusText}`);
  return body;
}

function num(x, digits = 1) { return typeof x === 'number' && Number.isFinite(x) ? x.toFixed(digits) : '–'; }

async function loadArchive() {
  try {
    renderArchive(await fetchJSON('/api/archive'));
  } catch (e) {
    $('archive').tBodies[0].replaceChildren();
    $('no-archive').textContent = `The archive could not be read: ${e.message}`;
    $('no-archive').hidden = false;
  }
}

function renderArchive(data) {
  const tbody = $('archive').tBodies[0];
  tbody.replaceChildren();
  for (const m of data.matches) {
    const tr = tbody.insertRow();
    tr.dataset.name = m.name;
    tr.dataset.analysis = m.analysis;
    const who = tr.insertCell();
    who.append(html('span', m.names ? `${m.names[0]} – ${m.names[1]}` : m.name));
    const length = m.length === null || m.length === undefined ? '' : m.length ? ` · ${m.length}p` : ' · money';
    const score = m.score ? ` · ${m.score[0]}-${m.score[1]}` : '';
    who.append(html('div', `${(m.date || '').replace('T', ' ')}${length}${score}`, 'doing small'));
    if (m.analysis === 'ready') {
      const words = m.players.map((p) => `${p.rating} ${num(p.overall_error_rate_memg)}`).join(' · ');
      who.append(html('div', words, 'doing small ratings'));
    }
    const cell = tr.insertCell();
    if (m.analysis === 'ready') {
      const b = html('button', 'View');
      b.className = 'view';
      b.setAttribute('aria-label', `view ${m.names ? m.names.join(' against ') : m.name}`);
      b.onclick = () => openArchived(m.name);
      cell.append(b);
    } else if (m.analysis === 'failed') {
      const s = html('span', 'not analysed', 'muted small');
      s.title = m.error || '';
      cell.append(s);
    } else {
      const wait = typeof m.wait === 'number' ? ` (about ${m.wait < 90 ? `${Math.max(1, m.wait)} s` : `${Math.round(m.wait / 60)} min`})` : '';
      cell.append(html('span', `analysing…${wait}`, 'muted small pending'));
    }
  }
  const empty = $('no-archive');
  empty.textContent = 'No archived match yet.';
  empty.hidden = data.matches.length > 0;
}

async function openArchived(name) {
  if (app.board && app.board.player && !app.closed) { flash('Finish your match first: the viewer would hide it.', true); return; }
  let data;
  try {
    data = await fetchJSON(`/api/archive/${encodeURIComponent(name)}`);
  } catch (e) {
    flash(`${name}: ${e.message}`, true);
    return;
  }
  if (app.matchId !== null) { if (app.board && !app.board.player && !app.closed) send({ type: 'unwatch' }); showLobbyOnly(); }
  const order = { double: 0, take: 1, pass: 1, move: 2 };
  viewer.name = name;
  viewer.data = data;
  viewer.list = data.players.flatMap((p) => p.decisions || [])
    .sort((a, b) => a.game - b.game || a.index - b.index || order[a.kind] - order[b.kind]);
  viewer.errors = viewer.list.map((d, i) => (isError(d) ? i : -1)).filter((i) => i >= 0);
  viewer.at = 0;
  $('viewer').hidden = false;
  document.body.classList.add('in-viewer');
  document.body.dataset.viewer = 'open';
  window.scrollTo(0, 0);
  renderViewerStatic();
  showDecision(0);
}

function closeViewer() {
  viewer.name = null;
  viewer.data = null;
  viewer.list = [];
  $('viewer').hidden = true;
  document.body.classList.remove('in-viewer');
  delete document.body.dataset.viewer;
}

function isError(d) { return !!d.mark || !!(d.cube && d.cube.error); }
function severity(d) {
  const loss = Math.max(d.loss || 0, d.cube && d.cube.error ? d.cube.loss || 0 : 0);
  return loss > 0.16 ? 'verybad' : loss > 0.08 ? 'bad' : loss > 0.04 ? 'doubtful' : d.mark ? MARK_CLASS[d.mark] : d.cube && d.cube.error ? 'doubtful' : '';
}

function playerName(i) { return viewer.data.names ? viewer.data.names[i] : viewer.data.players[i].name; }

function renderViewerStatic() {
  const data = viewer.data;
  const length = data.match_length ? `${data.match_length}-point match` : 'money session';
  $('v-title').textContent = `${playerName(0)} – ${playerName(1)}`;
  const score = data.score ? ` · final ${data.score[0]}-${data.score[1]}` : '';
  $('v-info').textContent = `${length}${score} · ${(data.date || '').replace('T', ' ')} · analysed at ${data.plies}-ply`;
  $('v-name-0').textContent = playerName(0);
  $('v-name-1').textContent = playerName(1);
  $('v-chart-who').textContent = `(${playerName(0)}, per game)`;
  renderSummary();
  renderDecisionList();
  renderViewerChart();
}

// gnubg's error-based FIBS rating is a straight line in the error rates, fitted on real players' matches: very bad
// play (many blunders in a short match) takes it to figures no FIBS player has, below zero even (-801 was seen).
// A player reads it as a rating, so below the lowest rating we treat as one (500, the floor of our fibs: levels)
// the page says "below 500" rather than print a meaningless number; the formula's figure stays in the tooltip.
const FIBS_FLOOR = 500;

function fibsRatingText(r) {
  if (typeof r !== 'number' || !Number.isFinite(r)) return '–';
  return r < FIBS_FLOOR ? `below ${FIBS_FLOOR}` : r.toFixed(0);
}

function fibsRatingTip(r) {
  return typeof r === 'number' && r < FIBS_FLOOR
    ? `gnubg's formula gives ${r.toFixed(0)}: too many errors for its scale, fitted on real players`
    : '';
}

const SUMMARY_ROWS = [ // [label, title, value, cell tooltip?]: gnubg's "show statistics match", the figures a player reads first
  ['Rating', 'overall error rate in words (gnubg)', (p) => p.rating],
  ['FIBS rating', 'estimated from the error rates and the match length', (p) => fibsRatingText(p.fibs_rating), (p) => fibsRatingTip(p.fibs_rating)],
  ['Error rate', 'mEMG per decision (unforced move or close cube decision)', (p) => num(p.overall_error_rate_memg)],
  ['Chequer play', 'mEMG per unforced move', (p) => `${num(p.chequer_error_rate_memg)} ${p.chequer_rating || ''}`],
  ['Cube', 'mEMG per close cube decision', (p) => `${num(p.cube_error_rate_memg)} ${p.cube_rating || ''}`],
  ['Snowie rate', 'error per move of both players, mEMG', (p) => num(p.snowie_error_rate)],
  ['Moves / cube', 'unforced moves / close cube decisions', (p) => `${p.unforced_moves ?? '–'} / ${p.cube_decisions ?? '–'}`],
  ['?! / ? / ??', 'doubtful / bad / very bad moves', (p) => (p.marked_moves ? `${p.marked_moves.doubtful} / ${p.marked_moves.bad} / ${p.marked_moves['very bad']}` : '–')],
  ['Cube errors', 'missed or wrong doubles, wrong takes and passes', (p) => (p.cube_errors ? String(Object.values(p.cube_errors).reduce((a, b) => a + b, 0)) : '–')],
  ['Luck rate', 'mEMG per move', (p) => num(p.luck_rate_memg)],
  ['Lucky / unlucky', 'rolls marked lucky or very lucky / unlucky or very unlucky', (p) => (p.luck_marked_rolls ? `${p.luck_marked_rolls.lucky + p.luck_marked_rolls['very lucky']} / ${p.luck_marked_rolls.unlucky + p.luck_marked_rolls['very unlucky']}` : '–')],
  ['Luck-adjusted', 'the result less own luck plus the opponent\'s', (p) => (typeof p.luck_adjusted_result === 'number' ? signed(p.luck_adjusted_result) : '–')],
];

function renderSummary() {
  const t = $('v-summary');
  t.replaceChildren();
  const head = t.createTHead().insertRow();
  head.append(html('th', ''), html('th', playerName(0)), html('th', playerName(1)));
  const body = t.createTBody();
  for (const [label, title, value, tip] of SUMMARY_ROWS) {
    const tr = body.insertRow();
    const th = html('th', label);
    th.title = title;
    tr.append(th);
    for (const p of viewer.data.players) {
      const cell = tr.insertCell();
      cell.textContent = value(p) ?? '–';
      if (tip && tip(p)) cell.title = tip(p);
    }
  }
}

function decisionText(d) { // the short form in the list
  if (d.kind === 'move') return `${diceText(d.dice)}: ${d.move || '(no move)'}`;
  return { double: 'doubles', take: 'takes', pass: 'passes' }[d.kind] || d.kind;
}

function renderDecisionList() {
  const t = $('v-list');
  t.replaceChildren();
  let body = null;
  let game = null;
  viewer.list.forEach((d, i) => {
    if (d.game !== game) {
      game = d.game;
      body = t.createTBody();
      const tr = body.insertRow();
      tr.className = 'game';
      const c = tr.insertCell();
      c.colSpan = 4;
      c.textContent = `Game ${d.game}`;
    }
    const tr = body.insertRow();
    tr.dataset.i = String(i);
    tr.tabIndex = -1;
    const sev = severity(d);
    if (sev) tr.classList.add(sev);
    tr.insertCell().textContent = String(i + 1);
    const who = tr.insertCell(); // the player's chequer colour: the names would crowd the list
    who.className = 'who';
    who.append(html('span', '', `chq ${d.player === 0 ? 'me' : 'them'}`), html('span', playerName(d.player), 'sr-only'));
    who.title = playerName(d.player);
    const what = tr.insertCell();
    what.textContent = decisionText(d);
    const marks = tr.insertCell();
    marks.className = 'marks';
    const sign = d.mark ? MARK_SIGN[d.mark] : d.cube && d.cube.error ? '?' : '';
    if (sign) marks.append(html('span', sign, `m ${sev}`));
    if (d.luck_mark) marks.append(html('span', LUCK_SIGN[d.luck_mark] || '', `l ${d.luck_mark.includes('un') ? 'unlucky' : 'lucky'}`));
    tr.title = [d.mark, d.cube && d.cube.error ? CUBE_ERRORS[d.cube.error] : '', d.luck_mark].filter(Boolean).join(', ');
  });
}

function viewerLayer(name) {
  const svg = $('vboard');
  if (!svg.dataset.drawn) { // the live board's drawing, its layers renamed so that they never clash with it
    drawStatic(svg);
    for (const id of ['marks', 'dynamic', 'hits', 'flying']) {
      const g = svg.querySelector(`#${id}`);
      g.removeAttribute('id');
      g.dataset.layer = id;
    }
  }
  return svg.querySelector(`[data-layer="${name}"]`);
}

function drawPlay(marks, layer, steps, side, cls) {
  const board = steps.map((s) => boardStep(side, s));
  if (cls === 'played') {
    const from = new Set(board.map(([s]) => s));
    const to = new Set(board.map(([, t]) => t));
    for (const p of from) if (!to.has(p)) markPoint(marks, p, 'last-from', side);
    for (const p of to) markPoint(marks, p, 'last-to', side);
  }
  for (const [src, dst] of board) {
    const a = pointCentre(src, side);
    const z = pointCentre(dst, side);
    const bow = cls === 'played' ? 0.45 : 0.2; // the best play bows less: two plays along one row stay apart
    const cx = (a[0] + z[0]) / 2;
    const cy = (a[1] + z[1]) / 2 + (G.mid - (a[1] + z[1]) / 2) * bow + (a[1] === z[1] ? (a[1] < G.mid ? 40 : -40) * (bow / 0.45) : 0);
    const attrs = { d: `M${a[0]},${a[1]} Q${cx},${cy} ${z[0]},${z[1]}`, class: cls === 'played' ? 'last-arrow' : 'best-arrow' };
    if (cls === 'played') attrs['marker-end'] = 'url(#arrow)';
    el('path', attrs, layer);
    if (cls !== 'played') el('circle', { cx: z[0], cy: z[1], r: 7, class: 'best-dot' }, layer);
  }
}

function samePlay(a, b) {
  if (!a || !b || a.length !== b.length) return false;
  const key = (s) => s.map(([x, y]) => `${x}/${y}`).sort().join(' ');
  return key(a) === key(b);
}

function renderViewerBoard(d) {
  const layer = viewerLayer('dynamic');
  const marks = viewerLayer('marks');
  layer.replaceChildren();
  marks.replaceChildren();
  const svg = $('vboard');
  svg.dataset.decision = String(viewer.at);
  const b = d.board;
  if (!b) {
    el('text', { x: G.width / 2, y: G.mid, class: 'offtext' }, layer, 'this decision has no readable board');
    return;
  }
  drawView(layer, b);
  const cubeY = b.doubled ? G.mid - G.cube / 2 : b.cube_owner === 0 ? G.bottom - G.cube - 4 : b.cube_owner === 1 ? G.top + 4 : G.mid - G.cube / 2;
  el('rect', { x: G.cubeX, y: cubeY, width: G.cube, height: G.cube, rx: 5, class: `cube${b.doubled ? ' offered' : ''}` }, layer);
  const cubeValue = b.doubled ? b.cube * 2 : b.cube_owner < 0 && b.cube === 1 ? 64 : b.cube;
  el('text', { x: G.cubeX + G.cube / 2, y: cubeY + G.cube / 2, class: 'cube-text' }, layer, String(cubeValue));
  if (d.dice) {
    const mine = b.on_roll === 0;
    const centre = mine ? G.right + 3 * G.point : G.left + 3 * G.point;
    const startX = centre - (2 * 40 - 6) / 2;
    d.dice.forEach((v, i) => drawDie(layer, startX + i * 40, G.mid - 17, v, mine));
  }
  if (d.best_steps && d.steps && !samePlay(d.steps, d.best_steps)) drawPlay(marks, layer, d.best_steps, d.player, 'best');
  if (d.steps) drawPlay(marks, layer, d.steps, d.player, 'played');
  const who = `${playerName(d.player)} ${decisionText(d)}`;
  svg.setAttribute('aria-label', `board before: ${who}. ${playerName(0)} ${b.pips[0]} pips, ${playerName(1)} ${b.pips[1]} pips`);
}

function cubeLine(d) {
  const c = d.cube;
  const eq = `no double ${signed(c.no_double)}, double/take ${signed(c.double_take)}, double/pass ${signed(c.double_pass)}`;
  const answering = d.kind === 'take' || d.kind === 'pass'; // the taker's verdict, not the doubler's
  const proper = answering ? c.taker : c.proper === 'double' ? `double, ${c.taker}` : c.proper;
  const p = html('p', '', 'cube-line');
  if (d.kind === 'move') {
    if (!c.close && !c.error) return null; // a clear no-double needs no words
    p.append('Cube before the roll: no double. ');
  } else {
    p.append(`Cube: ${playerName(d.player)} ${c.action === 'no double' ? 'does not double' : { double: 'doubles', take: 'takes', pass: 'passes' }[c.action]}. `);
  }
  p.append(answering ? 'Proper answer: ' : 'Proper: ', html('strong', proper), ` (the doubler's ${eq}). `);
  if (c.error) p.append(html('span', `${CUBE_ERRORS[c.error] || c.error}: ${signed(-c.loss)}`, `badge ${severity(d) || 'doubtful'}`));
  return p;
}

function showDecision(i) {
  if (!viewer.list.length) return;
  viewer.at = Math.max(0, Math.min(viewer.list.length - 1, i));
  const d = viewer.list[viewer.at];
  renderViewerBoard(d);
  const b = d.board;
  for (const side of [0, 1]) {
    $(`v-score-${side}`).textContent = b ? String(b.score[side]) : '';
    $(`v-pips-${side}`).replaceChildren(...(b ? [String(b.pips[side]), html('span', ' pips', 'pw')] : []));
  }
  $('v-chip-0').classList.toggle('to-act', d.player === 0);
  $('v-chip-0').previousElementSibling.previousElementSibling.classList.toggle('to-act', d.player === 1);
  const cube = b ? (b.cube_owner < 0 ? `cube ${b.cube} centred` : `cube ${b.cube}: ${playerName(b.cube_owner)}`) : '';
  $('v-where').textContent = `game ${d.game}${b && b.crawford ? ' · Crawford' : ''} · ${cube}`;
  $('v-pos').textContent = `${viewer.at + 1} / ${viewer.list.length}`;
  const box = $('v-decision');
  box.replaceChildren();
  box.dataset.kind = d.kind;
  const sev = severity(d);
  const head = html('p', '', 'head');
  head.append(html('strong', playerName(d.player)), ' ');
  if (d.kind === 'move') {
    head.append(`${diceText(d.dice)}: `, html('strong', d.move || '(no move)', 'played'));
    if (d.mark) head.append(' ', html('span', `${d.mark} ${signed(-d.loss)}`, `badge ${MARK_CLASS[d.mark]}`));
  } else {
    head.append({ double: 'doubles', take: 'takes', pass: 'passes' }[d.kind] || d.kind);
  }
  box.append(head);
  if (d.kind === 'move') {
    const best = html('p', '', 'best');
    if (!d.unforced) best.append(d.move ? 'Forced: the only play.' : 'No legal play.');
    else if (d.best_move && d.best_move !== d.move) best.append('Best: ', html('strong', d.best_move, 'bestmove'), ` (${signed(d.best_equity)} against ${signed(d.equity)}, ${d.candidates} plays)`);
    else best.append(`The best move (${signed(d.best_equity)}, ${d.candidates} plays).`);
    box.append(best);
    if (typeof d.luck === 'number') {
      const luck = html('p', 'Luck of the roll: ', 'luck');
      luck.append(html('strong', signed(d.luck)));
      if (d.luck_mark) luck.append(' ', html('span', d.luck_mark, `badge ${d.luck_mark.includes('un') ? 'unlucky' : 'lucky'}`));
      box.append(luck);
    }
  }
  if (d.cube) { const line = cubeLine(d); if (line) box.append(line); }
  if (d.probs) {
    const p = d.probs;
    const whose = d.kind === 'take' || d.kind === 'pass' ? 1 - d.player : d.player; // the chances are the roller's
    box.append(html('p', `${playerName(whose)} wins ${pct(p[0])} (gammon ${pct(p[1])}, backgammon ${pct(p[2])}); loses a gammon ${pct(p[3])}.`, 'muted small'));
  }
  box.dataset.severity = sev;
  for (const row of $('v-list').querySelectorAll('tr.at')) row.classList.remove('at');
  const row = $('v-list').querySelector(`tr[data-i="${viewer.at}"]`);
  if (row) { // scroll the list's own box only, never the page
    row.classList.add('at');
    const lb = $('v-listbox');
    if (row.offsetTop < lb.scrollTop + 24 || row.offsetTop + row.offsetHeight > lb.scrollTop + lb.clientHeight) lb.scrollTop = row.offsetTop - lb.clientHeight / 2;
  }
  const cursor = $('vchart').querySelector('.chart-cursor');
  if (cursor) { const x = chartX(viewer.at); cursor.setAttribute('x1', x); cursor.setAttribute('x2', x); }
  $('v-prev').disabled = $('v-first').disabled = viewer.at === 0;
  $('v-next').disabled = $('v-last').disabled = viewer.at === viewer.list.length - 1;
  $('v-prev-error').disabled = !viewer.errors.some((e) => e < viewer.at);
  $('v-next-error').disabled = !viewer.errors.some((e) => e > viewer.at);
}

const VC = { L: 34, R: 314, T: 10, B: 108 };
function chartX(i) { return VC.L + (VC.R - VC.L) * (viewer.list.length > 1 ? i / (viewer.list.length - 1) : 0); }

function renderViewerChart() {
  const svg = $('vchart');
  svg.replaceChildren();
  const { L, R, T, B } = VC;
  const y = (v) => B - (B - T) * v;
  el('rect', { x: L, y: T, width: R - L, height: B - T, class: 'chart-bg' }, svg);
  for (const [v, label] of [[1, '100%'], [0.5, '50%'], [0, '0%']]) {
    el('line', { x1: L, y1: y(v), x2: R, y2: y(v), class: v === 0.5 ? 'chart-mid' : 'chart-grid' }, svg);
    el('text', { x: L - 4, y: y(v) + 3.5, 'text-anchor': 'end', class: 'chart-text' }, svg, label);
  }
  el('text', { x: (L + R) / 2, y: 128, 'text-anchor': 'middle', class: 'chart-text' }, svg, 'decisions →');
  const list = viewer.list;
  if (!list.length) return;
  let game = null;
  let line = [];
  const lines = [];
  list.forEach((d, i) => {
    const x = chartX(i);
    if (d.game !== game) {
      if (line.length) lines.push(line);
      line = [];
      if (game !== null) el('line', { x1: x, y1: T, x2: x, y2: B, class: 'chart-game' }, svg);
      el('text', { x: x + 2, y: T + 9, class: 'chart-text' }, svg, `G${d.game}`);
      game = d.game;
    }
    if (typeof d.p0_win === 'number') line.push(`${x.toFixed(1)},${y(d.p0_win).toFixed(1)}`);
  });
  if (line.length) lines.push(line);
  for (const l of lines) el('polyline', { points: l.join(' '), class: 'chart-line' }, svg);
  list.forEach((d, i) => {
    const sev = severity(d);
    if (sev && typeof d.p0_win === 'number') el('circle', { cx: chartX(i), cy: y(d.p0_win), r: sev === 'verybad' ? 4 : 3, class: `chart-err ${sev}` }, svg);
    if (d.luck_mark) { // luck: a tick over the chart for the lucky, under it for the unlucky
      const up = !d.luck_mark.includes('un');
      el('line', { x1: chartX(i), y1: up ? T - 1 : B + 1, x2: chartX(i), y2: up ? T - 6 : B + 6, class: `chart-luck ${up ? 'lucky' : 'unlucky'}` }, svg);
    }
  });
  el('line', { x1: chartX(viewer.at), y1: T, x2: chartX(viewer.at), y2: B, class: 'chart-cursor' }, svg);
  svg.setAttribute('aria-label', `${playerName(0)}'s chances of winning the game, decision by decision; ${viewer.errors.length} errors marked`);
}

function chartClick(e) {
  const svg = $('vchart');
  const r = svg.getBoundingClientRect();
  const x = ((e.clientX - r.left) / r.width) * 320;
  const n = viewer.list.length;
  if (!n) return;
  showDecision(Math.round(((x - VC.L) / (VC.R - VC.L)) * (n - 1)));
}

function stepError(dir) {
  const next = dir > 0 ? viewer.errors.find((e) => e > viewer.at) : [...viewer.errors].reverse().find((e) => e < viewer.at);
  if (next !== undefined) showDecision(next);
}

function viewerKey(e) {
  if (!viewer.data || $('viewer').hidden) return false;
  if (e.target && ['INPUT', 'SELECT', 'TEXTAREA'].includes(e.target.tagName)) return false;
  const moves = { ArrowRight: 1, ArrowLeft: -1 };
  if (e.key in moves) showDecision(viewer.at + moves[e.key]);
  else if (e.key === 'Home') showDecision(0);
  else if (e.key === 'End') showDecision(viewer.list.length - 1);
  else if (e.key === 'ArrowDown') stepError(1);
  else if (e.key === 'ArrowUp') stepError(-1);
  else return false;
  e.preventDefault();
  return true;
}

function initViewer() {
  $('btn-archive-refresh').addEventListener('click', loadArchive);
  $('v-first').addEventListener('click', () => showDecision(0));
  $('v-prev').addEventListener('click', () => showDecision(viewer.at - 1));
  $('v-next').addEventListener('click', () => showDecision(viewer.at + 1));
  $('v-last').addEventListener('click', () => showDecision(viewer.list.length - 1));
  $('v-prev-error').addEventListener('click', () => stepError(-1));
  $('v-next-error').addEventListener('click', () => stepError(1));
  $('v-close').addEventListener('click', () => { closeViewer(); loadArchive(); });
  $('v-list').addEventListener('click', (e) => {
    const row = e.target.closest('tr[data-i]');
    if (row) showDecision(Number(row.dataset.i));
  });
  $('vchart').addEventListener('click', chartClick);
  document.addEventListener('keydown', viewerKey);
  loadArchive();
  setInterval(() => { // an analysis still running shows up by itself when it is written
    if (!document.hidden && document.querySelector('#archive tr[data-analysis="pending"]')) loadArchive();
  }, ARCHIVE_POLL_MS);
}

// -- wiring -----------------------------------------------------------------------------------------------------

function init() {
  loadSettings();
  $('set-autocommit').addEventListener('change', saveSettings);
  $('set-animate').addEventListener('change', saveSettings);
  $('login-form').addEventListener('submit', (e) => {
    e.preventDefault();
    send({ type: 'login', name: $('login-name').value.trim(), password: $('login-password').value });
  });
  $('btn-register').addEventListener('click', () => {
    send({ type: 'register', name: $('login-name').value.trim(), password: $('login-password').value });
  });
  $('btn-logout').addEventListener('click', () => { saveLogin(null); send({ type: 'logout' }); });
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
  $('btn-undo').addEventListener('click', undo);
  $('move-form').addEventListener('submit', onTypedMove);
  $('btn-flip').addEventListener('click', () => {
    if (app.board) send({ type: 'watch', match: app.board.match, seat: app.board.seats[1] });
  });
  $('btn-unwatch').addEventListener('click', () => { send({ type: 'unwatch' }); showLobbyOnly(); });
  $('btn-lobby').addEventListener('click', showLobbyOnly);
  $('btn-describe').addEventListener('click', () => {
    const box = $('board-text');
    box.hidden = !box.hidden;
    $('btn-describe').setAttribute('aria-expanded', String(!box.hidden));
    if (!box.hidden) { describeBoard(); box.focus({ preventScroll: true }); }
  });
  $('movelist').addEventListener('click', (e) => {
    const cell = e.target.closest('td.mv');
    if (cell) cell.classList.toggle('open');
  });
  $('movelist').addEventListener('keydown', (e) => {
    const cell = e.target.closest('td.mv');
    if (cell && (e.key === 'Enter' || e.key === ' ')) { e.preventDefault(); cell.classList.toggle('open'); }
  });
  $('chat-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const text = $('chat-text').value.trim();
    if (!text) return;
    send({ type: 'chat', text, scope: $('chat-scope').value });
    $('chat-text').value = '';
  });
  document.addEventListener('keydown', (e) => { // Escape takes back one step, wherever the focus is
    if (e.key === 'Escape' && app.partial.length && !app.sent) undo();
  });
  const svg = $('board');
  svg.addEventListener('pointerdown', onPointerDown);
  svg.addEventListener('pointerup', onPointerUp);
  renderInvitations();
  initViewer();
  connect();
}

document.addEventListener('DOMContentLoaded', init);
