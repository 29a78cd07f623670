#include "bench/kernels/workloads.h"

namespace tunefarm::bench {

using compiler::Conv2dWorkload;

std::vector<BenchWorkload> BenchWorkloads() {
  std::vector<BenchWorkload> w;
  // ResNet-18, ANCHORS.md tasks 1-11 (conv) and 12 (dense).
  const int64_t resnet[11][6] = {{3, 224, 64, 7, 2, 3},   {64, 56, 64, 3, 1, 1},   {64, 56, 128, 3, 2, 1},
                                 {64, 56, 128, 1, 2, 0},  {128, 28, 128, 3, 1, 1}, {128, 28, 256, 3, 2, 1},
                                 {128, 28, 256, 1, 2, 0}, {256, 14, 256, 3, 1, 1}, {256, 14, 512, 3, 2, 1},
                                 {256, 14, 512, 1, 2, 0}, {512, 7, 512, 3, 1, 1}};
  for (int i = 0; i < 11; ++i) {
    const int64_t* r = resnet[i];
    w.push_back({"resnet18.t" + std::to_string(i + 1),
                 Conv2dWorkload(1, r[0], r[1], r[1], r[2], r[3], r[3], r[4], r[5]), true});
  }
  w.push_back({"resnet18.t12", compiler::DenseWorkload(1, 512, 1000), false});
  // MobileNetV2 (torchvision, 224x224): the stem, every distinct depthwise 3x3, a spread of 1x1
  // convs and the classifier.
  w.push_back({"mobilenet_v2.stem", Conv2dWorkload(1, 3, 224, 224, 32, 3, 3, 2, 1), false});
  w.push_back({"mobilenet_v2.classifier", compiler::DenseWorkload(1, 1280, 1000), false});
  const int64_t dw[][3] = {{32, 112, 1}, {96, 112, 2}, {144, 56, 1}, {144, 56, 2}, {192, 28, 1},
                           {192, 28, 2}, {384, 14, 1}, {576, 14, 1}, {576, 14, 2}, {960, 7, 1}};
  for (const auto& d : dw) {
    w.push_back({"mobilenet_v2.dw" + std::to_string(d[0]) + "s" + std::to_string(d[2]),
                 Conv2dWorkload(1, d[0], d[1], d[1], d[0], 3, 3, d[2], 1, 1, d[0]), false});
  }
  const int64_t pw[][3] = {{32, 16, 112}, {16, 96, 112}, {96, 24, 56},  {24, 144, 56}, {144, 32, 28},
                           {32, 192, 28}, {192, 64, 14}, {64, 384, 14}, {384, 96, 14}, {96, 576, 14},
                           {576, 160, 7}, {160, 960, 7}, {960, 320, 7}, {320, 1280, 7}};
  for (const auto& p : pw) {
    w.push_back({"mobilenet_v2.pw" + std::to_string(p[0]) + "_" + std::to_string(p[1]) + "@" + std::to_string(p[2]),
                 Conv2dWorkload(1, p[0], p[2], p[2], p[1], 1, 1, 1, 0), false});
  }
  // BERT-base at sequence 128 (issue 32): the fused QKV, attention output and FFN projections,
  // MatMuls over 128 token rows.
  const int64_t bert[][3] = {{768, 2304, 0}, {768, 768, 0}, {768, 3072, 0}, {3072, 768, 0}};
  const char* bert_names[] = {"qkv", "attn_out", "ffn1", "ffn2"};
  for (int i = 0; i < 4; ++i) {
    w.push_back(
        {std::string("bert_base.") + bert_names[i], compiler::DenseWorkload(128, bert[i][0], bert[i][1]), false});
  }
  // The attention products per layer (12 heads of 64): scores Q K^T and context A V.
  w.push_back({"bert_base.scores", compiler::BatchMatmulWorkload(12, 128, 64, 128), false});
  w.push_back({"bert_base.context", compiler::BatchMatmulWorkload(12, 128, 128, 64), false});
  // ViT-B/16: 197 tokens (196 patches and the class token), a prime row count.
  w.push_back({"vit_b_16.ffn1", compiler::DenseWorkload(197, 768, 3072), false});
  w.push_back({"vit_b_16.ffn2", compiler::DenseWorkload(197, 3072, 768), false});
  w.push_back({"vit_b_16.scores", compiler::BatchMatmulWorkload(12, 197, 64, 197), false});
  w.push_back({"vit_b_16.context", compiler::BatchMatmulWorkload(12, 197, 197, 64), false});
  return w;
}

std::vector<BenchWorkload> Int8BenchWorkloads() {
  std::vector<BenchWorkload> w;
  // torchvision's ResNet-50 (v1.5: the stride on the 3x3): in channels, size, out channels, kernel,
  // stride, padding, and the count of convolutions of that shape.
  const int64_t resnet50[][7] = {{3, 224, 64, 7, 2, 3, 1},    {64, 56, 64, 1, 1, 0, 1},    {64, 56, 64, 3, 1, 1, 3},
                                 {64, 56, 256, 1, 1, 0, 4},   {256, 56, 64, 1, 1, 0, 2},   {256, 56, 128, 1, 1, 0, 1},
                                 {128, 56, 128, 3, 2, 1, 1},  {128, 28, 512, 1, 1, 0, 4},  {256, 56, 512, 1, 2, 0, 1},
                                 {512, 28, 128, 1, 1, 0, 3},  {128, 28, 128, 3, 1, 1, 3},  {512, 28, 256, 1, 1, 0, 1},
                                 {256, 28, 256, 3, 2, 1, 1},  {256, 14, 1024, 1, 1, 0, 6}, {512, 28, 1024, 1, 2, 0, 1},
                                 {1024, 14, 256, 1, 1, 0, 5}, {256, 14, 256, 3, 1, 1, 5},  {1024, 14, 512, 1, 1, 0, 1},
                                 {512, 14, 512, 3, 2, 1, 1},  {512, 7, 2048, 1, 1, 0, 3},  {1024, 14, 2048, 1, 2, 0, 1},
                                 {2048, 7, 512, 1, 1, 0, 2},  {512, 7, 512, 3, 1, 1, 2}};
  for (const auto& r : resnet50) {
    BenchWorkload b{"resnet50." + std::to_string(r[0]) + "_" + std::to_string(r[2]) + "k" + std::to_string(r[3]) + "s" +
                        std::to_string(r[4]) + "@" + std::to_string(r[1]),
                    Conv2dWorkload(1, r[0], r[1], r[1], r[2], r[3], r[3], r[4], r[5]), false, int(r[6])};
    w.push_back(std::move(b));
  }
  w.push_back({"resnet50.fc", compiler::DenseWorkload(1, 2048, 1000), false});
  for (const BenchWorkload& b : BenchWorkloads()) {
    // ResNet-18, MobileNetV2 and BERT-base's projections; the batched products have no int8
    // dot-product form yet, nor ViT a quantized model here.
    const bool wanted = b.label.rfind("resnet18.", 0) == 0 || b.label.rfind("mobilenet_v2.", 0) == 0 ||
                        (b.label.rfind("bert_base.", 0) == 0 && b.workload.is_dense());
    if (wanted) w.push_back(b);
  }
  for (BenchWorkload& b : w) b.workload.dtype = "uint8";
  return w;
}

}  // namespace tunefarm::bench
