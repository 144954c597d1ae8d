// pygguf._core: the tokenizer of a model's vocabulary.
#include "core.hpp"

namespace pygguf {

void bind_tokenizer(py::module_& m) { (void)m; }

}  // namespace pygguf
