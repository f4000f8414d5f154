// "Did you mean": the known word nearest a misspelt one (Damerau-Levenshtein distance: a swap of
// two neighbouring letters counts once, as in "ridge_piont"), when it is near enough to be a slip
// (at most 2 edits, and at most a third of the word) rather than another word altogether.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

namespace lab {

inline std::size_t edit_distance(const std::string& a, const std::string& b) {
    const std::size_t n = a.size(), m = b.size();
    std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
    for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
    for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
    for (std::size_t i = 1; i <= n; ++i)
        for (std::size_t j = 1; j <= m; ++j) {
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    return d[n][m];
}

// The nearest of `known` to `word`, or "" when none is near enough.
inline std::string did_you_mean(const std::string& word, const std::vector<std::string>& known) {
    std::string best;
    std::size_t best_d = 3;
    for (const auto& k : known) {
        const std::size_t d = edit_distance(word, k);
        if (d < best_d && d * 3 <= std::max(word.size(), k.size())) best = k, best_d = d;
    }
    return best;
}

// " (did you mean 'x'?)", or "" when nothing is near.
inline std::string did_you_mean_text(const std::string& word, const std::vector<std::string>& known) {
    const std::string s = did_you_mean(word, known);
    return s.empty() ? "" : " (did you mean '" + s + "'?)";
}

}  // namespace lab
