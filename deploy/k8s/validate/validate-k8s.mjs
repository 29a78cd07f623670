#!/usr/bin/env node
// node validate-k8s.mjs DIR
// Validates every Kubernetes object in the *.yaml / *.yml files under DIR (recursively; multi-document;
// node_modules skipped; DIR may also be a file) against its kind's JSON schema (kubernetes-models,
// Kubernetes 1.34) and rejects fields the API does not know (the models of @kubernetes/client-node).
// YAML is read as YAML 1.1, as kubectl reads it (0440 is octal, `on` is true).
// Prints "ok KIND NAMESPACE/NAME" per valid object and "error FILE#DOC KIND NAMESPACE/NAME: MESSAGE" per
// problem (DOC counts from 0). Exits 1 on any error and when DIR holds no object; 2 on a usage error.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';
// Only the generated models (plain classes with their attribute maps): the client itself is not loaded.
import * as models from '@kubernetes/client-node/dist/gen/models/ObjectSerializer.js';

const dir = process.argv[2];
if (!dir || process.argv.length > 3) {
  console.error('usage: node validate-k8s.mjs DIR');
  process.exit(2);
}

function yamlFiles(d) {
  return readdirSync(d, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((e) => (e.isDirectory() ? (e.name === 'node_modules' ? [] : yamlFiles(join(d, e.name)))
                                      : /\.ya?ml$/.test(e.name) ? [join(d, e.name)] : []));
}

// The client-node model of apiVersion/kind: V1Deployment, or a group-qualified one (CoreV1Event) where names clash.
function modelFor(apiVersion, kind) {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['core', apiVersion];
  const v = version[0].toUpperCase() + version.slice(1);
  const g = group.split('.')[0].replace(/^./, (c) => c.toUpperCase());
  return [g + v + kind, v + kind].find((name) => typeof models[name]?.getAttributeTypeMap === 'function');
}

// Paths of the fields of `value` that model type `type` does not declare.
function unknownFields(value, type, path, out) {
  if (value === null || value === undefined) return out;
  const array = /^Array<(.+)>$/.exec(type), map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (array && Array.isArray(value)) value.forEach((v, i) => unknownFields(v, array[1], `${path}[${i}]`, out));
  else if (map && typeof value === 'object') for (const [k, v] of Object.entries(value)) unknownFields(v, map[1], `${path}[${k}]`, out);
  else if (typeof models[type]?.getAttributeTypeMap === 'function' && typeof value === 'object' && !Array.isArray(value)) {
    const attrs = new Map(models[type].getAttributeTypeMap().map((a) => [a.baseName, a.type]));
    for (const [k, v] of Object.entries(value)) {
      const p = path ? `${path}.${k}` : k;
      if (attrs.has(k)) unknownFields(v, attrs.get(k), p, out);
      else out.push(`unknown field "${p}"`);
    }
  }
  return out;
}

async function check(obj) {
  if (typeof obj !== 'object' || Array.isArray(obj)) return ['not a Kubernetes object (a mapping with apiVersion and kind)'];
  const { apiVersion, kind } = obj;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') return ['apiVersion and kind must be strings'];
  let Model;
  try {
    Model = (await import(`kubernetes-models/${apiVersion}`))[kind];
  } catch {}
  const modelName = modelFor(apiVersion, kind);
  if (typeof Model !== 'function' || !modelName) return [`no schema for kind ${kind} in ${apiVersion}`];
  const errors = [];
  if (typeof obj.metadata?.name !== 'string' || obj.metadata.name === '') errors.push('metadata.name is missing');
  try {
    new Model(obj).validate();
  } catch (e) {
    errors.push(e.message);
  }
  return errors.concat(unknownFields(obj, modelName, '', []));
}

let files;
try {
  files = statSync(dir).isDirectory() ? yamlFiles(dir) : [dir];
} catch (e) {
  console.log(`error ${dir}: ${e.message}`);
  process.exit(1);
}
let objects = 0, failures = 0;
const seen = new Set();
for (const file of files) {
  const shown = relative(process.cwd(), file) || file;
  const docs = parseAllDocuments(readFileSync(file, 'utf8'), { version: '1.1', uniqueKeys: true });
  for (const [i, doc] of docs.entries()) {
    const where = `${shown}#${i}`;
    if (doc.errors.length) {
      for (const e of doc.errors) console.log(`error ${where}: ${e.message.split('\n')[0].replace(/:$/, '')}`);
      failures += doc.errors.length;
      continue;
    }
    const obj = doc.toJS();
    if (obj === null || obj === undefined) continue;  // an empty document (a trailing ---)
    ++objects;
    const id = `${obj?.kind ?? '?'} ${obj?.metadata?.namespace ? obj.metadata.namespace + '/' : ''}${obj?.metadata?.name ?? '?'}`;
    const errors = await check(obj);
    if (seen.has(`${obj?.apiVersion} ${id}`)) errors.push(`a second ${id}`);
    seen.add(`${obj?.apiVersion} ${id}`);
    for (const e of errors) console.log(`error ${where} ${id}: ${e}`);
    if (errors.length === 0) console.log(`ok ${id}`);
    failures += errors.length;
  }
}
if (objects === 0) {
  console.log(`error ${dir}: no Kubernetes objects in *.yaml files there`);
  process.exit(1);
}
console.log(`${objects} objects, ${failures} errors`);
process.exit(failures ? 1 : 0);
