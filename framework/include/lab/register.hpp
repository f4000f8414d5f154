// Registration: one line at the bottom of a lesson's source.
//   LAB_LESSON(MyLesson, "02.05")
// It exports the manifest (C symbol `lab_plugin_manifest`, read before anything else) and a
// factory under the Boost.DLL alias `lab_create_lesson`.
#pragma once

#include <boost/dll/alias.hpp>

#include <memory>

#include "lab/lesson.hpp"
#include "lab/version.hpp"

#define LAB_PLUGIN_MANIFEST_(KIND, NAME)                                                        \
    extern "C" __attribute__((visibility("default"))) const ::lab::PluginManifest*             \
    lab_plugin_manifest() {                                                                     \
        static const ::lab::PluginManifest m{::lab::kApiMajor, ::lab::kApiMinor, ::lab::kAbiTag, \
                                             KIND, NAME};                                       \
        return &m;                                                                              \
    }

#define LAB_LESSON(CLASS, ID)                                                                \
    LAB_PLUGIN_MANIFEST_("lesson", ID)                                                       \
    namespace lab_lesson_factory_ {                                                          \
    std::unique_ptr<::lab::Lesson> create() { return std::make_unique<CLASS>(); }            \
    }                                                                                        \
    BOOST_DLL_ALIAS(lab_lesson_factory_::create, lab_create_lesson)
