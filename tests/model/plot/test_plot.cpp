// Unit tests of model/plot: the SVG writer's output is well-formed XML, a line chart draws one
// polyline per series, and its axes cover the data with 1-2-5 ticks.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "model/plot/line_chart.hpp"
#include "model/plot/svg.hpp"

using namespace kvfdp::plot;

namespace {

size_t count(const std::string &s, const std::string &what)
{
	size_t n = 0;
	for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1))
		n++;
	return n;
}

// Well-formed enough for a renderer: after the XML declaration, every tag closes in order,
// attributes are quoted, and text holds no raw '<' or a '&' that starts no entity. Returns
// the first problem, or "".
std::string xml_problem(const std::string &doc)
{
	std::vector<std::string> open;
	size_t p = 0;
	if (doc.rfind("<?xml ", 0) == 0)
		p = doc.find("?>") + 2;
	while (p < doc.size()) {
		const size_t lt = doc.find('<', p);
		const std::string text =
			doc.substr(p, lt == std::string::npos ? std::string::npos : lt - p);
		for (size_t a = text.find('&'); a != std::string::npos; a = text.find('&', a + 1)) {
			const size_t semi = text.find(';', a);
			const std::string ent =
				text.substr(a, semi == std::string::npos ? 0 : semi - a + 1);
			if (ent != "&amp;" && ent != "&lt;" && ent != "&gt;" && ent != "&quot;")
				return "raw & in text: " + text;
		}
		if (lt == std::string::npos)
			break;
		const size_t gt = doc.find('>', lt);
		if (gt == std::string::npos)
			return "unclosed tag at " + std::to_string(lt);
		std::string tag = doc.substr(lt + 1, gt - lt - 1);
		if (count(tag, "\"") % 2 != 0 || tag.find('<') != std::string::npos)
			return "bad quoting in <" + tag + ">";
		if (tag.front() == '/') {
			if (open.empty() || open.back() != tag.substr(1))
				return "</" + tag.substr(1) + "> closes " +
				       (open.empty() ? "nothing" : open.back());
			open.pop_back();
		} else if (tag.back() != '/') {
			open.push_back(tag.substr(0, tag.find(' ')));
		}
		p = gt + 1;
	}
	if (!open.empty())
		return "<" + open.back() + "> not closed";
	return count(doc, "<svg ") == 1 ? "" : "not one <svg> element";
}

LineChart three_series()
{
	LineChart c;
	c.title = "WAF against utilisation: host & store <test>";
	c.x_label = "utilisation";
	c.y_label = "WAF";
	c.caption = {"workload host, capacity 4GiB, OP 0.07", "second line"};
	c.series = {{"none", {0.8, 0.9, 1.0}, {1.2, 1.4, 1.6}},
		    {"hint", {0.8, 0.9, 1.0}, {1.1, std::nan(""), 1.3}},
		    {"oracle", {0.8, 0.9, 1.0}, {1.0, 1.0, 1.03}}};
	c.y_include = true;
	c.y_include_value = 1.0;
	return c;
}

}  // namespace

TEST_CASE("plot: nice_axis covers the data with 1, 2 or 5 x 10^k steps")
{
	const Axis y = nice_axis(1.0, 1.637, 5);
	CHECK(y.lo == doctest::Approx(1.0));
	CHECK(y.hi == doctest::Approx(1.8));
	REQUIRE(y.ticks.size() == 5);
	CHECK(y.ticks[1] - y.ticks[0] == doctest::Approx(0.2));
	const Axis x = nice_axis(0.8, 1.0, 5);
	CHECK(x.lo == doctest::Approx(0.8));
	CHECK(x.hi == doctest::Approx(1.0));
	CHECK(x.ticks.size() == 5);
	const Axis big = nice_axis(3, 97, 5);
	CHECK(big.lo == doctest::Approx(0));
	CHECK(big.hi == doctest::Approx(100));
	CHECK(big.ticks.size() == 6);
	// One value: a span around it, not a zero-width axis.
	const Axis flat = nice_axis(1.0, 1.0, 5);
	CHECK(flat.lo < 1.0);
	CHECK(flat.hi > 1.0);
	CHECK(flat.ticks.front() == doctest::Approx(flat.lo));
	CHECK(flat.ticks.back() == doctest::Approx(flat.hi));
}

