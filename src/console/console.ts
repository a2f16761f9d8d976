/**
 * The admin console (/console): one same-origin page over the REST API, signed in with the system
 * pages' session cookie. A section is a collection: its list (with a JSON filter), a create form
 * (JSON, or the fields of a user), and per-row actions where the API has them. Plain HTML and one
 * script, no external assets, under the pages' strict content security policy.
 */
import { assetRoute, pageRoute } from '../pages/layout'

const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Console</title>
<link rel="stylesheet" href="/pages/assets/pages.css">
<link rel="stylesheet" href="/console/console.css">
<script src="/console/app.js" defer></script>
</head>
<body>
<header><strong>Console</strong> <span id="who"></span></header>
<nav id="sections" aria-label="Sections"></nav>
<main>
<h1 id="title">Console</h1>
<div id="signin" hidden><p>Sign in first: <a href="/pages/sign-in">sign in</a>, then come back here.</p></div>
<section id="view" hidden>
<form id="query"><label for="filter">Filter (JSON)</label> <input id="filter" name="filter" placeholder='{"login":"ann"}'>
<span id="extra"></span><button type="submit">Load</button></form>
<form id="create" hidden><h2>New</h2><div id="create-fields"></div><button type="submit">Create</button></form>
<div id="status" role="status" aria-live="polite"></div>
<table id="items"><thead></thead><tbody></tbody></table>
</section>
</main>
</body>
</html>`

const css = `main{max-width:none;margin:1rem}header{padding:.5rem 1rem;border-bottom:1px solid #ccc}nav{display:flex;flex-wrap:wrap;gap:.25rem;padding:.5rem 1rem}
nav button[aria-current]{font-weight:bold}table{border-collapse:collapse;margin-top:1rem;font-size:.85rem}
td,th{border:1px solid #ddd;padding:.2rem .4rem;text-align:left;vertical-align:top;max-width:28rem;overflow-wrap:anywhere}
#create textarea{width:100%;min-height:6rem}#query input{min-width:18rem}`

const script = String.raw`'use strict';
(function () {
  // each section: its collection, what a row may do, and how something new is made
  var SECTIONS = [
    { name: 'Domains', url: '/rest/v1/domain/domains', create: 'json' },
    { name: 'Users', url: '/rest/v1/domain/users', create: 'user', del: true },
    { name: 'Groups', url: '/rest/v1/domain/groups', create: 'json', del: true },
    { name: 'Roles', url: '/rest/v1/domain/roles', create: 'json', del: true },
    { name: 'Classes', url: '/rest/v1/design/classes', create: 'json', del: true },
    { name: 'Records', url: '/rest/v1/model/', create: 'json', path: 'classname' },
    { name: 'Journal', url: '/rest/v1/journal/changes', journal: true },
    { name: 'Channels', url: '/rest/v1/service/integration_points', create: 'json', deliveries: true },
    { name: 'Nodes', url: '/rest/v1/master/nodes', logLevel: true },
    { name: 'Script handlers', url: '/rest/v1/service/svcscript_runtimes', stop: true }
  ];
  var current = null;
  var $ = function (id) { return document.getElementById(id); };
  function say(text, isError) { $('status').textContent = text; $('status').className = isError ? 'error' : 'ok'; }
  function api(method, url, body) {
    var init = { method: method, credentials: 'same-origin', headers: {} };
    if (body !== undefined) { init.headers['content-type'] = 'application/json'; init.body = JSON.stringify(body); }
    return fetch(url, init).then(function (r) {
      return r.text().then(function (t) {
        var data = t ? JSON.parse(t) : null;
        if (!r.ok) throw new Error((data && data.error_message) || ('HTTP ' + r.status));
        return data;
      });
    });
  }
  function cell(v) { return v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v); }
  function button(text, onClick) { var b = document.createElement('button'); b.type = 'button'; b.textContent = text; b.addEventListener('click', onClick); return b; }
  function input(id, label, placeholder) {
    var l = document.createElement('label'); l.htmlFor = id; l.textContent = ' ' + label + ' ';
    var i = document.createElement('input'); i.id = id; i.name = id; i.placeholder = placeholder || '';
    var span = document.createElement('span'); span.appendChild(l); span.appendChild(i); return span;
  }
  function collectionUrl() {
    if (current.path) return current.url + ($('path-value').value || '').replace(/^\/+/, '');
    if (current.deliveries && $('channel').value) return current.url + '/' + $('channel').value + '/deliveries';
    return current.url;
  }
  function render(items) {
    var rows = Array.isArray(items) ? items : [items];
    var cols = [];
    rows.forEach(function (r) { Object.keys(r || {}).forEach(function (k) { if (cols.indexOf(k) < 0) cols.push(k); }); });
    var head = $('items').tHead; head.innerHTML = '';
    var hr = head.insertRow(); cols.concat(['']).forEach(function (c) { var th = document.createElement('th'); th.textContent = c; hr.appendChild(th); });
    var body = $('items').tBodies[0]; body.innerHTML = '';
    rows.forEach(function (r) {
      var tr = body.insertRow();
      cols.forEach(function (c) { tr.insertCell().textContent = cell(r[c]); });
      var actions = tr.insertCell();
      var id = r.id || r.name;
      if (current.del && r.id) actions.appendChild(button('Delete', function () { api('DELETE', collectionUrl() + '/' + r.id).then(load, fail); }));
      if (current.stop && r.id) actions.appendChild(button('Stop', function () { api('DELETE', collectionUrl() + '/' + r.id).then(load, fail); }));
      if (current.logLevel && id) ['info', 'debug'].forEach(function (level) {
        actions.appendChild(button('Log ' + level, function () { api('PATCH', current.url + '/' + id, { maxLogLevel: level }).then(load, fail); }));
      });
    });
    say(rows.length + ' item(s)');
  }
  function fail(err) { say(err.message, true); }
  function load() {
    var q = [];
    var filter = $('filter').value.trim();
    if (filter) q.push('filter=' + encodeURIComponent(filter));
    if (current.journal) {
      var params = {};
      ['objtype', 'objid', 'dtstart'].forEach(function (k) { var v = $('j-' + k).value.trim(); if (v) params[k] = v; });
      if (!params.objtype && !params.dtstart) params.dtstart = new Date(Date.now() - 86400000).toISOString();
      q.push('params=' + encodeURIComponent(JSON.stringify(params)));
    }
    var url = collectionUrl();
    return api('GET', url + (q.length ? '?' + q.join('&') : '')).then(render, fail);
  }
  function open(section, navButton) {
    current = section;
    Array.prototype.forEach.call($('sections').children, function (b) { b.removeAttribute('aria-current'); });
    navButton.setAttribute('aria-current', 'page');
    $('title').textContent = section.name;
    $('view').hidden = false;
    $('filter').value = '';
    var extra = $('extra'); extra.innerHTML = '';
    if (section.path) extra.appendChild(input('path-value', 'Class', 'crm/deals'));
    if (section.deliveries) extra.appendChild(input('channel', 'Deliveries of channel id', ''));
    if (section.journal) ['objtype', 'objid', 'dtstart'].forEach(function (k) { extra.appendChild(input('j-' + k, k, '')); });
    var form = $('create'), fields = $('create-fields');
    fields.innerHTML = '';
    form.hidden = !section.create;
    if (section.create === 'user') {
      fields.appendChild(input('u-login', 'Login', 'ann'));
      fields.appendChild(input('u-name', 'Name', 'Ann'));
      fields.appendChild(input('u-pwd', 'Password', ''));
      $('u-pwd').type = 'password';
      fields.appendChild(input('u-roles', 'Roles (comma list)', 'user'));
    } else if (section.create) {
      var t = document.createElement('textarea'); t.id = 'c-json'; t.setAttribute('aria-label', 'New item (JSON)');
      fields.appendChild(t);
    }
    $('items').tHead.innerHTML = ''; $('items').tBodies[0].innerHTML = '';
    if (!section.path && !section.journal) load(); else say('');
  }
  $('query').addEventListener('submit', function (e) { e.preventDefault(); load(); });
  $('create').addEventListener('submit', function (e) {
    e.preventDefault();
    var body;
    try {
      body = current.create === 'user'
        ? { login: $('u-login').value, name: $('u-name').value, pwd: $('u-pwd').value,
            roles: $('u-roles').value.split(',').map(function (s) { return s.trim(); }).filter(Boolean) }
        : JSON.parse($('c-json').value || '{}');
    } catch (err) { return say('The new item is not valid JSON', true); }
    api('POST', collectionUrl(), body).then(function (made) { say('Created ' + (made && made.id || '')); return load(); }, fail);
  });
  api('GET', '/rest/v1/iam/sessions/current').then(function (s) {
    $('who').textContent = s.name_login + ' in ' + s.domain;
    SECTIONS.forEach(function (section) {
      var b = button(section.name, function () { open(section, b); });
      $('sections').appendChild(b);
    });
  }, function () { $('signin').hidden = false; });
})();
`

export const consolePage = pageRoute(html)
export const consoleScript = assetRoute(script, 'text/javascript; charset=utf-8')
export const consoleStyle = assetRoute(css, 'text/css; charset=utf-8')
