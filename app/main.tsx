/** The dashboard: sign-in, the shell with its navigation, and the routes (hash based, under /app/). */
import { render } from "preact";
import { useMemo, useState } from "preact/hooks";
import { client, forgetSession, loadSession, ProblemError, type Session, signIn } from "./api";
import { AssetPage, AssetsPage } from "./assets";
import { IncidentPage, IncidentsPage } from "./incidents";
import { SettingsPage } from "./settings";
import { ErrorBox, useRoute } from "./ui";

function SignIn({ onSignedIn }: { onSignedIn: (s: Session) => void }) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const tenant = (form.elements.namedItem("tenant") as HTMLInputElement).value.trim();
    const key = form.elements.namedItem("api_key") as HTMLInputElement;
    setBusy(true);
    setError(undefined);
    try {
      const session = await signIn(tenant, key.value.trim());
      key.value = "";
      onSignedIn(session);
    } catch (err) {
      setError(err instanceof ProblemError ? err.detail : String(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="signin">
      <h1>Data quality monitor</h1>
      <form onSubmit={submit} class="card" aria-label="Sign in">
        <label>
          Tenant
          <input name="tenant" required autoComplete="organization" pattern="[a-z][a-z0-9\-]{1,62}[a-z0-9]" />
        </label>
        <label>
          API key
          <input name="api_key" type="password" required autoComplete="off" />
        </label>
        {error && <ErrorBox message={error} />}
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        <p class="muted">The key is exchanged for a short-lived token; only the token is kept, for this tab.</p>
      </form>
    </main>
  );
}

function App() {
  const [session, setSession] = useState(loadSession);
  const route = useRoute();
  const signOut = () => {
    forgetSession();
    setSession(null);
  };
  const dq = useMemo(() => (session ? client(session) : null), [session?.token]);
  if (!session || !dq) return <SignIn onSignedIn={setSession} />;
  const ctx = { dq, session, signOut };
  const [page, a, b] = route;
  let body = <AssetsPage {...ctx} />;
  if (page === "assets" && a && b) body = <AssetPage ctx={ctx} projectId={Number(a)} assetId={Number(b)} />;
  else if (page === "incidents" && a) body = <IncidentPage ctx={ctx} id={Number(a)} />;
  else if (page === "incidents") body = <IncidentsPage {...ctx} />;
  else if (page === "settings") body = <SettingsPage {...ctx} />;
  const current = page === "incidents" || page === "settings" ? page : "assets";
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header>
        <span class="brand">DQ monitor · {session.tenant}</span>
        <nav aria-label="Main">
          <a href="#/assets" aria-current={current === "assets" ? "page" : undefined}>
            Assets
          </a>
          <a href="#/incidents" aria-current={current === "incidents" ? "page" : undefined}>
            Incidents
          </a>
          <a href="#/settings" aria-current={current === "settings" ? "page" : undefined}>
            Settings
          </a>
        </nav>
        <button type="button" class="link" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main id="main">{body}</main>
    </>
  );
}

render(<App />, document.getElementById("root")!);
