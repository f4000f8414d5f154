// The progress bar's line (progress_bar.hpp): the step, the bar, what it is doing, the estimate;
// shortened in the middle, never losing the bar or the estimate.
#include <catch2/catch.hpp>

#include "progress_bar.hpp"

using lab::render_progress;

TEST_CASE("a progress line shows the step, a bar, what it does and the time left", "[progress]") {
    CHECK(render_progress("lesson 02.05", "measuring triad", 3, 0.5, 3) ==
          "lesson 02.05 [##########..........]  50% measuring triad, about 3 s left");
    CHECK(render_progress("grading", "alice", 0.5, 0.0, -1) == "grading [....................]   0% alice (1 s so far)");
    CHECK(render_progress("calibrating cpu", "measuring read", 125, -1, -1) == "calibrating cpu measuring read (2 min so far)");
    CHECK_THAT(render_progress("x", "y", 1, 1.7, 0), Catch::Contains("100%"));
}

TEST_CASE("a long progress line is shortened in what it does, keeping the bar and the estimate", "[progress]") {
    const std::string line = render_progress("lesson 02.05", std::string(200, 'w'), 3, 0.25, 12, 80);
    CHECK(line.find("about 12 s left") != std::string::npos);
    CHECK(line.find("[#####...............]  25%") != std::string::npos);
    CHECK(line.find("…") != std::string::npos);
    CHECK(line.size() <= 80 + 2);   // "…" is 3 bytes, one column
}

// TERM=dumb got bars and "\r\033[K" before every note, and LAB_NO_PROGRESS=0 turned bars off.
TEST_CASE("bars are drawn only at a terminal that can take them, and LAB_NO_PROGRESS=0 leaves them on", "[progress]") {
    CHECK(lab::progress_allowed(true, "xterm-256color", nullptr));
    CHECK(lab::progress_allowed(true, nullptr, nullptr));
    CHECK_FALSE(lab::progress_allowed(false, "xterm", nullptr));
    CHECK_FALSE(lab::progress_allowed(true, "dumb", nullptr));
    CHECK_FALSE(lab::progress_allowed(true, "xterm", "1"));
    CHECK_FALSE(lab::progress_allowed(true, "xterm", "yes"));
    CHECK(lab::progress_allowed(true, "xterm", "0"));
    CHECK(lab::progress_allowed(true, "xterm", ""));
}
