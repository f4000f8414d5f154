// The least of a Session a test needs to call SDK helpers that take one (lab/random_fill.hpp):
// a device and whether the plan is being replayed. Measuring through it is an error.
#pragma once

#include <stdexcept>
#include <string>

#include "lab/lesson.hpp"

namespace lab_test {

class DeviceSession : public lab::Session {
public:
    DeviceSession(lab::Device& d, bool replaying) : device_(d), replaying_(replaying) {}
    lab::Device& device() override { return device_; }
    const lab::Ceilings& ceilings() const override { return ceilings_; }
    const lab::RunOptions& options() const override { return options_; }
    lab::Measurement measure(const lab::Workload&, const lab::Launch&) override {
        throw std::logic_error("a DeviceSession measures nothing");
    }
    void skip(const std::string&, const std::string&) override {}
    void progress(const std::string&) override {}
    void* companion_symbol(const std::string&) override { return nullptr; }
    bool replaying() const override { return replaying_; }

private:
    lab::Device& device_;
    bool replaying_;
    lab::Ceilings ceilings_;
    lab::RunOptions options_;
};

}  // namespace lab_test
