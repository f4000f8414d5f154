// Filling a prompt's question_<name> words with the run's values (see prompt_fill.hpp).
#include "prompt_fill.hpp"

#include <cctype>

namespace lab::grader {

namespace {

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

std::string fill_prompt(const std::string& prompt, const std::function<std::optional<std::string>(const std::string&)>& value_of) {
    static const std::string kPrefix = "question_";
    std::string out;
    std::size_t i = 0;
    while (i < prompt.size()) {
        const bool starts = prompt.compare(i, kPrefix.size(), kPrefix) == 0 && (i == 0 || !word_char(prompt[i - 1]));
        if (!starts) {
            out += prompt[i++];
            continue;
        }
        std::size_t end = i + kPrefix.size();
        while (end < prompt.size() && word_char(prompt[end])) ++end;
        const std::string word = prompt.substr(i, end - i);
        const auto value = value_of(word);
        // A prompt is one line (the answers template puts it in a YAML comment): a value that
        // would break it (an edited record's) leaves the word as it is.
        const bool one_line = value && value->find_first_of("\r\n") == std::string::npos;
        out += one_line ? *value : word;
        i = end;
    }
    return out;
}

}  // namespace lab::grader
