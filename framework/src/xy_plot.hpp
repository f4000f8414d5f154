// A lesson's plots (lab::Plot, from its derive()) drawn the same way for every lesson: an SVG
// document (axes with SI-unit ticks, linear or log10, one coloured series per measured sweep, a
// legend, marked points such as knees and crossovers) and a terminal sketch. Pure functions: no
// I/O, so tests parse what they return. Marks whose metric is withheld are not drawn.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "lab/types.hpp"

namespace lab::plot {

// `subtitle` (a line under the title: the lesson, the device, a quick run) says where a plot saved
// on its own came from.
std::string render_plot_svg(const Plot& plot, const std::set<std::string>& withheld = {}, const std::string& subtitle = "");

// ASCII only: `width` x `height` characters of plot area, axis ranges, a legend and the marks.
std::string render_plot_terminal(const Plot& plot, const std::set<std::string>& withheld = {}, int width = 64,
                                 int height = 14);

// What makes a plot undrawable, one line each ("series 'read' has 12 x values and 11 y values",
// "a log x axis with the value 0"); empty when it draws.
std::vector<std::string> plot_problems(const Plot& plot);

}  // namespace lab::plot
