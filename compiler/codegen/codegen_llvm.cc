#include "compiler/codegen/codegen_llvm.h"

#include "compiler/codegen/codegen_llvm_base.h"
#include "compiler/codegen/llvm_headers.h"

namespace tunefarm::compiler {

Result<std::unique_ptr<llvm::Module>> GenerateModule(const std::vector<KernelSource>& kernels, const Target& target,
                                                     llvm::TargetMachine* tm, llvm::LLVMContext* context,
                                                     MakeCodeGen make_codegen) {
  auto module = std::make_unique<llvm::Module>(kernels.empty() ? "tunefarm" : kernels[0].func.name, *context);
  module->setTargetTriple(tm->getTargetTriple().str());
  module->setDataLayout(tm->createDataLayout());
  std::unique_ptr<codegen::CodeGenLLVM> generator = make_codegen(context, module.get(), target);
  for (const auto& k : kernels) generator->AddKernel(k);

  std::string errors;
  llvm::raw_string_ostream err_stream(errors);
  if (llvm::verifyModule(*module, &err_stream)) {
    return Status::Internal("LLVM module failed verification: " + err_stream.str());
  }

  // O3 with the new pass manager; the TargetMachine gives the vectorizers the target's costs.
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  // The kernels arrive vectorized and unrolled by tunefarm's own passes, as the schedule chose;
  // LLVM's loop vectorizer, SLP vectorizer and unroller would only second-guess the config (and
  // they are most of O3's compile time on these fully unrolled tiles).
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = false;
  tuning.SLPVectorization = false;
  tuning.LoopUnrolling = false;
  llvm::PassBuilder pb(tm, tuning);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  mpm.run(*module, mam);
  return module;
}

}  // namespace tunefarm::compiler
