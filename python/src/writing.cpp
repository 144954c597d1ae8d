// pygguf._core: writing files (save, edit, split, merge, quantize_model) and model facts.
#include "core.hpp"

namespace pygguf {

void bind_writing(py::module_& m) { (void)m; }

}  // namespace pygguf
