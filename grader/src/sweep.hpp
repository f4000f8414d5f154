// Where a value sits on a sweep, for `steps` tolerances (spec.hpp): a claim and the expected
// value are each placed on the sweep's nearest point, and their distance is counted in points.
// An expected value is often between points (02.06's crossover batch is interpolated, 701.3 on
// a sweep of powers of two; 02.03's L2 capacity is 91.84 KiB on a sweep with 91 and 128 KiB), and
// a student who writes it as `lab show --reveal` prints it must score, so a claim off the sweep
// is placed like the expected value rather than refused.
#pragma once

#include <vector>

namespace lab::grader {

// Whether a sweep is geometric (1 2 4 8 ..., or 4 KiB 6 KiB 8 KiB 11 KiB ...): all points
// positive and the ratios of neighbours vary less than their differences. Nearness on such a
// sweep is measured on a log scale, as its plots draw it: 700 is nearer 512 than 1024.
bool geometric_sweep(const std::vector<double>& sorted_points);

// The index of the point nearest to `v` on the sweep's own scale (sorted_points non-empty).
int nearest_point(const std::vector<double>& sorted_points, double v);

// Whether `v` is one of the sweep's points (to the rounding of a double).
bool on_sweep(const std::vector<double>& sorted_points, double v);

}  // namespace lab::grader
