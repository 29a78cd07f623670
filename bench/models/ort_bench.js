// ONNX Runtime latency for bench_models.py: node ort_bench.js MODEL.onnx THREADS REPEAT [DIMS]
// Prints one JSON line {median_ms, min_ms, mean_ms}. Input: the model's first input, of shape DIMS
// ("1x3x224x224", the default), filled with a fixed pseudo-random pattern (latency does not depend
// on the values).
const ort = require('onnxruntime-node');

async function main() {
  const [model, threads, repeat] = [process.argv[2], parseInt(process.argv[3]), parseInt(process.argv[4])];
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'all', executionMode: 'sequential'});
  const name = session.inputNames[0];
  const dims = (process.argv[5] || '1x3x224x224').split('x').map((d) => parseInt(d));
  const data = new Float32Array(dims.reduce((a, b) => a * b));
  for (let i = 0; i < data.length; ++i) data[i] = ((i * 2654435761) % 1000) / 1000;
  const feeds = {[name]: new ort.Tensor('float32', data, dims)};
  for (let i = 0; i < 3; ++i) await session.run(feeds);
  const ms = [];
  for (let i = 0; i < repeat; ++i) {
    const t0 = process.hrtime.bigint();
    await session.run(feeds);
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  ms.sort((a, b) => a - b);
  const mid = ms.length >> 1;
  const median = ms.length % 2 ? ms[mid] : (ms[mid - 1] + ms[mid]) / 2;
  console.log(JSON.stringify({median_ms: median, min_ms: ms[0], mean_ms: ms.reduce((a, b) => a + b) / ms.length}));
}
main().catch((e) => { console.error(e.message); process.exit(1); });
