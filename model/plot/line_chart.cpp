// The line chart's layout: plot area, axes, series, legend and caption.
#include "model/plot/line_chart.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <memory>

#include "model/plot/svg.hpp"

namespace kvfdp::plot {
namespace {

// Okabe & Ito's colour-blind-safe palette, black last.
constexpr std::string_view kPalette[] = {"#0072b2", "#d55e00", "#009e73", "#cc79a7",
					 "#e69f00", "#56b4e9", "#f0e442", "#000000"};

// Series i's dash pattern and marker radius: a later series drawn over an earlier one with the
// same values leaves the earlier one's colour in its gaps and around its smaller markers.
constexpr std::string_view kDash[] = {"", "10 5", "4 4", "12 4 3 4", "2 3"};
double marker_radius(size_t i)
{
	return std::max(2.5, 6.0 - static_cast<double>(i));
}

// A tick label with as many decimals as the step needs.
std::string tick_label(double v, double step)
{
	const int decimals =
		std::clamp(static_cast<int>(std::ceil(-std::log10(step) - 1e-9)), 0, 6);
	char b[32];
	std::snprintf(b, sizeof b, "%.*f", decimals, v);
	return b;
}

double axis_step(const Axis &a)
{
	return a.ticks.size() > 1 ? a.ticks[1] - a.ticks[0] : 1;
}

// The range of the finite points of every series on one axis (x or y).
bool data_range(const LineChart &c, bool y, double *lo, double *hi)
{
	bool any = false;
	for (const Series &s : c.series)
		for (size_t i = 0; i < std::min(s.x.size(), s.y.size()); i++) {
			if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i]))
				continue;
			const double v = y ? s.y[i] : s.x[i];
			*lo = any ? std::min(*lo, v) : v;
			*hi = any ? std::max(*hi, v) : v;
			any = true;
		}
	return any;
}

}  // namespace

std::string_view series_colour(size_t i)
{
	return kPalette[i % std::size(kPalette)];
}

Axis nice_axis(double lo, double hi, int target)
{
	if (hi - lo < 1e-12) {
		const double pad = std::abs(lo) > 1e-12 ? std::abs(lo) * 0.05 : 1;
		lo -= pad;
		hi += pad;
	}
	const double raw = (hi - lo) / std::max(1, target);
	const double mag = std::pow(10, std::floor(std::log10(raw)));
	double step = mag * 10;
	for (double m : {1.0, 2.0, 5.0})
		if (raw <= m * mag * (1 + 1e-9)) {
			step = m * mag;
			break;
		}
	Axis a;
	a.lo = std::floor(lo / step + 1e-9) * step;
	a.hi = std::ceil(hi / step - 1e-9) * step;
	for (int i = 0; a.lo + i * step <= a.hi + step * 1e-6; i++)
		a.ticks.push_back(std::round((a.lo + i * step) / step) * step);
	return a;
}

std::string render_svg(const LineChart &c)
{
	const int caption_h = static_cast<int>(c.caption.size()) * 16;
	const int w = c.width, h = c.height + caption_h;
	const double x0 = 70, x1 = w - 150, y0 = 44, y1 = c.height - 64;
	double xlo = 0, xhi = 1, ylo = 0, yhi = 1;
	data_range(c, false, &xlo, &xhi);
	if (data_range(c, true, &ylo, &yhi) && c.y_include) {
		ylo = std::min(ylo, c.y_include_value);
		yhi = std::max(yhi, c.y_include_value);
	}
	const Axis ax = nice_axis(xlo, xhi, 5), ay = nice_axis(ylo, yhi, 5);
	auto px = [&](double x) { return x0 + (x - ax.lo) / (ax.hi - ax.lo) * (x1 - x0); };
	auto py = [&](double y) { return y1 - (y - ay.lo) / (ay.hi - ay.lo) * (y1 - y0); };

	SvgWriter svg(w, h);
	svg.rect(0, 0, w, h, "#ffffff");
	svg.text(w / 2.0, 26, c.title, 16, "middle");
	for (double t : ay.ticks) {
		svg.line(x0, py(t), x1, py(t), "#dddddd");
		svg.line(x0 - 5, py(t), x0, py(t), "#333333");
		svg.text(x0 - 8, py(t) + 4, tick_label(t, axis_step(ay)), 11, "end");
	}
	for (double t : ax.ticks) {
		svg.line(px(t), y1, px(t), y1 + 5, "#333333");
		svg.text(px(t), y1 + 19, tick_label(t, axis_step(ax)), 11, "middle");
	}
	svg.line(x0, y1, x1, y1, "#333333");
	svg.line(x0, y0, x0, y1, "#333333");
	svg.text((x0 + x1) / 2, y1 + 40, c.x_label, 13, "middle");
	svg.text(20, (y0 + y1) / 2, c.y_label, 13, "middle", -90);
	for (size_t i = 0; i < c.series.size(); i++) {
		const Series &s = c.series[i];
		const std::string_view colour = series_colour(i);
		std::vector<std::pair<double, double>> pts;
		for (size_t k = 0; k < std::min(s.x.size(), s.y.size()); k++)
			if (std::isfinite(s.x[k]) && std::isfinite(s.y[k]))
				pts.emplace_back(px(s.x[k]), py(s.y[k]));
		const std::string_view dash = kDash[i % std::size(kDash)];
		svg.polyline(pts, colour, 2.5, dash);
		for (const auto &[x, y] : pts)
			svg.circle(x, y, marker_radius(i), colour);
		const double ly = y0 + 8 + 22.0 * static_cast<double>(i);
		svg.line(x1 + 14, ly, x1 + 50, ly, colour, 2.5, dash);
		svg.circle(x1 + 32, ly, marker_radius(i), colour);
		svg.text(x1 + 54, ly + 4, s.name, 12);
	}
	for (size_t i = 0; i < c.caption.size(); i++)
		svg.text(x0, c.height - 8 + 16.0 * static_cast<double>(i), c.caption[i], 11);
	return svg.str();
}

Result<void> write_text_file(const std::string &path, const std::string &text)
{
	std::unique_ptr<FILE, int (*)(FILE *)> f(std::fopen(path.c_str(), "w"), std::fclose);
	if (!f)
		return errno_error(errno, "cannot write " + path);
	if (std::fwrite(text.data(), 1, text.size(), f.get()) != text.size() ||
	    std::fflush(f.get()) != 0)
		return errno_error(errno, "cannot write " + path);
	return ok();
}

}  // namespace kvfdp::plot
