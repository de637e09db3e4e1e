// A small SVG writer: the elements a line chart needs, as text. kvfdp's own because no
// well-kept C++ SVG library in Debian bookworm does more for a chart than these lines
// (docs/cli.md "Plots" says why).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kvfdp::plot {

// Text with &, <, > and " escaped for an SVG attribute or text node.
[[nodiscard]] std::string xml_escape(std::string_view s);

// One SVG document, built element by element; str() closes it. Coordinates are user units
// (pixels at the document's own size), y downwards.
class SvgWriter {
public:
	SvgWriter(int width, int height);

	void rect(double x, double y, double w, double h, std::string_view fill,
		  std::string_view stroke = "none");
	void line(double x1, double y1, double x2, double y2, std::string_view stroke,
		  double width = 1, std::string_view dash = "");
	// An open polyline through points; nothing for fewer than 2 points. dash: an SVG
	// stroke-dasharray ("9 5"), "" for a solid line.
	void polyline(const std::vector<std::pair<double, double>> &points, std::string_view stroke,
		      double width, std::string_view dash = "");
	void circle(double cx, double cy, double r, std::string_view fill);
	// anchor: "start", "middle" or "end"; rotate: degrees about (x, y).
	void text(double x, double y, std::string_view s, double size = 12,
		  std::string_view anchor = "start", double rotate = 0);

	// The document, with its closing tag.
	[[nodiscard]] std::string str() const;

private:
	std::string out_;
};

}  // namespace kvfdp::plot
