// Terminal width and table layout.
#include "cli/table.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>

namespace kvfdp::cli {

unsigned terminal_width(unsigned explicit_width, int fd)
{
	if (explicit_width > 0)
		return explicit_width;
	winsize ws{};
	if (isatty(fd) && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	if (const char *c = std::getenv("COLUMNS")) {
		char *end = nullptr;
		long v = std::strtol(c, &end, 10);
		if (end != c && *end == '\0' && v > 0 && v < 10000)
			return static_cast<unsigned>(v);
	}
	return 80;
}

void Table::add_row(std::vector<std::string> cells)
{
	cells.resize(columns_.size());
	rows_.push_back(std::move(cells));
}

void Table::render(std::ostream &out, unsigned width) const
{
	const size_t n = columns_.size();
	std::vector<size_t> w(n);
	for (size_t c = 0; c < n; c++) {
		w[c] = columns_[c].header.size();
		for (const auto &r : rows_)
			w[c] = std::max(w[c], r[c].size());
	}
	auto total = [&] {
		size_t t = n ? 2 * (n - 1) : 0;
		for (size_t x : w)
			t += x;
		return t;
	};
	// Narrow flexible columns, widest first, down to their header (at least 4).
	while (total() > width) {
		size_t best = n;
		for (size_t c = 0; c < n; c++) {
			size_t floor = std::max<size_t>(4, columns_[c].header.size());
			if (columns_[c].flexible && w[c] > floor && (best == n || w[c] > w[best]))
				best = c;
		}
		if (best == n)
			break;
		w[best]--;
	}
	auto line = [&](const std::vector<std::string> &cells) {
		std::string s;
		for (size_t c = 0; c < n; c++) {
			std::string cell = cells[c];
			if (cell.size() > w[c])
				cell = cell.substr(0, w[c] - 1) + "~";
			size_t pad = w[c] - cell.size();
			bool last = c + 1 == n;
			if (columns_[c].align == Align::right)
				s += std::string(pad, ' ') + cell;
			else
				s += last ? cell : cell + std::string(pad, ' ');
			if (!last)
				s += "  ";
		}
		while (!s.empty() && s.back() == ' ')
			s.pop_back();
		out << s << '\n';
	};
	std::vector<std::string> header(n);
	for (size_t c = 0; c < n; c++)
		header[c] = columns_[c].header;
	line(header);
	for (const auto &r : rows_)
		line(r);
}

void KeyValues::add(std::string key, std::string value)
{
	items_.emplace_back(std::move(key), std::move(value));
}

void KeyValues::render(std::ostream &out, unsigned width) const
{
	size_t kw = 0;
	for (const auto &[k, v] : items_)
		kw = std::max(kw, k.size() + 1);
	const size_t indent = kw + 2;
	for (const auto &[k, v] : items_) {
		out << k << ':' << std::string(indent - k.size() - 1, ' ');
		// A long value wraps onto lines indented to the value column, after a ", " or "; "
		// where it can (so "8.00 MiB" stays together), else at a space. It is never cut: a
		// cut "0 erro~" hides a figure. A word longer than a line stays whole.
		const size_t room = width > indent + 20 ? width - indent : std::string::npos;
		std::string_view rest = v;
		while (rest.size() > room) {
			size_t cut = std::string_view::npos;
			for (size_t i = std::min(room, rest.size() - 1);
			     i > 1 && cut == std::string_view::npos; i--)
				if (rest[i] == ' ' && (rest[i - 1] == ',' || rest[i - 1] == ';'))
					cut = i;
			if (cut == std::string_view::npos)
				cut = rest.rfind(' ', room);
			if (cut == std::string_view::npos || cut == 0)
				cut = rest.find(' ', room);
			if (cut == std::string_view::npos)
				break;
			out << rest.substr(0, cut) << '\n' << std::string(indent, ' ');
			rest.remove_prefix(cut + 1);
		}
		out << rest << '\n';
	}
}

}  // namespace kvfdp::cli
