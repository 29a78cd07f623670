// ONNX Runtime's output for every model export_quantized.py wrote: OUT/<model>/output.npy from
// model.onnx run on input.npy (float32). The references of tunefarm's quantized test set
// (tests/compiler/quantized_models_test.cc): ONNX Runtime, not PyTorch, whose qnnpack rounds
// differently from ONNX's spec.
//
//   npm install --no-save --ignore-scripts --prefix tools/quantized_models onnxruntime-node
//   node tools/quantized_models/ort_reference.mjs OUT
//
// One thread, all graph optimizations off (ORT_DISABLE_ALL): the operators as the spec computes them,
// not ONNX Runtime's fused int8 kernels, whose intermediate rounding may differ by a step.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const ort = require(path.join(path.dirname(new URL(import.meta.url).pathname), 'node_modules', 'onnxruntime-node'));

// A little-endian float32 .npy: its shape and values.
function readNpy(file) {
  const buf = fs.readFileSync(file);
  const headerLen = buf.readUInt16LE(8);
  const header = buf.toString('latin1', 10, 10 + headerLen);
  if (!header.includes("'descr': '<f4'")) throw new Error(`${file}: only float32 .npy files are read`);
  const shape = header.match(/'shape': \(([^)]*)\)/)[1].split(',').map((s) => s.trim()).filter(Boolean).map(Number);
  const data = new Float32Array(buf.buffer.slice(buf.byteOffset + 10 + headerLen, buf.byteOffset + buf.length));
  return { shape, data };
}

function writeNpy(file, shape, data) {
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
  while ((10 + header.length + 1) % 64 !== 0) header += ' ';
  header += '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  fs.writeFileSync(file, Buffer.concat([head, Buffer.from(header, 'latin1'), Buffer.from(data.buffer)]));
}

const root = process.argv[2];
if (!root) {
  console.error('usage: node ort_reference.mjs OUT   (the directory export_quantized.py wrote)');
  process.exit(2);
}
let failed = 0;
for (const model of fs.readdirSync(root).sort()) {
  const dir = path.join(root, model);
  if (!fs.existsSync(path.join(dir, 'model.onnx')) || !fs.existsSync(path.join(dir, 'input.npy'))) continue;
  try {
    const session = await ort.InferenceSession.create(path.join(dir, 'model.onnx'), {
      intraOpNumThreads: 1,
      graphOptimizationLevel: 'disabled',
    });
    const x = readNpy(path.join(dir, 'input.npy'));
    const feeds = { [session.inputNames[0]]: new ort.Tensor('float32', x.data, x.shape) };
    const out = (await session.run(feeds))[session.outputNames[0]];
    const values = out.type === 'float32' ? out.data : Float32Array.from(out.data, Number);
    writeNpy(path.join(dir, 'output.npy'), out.dims, values);
    console.log(`${model}: ${out.type} output [${out.dims.join(', ')}]`);
  } catch (e) {
    failed += 1;
    console.error(`${model}: ONNX Runtime failed: ${e.message}`);
  }
}
process.exit(failed ? 1 : 0);
