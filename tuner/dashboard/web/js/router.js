// The address picks the view (#/, #/models, #/model/JOB, #/task/ID, #/compare?workload=KEY), and
// live updates keep it current. A view is an object from its module's factory, view(ctx, route):
//   mount(root)  fetches its data, then builds its skeleton into `root` and shows the data
//   poll()       fetches what is new and updates its tables and charts in place
//   pollAlways   poll on every refresh, not only when the newest trial id moved
//   resize()     (optional) fits its charts to a resized window
//   dispose()    (optional) releases its charts when the page leaves it
import * as api from './api.js';
import { h, setLive, showError } from './dom.js';

// An address's view name, its one path argument (the id of #/model/ID and #/task/ID) and its query.
export function parseRoute(hash) {
  const [path, query] = (hash || '#/').replace(/^#/, '').split('?');
  const segments = path.split('/').filter(Boolean);
  return { name: segments[0] || 'overview', arg: segments[1], params: new URLSearchParams(query || '') };
}

// The id in an address: a non-negative integer, or an Error naming what the address holds.
export function routeId(route) {
  const id = Number(route.arg);
  if (route.arg === undefined || route.arg === '' || !Number.isInteger(id) || id < 0) {
    throw new Error('bad id in the address: ' + (route.arg ?? '(none)'));
  }
  return id;
}

// Which header link a view lights up.
export function navOf(name) {
  return name === 'model' || name === 'task' ? 'models' : name;
}

function now() {
  return 'updated ' + new Date().toLocaleTimeString();
}

export class Router {
  // root: the element views draw into; views: name -> factory; ctx: what views share ({db, config}).
  constructor({ root, views, ctx }) {
    this.root = root;
    this.views = views;
    this.ctx = ctx;
    this.view = null;
    this.lastId = null; // the newest trial id when the view last caught up
    this.queue = Promise.resolve();
  }

  // Showing a view and refreshing it both await the API before they touch #view. Run concurrently,
  // a refresh of the previous view that started before a navigation could paint over the new view
  // after it (the address says Model, the page shows the Overview). So they take turns.
  exclusive(fn) {
    const run = this.queue.then(fn);
    this.queue = run.catch(() => {});
    return run;
  }

  route() {
    return this.exclusive(() => this.show());
  }

  // Every 2 s: one cheap answer (the newest trial id); only when it moved does the view fetch what
  // is new. The overview also shows the farm, which changes without new trials: it polls every time.
  refresh() {
    return this.exclusive(async () => {
      try {
        const { last_id: last } = await api.get('last', { db: this.ctx.db });
        const moved = last !== this.lastId;
        this.lastId = last;
        if (this.view && (moved || this.view.pollAlways)) await this.view.poll();
        setLive(now());
        showError(null);
      } catch (err) {
        showError(err);
      }
    });
  }

  resize() {
    if (this.view && this.view.resize) this.view.resize();
  }

  async show() {
    const route = parseRoute(location.hash);
    const nav = navOf(route.name);
    for (const a of document.querySelectorAll('header nav a')) a.classList.toggle('active', a.dataset.nav === nav);
    if (this.view && this.view.dispose) this.view.dispose();
    this.view = null;
    delete document.body.dataset.view; // set again only once the new view is on the page
    const make = this.views[route.name];
    if (!make) {
      this.root.replaceChildren(h('p', { class: 'status-bad' }, 'No view ' + route.name));
      return;
    }
    let view = null;
    try {
      // The newest id before the view's data: what commits meanwhile is new to the next refresh.
      this.lastId = (await api.get('last', { db: this.ctx.db })).last_id;
      view = make(this.ctx, route);
      await view.mount(this.root);
      this.view = view;
      document.body.dataset.view = route.name;
      showError(null);
      setLive(now());
    } catch (err) {
      if (view && view.dispose) view.dispose();
      this.root.replaceChildren(
        h('h1', {}, 'Cannot show this view'),
        h('p', { class: 'status-bad' }, String(err.message || err)),
      );
    }
  }
}
