// SvgWriter: each element one line of text.
#include "model/plot/svg.hpp"

#include <cstdio>

namespace kvfdp::plot {
namespace {

// A coordinate with two decimals: enough at pixel scale, and stable in tests.
std::string num(double v)
{
	char b[32];
	std::snprintf(b, sizeof b, "%.2f", v);
	return b;
}

std::string dash_attr(std::string_view dash)
{
	return dash.empty() ? std::string() : " stroke-dasharray=\"" + xml_escape(dash) + "\"";
}

}  // namespace

std::string xml_escape(std::string_view s)
{
	std::string out;
	for (char c : s) {
		switch (c) {
		case '&': out += "&amp;"; break;
		case '<': out += "&lt;"; break;
		case '>': out += "&gt;"; break;
		case '"': out += "&quot;"; break;
		default: out += c;
		}
	}
	return out;
}

SvgWriter::SvgWriter(int width, int height)
{
	const std::string w = std::to_string(width), h = std::to_string(height);
	out_ = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
	       w + "\" height=\"" + h + "\" viewBox=\"0 0 " + w + " " + h +
	       "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n";
}

void SvgWriter::rect(double x, double y, double w, double h, std::string_view fill,
		     std::string_view stroke)
{
	out_ += "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(w) +
		"\" height=\"" + num(h) + "\" fill=\"" + xml_escape(fill) + "\" stroke=\"" +
		xml_escape(stroke) + "\"/>\n";
}

void SvgWriter::line(double x1, double y1, double x2, double y2, std::string_view stroke,
		     double width, std::string_view dash)
{
	out_ += "<line x1=\"" + num(x1) + "\" y1=\"" + num(y1) + "\" x2=\"" + num(x2) + "\" y2=\"" +
		num(y2) + "\" stroke=\"" + xml_escape(stroke) + "\" stroke-width=\"" + num(width) +
		"\"" + dash_attr(dash) + "/>\n";
}

void SvgWriter::polyline(const std::vector<std::pair<double, double>> &points,
			 std::string_view stroke, double width, std::string_view dash)
{
	if (points.size() < 2)
		return;
	std::string pts;
	for (const auto &[x, y] : points)
		pts += (pts.empty() ? "" : " ") + num(x) + "," + num(y);
	out_ += "<polyline points=\"" + pts + "\" fill=\"none\" stroke=\"" + xml_escape(stroke) +
		"\" stroke-width=\"" + num(width) + "\" stroke-linejoin=\"round\"" +
		dash_attr(dash) + "/>\n";
}

void SvgWriter::circle(double cx, double cy, double r, std::string_view fill)
{
	out_ += "<circle cx=\"" + num(cx) + "\" cy=\"" + num(cy) + "\" r=\"" + num(r) +
		"\" fill=\"" + xml_escape(fill) + "\"/>\n";
}

void SvgWriter::text(double x, double y, std::string_view s, double size, std::string_view anchor,
		     double rotate)
{
	out_ += "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" font-size=\"" + num(size) +
		"\" text-anchor=\"" + xml_escape(anchor) + "\"";
	if (rotate != 0)
		out_ += " transform=\"rotate(" + num(rotate) + " " + num(x) + " " + num(y) + ")\"";
	out_ += ">" + xml_escape(s) + "</text>\n";
}

std::string SvgWriter::str() const
{
	return out_ + "</svg>\n";
}

}  // namespace kvfdp::plot
