// ONNX importer: a ModelProto (opsets 1-21 of the default domain: torch.onnx.export writes 7-17,
// current PyTorch exporters 18-20) -> graph::Graph.
//
// Contract: every operator of the model must be in the operator registry (SupportedOnnxOps(),
// docs/onnx_support.md), with attributes its row lists; anything else — an unknown or unsupported operator, a
// non-default domain, an attribute or tensor type it cannot read, a dangling input — is an InvalidArgument naming the
// node, its op type and the opset. Shapes are taken from the model's declared inputs; InferShapes (model/passes) fills
// in the rest.
#ifndef TUNEFARM_COMPILER_FRONTEND_ONNX_IMPORTER_H_
#define TUNEFARM_COMPILER_FRONTEND_ONNX_IMPORTER_H_

#include <string>
#include <vector>

#include "compiler/graph/graph.h"

namespace tunefarm::frontend {

constexpr int64_t kMinOnnxOpset = 1;
constexpr int64_t kMaxOnnxOpset = 21;

Result<graph::Graph> ImportOnnxFile(const std::string& path);
// base_dir: where tensors stored as external data (models over 2 GB) are found; empty: such
// tensors are refused. ImportOnnxFile passes the model file's directory.
Result<graph::Graph> ImportOnnxBytes(const std::string& bytes, const std::string& what,
                                     const std::string& base_dir = "");
// A serialized onnx::TensorProto (e.g. test_data_set_0/input_0.pb) as constant data.
Result<graph::ConstantData> ReadOnnxTensorFile(const std::string& path);

// The bytes of weights an ONNX file's tensors name as external data (their declared shapes and
// types, widened as the importer stores them; If branches' too). 0 for a model that keeps its
// weights inside. Reads and parses the model file (at most 2 GiB); never opens the data files.
Result<uint64_t> ExternalDataBytes(const std::string& path);

const std::vector<std::string>& SupportedOnnxOps();

}  // namespace tunefarm::frontend

#endif  // TUNEFARM_COMPILER_FRONTEND_ONNX_IMPORTER_H_
