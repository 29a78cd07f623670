// The template table (compiler/schedule/template_table.h): every template once, with its operator,
// target kind, when it applies and its weight layout; lookup, the implementations of an operator on
// a target and the implementation check derive from it, and no other source file lists templates.
// Workload keys are target-neutral: the implementations of one node share its key.
#include "compiler/schedule/template_table.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "common/source_scan.h"
#include "tunefarm/compiler/target.h"

namespace tunefarm::compiler {
namespace {

std::vector<std::string> Names(const std::vector<Workload>& impls) {
  std::vector<std::string> out;
  for (const Workload& w : impls) out.push_back(w.implementation);
  return out;
}

TEST(TemplateTable, EveryTemplateOnceAndTheImplementationsOfAnOperatorPerKind) {
  std::set<std::string> names;
  for (const TemplateRow& r : TemplateTable()) {
    EXPECT_TRUE(names.insert(r.get()->name()).second) << r.get()->name() << " is listed twice";
    auto found = FindTemplateRow(r.get()->name());
    ASSERT_TRUE(found.ok());
    EXPECT_EQ(*found, &r);
  }
  EXPECT_EQ(names.size(), 12u);
  auto unknown = FindTemplate("conv2d_nhwc");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown template 'conv2d_nhwc'; known: conv2d_nchwc, "), std::string::npos)
      << unknown.status().message();

  const Target cpu = HostTarget(), gpu = *ParseTarget("h100");
  Workload conv = Conv2dWorkload(1, 64, 56, 56, 64, 3, 3, 1, 1);
  conv.implementation.clear();  // as a graph node's workload: the operator and its parameters
  EXPECT_EQ(Names(Implementations(conv, cpu)), (std::vector<std::string>{"conv2d_nchwc", "conv2d_nchwc_winograd"}));
  EXPECT_EQ(Names(Implementations(conv, gpu)),
            (std::vector<std::string>{"conv2d_nchw_cuda", "conv2d_nchw_winograd_cuda"}));
  for (const Workload& w : Implementations(conv, gpu))
    EXPECT_EQ(w.Key(), conv.Key()) << "one workload, any implementation";
  const Workload depthwise = Conv2dWorkload(1, 32, 28, 28, 32, 3, 3, 2, 1, 1, 32);
  EXPECT_EQ(Names(Implementations(depthwise, cpu)), (std::vector<std::string>{"depthwise_conv2d_nchwc"}));
  EXPECT_EQ(Names(Implementations(depthwise, gpu)), (std::vector<std::string>{"depthwise_conv2d_nchw_cuda"}));
  const Workload dense = DenseWorkload(1, 512, 1000);
  EXPECT_EQ(Names(Implementations(dense, cpu)), (std::vector<std::string>{"dense_pack", "dense_nopack"}));
  EXPECT_EQ(Names(Implementations(dense, gpu)), (std::vector<std::string>{"dense_cuda", "dense_small_batch_cuda"}));
  EXPECT_EQ(Names(Implementations(BatchMatmulWorkload(12, 197, 64, 197), gpu)),
            (std::vector<std::string>{"batch_matmul_cuda"}));

  EXPECT_TRUE(CheckImplementation(dense, cpu).ok());
  Status wrong_kind = CheckImplementation(dense, gpu);
  EXPECT_EQ(wrong_kind.message(),
            "template 'dense_pack' does not compute dense on target kind 'cuda'; its templates: dense_cuda, "
            "dense_small_batch_cuda");
  Workload wrong_op = conv;
  wrong_op.implementation = "dense_pack";
  EXPECT_EQ(CheckImplementation(wrong_op, cpu).message(),
            "template 'dense_pack' does not compute conv2d on target kind 'llvm'; its templates: conv2d_nchwc, "
            "depthwise_conv2d_nchwc, conv2d_nchwc_winograd");
  // What the model compiler packs each template's weights into follows its row.
  EXPECT_EQ((*FindTemplateRow("depthwise_conv2d_nchwc"))->weights, WeightPacking::kDepthwiseBlocked);
  EXPECT_EQ((*FindTemplateRow("conv2d_nchw_winograd_cuda"))->weights, WeightPacking::kWinograd);
  EXPECT_EQ((*FindTemplateRow("batch_matmul"))->weights, WeightPacking::kNone);
}

// Template names appear as text only in their own template (name()) and in the CPU-default
// factories of workload.cc: no second table maps them to operators, kinds or weight layouts.
TEST(TemplateTable, NoOtherSourceFileListsTemplates) {
  const char* src = std::getenv("TUNEFARM_SOURCE_DIR");
  ASSERT_NE(src, nullptr) << "TUNEFARM_SOURCE_DIR is set by CTest";
  std::vector<std::string> quoted;
  for (const TemplateRow& r : TemplateTable()) {
    const std::string name = r.get()->name();
    if (name != OpKindName(r.op)) quoted.push_back("\"" + name + "\"");  // batch_matmul also names its operator
  }
  const std::vector<std::string> allowed = {"compiler/schedule/templates/", "compiler/schedule/workload.cc"};
  const auto offenders = testing::LinesBreakingARule(src, {"compiler", "tuner", "tools", "rpc_server", "runtime"},
                                                     allowed, [&](const std::string& line) {
                                                       for (const std::string& q : quoted) {
                                                         if (line.find(q) != std::string::npos) return true;
                                                       }
                                                       return false;
                                                     });
  std::ostringstream all;
  for (const auto& o : offenders) all << o << "\n";
  EXPECT_TRUE(offenders.empty()) << "add a column to the template table (compiler/schedule/template_table.h):\n"
                                 << all.str();
}

}  // namespace
}  // namespace tunefarm::compiler
