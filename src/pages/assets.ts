/** The one script and stylesheet of the system pages, served from the service itself. */
import { assetRoute } from './layout'

const script = `'use strict';
(function () {
  var id = new URLSearchParams(location.search).get('id') || '';
  var status = document.getElementById('status');
  var form = document.querySelector('form[data-api]');
  function say(text, isError) {
    status.textContent = text;
    status.className = isError ? 'error' : 'ok';
  }
  function mark(name) {
    Array.prototype.forEach.call(form.elements, function (el) { el.removeAttribute('aria-invalid'); });
    var el = name && form.elements[name];
    if (el) { el.setAttribute('aria-invalid', 'true'); el.focus(); }
  }
  function showSession() {
    var who = document.getElementById('whoami');
    if (!who) return;
    fetch('/rest/v1/iam/sessions/current', { credentials: 'same-origin' }).then(function (r) {
      if (!r.ok) return;
      return r.json().then(function (s) {
        who.textContent = 'Signed in as ' + s.name_login + ' in ' + s.domain + '.';
        who.hidden = false;
        document.getElementById('sign-out').hidden = false;
        form.hidden = true;
      });
    });
  }
  if (form.hasAttribute('data-needs-id') && !/^[0-9a-f-]{36}$/.test(id)) {
    form.hidden = true;
    say('This link is incomplete. Open the whole link from your e-mail.', true);
    return;
  }
  var signOut = document.getElementById('sign-out');
  if (signOut) signOut.addEventListener('click', function () {
    fetch('/rest/v1/iam/sessions/current', { method: 'DELETE', credentials: 'same-origin' }).then(function () { location.reload(); });
  });
  showSession();
  form.addEventListener('submit', function (event) {
    event.preventDefault();
    var body = {};
    Array.prototype.forEach.call(form.elements, function (el) {
      if (el.name && el.name !== 'confirm' && el.value !== '') body[el.name] = el.value;
    });
    var missing = Array.prototype.filter.call(form.elements, function (el) { return el.required && !el.value; })[0];
    if (missing) { mark(missing.name); return say('Please fill in: ' + form.querySelector('label[for="' + missing.id + '"]').textContent + '.', true); }
    if (form.dataset.confirm && form.elements.confirm.value !== body.pwd) { mark('confirm'); return say('The two passwords differ.', true); }
    say('Sending...', false);
    fetch(form.dataset.api.replace('{id}', id), {
      method: form.dataset.method,
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body)
    }).then(function (res) {
      if (res.ok) {
        mark(null);
        form.reset();
        form.hidden = true;
        say(form.dataset.success, false);
        showSession();
        return;
      }
      return res.json().catch(function () { return {}; }).then(function (err) {
        var field = err.error_details && err.error_details.field;
        mark(field === 'current_pwd' ? 'pwd' : field);
        var wait = res.headers.get('retry-after');
        say((err.error_message || ('The request failed (' + res.status + ').')) + (wait ? ' Try again in ' + wait + ' seconds.' : ''), true);
      });
    }, function () { say('The service cannot be reached. Try again.', true); });
  });
})();
`

const style = `body{font-family:system-ui,sans-serif;margin:0;background:#f5f6f8;color:#1b1e23}
main{max-width:26rem;margin:3rem auto;padding:2rem;background:#fff;border-radius:.5rem;box-shadow:0 1px 4px rgba(0,0,0,.1)}
h1{font-size:1.5rem;margin-top:0}
.field{margin:1rem 0}
label{display:block;font-weight:600;margin-bottom:.25rem}
.hint{margin:.1rem 0 .3rem;color:#4a5160;font-size:.9rem}
input{width:100%;box-sizing:border-box;padding:.5rem;font-size:1rem;border:1px solid #8a919e;border-radius:.25rem}
input:focus,button:focus{outline:3px solid #2b6cd4;outline-offset:1px}
input[aria-invalid=true]{border-color:#b3261e}
button{padding:.55rem 1.2rem;font-size:1rem;border:0;border-radius:.25rem;background:#1f5bbf;color:#fff;cursor:pointer}
#status{margin-top:1rem;min-height:1.5rem}
#status.error{color:#b3261e}
#status.ok{color:#1d6b34}
`

export const pagesScript = assetRoute(script, 'text/javascript; charset=utf-8')
export const pagesStyle = assetRoute(style, 'text/css; charset=utf-8')
