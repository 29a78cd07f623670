// Inputs of the recurrent operators (LSTM, GRU, RNN) beyond ONNX's eight: the graph rewrite that
// makes their input projections dense layers (compiler/model/passes/recurrent_input_projections.h) gives
// direction d's projection [T, B, G*H] at input kRecurrentProjectionInput + d, and the lowering
// reads it there instead of projecting in its own kernel.
#ifndef TUNEFARM_COMPILER_OPERATORS_RECURRENT_INPUTS_H_
#define TUNEFARM_COMPILER_OPERATORS_RECURRENT_INPUTS_H_

namespace tunefarm::operators {

inline constexpr int kRecurrentProjectionInput = 8;

}  // namespace tunefarm::operators

#endif  // TUNEFARM_COMPILER_OPERATORS_RECURRENT_INPUTS_H_
