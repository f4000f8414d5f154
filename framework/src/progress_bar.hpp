// A progress bar on stderr for the steps that take more than a moment (calibration, a lesson's
// run, grading a class, an audit): what the step is, what it is doing now, how far along, and an
// estimate of the time left. Drawn only when stderr is a terminal (a log or a pipe gets nothing,
// so outputs stay clean) that is not TERM=dumb, and LAB_NO_PROGRESS is unset, empty or 0, only once a step has run kShowAfter_s ($LAB_PROGRESS_AFTER overrides),
// at most 10 times a second.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace lab {

inline constexpr double kShowAfter_s = 2.0;

// One line of the bar, at most `width` columns: "calibrating [#####.....] 48% measuring triad,
// about 5 s left". `fraction` < 0: unknown (no bar, the elapsed time instead).
std::string render_progress(const std::string& task, const std::string& doing, double elapsed_s, double fraction,
                            double remaining_s, std::size_t width = 100);

// A warning for a $LAB_PROGRESS_AFTER that is not plain decimal seconds (then ignored), with its
// fix line; "" when it is unset or sound. `lab` prints it once per command, when bars may be drawn.
std::string progress_after_problem();

// Whether a bar may be drawn: stderr is a terminal that can move its cursor (TERM is not "dumb")
// and LAB_NO_PROGRESS does not turn bars off (a value other than "" or "0" does). The arguments
// as isatty and getenv give them (null: unset).
bool progress_allowed(bool stderr_is_terminal, const char* term, const char* no_progress);
// progress_allowed for this process, read once.
bool progress_possible();

class ProgressBar {
public:
    // `expected_s`: how long the step is expected to take, for a time-based estimate (0: unknown).
    void start(const std::string& task, double expected_s = 0);
    // What it is doing now; the fraction from the time elapsed against the expected time.
    void update(const std::string& doing);
    // What it is doing now, `done` of `total` items finished; the estimate from their pace.
    void update(const std::string& doing, std::size_t done, std::size_t total);
    // Clears the line (the step is over, or something else is about to be printed).
    void clear();

private:
    void draw(const std::string& doing, double fraction, double remaining_s);
    std::string task_;
    double expected_s_ = 0;
    std::chrono::steady_clock::time_point started_{}, drawn_{};
    bool visible_ = false;
};

// The process's bar on stderr.
ProgressBar& stderr_progress();

}  // namespace lab
