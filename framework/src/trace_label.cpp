// The current trace label (see trace_label.hpp).
#include "trace_label.hpp"

#include <utility>

namespace lab {

namespace {
thread_local const std::string* current = nullptr;
}  // namespace

TraceLabelScope::TraceLabelScope(std::string label) : label_(std::move(label)), previous_(current) { current = &label_; }

TraceLabelScope::~TraceLabelScope() { current = previous_; }

const char* current_trace_label() { return current ? current->c_str() : nullptr; }

}  // namespace lab
