// A line chart (one polyline with markers per series, axes with ticks, a legend and a caption)
// drawn with SvgWriter.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace kvfdp::plot {

// An axis: its drawn range [lo, hi] and the tick values on it (lo and hi are ticks).
struct Axis {
	double lo = 0, hi = 1;
	std::vector<double> ticks;
};

// Ticks at 1, 2 or 5 x 10^k covering [lo, hi] with about target of them; the range widens
// to the outer ticks. lo == hi widens to a span around it. Needs finite lo <= hi.
[[nodiscard]] Axis nice_axis(double lo, double hi, int target = 5);

// One line: points (x[i], y[i]); a NaN y is no point there (the line skips it).
struct Series {
	std::string name;
	std::vector<double> x, y;
};

struct LineChart {
	std::string title, x_label, y_label;
	// Lines under the x axis label: what the run was (workload, capacity, ...).
	std::vector<std::string> caption;
	std::vector<Series> series;
	// y always includes this value when set (WAF plots start at 1.0).
	bool y_include = false;
	double y_include_value = 0;
	int width = 800, height = 480;
};

// Series i's colour ("#rrggbb", from a colour-blind-safe palette; repeats after 8). Series
// also differ in dash pattern and marker size, so equal series stay visible.
[[nodiscard]] std::string_view series_colour(size_t i);

// The chart as an SVG document. A chart without a finite point draws its axes on [0, 1].
[[nodiscard]] std::string render_svg(const LineChart &c);

// Writes text to path (created or truncated). Fails naming the path and the errno.
[[nodiscard]] Result<void> write_text_file(const std::string &path, const std::string &text);

}  // namespace kvfdp::plot
