// Human output: terminal width detection and a column table that fits it.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

namespace kvfdp::cli {

// The width to lay tables out for: explicit (> 0) wins, then TIOCGWINSZ on fd (when it is a
// terminal), then $COLUMNS, then 80.
[[nodiscard]] unsigned terminal_width(unsigned explicit_width, int fd);

enum class Align { left, right };

struct Column {
	std::string header;
	Align align = Align::left;
	// A flexible column gives up width (its cells are cut, ending in "~") when the table
	// would not fit; others never shrink.
	bool flexible = false;
};

class Table {
public:
	explicit Table(std::vector<Column> columns) : columns_(std::move(columns)) {}
	// cells.size() must equal the number of columns; missing cells print empty.
	void add_row(std::vector<std::string> cells);
	[[nodiscard]] size_t rows() const { return rows_.size(); }
	// Writes the header and rows, two spaces between columns, no trailing blanks,
	// flexible columns narrowed so each line fits width where possible.
	void render(std::ostream &out, unsigned width) const;

private:
	std::vector<Column> columns_;
	std::vector<std::vector<std::string>> rows_;
};

// "key:  value" lines with the keys padded to one column (for status-like output). A value
// wider than the terminal wraps at spaces onto lines indented to the value column.
class KeyValues {
public:
	void add(std::string key, std::string value);
	void render(std::ostream &out, unsigned width) const;

private:
	std::vector<std::pair<std::string, std::string>> items_;
};

}  // namespace kvfdp::cli
