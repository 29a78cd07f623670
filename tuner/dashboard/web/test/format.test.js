// The page's number and time formats, and its addresses.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import * as fmt from '../js/format.js';
import { navOf, parseRoute, routeId } from '../js/router.js';

describe('format', () => {
  it('writes a missing value as a dash', () => {
    for (const f of [fmt.num, fmt.ms, fmt.int, fmt.duration]) {
      assert.equal(f(null), fmt.DASH);
      assert.equal(f(undefined), fmt.DASH);
    }
    assert.equal(fmt.flops(0), fmt.DASH);
    assert.equal(fmt.clock(0), fmt.DASH);
  });

  it('writes numbers as the tables show them', () => {
    assert.equal(fmt.num(14.4507), '14.45');
    assert.equal(fmt.num(3.25, 1), '3.3');
    assert.equal(fmt.num(0), '0.00');
    assert.equal(fmt.ms(0.000123456), '0.0001235');
    assert.equal(fmt.ms(1234.5), '1235');
    assert.equal(fmt.int(1806336), '1,806,336');
    assert.equal(fmt.flops(1806336), '1.81 M');
    assert.equal(fmt.flops(3.6e12), '3.60 T');
    assert.equal(fmt.flops(640), '640');
  });

  it('writes durations in the unit that reads best', () => {
    assert.equal(fmt.duration(42.4), '42 s');
    assert.equal(fmt.duration(95.5), '2 min');
    assert.equal(fmt.duration(5400), '1.5 h');
  });
});

describe('routes', () => {
  it('reads the view, its id and its query from the address', () => {
    const overview = parseRoute('');
    assert.equal(overview.name, 'overview');
    assert.equal(parseRoute('#/').name, 'overview');
    const task = parseRoute('#/task/12');
    assert.deepEqual([task.name, routeId(task)], ['task', 12]);
    const compare = parseRoute('#/compare?workload=' + encodeURIComponent('dense|N1_I32|O10|NC|float32'));
    assert.equal(compare.name, 'compare');
    assert.equal(compare.params.get('workload'), 'dense|N1_I32|O10|NC|float32');
    assert.equal(routeId(parseRoute('#/model/0')), 0, 'job 0: trials outside every run');
  });

  it('names a bad id', () => {
    assert.throws(() => routeId(parseRoute('#/task/abc')), /bad id in the address: abc/);
    assert.throws(() => routeId(parseRoute('#/task/-3')), /bad id in the address: -3/);
    assert.throws(() => routeId(parseRoute('#/task/1.5')), /bad id in the address: 1.5/);
    assert.throws(() => routeId(parseRoute('#/model')), /bad id in the address: \(none\)/);
  });

  it('lights up Models for a model and a task', () => {
    assert.equal(navOf('model'), 'models');
    assert.equal(navOf('task'), 'models');
    assert.equal(navOf('compare'), 'compare');
  });
});
