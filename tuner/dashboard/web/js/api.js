// The dashboard's JSON API (docs/dashboard.md), from the page's own origin.

// GET /api/PATH?PARAMS: the answer's JSON, or an Error with the API's message ({"error": ...}).
export async function get(path, params) {
  const query = new URLSearchParams(params || {}).toString();
  const res = await fetch('/api/' + path + (query ? '?' + query : ''), { cache: 'no-store' });
  const body = await res.json().catch(() => ({ error: res.statusText }));
  if (!res.ok) throw new Error(body.error || res.statusText);
  return body;
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
