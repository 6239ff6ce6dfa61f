/**
 * The web app's page, served for every unknown GET path. For now a sign-in page: it checks
 * the password with POST /api/remote/login, keeps it for this tab only, and shows what the
 * server reports. The full browser app replaces it later.
 */
export function renderSignInPage(basePath: string, productName = 'svc-server'): string {
  const base = JSON.stringify(basePath);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${productName}</title>
<style>
  :root { color-scheme: light dark; font-family: system-ui, sans-serif; }
  body { display: grid; place-items: center; min-height: 100vh; margin: 0; }
  main { width: min(22rem, 90vw); }
  h1 { font-size: 1.4rem; margin-bottom: .25rem; }
  p.sub { margin-top: 0; opacity: .7; }
  label { display: block; margin: 1rem 0 .25rem; }
  input, button { width: 100%; box-sizing: border-box; padding: .6rem; font-size: 1rem; }
  button { margin-top: .75rem; cursor: pointer; }
  #message { min-height: 1.5rem; margin-top: .75rem; }
  .error { color: #c62828; } .ok { color: #2e7d32; }
</style>
</head>
<body>
<main>
  <h1>${productName}</h1>
  <p class="sub">AI assistant server</p>
  <form id="sign-in">
    <label for="token">Access password</label>
    <input id="token" name="token" type="password" autocomplete="current-password" required minlength="8" maxlength="64">
    <button type="submit">Sign in</button>
  </form>
  <div id="message" role="status"></div>
</main>
<script>
  const base = ${base};
  const form = document.getElementById('sign-in');
  const message = document.getElementById('message');
  function show(text, cls) { message.textContent = text; message.className = cls; }
  async function signedIn(token) {
    const res = await fetch(base + '/api/system/version', { headers: { Authorization: 'Bearer ' + token } });
    const body = await res.json();
    show('Signed in. Server version ' + body.data + '.', 'ok');
    form.hidden = true;
  }
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const token = document.getElementById('token').value;
    show('Checking…', '');
    try {
      const res = await fetch(base + '/api/remote/login', {
        method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ token }),
      });
      const body = await res.json();
      if (body.success) { sessionStorage.setItem('svc-token', token); await signedIn(token); }
      else if (res.status === 429) show(body.error + ' (retry in ' + (res.headers.get('Retry-After') || '?') + ' s)', 'error');
      else show(body.error || 'Sign-in failed', 'error');
    } catch (err) { show('Cannot reach the server', 'error'); }
  });
  const saved = sessionStorage.getItem('svc-token');
  if (saved) signedIn(saved).catch(() => sessionStorage.removeItem('svc-token'));
</script>
</body>
</html>
`;
}
