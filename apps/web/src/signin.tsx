import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, session } from './api.js';

/** Sign-in with the access password; a lockout shows its wait from Retry-After, counting down. */
export function SignIn(props: { onSignedIn: () => void; notice?: string }) {
  const [token, setToken] = useState('');
  const [message, setMessage] = useState(props.notice ?? '');
  const [busy, setBusy] = useState(false);
  const [lockedUntil, setLockedUntil] = useState(0);
  const [now, setNow] = useState(Date.now());

  useEffect(() => {
    if (lockedUntil <= now) return;
    const t = setTimeout(() => setNow(Date.now()), 1000);
    return () => clearTimeout(t);
  }, [lockedUntil, now]);
  const wait = Math.max(0, Math.ceil((lockedUntil - now) / 1000));

  async function submit(e: Event) {
    e.preventDefault();
    setBusy(true);
    setMessage('Checking…');
    try {
      await api.post('/api/remote/login', { token });
      session.set(token);
      props.onSignedIn();
    } catch (err) {
      const error = err as ApiError;
      if (error.status === 429) {
        setLockedUntil(Date.now() + (error.retryAfter ?? 60) * 1000);
        setNow(Date.now());
        setMessage(error.message);
      } else setMessage(error.status === 401 ? 'Wrong password.' : error.message);
    } finally {
      setBusy(false);
    }
  }

  return (
    <main class="signin">
      <form class="panel stack" onSubmit={submit} aria-describedby="signin-message">
        <h1>svc-server</h1>
        <p class="muted">Sign in with the access password.</p>
        <label for="token">Access password</label>
        <input
          id="token"
          type="password"
          autoComplete="current-password"
          required
          minLength={8}
          maxLength={64}
          value={token}
          onInput={(e) => setToken(e.currentTarget.value)}
        />
        <button type="submit" class="primary" disabled={busy || wait > 0}>
          {wait > 0 ? `Locked — try again in ${wait} s` : 'Sign in'}
        </button>
        <p id="signin-message" role="status" class={message && !busy ? 'error' : 'muted'}>
          {message}
          {wait > 0 && ` Try again in ${wait} s.`}
        </p>
      </form>
    </main>
  );
}

/** `?token=` signs in directly; the token is taken out of the address bar at once. */
export async function signInFromLink(): Promise<boolean> {
  const url = new URL(location.href);
  const token = url.searchParams.get('token');
  if (!token) return false;
  url.searchParams.delete('token');
  history.replaceState(null, '', url.toString());
  try {
    await api.post('/api/remote/login', { token });
    session.set(token);
    return true;
  } catch {
    return false;
  }
}
