// Renders the plot of a real `kvfdp simulate --sweep ... --plot` with rsvg-convert and reads
// the PNG's pixels: it rendered (non-empty, the SVG's size, not blank), and every series'
// colour is drawn inside the plot area. Skips (capability rsvg) without rsvg-convert.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/skip.hpp"
#include "tests/support/temp_files.hpp"
#include "model/plot/line_chart.hpp"

#ifndef KVFDP_BIN
#error "KVFDP_BIN must name the kvfdp binary"
#endif

namespace {

// rsvg-convert on PATH, or why not.
std::string probe_rsvg()
{
	const char *path = std::getenv("PATH");
	std::stringstream dirs(path ? path : "");
	for (std::string d; std::getline(dirs, d, ':');)
		if (!d.empty() && ::access((d + "/rsvg-convert").c_str(), X_OK) == 0)
			return "";
	return "rsvg-convert is not on PATH (librsvg2-bin: ./tools/dev.sh setup)";
}

const kvfdp::test::Requires need_rsvg("rsvg", [] { return probe_rsvg(); });

int run(const std::string &cmd)
{
	const int st = std::system(cmd.c_str());
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

std::string slurp(const std::string &path)
{
	std::ifstream f(path, std::ios::binary);
	return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

uint32_t be32(const std::string &s, size_t at)
{
	return (uint32_t{static_cast<uint8_t>(s[at])} << 24) |
	       (uint32_t{static_cast<uint8_t>(s[at + 1])} << 16) |
	       (uint32_t{static_cast<uint8_t>(s[at + 2])} << 8) |
	       uint32_t{static_cast<uint8_t>(s[at + 3])};
}

// An 8-bit RGB or RGBA, non-interlaced PNG (what rsvg-convert writes), as RGB rows.
struct Image {
	uint32_t width = 0, height = 0;
	std::vector<uint8_t> rgb;  // width * height * 3
	[[nodiscard]] const uint8_t *at(uint32_t x, uint32_t y) const
	{
		return &rgb[(size_t{y} * width + x) * 3];
	}
};

int paeth(int a, int b, int c)
{
	const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
	return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

// PNG spec (ISO/IEC 15948) 11.2.2 IHDR, 9 filtering.
Image decode_png(const std::string &png)
{
	REQUIRE(png.size() > 33);
	REQUIRE(png.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0);
	Image img;
	std::string idat;
	int channels = 0;
	for (size_t p = 8; p + 8 <= png.size();) {
		const uint32_t len = be32(png, p);
		const std::string type = png.substr(p + 4, 4);
		REQUIRE(p + 12 + len <= png.size());
		if (type == "IHDR") {
			img.width = be32(png, p + 8);
			img.height = be32(png, p + 12);
			const int depth = static_cast<uint8_t>(png[p + 16]),
				  colour = static_cast<uint8_t>(png[p + 17]);
			REQUIRE(depth == 8);
			REQUIRE((colour == 2 || colour == 6));
			REQUIRE(png[p + 20] == 0);  // not interlaced
			channels = colour == 6 ? 4 : 3;
		} else if (type == "IDAT") {
			idat += png.substr(p + 8, len);
		}
		p += 12 + len;
	}
	REQUIRE(channels != 0);
	const size_t stride = size_t{img.width} * channels;
	std::vector<uint8_t> raw(size_t{img.height} * (stride + 1));
	uLongf out = raw.size();
	REQUIRE(uncompress(raw.data(), &out, reinterpret_cast<const Bytef *>(idat.data()),
			   idat.size()) == Z_OK);
	REQUIRE(out == raw.size());
	std::vector<uint8_t> prev(stride, 0), cur(stride);
	img.rgb.resize(size_t{img.width} * img.height * 3);
	for (uint32_t y = 0; y < img.height; y++) {
		const uint8_t filter = raw[y * (stride + 1)];
		REQUIRE(filter <= 4);
		const uint8_t *line = &raw[y * (stride + 1) + 1];
		for (size_t i = 0; i < stride; i++) {
			const int a = i >= size_t(channels) ? cur[i - channels] : 0, b = prev[i],
				  c = i >= size_t(channels) ? prev[i - channels] : 0;
			const int pred = filter == 1   ? a
					 : filter == 2 ? b
					 : filter == 3 ? (a + b) / 2
					 : filter == 4 ? paeth(a, b, c)
						       : 0;
			cur[i] = static_cast<uint8_t>(line[i] + pred);
		}
		for (uint32_t x = 0; x < img.width; x++) {
			const uint8_t *px = &cur[size_t{x} * channels];
			// Over white, as a viewer shows a transparent pixel.
			const int alpha = channels == 4 ? px[3] : 255;
			for (int k = 0; k < 3; k++)
				img.rgb[(size_t{y} * img.width + x) * 3 + k] = static_cast<uint8_t>(
					(px[k] * alpha + 255 * (255 - alpha)) / 255);
		}
		prev = cur;
	}
	return img;
}

// Pixels in [x0, x1) x [y0, y1) within tol of colour "#rrggbb" in every channel.
size_t count_colour(const Image &img, std::string_view colour, uint32_t x0, uint32_t x1,
		    uint32_t y0, uint32_t y1, int tol = 10)
{
	const long v = std::strtol(std::string(colour.substr(1)).c_str(), nullptr, 16);
	const int want[3] = {int(v >> 16 & 0xff), int(v >> 8 & 0xff), int(v & 0xff)};
	size_t n = 0;
	for (uint32_t y = y0; y < y1 && y < img.height; y++)
		for (uint32_t x = x0; x < x1 && x < img.width; x++) {
			const uint8_t *p = img.at(x, y);
			bool near = true;
			for (int k = 0; k < 3; k++)
				near = near && std::abs(p[k] - want[k]) <= tol;
			n += near;
		}
	return n;
}

// The number in attribute name="..." of the <svg> element.
uint32_t svg_attr(const std::string &svg, const std::string &name)
{
	const size_t p = svg.find(" " + name + "=\"", svg.find("<svg "));
	REQUIRE(p != std::string::npos);
	return static_cast<uint32_t>(std::stoul(svg.substr(p + name.size() + 3)));
}

}  // namespace

TEST_CASE("plot render: a sweep's SVG renders to a PNG of its size with every series' colour")
{
	kvfdp::test::TempDir dir;
	const std::string svg = dir.path + "/waf.svg", png = dir.path + "/waf.png";
	// hotcold: none, hint, writer, learned; none and writer coincide, and hint and learned.
	REQUIRE(run(std::string(KVFDP_BIN) +
		    " simulate --workload hotcold --capacity 256MiB --sweep util=0.80:1.00:0.10 --plot " +
		    svg + " >/dev/null") == 0);
	const std::string text = slurp(svg);
	REQUIRE(text.find("</svg>") != std::string::npos);
	REQUIRE(run("rsvg-convert -o " + png + " " + svg) == 0);
	struct stat st {};
	REQUIRE(::stat(png.c_str(), &st) == 0);
	CHECK(st.st_size > 4096);
	const Image img = decode_png(slurp(png));
	CHECK(img.width == svg_attr(text, "width"));
	CHECK(img.height == svg_attr(text, "height"));
	CHECK(img.width == 800);
	// Not blank: the background is white and something is drawn on it.
	CHECK(count_colour(img, "#ffffff", 0, img.width, 0, img.height, 0) >
	      img.width * img.height / 2);
	CHECK(count_colour(img, "#ffffff", 0, img.width, 0, img.height, 0) <
	      img.width * img.height * 99 / 100);
	// Each series' colour inside the plot area (left of the legend, x 70-650, y 44-416): its
	// line or the rings of its markers around a later series' smaller ones.
	for (size_t i = 0; i < 4; i++) {
		CAPTURE(i);
		const std::string_view colour = kvfdp::plot::series_colour(i);
		CAPTURE(std::string(colour));
		const size_t in_plot = count_colour(img, colour, 71, 650, 44, 417);
		std::printf("series %zu (%.*s): %zu pixels in the plot area\n", i,
			    int(colour.size()), colour.data(), in_plot);
		CHECK(in_plot >= 40);
		CHECK(count_colour(img, colour, 650, img.width, 44, 150) >=
		      10);  // its legend entry
	}
	// A colour no series has is absent: the check can tell colours apart.
	CHECK(count_colour(img, kvfdp::plot::series_colour(6), 0, img.width, 0, img.height) == 0);
}
