// IsValidUtf8: whether bytes are well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates,
// nothing past U+10FFFF). Names read from outside files (ONNX tensor and node names) are checked
// with it at import, so every JSON written later holds them as they are.
#ifndef TUNEFARM_RUNTIME_UTF8_H_
#define TUNEFARM_RUNTIME_UTF8_H_

#include <string_view>

namespace tunefarm {

bool IsValidUtf8(std::string_view bytes);

}  // namespace tunefarm

#endif  // TUNEFARM_RUNTIME_UTF8_H_
