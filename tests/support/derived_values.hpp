// Reading a derivation's metrics in tests: the value must be there, or the test stops saying so.
#pragma once

#include <catch2/catch.hpp>

#include <string>

#include "lab/lesson.hpp"

namespace lab_test {

inline double derived_number(const lab::Derivation& d, const std::string& name) {
    const lab::MetricValue* m = d.find(name);
    INFO("metric " << name);
    REQUIRE(m != nullptr);
    return m->number;
}

inline std::string derived_text(const lab::Derivation& d, const std::string& name) {
    const lab::MetricValue* m = d.find(name);
    INFO("metric " << name);
    REQUIRE(m != nullptr);
    return m->text;
}

}  // namespace lab_test
