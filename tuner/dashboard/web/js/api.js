// The dashboard's JSON API (docs/dashboard.md), from the page's own origin.

// GET /api/PATH?PARAMS: the answer's JSON, or an Error with the API's message ({"error": ...}).
// A busy dashboard (503: it answers a few expensive requests at a time) is asked again after its
// Retry-After, a few times.
export async function get(path, params) {
  const query = new URLSearchParams(params || {}).toString();
  for (let attempt = 0; ; ++attempt) {
    const res = await fetch('/api/' + path + (query ? '?' + query : ''), { cache: 'no-store' });
    const body = await res.json().catch(() => ({ error: res.statusText }));
    if (res.status === 503 && attempt < 8) {
      const seconds = Number(res.headers.get('Retry-After')) || 1;
      await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
      continue;
    }
    if (!res.ok) throw new Error(body.error || res.statusText);
    return body;
  }
}

// POST /api/jobs/cancel with the farm token; an Error naming the job when the dashboard refuses.
export async function cancelJob(id, token) {
  const res = await fetch('/api/jobs/cancel?id=' + encodeURIComponent(id), {
    method: 'POST',
    headers: { Authorization: 'Bearer ' + token },
  });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error('cancel job #' + id + ': ' + (body.error || res.statusText));
  return body;
}