TEST_CASE("plot: the SVG writer escapes text and attributes and closes the document")
{
	SvgWriter w(100, 50);
	w.rect(0, 0, 100, 50, "#ffffff");
	w.text(10, 20, "a < b & \"c\"", 12, "start", -90);
	w.polyline({{1, 2}}, "#000000", 1);  // one point: nothing drawn
	w.polyline({{1, 2}, {3, 4.5}}, "#0072b2", 2.5, "4 4");
	const std::string s = w.str();
	CHECK(xml_problem(s) == "");
	CHECK(s.find("a &lt; b &amp; &quot;c&quot;") != std::string::npos);
	CHECK(s.find("transform=\"rotate(-90.00 10.00 20.00)\"") != std::string::npos);
	CHECK(count(s, "<polyline") == 1);
	CHECK(s.find("points=\"1.00,2.00 3.00,4.50\"") != std::string::npos);
	CHECK(s.find("stroke-dasharray=\"4 4\"") != std::string::npos);
	CHECK(s.find("width=\"100\" height=\"50\" viewBox=\"0 0 100 50\"") != std::string::npos);
	CHECK(s.substr(s.size() - 7) == "</svg>\n");
}

TEST_CASE("plot: a line chart draws one polyline per series in its own colour, with a legend")
{
	const LineChart c = three_series();
	const std::string s = render_svg(c);
	CHECK(xml_problem(s) == "");
	CHECK(count(s, "<polyline") == 3);
	// A marker per finite point (hint's NaN has none) and one in each legend entry.
	CHECK(count(s, "<circle") == (3 + 2 + 3) + 3);
	for (size_t i = 0; i < 3; i++) {
		CAPTURE(i);
		const std::string colour(series_colour(i));
		// Its polyline and its legend line, in its colour; its name in the legend.
		CHECK(count(s, "stroke=\"" + colour + "\" stroke-width=\"2.50\"") == 2);
		CHECK(s.find(">" + c.series[i].name + "</text>") != std::string::npos);
	}
	CHECK(series_colour(0) != series_colour(1));
	CHECK(series_colour(1) != series_colour(2));
	// hint's polyline skips its NaN: two points.
	const size_t hint = s.find("<polyline", s.find("<polyline") + 1);
	const std::string hint_line = s.substr(hint, s.find("/>", hint) - hint);
	CHECK(count(hint_line, ",") == 2);
	CHECK(s.find("host &amp; store &lt;test&gt;") != std::string::npos);
	CHECK(s.find(">workload host, capacity 4GiB, OP 0.07</text>") != std::string::npos);
	// Axis ranges: y from the included 1.0 to 1.6 in 0.2 steps, x 0.80 to 1.00 in 0.05.
	for (const char *tick : {">1.0</text>", ">1.6</text>", ">0.80</text>", ">1.00</text>"})
		CHECK(s.find(tick) != std::string::npos);
	CHECK(s.find(">1.7</text>") == std::string::npos);
	CHECK(s.find(">0.75</text>") == std::string::npos);
	// The caption's two lines make the document 32 px taller than the chart.
	CHECK(s.find("height=\"" + std::to_string(c.height + 32) + "\"") != std::string::npos);
}

TEST_CASE("plot: the polylines run inside the plot area, the highest point at its top")
{
	const LineChart c = three_series();
	const std::string s = render_svg(c);
	// none's points: x from the left axis (70) to the plot's right edge, y from bottom to top.
	const size_t p = s.find("<polyline points=\"");
	REQUIRE(p != std::string::npos);
	const std::string pts = s.substr(p + 18, s.find('"', p + 18) - p - 18);
	CHECK(pts.rfind("70.00,", 0) == 0);
	CHECK(pts.find(std::to_string(c.width - 150) + ".00,44.00") != std::string::npos);
}

TEST_CASE("plot: a chart with no finite point still draws its axes and no polyline")
{
	LineChart c;
	c.series = {{"none", {0.8, 0.9}, {std::nan(""), std::nan("")}}};
	const std::string s = render_svg(c);
	CHECK(xml_problem(s) == "");
	CHECK(count(s, "<polyline") == 0);
	CHECK(s.find(">none</text>") != std::string::npos);
}

TEST_CASE("plot: write_text_file names the path it cannot write")
{
	auto r = write_text_file("/nonexistent-kvfdp-dir/x.svg", "x");
	REQUIRE_FALSE(r);
	CHECK(r.error().message().find("/nonexistent-kvfdp-dir/x.svg") != std::string::npos);
}
