// The lesson SDK, whole: include this one header in a lesson plugin.
#pragma once

#include <boost/dll/alias.hpp>

#include "lab/cpu_kernels.hpp"
#include "lab/device.hpp"
#include "lab/lesson.hpp"
#include "lab/roofline.hpp"
#include "lab/types.hpp"
#include "lab/version.hpp"
